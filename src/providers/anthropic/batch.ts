/**
 * `anthropic` batches on the Message Batches API
 * (https://docs.anthropic.com/en/docs/build-with-claude/batch-processing):
 * - start: `POST <api_base>messages/batches` with `{requests: [{custom_id, params}]}`, each
 *   `params` the body of a single call and each `custom_id` the gateway's inference id;
 * - poll: `GET <api_base>messages/batches/<id>`; `processing_status` `in_progress` and
 *   `canceling` are still running, `ended` has a `results_url` to a JSON Lines file, one line
 *   `{custom_id, result}` per request, in no particular order, `result.type` one of
 *   `succeeded` (a Messages API `message`), `errored` (an error body), `canceled`, `expired`.
 *
 * Anthropic has no failed batch: a batch it refuses is a 4xx on creation, and one whose
 * requests it refuses ends with each of them errored. A batch that ended without any request
 * run (all cancelled or expired), or with every request refused for one and the same reason
 * (its input as a whole, say an unknown model), is `failed` with that reason; any other ended
 * batch is `completed`, each request without an answer an `ok: false` result saying why.
 */
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import type { BatchDownload, BatchExchange, BatchHandle, BatchHooks, BatchItem, BatchItemResult, BatchPoll } from "../codec.ts"
import { ProviderFailure } from "../failure.ts"
import { nameProblem, providerObjectId, UrlProblem, urlUnder } from "../urls.ts"
import type { AnthropicTarget } from "./request.ts"
import { explainError } from "./response.ts"

type Json = Record<string, any>

/**
 * The largest results file read (a line at a time, never held whole): Anthropic caps a batch's
 * creation request at 256 MB, and its answers are of that order.
 */
const maxResultsBytes = 256 * 1024 * 1024

export const batchesUrl = (target: AnthropicTarget): string => `${target.url}/batches`

const problem = (message: string) => new ProviderFailure({ message, timedOut: false })

/**
 * A batch's URL by the id Anthropic gave it (`msgbatch_...`), checked: a spoofed or garbled
 * answer must not point the polls, and the key they carry, anywhere else.
 */
const batchUrl = (target: AnthropicTarget, id: string): Result.Result<string, ProviderFailure> => {
  const misnamed = nameProblem("the provider's id", id, providerObjectId)
  const url = misnamed === undefined ? urlUnder(`${batchesUrl(target)}/`, [id]) : Result.fail(new UrlProblem(misnamed))
  return Result.mapError(url, (refused) => problem(`message batch: ${refused.message}`))
}

/** the answer's JSON, or undefined; answers are not quoted in failures (an upstream may echo the credential) */
const parseJson = (text: string): any => {
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}

const isBatch = (value: any): value is Json =>
  typeof value === "object" && value !== null && value.type === "message_batch" && typeof value.id === "string"

/** The ids a handle's requests were sent with, in order (`BatchHandle.data` as `start` made it). */
const idsOf = (handle: BatchHandle): ReadonlyArray<string> | undefined => {
  const ids = (handle.data as Json | null)?.ids
  return Array.isArray(ids) && ids.every((id) => typeof id === "string") ? ids : undefined
}

const start = Effect.fnUntraced(function*(target: AnthropicTarget, items: ReadonlyArray<BatchItem>, exchange: BatchExchange) {
  const text = yield* exchange({
    method: "POST",
    url: batchesUrl(target),
    body: { requests: items.map((item) => ({ custom_id: item.id, params: item.body })) }
  })
  const batch = parseJson(text)
  if (!isBatch(batch)) return yield* problem("Anthropic's answer to the creation of a message batch is not a message batch")
  // checked now, before it is kept: every poll puts it into a URL
  yield* Effect.fromResult(batchUrl(target, batch.id))
  return { providerBatchId: batch.id, data: { ids: items.map((item) => item.id) } } satisfies BatchHandle
})

/**
 * The URL of an ended batch's results. The credential goes only to the configured host: a
 * `results_url` elsewhere (a proxy as `api_base` that passes Anthropic's URL on) is read at
 * the configured host's path for it.
 */
export const resultsUrl = (target: AnthropicTarget, batch: Json): Result.Result<string, ProviderFailure> =>
  Result.map(batchUrl(target, batch.id), (polled) => {
    const own = `${polled}/results`
    if (typeof batch.results_url !== "string") return own
    try {
      const given = new URL(batch.results_url, target.url)
      return given.origin === new URL(target.url).origin ? given.toString() : own
    } catch {
      return own
    }
  })

const counted = (counts: Json | undefined, name: string): number => typeof counts?.[name] === "number" ? counts[name] : 0

/** why a batch none of whose requests ran has no results, from its counts */
const nothingRan = (batch: Json): string => {
  const counts = batch.request_counts as Json | undefined
  const tally = `${counted(counts, "canceled")} cancelled, ${counted(counts, "expired")} expired`
  return typeof batch.cancel_initiated_at === "string"
    ? `the batch was cancelled before any of its requests ran (${tally})`
    : `the batch expired before any of its requests ran (${tally})`
}

/** One line of a results file, read: its request's result, and Anthropic's reason when it refused the request (`errored`). */
interface ReadLine {
  readonly result: BatchItemResult
  readonly refusal?: string | undefined
}

