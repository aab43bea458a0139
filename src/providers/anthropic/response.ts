/**
 * Anthropic Messages answers (whole, and streamed event by event:
 * https://docs.anthropic.com/en/docs/build-with-claude/streaming) -> provider-neutral output
 * blocks, usage and finish reason; and the explanation an error body carries.
 */
import type { ChunkDelta, FinishReason, OutputBlock, ProviderStop, Usage } from "../../inference/types.ts"
import { cacheApartUsage } from "../answerReaders.ts"
import { type ParsedResponse, type StreamEventParser, WireProblem, unscopedProvider } from "../codec.ts"

type Json = Record<string, any>

export const finishReasonOf = (reason: unknown): FinishReason | undefined => {
  switch (reason) {
    case undefined:
    case null:
      return undefined
    case "end_turn":
      return "stop"
    case "stop_sequence":
      return "stop_sequence"
    case "max_tokens":
    case "model_context_window_exceeded":
      return "length"
    case "tool_use":
      return "tool_call"
    case "refusal":
      return "content_filter"
    default:
      // pause_turn (a long server tool turn to continue) and reasons newer than this codec
      return "unknown"
  }
}

/** Anthropic's own stop reason (`pause_turn`...) and the stop sequence it matched, for the Messages surface */
const providerStopOf = (json: Json | undefined): ProviderStop | undefined =>
  typeof json?.stop_reason === "string"
    ? { reason: json.stop_reason, sequence: typeof json.stop_sequence === "string" ? json.stop_sequence : undefined }
    : undefined

/**
 * Anthropic's `input_tokens` leaves out the tokens read from and written to the prompt cache;
 * the gateway's counts every input token, of which `cached_input_tokens` were cache reads.
 */
export const usageOf = (usage: Json | undefined | null): Usage | undefined => {
  if (usage === undefined || usage === null) return undefined
  const read = usage.cache_read_input_tokens
  return cacheApartUsage(usage.input_tokens, usage.output_tokens, read, usage.cache_creation_input_tokens, typeof read === "number")
}

/** the `error` of `{"type":"error","error":{"type":"...","message":"..."}}` -> "<type>: <message>" (also a batch's errored result) */
export const explainError = (error: Json | undefined): string | undefined => {
  if (typeof error?.message !== "string") return undefined
  return typeof error.type === "string" ? `${error.type}: ${error.message}` : error.message
}

/** The explanation an Anthropic error body carries, if any. */
export const anthropicErrorMessage = (body: string): string | undefined => {
  try {
    const parsed = JSON.parse(body)
    // Vertex answers its own errors (auth, quota) in Google's shape
    return explainError(parsed?.error) ?? (Array.isArray(parsed) ? explainError(parsed[0]?.error) : undefined)
  } catch {
    return undefined
  }
}

const toolArguments = (input: unknown): string => JSON.stringify(input ?? {})

/** One content block of an answer; the blocks it does not know are kept as `unknown` (redacted thinking, server tool results). */
const outputBlockOf = (block: Json): OutputBlock | undefined => {
  switch (block?.type) {
    case "text":
      return typeof block.text === "string" ? { type: "text", text: block.text } : undefined
    case "thinking":
      return {
        type: "thought",
        text: typeof block.thinking === "string" ? block.thinking : "",
        ...(typeof block.signature === "string" ? { signature: block.signature } : {})
      }
    case "tool_use":
      return { type: "tool_call", id: String(block.id ?? ""), raw_name: String(block.name ?? ""), raw_arguments: toolArguments(block.input) }
    default:
      return { type: "unknown", data: block, model_provider_name: unscopedProvider }
  }
}

const notJson = new WireProblem("the provider answered with a body that is not JSON")
const noContent = new WireProblem("the provider answered without a content array (an Anthropic message was expected)")

