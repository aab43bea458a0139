/**
 * Another gateway's answers to `POST /inference` (spec 2.3): a chat function's `content` blocks
 * or a json function's `output.raw`, `usage` and `finish_reason`; streamed, one chunk per
 * Server-Sent Event (`content` deltas or `raw`, usage and finish reason in the last, `[DONE]`),
 * or `{error}` for a stream that failed after it started. Errors are `{"error": "..."}`.
 */
import type { ChunkDelta, FinishReason, OutputBlock, ProviderChunk, Usage } from "../../inference/types.ts"
import { isRecord } from "../../isRecord.ts"
import { type ParsedResponse, unscopedProvider, WireProblem } from "../codec.ts"

const finishReasons: ReadonlySet<string> = new Set(["stop", "stop_sequence", "length", "tool_call", "content_filter", "unknown"])

const finishReasonOf = (value: unknown): FinishReason | undefined =>
  typeof value === "string" && finishReasons.has(value) ? value as FinishReason : undefined

const count = (value: unknown): number => (typeof value === "number" && Number.isFinite(value) && value >= 0 ? value : 0)

const usageOf = (value: unknown): Usage | undefined => {
  if (!isRecord(value)) return undefined
  const usage: { input_tokens: number; output_tokens: number; cached_input_tokens?: number } = {
    input_tokens: count(value.input_tokens),
    output_tokens: count(value.output_tokens)
  }
  if (typeof value.cached_input_tokens === "number") usage.cached_input_tokens = count(value.cached_input_tokens)
  return usage
}

const parseJson = (text: string): unknown => {
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}

const text = (value: unknown): string => (typeof value === "string" ? value : "")

/** An output block of the other gateway's answer as this gateway's; undefined for a type it does not know. */
const outputBlock = (block: unknown): OutputBlock | undefined => {
  if (!isRecord(block)) return undefined
  switch (block.type) {
    case "text":
      return { type: "text", text: text(block.text) }
    case "tool_call":
      // as the model generated it: this gateway checks it against the tools it offered
      return { type: "tool_call", id: text(block.id), raw_name: text(block.raw_name), raw_arguments: text(block.raw_arguments) }
    case "thought":
      return typeof block.signature === "string"
        ? { type: "thought", text: text(block.text), signature: block.signature }
        : { type: "thought", text: text(block.text) }
    case "unknown":
      // scoped to this provider by the runner: sent back, it goes to the other gateway again
      return { type: "unknown", data: block.data, model_provider_name: unscopedProvider }
    default:
      return undefined
  }
}

export const parseGatewayResponse = (body: string): ParsedResponse | WireProblem => {
  const parsed = parseJson(body)
  if (!isRecord(parsed)) return new WireProblem("the gateway answered with a body that is not a JSON object")
  const output: Array<OutputBlock> = []
  if (Array.isArray(parsed.content)) {
    for (const block of parsed.content) {
      const read = outputBlock(block)
      if (read !== undefined) output.push(read)
    }
  } else if (isRecord(parsed.output) && typeof parsed.output.raw === "string") {
    // a json function's answer: its text
    if (parsed.output.raw !== "") output.push({ type: "text", text: parsed.output.raw })
  } else {
    return new WireProblem("the gateway's answer has neither `content` nor `output.raw`")
  }
  return { output, usage: usageOf(parsed.usage) ?? { input_tokens: 0, output_tokens: 0 }, finishReason: finishReasonOf(parsed.finish_reason) }
}

const delta = (value: unknown): ChunkDelta | undefined => {
  if (!isRecord(value)) return undefined
  switch (value.type) {
    case "text":
      return { type: "text", id: text(value.id), text: text(value.text) }
    case "tool_call":
      return { type: "tool_call", id: text(value.id), raw_name: text(value.raw_name), raw_arguments: text(value.raw_arguments) }
    case "thought":
      return typeof value.signature === "string"
        ? { type: "thought", id: text(value.id), text: text(value.text), signature: value.signature }
        : { type: "thought", id: text(value.id), text: text(value.text) }
    default:
      return undefined
  }
}

const noDeltas: ReadonlyArray<ChunkDelta> = []

/** One event of the other gateway's stream. */
export const makeGatewayChunkParser = () => (data: string): ProviderChunk | WireProblem => {
  const event = parseJson(data)
  if (!isRecord(event)) return new WireProblem(`the gateway streamed an event that is not a JSON object: ${data.slice(0, 200)}`)
  if (typeof event.error === "string") return new WireProblem(`the gateway's stream failed: ${event.error}`)
  let content: ReadonlyArray<ChunkDelta> = noDeltas
  if (Array.isArray(event.content)) {
    const deltas: Array<ChunkDelta> = []
    for (const value of event.content) {
      const read = delta(value)
      if (read !== undefined) deltas.push(read)
    }
    content = deltas
  } else if (typeof event.raw === "string" && event.raw !== "") {
    // a json function's stream: its text, as one block
    content = [{ type: "text", id: "0", text: event.raw }]
  }
  const chunk: { content: ReadonlyArray<ChunkDelta>; raw: string; usage?: Usage; finishReason?: FinishReason } = { content, raw: data }
  const usage = usageOf(event.usage)
  if (usage !== undefined) chunk.usage = usage
  const finishReason = finishReasonOf(event.finish_reason)
  if (finishReason !== undefined) chunk.finishReason = finishReason
  return chunk
}

/** `{"error": "..."}`, the gateway's error body (an OpenAI-shaped one from its embeddings route) */
export const gatewayErrorMessage = (body: string): string | undefined => {
  const parsed = parseJson(body)
  if (!isRecord(parsed)) return undefined
  if (typeof parsed.error === "string") return parsed.error
  if (isRecord(parsed.error) && typeof parsed.error.message === "string") return parsed.error.message
  return undefined
}
