/**
 * OpenAI Chat Completions responses (whole, and streamed event by event) -> provider-neutral
 * output blocks, usage and finish reason; and the explanation an error body carries.
 */
import type { ChunkDelta, FinishReason, OutputBlock, Usage } from "../../inference/types.ts"
import { type ParsedResponse, type StreamEventParser, WireProblem } from "../codec.ts"

type Json = Record<string, any>

export const finishReasonOf = (reason: unknown): FinishReason | undefined => {
  switch (reason) {
    case undefined:
    case null:
      return undefined
    case "stop":
      return "stop"
    case "length":
      return "length"
    case "tool_calls":
    case "function_call":
      return "tool_call"
    case "content_filter":
      return "content_filter"
    default:
      return "unknown"
  }
}

const count = (value: unknown): number => (typeof value === "number" && Number.isFinite(value) ? value : 0)

/**
 * Prompt-cache reads: OpenAI's `prompt_tokens_details.cached_tokens`, or DeepSeek's
 * `prompt_cache_hit_tokens`; undefined when the server does not say.
 */
const cachedTokensOf = (usage: Json): number | undefined => {
  const cached = usage.prompt_tokens_details?.cached_tokens ?? usage.prompt_cache_hit_tokens
  return typeof cached === "number" && Number.isFinite(cached) ? cached : undefined
}

export const usageOf = (usage: Json | undefined | null): Usage | undefined => {
  if (usage === undefined || usage === null) return undefined
  const cached = cachedTokensOf(usage)
  const counted = { input_tokens: count(usage.prompt_tokens), output_tokens: count(usage.completion_tokens) }
  return cached === undefined ? counted : { ...counted, cached_input_tokens: cached }
}

/** The explanation an OpenAI-style error body carries (`error.message`, or `error` as a string), if any. */
export const errorMessageOf = (body: string): string | undefined => {
  try {
    const parsed = JSON.parse(body)
    if (typeof parsed?.error?.message === "string") return parsed.error.message
    if (typeof parsed?.error === "string") return parsed.error
  } catch {
    // not JSON: nothing to take from it
  }
  return undefined
}

const notJson = new WireProblem("the provider answered with a body that is not JSON")
const noMessage = new WireProblem("the provider answered without choices[0].message")
const chunkNotJson = new WireProblem("the provider streamed a chunk that is not JSON")

export const parseOpenAiResponse = (text: string): ParsedResponse | WireProblem => {
  let json: Json
  try {
    json = JSON.parse(text)
  } catch {
    return notJson
  }
  const choice = json?.choices?.[0]
  if (choice === undefined || typeof choice.message !== "object" || choice.message === null) {
    return noMessage
  }
  const message = choice.message as Json
  const output: Array<OutputBlock> = []
  const reasoning = message.reasoning_content ?? message.reasoning
  if (typeof reasoning === "string" && reasoning !== "") output.push({ type: "thought", text: reasoning })
  if (typeof message.content === "string" && message.content !== "") output.push({ type: "text", text: message.content })
  if (typeof message.refusal === "string" && message.refusal !== "") output.push({ type: "text", text: message.refusal })
  if (Array.isArray(message.tool_calls)) {
    for (const call of message.tool_calls) {
      if (call?.type === "custom") {
        output.push({
          type: "tool_call",
          id: String(call?.id ?? ""),
          raw_name: String(call?.custom?.name ?? ""),
          raw_arguments: String(call?.custom?.input ?? "")
        })
        continue
      }
      output.push({
        type: "tool_call",
        id: String(call?.id ?? ""),
        raw_name: String(call?.function?.name ?? ""),
        raw_arguments: typeof call?.function?.arguments === "string"
          ? call.function.arguments
          : JSON.stringify(call?.function?.arguments ?? {})
      })
    }
  }
  return {
    output,
    usage: usageOf(json.usage) ?? { input_tokens: 0, output_tokens: 0 },
    finishReason: finishReasonOf(choice.finish_reason)
  }
}

/**
 * Parses the `data:` payloads of a streamed answer. Tool-call deltas name their call by
 * `index` only after the first one, so the parser remembers each index's id.
 */
export const makeOpenAiChunkParser = (): StreamEventParser<string> => {
  const toolCallIds = new Map<number, string>()
  return (data) => {
    let json: Json
    try {
      json = JSON.parse(data)
    } catch {
      return chunkNotJson
    }
    if (json?.error !== undefined) {
      return new WireProblem(
        `the provider streamed an error: ${typeof json.error?.message === "string" ? json.error.message : JSON.stringify(json.error)}`
      )
    }
    const content: Array<ChunkDelta> = []
    const choice = json?.choices?.[0]
    const delta = choice?.delta
    if (delta !== undefined && delta !== null) {
      const reasoning = delta.reasoning_content ?? delta.reasoning
      if (typeof reasoning === "string" && reasoning !== "") content.push({ type: "thought", id: "0", text: reasoning })
      if (typeof delta.content === "string" && delta.content !== "") content.push({ type: "text", id: "0", text: delta.content })
      if (Array.isArray(delta.tool_calls)) {
        for (const call of delta.tool_calls) {
          const index = typeof call?.index === "number" ? call.index : 0
          let id = toolCallIds.get(index)
          if (id === undefined) {
            id = String(call?.id ?? index)
            toolCallIds.set(index, id)
          }
          // a custom tool streams its free-text input where a function streams its arguments
          const part = call?.type === "custom" || call?.custom !== undefined
            ? { name: call?.custom?.name, text: call?.custom?.input }
            : { name: call?.function?.name, text: call?.function?.arguments }
          content.push({ type: "tool_call", id, raw_name: String(part.name ?? ""), raw_arguments: String(part.text ?? "") })
        }
      }
    }
    return { content, usage: usageOf(json.usage), finishReason: finishReasonOf(choice?.finish_reason), raw: data }
  }
}