const readLine = (line: Json): ReadLine | undefined => {
  const id = line?.custom_id
  const result = line?.result
  if (typeof id !== "string" || typeof result !== "object" || result === null) return undefined
  switch (result.type) {
    case "succeeded":
      return typeof result.message === "object" && result.message !== null
        ? { result: { id, ok: true, body: JSON.stringify(result.message) } }
        : { result: { id, ok: false, message: "the batch's result for this request succeeded without a message" } }
    case "errored": {
      const refusal = explainError(result.error?.error) ?? "(no explanation)"
      return { result: { id, ok: false, message: `Anthropic refused this request: ${refusal}` }, refusal }
    }
    case "canceled":
      return { result: { id, ok: false, message: "the batch was cancelled before this request ran" } }
    case "expired":
      return { result: { id, ok: false, message: "the batch expired (24 hours after its creation) before this request ran" } }
    default:
      return { result: { id, ok: false, message: `the batch ended with a result of type ${JSON.stringify(String(result.type))} for this request` } }
  }
}

/**
 * An ended batch's results file, read a line at a time as it arrives (`line`: why the file
 * cannot be read, at the first line that is not a result, too long to be read included), then
 * each submitted request's result, in the order of `ids` (`results`: the first line for an id
 * counts; lines for other ids are ignored).
 */
export const resultsReader = (ids: ReadonlyArray<string>) => {
  const byId = new Map<string, ReadLine>()
  return {
    line: (text: string | undefined, lineNumber: number): string | undefined => {
      const line = text?.trim()
      if (line === "") return undefined
      const read = line === undefined ? undefined : readLine(parseJson(line))
      if (read === undefined) return `line ${lineNumber} of the batch's results is not a result of a message batch`
      if (!byId.has(read.result.id)) byId.set(read.result.id, read)
      return undefined
    },
    results: (): BatchPoll => resultsOf(byId, ids)
  }
}

/** `resultsReader` over a whole file: the poll, or why the file cannot be read */
export const readResults = (text: string, ids: ReadonlyArray<string>): BatchPoll | string => {
  const reader = resultsReader(ids)
  const lines = text.split("\n")
  for (let index = 0; index < lines.length; index++) {
    const unreadable = reader.line(lines[index], index + 1)
    if (unreadable !== undefined) return unreadable
  }
  return reader.results()
}

const resultsOf = (byId: ReadonlyMap<string, ReadLine>, ids: ReadonlyArray<string>): BatchPoll => {
  const results: Array<BatchItemResult> = []
  /** the reasons of the refused requests, and how many were refused */
  const refusals = new Set<string>()
  let refused = 0
  let answered = false
  for (const id of ids) {
    const read = byId.get(id)
    if (read === undefined) {
      results.push({ id, ok: false, message: "the batch's results have no answer for this request" })
      continue
    }
    results.push(read.result)
    if (read.result.ok) answered = true
    else if (read.refusal !== undefined) {
      refusals.add(read.refusal)
      refused++
    }
  }
  if (!answered && refused === 0) {
    return { status: "failed", message: "the batch ended without any of its requests run (each was cancelled, expired or absent from its results)" }
  }
  // every request refused for one reason: the batch's input as a whole was refused
  if (!answered && refused === ids.length && refusals.size === 1) {
    return { status: "failed", message: `every request of the batch was refused: ${[...refusals][0]}` }
  }
  return { status: "completed", results }
}

const poll = Effect.fnUntraced(function*(target: AnthropicTarget, handle: BatchHandle, exchange: BatchExchange, download: BatchDownload) {
  const ids = idsOf(handle)
  if (ids === undefined) return yield* problem(`the gateway's record of message batch ${handle.providerBatchId} lacks its requests' ids`)
  const url = yield* Effect.fromResult(batchUrl(target, handle.providerBatchId))
  const batch = parseJson(yield* exchange({ method: "GET", url }))
  if (!isBatch(batch)) return yield* problem(`Anthropic's answer about message batch ${handle.providerBatchId} is not a message batch`)
  switch (batch.processing_status) {
    case "in_progress":
    case "canceling":
      return { status: "pending" } satisfies BatchPoll
    case "ended":
      break
    default:
      return yield* problem(`message batch ${handle.providerBatchId} has the unknown processing_status ${JSON.stringify(String(batch.processing_status))}`)
  }
  const counts = batch.request_counts as Json | undefined
  // the counts tell, without the download, that no request ran
  if (typeof counts?.succeeded === "number" && typeof counts.errored === "number" && counts.succeeded + counts.errored === 0) {
    return { status: "failed", message: nothingRan(batch) } satisfies BatchPoll
  }
  if (typeof batch.results_url !== "string") {
    return { status: "failed", message: `the results of message batch ${batch.id} are no longer available (archived)` } satisfies BatchPoll
  }
  const resultsAddress = yield* Effect.fromResult(resultsUrl(target, batch))
  // read as it arrives; the first line that is not a result ends the download
  const results = resultsReader(ids)
  yield* download({ method: "GET", url: resultsAddress, maxResponseBytes: maxResultsBytes }, (line, lineNumber) => {
    const unreadable = results.line(line, lineNumber)
    return unreadable === undefined ? undefined : problem(unreadable)
  })
  return results.results()
})

export const anthropicBatch: BatchHooks<AnthropicTarget> = { start, poll }
