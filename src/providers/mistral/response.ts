/**
 * Mistral chat completions answers (whole and streamed) -> output blocks. As OpenAI's, except
 * that `content` may be a list of chunks (`text`, and Magistral's `thinking` whose own content
 * is a list of text chunks), tool call arguments may come as an object, and errors come as
 * `{"object": "error", "message": ...}`, `{"message": ...}` or a validation `{"detail": [...]}`.
 * Read by the Chat Completions parsers (`../openai/response.ts`) with these differences as a dialect.
 */
import type { FinishReason, Usage } from "../../inference/types.ts"
import { tokenCount } from "../answerReaders.ts"
import { type ParsedResponse, type StreamEventParser, WireProblem } from "../codec.ts"
import { argumentsText, type ChatAnswerDialect, makeChatCompletionsChunkParser, parseChatCompletionsResponse } from "../openai/response.ts"

type Json = Record<string, any>

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
    input_tokens: tokenCount(usage.prompt_tokens),
    output_tokens: tokenCount(usage.completion_tokens),
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

/** Mistral's answers: content as chunks, tool call arguments maybe an object, its errors, usage and finish reasons. */
const mistralAnswers: ChatAnswerDialect = {
  usage: mistralUsage,
  finishReason: mistralFinishReason,
  messageContent: (message, output) => {
    for (const part of contentParts(message.content)) {
      output.push(part.kind === "text" ? { type: "text", text: part.text } : { type: "thought", text: part.text })
    }
  },
  deltaContent: (delta, content) => {
    for (const part of contentParts(delta.content)) {
      content.push(part.kind === "text" ? { type: "text", id: "0", text: part.text } : { type: "thought", id: "0", text: part.text })
    }
  },
  customTools: false,
  streamedArguments: (args) => (args === undefined ? "" : argumentsText(args)),
  streamedError: (json, data) => {
    if (json?.object !== "error" && json?.error === undefined) return undefined
    const message = typeof json.message === "string" ? json.message : typeof json.error?.message === "string" ? json.error.message : data
    return new WireProblem(`the mistral provider streamed an error: ${message}`)
  },
  notJson: new WireProblem("the mistral provider answered with a body that is not JSON"),
  noMessage: new WireProblem("the mistral provider answered without choices[0].message"),
  chunkNotJson: new WireProblem("the mistral provider streamed a chunk that is not JSON")
}

export const parseMistralResponse = (text: string): ParsedResponse | WireProblem => parseChatCompletionsResponse(text, mistralAnswers)

/** The `data:` payloads of a streamed answer; tool calls may span chunks by `index`, whose id is remembered. */
export const makeMistralChunkParser = (): StreamEventParser<string> => makeChatCompletionsChunkParser(mistralAnswers)
