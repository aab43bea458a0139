/**
 * Batches on the Gemini API (ai.google.dev/api/batch-mode), with inline requests: one
 * `POST models/<model>:batchGenerateContent` holding every request as `{request, metadata:
 * {key: <id>}}` answers a long-running operation named `batches/<id>`; `GET <api_base>batches/<id>`
 * reads it again: `metadata.state` (`BATCH_STATE_*`; the SDKs' `JOB_STATE_*` names accepted
 * too) and, once it ended, `response.inlinedResponses.inlinedResponses`, each with the request's
 * `metadata.key` and a `GenerateContentResponse` or a `google.rpc.Status` error.
 *
 * Inline requests are limited to 20 MB per batch (the guide's figure); larger batches would need
 * the File API, which this gateway does not use.
 */
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import type { BatchHooks, BatchItemResult, BatchPoll } from "../codec.ts"
import { quoted } from "../../untrusted.ts"
import { ProviderFailure } from "../failure.ts"
import { nameProblem, providerObjectId, UrlProblem, urlUnder } from "../urls.ts"
import { type BatchEnding, endedBatch, type GeminiBatchData, idsOf, jsonObject, maxBatchResultBytes, statusText } from "./batchResults.ts"
import type { AiStudioBatchTarget, GeminiTarget } from "./target.ts"

const targetOf = (target: GeminiTarget): Effect.Effect<AiStudioBatchTarget, ProviderFailure> =>
  target.batch?.api === "ai_studio"
    ? Effect.succeed(target.batch)
    : Effect.fail(new ProviderFailure({ message: `the ${target.type} provider has no Gemini API batch address`, timedOut: false, unsupported: true }))

/**
 * The URL of a batch by its name as the API gave it (`batches/<id>`), checked: a spoofed or
 * garbled answer must not point the polls, and the key they carry, anywhere else.
 */
const batchUrl = (apiBase: string, name: string): Result.Result<string, ProviderFailure> => {
  const id = name.startsWith("batches/") ? name.slice("batches/".length) : undefined
  const problem = id === undefined ? "expected batches/<id>" : nameProblem("its id", id, providerObjectId)
  const url = problem === undefined ? urlUnder(apiBase, ["batches", id!]) : Result.fail(new UrlProblem(problem))
  return Result.mapError(url, (refused) =>
    new ProviderFailure({ message: `the provider named its batch ${quoted(name, 200)}, which is no Gemini API batch name: ${refused.message}`, timedOut: false }))
}

const states: Readonly<Record<string, BatchEnding | "pending">> = {
  BATCH_STATE_PENDING: "pending",
  BATCH_STATE_RUNNING: "pending",
  BATCH_STATE_SUCCEEDED: "succeeded",
  BATCH_STATE_FAILED: "failed",
  BATCH_STATE_CANCELLED: "cancelled",
  BATCH_STATE_EXPIRED: "expired",
  JOB_STATE_PENDING: "pending",
  JOB_STATE_RUNNING: "pending",
  JOB_STATE_SUCCEEDED: "succeeded",
  JOB_STATE_FAILED: "failed",
  JOB_STATE_CANCELLED: "cancelled",
  JOB_STATE_EXPIRED: "expired"
}

/** `{inlinedResponses: [...]}` as the REST API nests it, or the list itself */
const inlinedList = (holder: unknown): ReadonlyArray<any> | undefined => {
  const inlined = (holder as { inlinedResponses?: unknown } | null | undefined)?.inlinedResponses
  if (Array.isArray(inlined)) return inlined
  const nested = (inlined as { inlinedResponses?: unknown } | null | undefined)?.inlinedResponses
  return Array.isArray(nested) ? nested : undefined
}

/**
 * The answers of an ended batch by request id: by `metadata.key`, else by position (the API
 * answers inline requests in their order). A request answered twice keeps its first answer.
 */
const answersOf = (operation: Record<string, any>, ids: ReadonlyArray<string>): Map<string, BatchItemResult> => {
  const found = new Map<string, BatchItemResult>()
  const inlined = inlinedList(operation.response) ?? inlinedList(operation.metadata?.output) ?? []
  inlined.forEach((entry, index) => {
    const key = entry?.metadata?.key
    const id = typeof key === "string" ? key : ids[index]
    if (id === undefined || found.has(id)) return
    if (typeof entry?.response === "object" && entry.response !== null) {
      found.set(id, { id, ok: true, body: JSON.stringify(entry.response) })
    } else {
      found.set(id, { id, ok: false, message: statusText(entry?.error) ?? "the provider answered this request with neither a response nor an error" })
    }
  })
  return found
}

export const aiStudioBatch: BatchHooks<GeminiTarget> = {
  start: (target, items, exchange) =>
    Effect.gen(function*() {
      // a batch address is what makes the hooks apply: checked before anything is sent
      const batch = yield* targetOf(target)
      const text = yield* exchange({
        method: "POST",
        url: `${target.modelUrl}:batchGenerateContent`,
        body: {
          batch: {
            displayName: `gateway-batch-${items[0]?.id ?? "empty"}`,
            inputConfig: { requests: { requests: items.map((item) => ({ request: item.body, metadata: { key: item.id } })) } }
          }
        }
      })
      const operation = yield* jsonObject(text, "the batch creation")
      const name = operation.name
      if (typeof name !== "string" || !name.startsWith("batches/")) {
        return yield* Effect.fail(new ProviderFailure({ message: "the provider accepted the batch without naming it (batches/...)", timedOut: false }))
      }
      // checked now, before it is kept: every poll puts it into a URL
      yield* Effect.fromResult(batchUrl(batch.apiBase, name))
      const data: GeminiBatchData = { ids: items.map((item) => item.id) }
      return { providerBatchId: name, data }
    }),
  poll: (target, handle, exchange) =>
    Effect.gen(function*() {
      const batch = yield* targetOf(target)
      const ids = yield* idsOf(handle.data)
      const url = yield* Effect.fromResult(batchUrl(batch.apiBase, handle.providerBatchId))
      const text = yield* exchange({ method: "GET", url, maxResponseBytes: maxBatchResultBytes })
      const operation = yield* jsonObject(text, "the batch status request")
      const state = operation.metadata?.state ?? operation.state
      const ending = typeof state === "string" ? states[state] : undefined
      if (ending === undefined) {
        // an unknown state of a finished operation is its error's; otherwise the batch still runs
        if (operation.done !== true) return { status: "pending" } satisfies BatchPoll
        return endedBatch(ids, answersOf(operation, ids), operation.error === undefined ? "succeeded" : "failed", statusText(operation.error))
      }
      if (ending === "pending") return { status: "pending" } satisfies BatchPoll
      return endedBatch(ids, answersOf(operation, ids), ending, statusText(operation.error))
    })
}
