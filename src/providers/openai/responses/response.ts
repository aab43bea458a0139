/**
 * OpenAI Responses API answers -> output blocks: `message` items' `output_text` (and
 * `refusal`) as text, `function_call` and `custom_tool_call` items as tool calls, `reasoning`
 * items as thoughts (their summary as text, their `encrypted_content` as the signature,
 * `signature.ts`), any other item (`web_search_call`...) as an `unknown` block; usage with
 * cached input tokens; `status`/`incomplete_details` as the finish reason.
 */
import type { FinishReason, OutputBlock, Usage } from "../../../inference/types.ts"
import { tokenCount } from "../../answerReaders.ts"
import { type ParsedResponse, WireProblem, unscopedProvider } from "../../codec.ts"

type Json = Record<string, any>

export const responsesUsage = (usage: Json | undefined | null): Usage | undefined => {
  if (usage === undefined || usage === null) return undefined
  const cached = usage.input_tokens_details?.cached_tokens
  return {
    input_tokens: tokenCount(usage.input_tokens),
    output_tokens: tokenCount(usage.output_tokens),
    ...(typeof cached === "number" ? { cached_input_tokens: cached } : {})
  }
}

/** `completed` is a stop (a tool call when it called one); `incomplete` says why. */
export const responsesFinishReason = (response: Json, calledTool: boolean): FinishReason | undefined => {
  switch (response?.status) {
    case "completed":
      return calledTool ? "tool_call" : "stop"
    case "incomplete":
      switch (response?.incomplete_details?.reason) {
        case "max_output_tokens":
          return "length"
        case "content_filter":
          return "content_filter"
        default:
          return "unknown"
      }
    case undefined:
    case null:
      return undefined
    default:
      return "unknown"
  }
}

/** A reasoning item's summary texts, one paragraph each. */
export const summaryText = (item: Json): string =>
  Array.isArray(item?.summary)
    ? item.summary.filter((part: Json) => typeof part?.text === "string").map((part: Json) => part.text).join("\n\n")
    : ""

/**
 * The signature of a reasoning item that can be sent back: its encrypted content (`signature.ts`);
 * with `store: false` the API knows a reasoning item only by it, so one without it has no signature.
 */
export const reasoningSignature = (item: Json): string | undefined =>
  typeof item?.encrypted_content === "string" ? item.encrypted_content : undefined

/** The output blocks of one output item. */
const blocksOf = (item: Json, output: Array<OutputBlock>): void => {
  switch (item?.type) {
    case "message":
      for (const part of Array.isArray(item.content) ? item.content : []) {
        if (part?.type === "output_text" && typeof part.text === "string") output.push({ type: "text", text: part.text })
        else if (part?.type === "refusal" && typeof part.refusal === "string") output.push({ type: "text", text: part.refusal })
      }
      return
    case "function_call":
      output.push({ type: "tool_call", id: String(item.call_id ?? item.id ?? ""), raw_name: String(item.name ?? ""), raw_arguments: String(item.arguments ?? "") })
      return
    case "custom_tool_call":
      output.push({ type: "tool_call", id: String(item.call_id ?? item.id ?? ""), raw_name: String(item.name ?? ""), raw_arguments: String(item.input ?? "") })
      return
    case "reasoning": {
      // a thought when there is something to show or to send back
      const signature = reasoningSignature(item)
      const text = summaryText(item)
      if (signature !== undefined) output.push({ type: "thought", text, signature })
      else if (text !== "") output.push({ type: "thought", text })
      return
    }
    default:
      output.push({ type: "unknown", data: item, model_provider_name: unscopedProvider })
  }
}

export const isToolCallItem = (item: Json): boolean => item?.type === "function_call" || item?.type === "custom_tool_call"

/** The explanation of an error body: `error.message` (OpenAI's format), or `message`. */
export const responsesErrorMessage = (body: string): string | undefined => {
  try {
    const parsed = JSON.parse(body)
    if (typeof parsed?.error?.message === "string") return parsed.error.message
    if (typeof parsed?.message === "string") return parsed.message
  } catch {
    // not JSON
  }
  return undefined
}

export const parseResponsesResponse = (text: string): ParsedResponse | WireProblem => {
  let json: Json
  try {
    json = JSON.parse(text)
  } catch {
    return new WireProblem("the openai provider (Responses API) answered with a body that is not JSON")
  }
  if (json?.status === "failed") {
    return new WireProblem(`the openai provider (Responses API) failed the response: ${json.error?.message ?? JSON.stringify(json.error)}`)
  }
  if (!Array.isArray(json?.output)) return new WireProblem("the openai provider (Responses API) answered without output")
  const output: Array<OutputBlock> = []
  for (const item of json.output) blocksOf(item, output)
  return {
    output,
    usage: responsesUsage(json.usage) ?? { input_tokens: 0, output_tokens: 0 },
    finishReason: responsesFinishReason(json, json.output.some(isToolCallItem))
  }
}
