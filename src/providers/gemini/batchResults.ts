/**
 * What the two Gemini batch APIs (`aiStudioBatch.ts`, `vertexBatch.ts`) share: the request ids
 * kept in a batch's handle, Google's error shapes, and the rule that every submitted id gets
 * exactly one result (an answer, the provider's error for it, or why it has none).
 */
import * as Effect from "effect/Effect"
import type { BatchItemResult, BatchPoll } from "../codec.ts"
import { ProviderFailure } from "../failure.ts"

/** What a Gemini batch's handle keeps besides the provider's id: its requests' ids, in order. */
export interface GeminiBatchData {
  readonly ids: ReadonlyArray<string>
}

export const idsOf = (data: unknown): Effect.Effect<ReadonlyArray<string>, ProviderFailure> => {
  const ids = (data as Partial<GeminiBatchData> | null)?.ids
  return Array.isArray(ids) && ids.every((id) => typeof id === "string")
    ? Effect.succeed(ids)
    : Effect.fail(new ProviderFailure({ message: "the stored Gemini batch lacks the ids of its requests", timedOut: false }))
}

export const jsonObject = (text: string, what: string): Effect.Effect<Record<string, any>, ProviderFailure> => {
  try {
    const json: unknown = JSON.parse(text)
    if (typeof json === "object" && json !== null && !Array.isArray(json)) return Effect.succeed(json as Record<string, any>)
  } catch {
    // below
  }
  return Effect.fail(new ProviderFailure({ message: `the provider answered ${what} with a body that is not a JSON object`, timedOut: false }))
}

/** A `google.rpc.Status` (`{code, message}`) as text; undefined when there is none. */
export const statusText = (status: unknown): string | undefined => {
  if (typeof status !== "object" || status === null) return undefined
  const { code, message } = status as { code?: unknown; message?: unknown }
  if (typeof message !== "string" || message === "") return typeof code === "number" ? `error code ${code}` : undefined
  return typeof code === "number" ? `${message} (code ${code})` : message
}

/** how a batch ended, for the requests it did not answer and for a batch without any answer */
export type BatchEnding = "succeeded" | "failed" | "cancelled" | "expired"

const unanswered = (ending: BatchEnding, reason: string | undefined): string => {
  switch (ending) {
    case "succeeded":
      return "the provider's batch finished without an answer to this request"
    case "failed":
      return `the batch failed before this request ran${reason === undefined ? "" : `: ${reason}`}`
    case "cancelled":
      return "the batch was cancelled on the provider's side before this request ran"
    case "expired":
      return "the batch expired before this request ran"
  }
}

const unansweredBatch = (ending: BatchEnding, reason: string | undefined): string => {
  switch (ending) {
    case "succeeded":
      return "the provider's batch finished without any answer"
    case "failed":
      return `the provider's batch failed${reason === undefined ? "" : `: ${reason}`}`
    case "cancelled":
      return "the batch was cancelled on the provider's side before any request ran"
    case "expired":
      return "the batch expired before any request ran"
  }
}

/**
 * The poll of an ended batch from the results found by id: each submitted id once, in the
 * order submitted (a result for an id that was not submitted is dropped); none found at all:
 * the batch failed as a whole.
 */
export const endedBatch = (
  ids: ReadonlyArray<string>,
  found: ReadonlyMap<string, BatchItemResult>,
  ending: BatchEnding,
  reason?: string | undefined
): BatchPoll => {
  const results: Array<BatchItemResult> = []
  let answered = 0
  for (const id of ids) {
    const result = found.get(id)
    if (result === undefined) {
      results.push({ id, ok: false, message: unanswered(ending, reason) })
    } else {
      answered++
      results.push(result)
    }
  }
  return answered === 0 ? { status: "failed", message: unansweredBatch(ending, reason) } : { status: "completed", results }
}

/** a batch's results can be large: the bound on one answer holding them (the transport's default is 32 MiB) */
export const maxBatchResultBytes = 256 * 1024 * 1024
