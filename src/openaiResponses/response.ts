/**
 * The gateway's answers as OpenAI's `response` object (issue 37, design 3.2): its status from
 * the finish reason, its usage in OpenAI's convention, and the request's settings echoed.
 */
import type { ResponseObject, ResponseOutputItem, ResponseUsage } from "../api/openaiResponses.ts"
import { type CompletedInference, totalUsage } from "../inference/run.ts"
import type { FinishReason, Usage } from "../inference/types.ts"
import { outputItems, outputText } from "./items.ts"
import type { TranslatedResponse } from "./request.ts"

/** OpenAI counts every input token, the cache's reads among them, as the gateway does */
export const responsesUsage = (usage: Usage): ResponseUsage => ({
  input_tokens: usage.input_tokens,
  input_tokens_details: { cached_tokens: usage.cached_input_tokens ?? 0 },
  output_tokens: usage.output_tokens,
  // no provider's reasoning count is kept yet
  output_tokens_details: { reasoning_tokens: 0 },
  total_tokens: usage.input_tokens + usage.output_tokens
})

type Ending = Pick<ResponseObject, "status" | "incomplete_details">

/** an answer cut short by its length or a content filter is `incomplete`, saying why */
export const responseEnding = (finishReason: FinishReason | undefined): Ending =>
  finishReason === "length"
    ? { status: "incomplete", incomplete_details: { reason: "max_output_tokens" } }
    : finishReason === "content_filter"
    ? { status: "incomplete", incomplete_details: { reason: "content_filter" } }
    : { status: "completed", incomplete_details: null }

/** what a response is about before its answer: its ids, its time and what answers */
export interface ResponseHead {
  readonly id: string
  /** Unix seconds */
  readonly createdAt: number
  readonly episodeId: string
  readonly variantName: string
}

export const responseObject = (
  translated: Pick<TranslatedResponse, "model" | "echo">,
  head: ResponseHead,
  ending: Ending | { readonly status: "in_progress"; readonly incomplete_details: null },
  output: ReadonlyArray<ResponseOutputItem>,
  usage: ResponseUsage | null
): ResponseObject => ({
  id: head.id,
  object: "response",
  created_at: head.createdAt,
  ...ending,
  error: null,
  model: translated.model,
  output,
  output_text: outputText(output),
  ...translated.echo,
  usage,
  gateway_episode_id: head.episodeId,
  gateway_variant_name: head.variantName
})

export const headOf = (completed: CompletedInference, createdAt: number): ResponseHead => ({
  id: completed.prepared.inferenceId,
  createdAt,
  episodeId: completed.prepared.episodeId,
  variantName: completed.variant.name
})

/**
 * The whole answer. `created` is in Unix seconds, read by the caller: the core reads no clock.
 * A stream ends with the items it streamed (`output`), which the SDKs check against those.
 */
export const responseBody = (
  completed: CompletedInference,
  translated: TranslatedResponse,
  createdAt: number,
  output: ReadonlyArray<ResponseOutputItem> = outputItems(
    completed.prepared.inferenceId,
    completed.output,
    completed.prepared.tools,
    translated.encryptedReasoning
  )
): ResponseObject =>
  responseObject(translated, headOf(completed, createdAt), responseEnding(completed.finishReason), output, responsesUsage(totalUsage(completed)))