export const parseAnthropicResponse = (text: string): ParsedResponse | WireProblem => {
  let json: Json
  try {
    json = JSON.parse(text)
  } catch {
    return notJson
  }
  if (!Array.isArray(json?.content)) return noContent
  const output: Array<OutputBlock> = []
  for (const block of json.content) {
    const read = outputBlockOf(block)
    if (read !== undefined) output.push(read)
  }
  return {
    output,
    usage: usageOf(json.usage) ?? { input_tokens: 0, output_tokens: 0 },
    finishReason: finishReasonOf(json.stop_reason),
    providerStop: providerStopOf(json)
  }
}

/** `message_start`'s usage updated by `message_delta`'s counts (which may repeat the input ones, or leave them null) */
const mergedUsage = (start: Json | undefined, end: Json | undefined): Json => {
  const merged: Json = { ...start }
  for (const [key, value] of Object.entries(end ?? {})) if (typeof value === "number") merged[key] = value
  return merged
}

const chunkNotJson = new WireProblem("the provider streamed an event that is not JSON")
const nothing: ReadonlyArray<ChunkDelta> = []

/**
 * Reads the events of a streamed answer (their `data`, whose `type` is the event's name).
 * Deltas name their block by `index`; a tool call's id and a block's kind come in its
 * `content_block_start`, so the parser remembers them. Usage comes in two halves: input in
 * `message_start`, output (cumulative) in `message_delta`, where the chunk carries the sum.
 */
export const makeAnthropicChunkParser = (): StreamEventParser<string> => {
  const toolCalls = new Map<number, string>()
  let startUsage: Json | undefined
  return (data) => {
    let json: Json
    try {
      json = JSON.parse(data)
    } catch {
      return chunkNotJson
    }
    const index = typeof json?.index === "number" ? json.index : 0
    const id = String(index)
    switch (json?.type) {
      case "message_start":
        startUsage = json.message?.usage
        return { content: nothing, raw: data }
      case "content_block_start": {
        const block = json.content_block
        switch (block?.type) {
          case "text":
            return { content: block.text ? [{ type: "text", id, text: block.text }] : nothing, raw: data }
          case "thinking":
            return { content: block.thinking ? [{ type: "thought", id, text: block.thinking }] : nothing, raw: data }
          case "tool_use": {
            const callId = String(block.id ?? index)
            toolCalls.set(index, callId)
            const input = block.input !== undefined && Object.keys(block.input ?? {}).length > 0 ? toolArguments(block.input) : ""
            return { content: [{ type: "tool_call", id: callId, raw_name: String(block.name ?? ""), raw_arguments: input }], raw: data }
          }
          default:
            // redacted thinking and server tool blocks have no streamed form in the gateway: kept in the raw response
            return { content: nothing, raw: data }
        }
      }
      case "content_block_delta": {
        const delta = json.delta
        switch (delta?.type) {
          case "text_delta":
            return { content: [{ type: "text", id, text: String(delta.text ?? "") }], raw: data }
          case "thinking_delta":
            return { content: [{ type: "thought", id, text: String(delta.thinking ?? "") }], raw: data }
          case "signature_delta":
            return { content: [{ type: "thought", id, text: "", signature: String(delta.signature ?? "") }], raw: data }
          case "input_json_delta": {
            const callId = toolCalls.get(index)
            if (callId === undefined) return new WireProblem(`the provider streamed tool input for block ${index}, which is not a tool call`)
            return { content: [{ type: "tool_call", id: callId, raw_name: "", raw_arguments: String(delta.partial_json ?? "") }], raw: data }
          }
          default:
            return { content: nothing, raw: data }
        }
      }
      case "message_delta": {
        const usage = usageOf(mergedUsage(startUsage, json.usage))
        return { content: nothing, usage, finishReason: finishReasonOf(json.delta?.stop_reason), providerStop: providerStopOf(json.delta), raw: data }
      }
      case "error":
        return new WireProblem(`the provider streamed an error: ${explainError(json.error) ?? JSON.stringify(json.error)}`)
      default:
        // content_block_stop, message_stop, ping, and events newer than this codec
        return { content: nothing, raw: data }
    }
  }
}
