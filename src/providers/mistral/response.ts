/**
 * Mistral chat completions answers (whole and streamed) -> output blocks. As OpenAI's, except
 * that `content` may be a list of chunks (`text`, and Magistral's `thinking` whose own content
 * is a list of text chunks), tool call arguments may come as an object, and errors come as
 * `{"object": "error", "message": ...}`, `{"message": ...}` or a validation `{"detail": [...]}`.
 */
import type { ChunkDelta, FinishReason, OutputBlock, Usage } from "../../inference/types.ts"
import { type ParsedResponse, type StreamEventParser, WireProblem } from "../codec.ts"

type Json = Record<string, any>

const count = (value: unknown): number => (typeof value === "number" && Number.isFinite(value) ? value : 0)

export const mistralFinishReason = (reason: unknown): FinishReason | undefined => {
  switch (reason) {
    case undefined:
    case null:
      return undefined
    case "stop":
      return "stop"
    case "length":
    case "model_length":
      return "length"
    case "tool_calls":
      return "tool_call"
    default:
      return "unknown"
  }
}

export const mistralUsage = (usage: Json | undefined | null): Usage | undefined => {
  if (usage === undefined || usage === null) return undefined
  const cached = usage.prompt_tokens_details?.cached_tokens
  return {
    input_tokens: count(usage.prompt_tokens),
    output_tokens: count(usage.completion_tokens),
    ...(typeof cached === "number" ? { cached_input_tokens: cached } : {})
  }
}

/** The text of a thinking chunk: its text chunks joined. */
const thinkingText = (thinking: unknown): string =>
  typeof thinking === "string"
    ? thinking
    : Array.isArray(thinking)
    ? thinking.map((part: Json) => (typeof part?.text === "string" ? part.text : "")).join("")
    : ""

/** `content` as thoughts and texts, in order: a string is one text. */
const contentParts = (content: unknown): Array<{ kind: "text" | "thought"; text: string }> => {
  if (typeof content === "string") return content === "" ? [] : [{ kind: "text", text: content }]
  if (!Array.isArray(content)) return []
  const parts: Array<{ kind: "text" | "thought"; text: string }> = []
  for (const chunk of content) {
    if (chunk?.type === "thinking") {
      const text = thinkingText(chunk.thinking)
      if (text !== "") parts.push({ kind: "thought", text })
    } else if (chunk?.type === "text" && typeof chunk.text === "string" && chunk.text !== "") {
      parts.push({ kind: "text", text: chunk.text })
    }
  }
  return parts
}

const argumentsText = (args: unknown): string => (typeof args === "string" ? args : JSON.stringify(args ?? {}))

export const mistralErrorMessage = (body: string): string | undefined => {
  try {
    const parsed = JSON.parse(body)
    if (typeof parsed?.message === "string") return parsed.message
    if (typeof parsed?.message === "object" && parsed.message !== null) return JSON.stringify(parsed.message)
    if (typeof parsed?.error?.message === "string") return parsed.error.message
    if (Array.isArray(parsed?.detail)) {
      return parsed.detail.map((item: Json) => typeof item?.msg === "string" ? `${(item.loc ?? []).join(".")}: ${item.msg}` : JSON.stringify(item)).join("; ")
    }
    if (typeof parsed?.detail === "string") return parsed.detail
  } catch {
    // not JSON
  }
  return undefined
}

export const parseMistralResponse = (text: string): ParsedResponse | WireProblem => {
  let json: Json
  try {
    json = JSON.parse(text)
  } catch {
    return new WireProblem("the mistral provider answered with a body that is not JSON")
  }
  const choice = json?.choices?.[0]
  const message = choice?.message
  if (typeof message !== "object" || message === null) return new WireProblem("the mistral provider answered without choices[0].message")
  const output: Array<OutputBlock> = []
  for (const part of contentParts(message.content)) {
    output.push(part.kind === "text" ? { type: "text", text: part.text } : { type: "thought", text: part.text })
  }
  if (Array.isArray(message.tool_calls)) {
    for (const call of message.tool_calls) {
      output.push({
        type: "tool_call",
        id: String(call?.id ?? ""),
        raw_name: String(call?.function?.name ?? ""),
        raw_arguments: argumentsText(call?.function?.arguments)
      })
    }
  }
  return {
    output,
    usage: mistralUsage(json.usage) ?? { input_tokens: 0, output_tokens: 0 },
    finishReason: mistralFinishReason(choice.finish_reason)
  }
}

/** The `data:` payloads of a streamed answer; tool calls may span chunks by `index`, whose id is remembered. */
export const makeMistralChunkParser = (): StreamEventParser<string> => {
  const toolCallIds = new Map<number, string>()
  return (data) => {
    let json: Json
    try {
      json = JSON.parse(data)
    } catch {
      return new WireProblem("the mistral provider streamed a chunk that is not JSON")
    }
    if (json?.object === "error" || json?.error !== undefined) {
      const message = typeof json.message === "string" ? json.message : typeof json.error?.message === "string" ? json.error.message : data
      return new WireProblem(`the mistral provider streamed an error: ${message}`)
    }
    const content: Array<ChunkDelta> = []
    const choice = json?.choices?.[0]
    const delta = choice?.delta
    if (delta !== undefined && delta !== null) {
      for (const part of contentParts(delta.content)) {
        content.push(part.kind === "text" ? { type: "text", id: "0", text: part.text } : { type: "thought", id: "0", text: part.text })
      }
      if (Array.isArray(delta.tool_calls)) {
        for (const call of delta.tool_calls) {
          const index = typeof call?.index === "number" ? call.index : 0
          let id = toolCallIds.get(index)
          if (id === undefined) {
            id = String(call?.id ?? index)
            toolCallIds.set(index, id)
          }
          content.push({
            type: "tool_call",
            id,
            raw_name: String(call?.function?.name ?? ""),
            raw_arguments: call?.function?.arguments === undefined ? "" : argumentsText(call.function.arguments)
          })
        }
      }
    }
    return { content, usage: mistralUsage(json.usage), finishReason: mistralFinishReason(choice?.finish_reason), raw: data }
  }
}
