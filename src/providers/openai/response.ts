/**
 * OpenAI Chat Completions responses (whole, and streamed event by event) -> provider-neutral
 * output blocks, usage and finish reason; and the explanation an error body carries.
 */
import type { ChunkDelta, FinishReason, OutputBlock, Usage } from "../../inference/types.ts"
import { streamedErrorProblem, tokenCount } from "../answerReaders.ts"
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
  const counted = { input_tokens: tokenCount(usage.prompt_tokens), output_tokens: tokenCount(usage.completion_tokens) }
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

/**
 * What a server speaking nearly Chat Completions answers differently (Mistral,
 * `../mistral/response.ts`). A constant per server: the parsers read its fields, no closure is
 * made per answer.
 */
export interface ChatAnswerDialect {
  readonly usage: (usage: Json | undefined | null) => Usage | undefined
  readonly finishReason: (reason: unknown) => FinishReason | undefined
  /** pushes the thoughts and texts of a whole answer's `message` */
  readonly messageContent: (message: Json, output: Array<OutputBlock>) => void
  /** pushes the thoughts and texts of a streamed `delta` */
  readonly deltaContent: (delta: Json, content: Array<ChunkDelta>) => void
  /** reads custom (free-text) tool calls (`type: "custom"`) */
  readonly customTools: boolean
  /** the text of a streamed tool call's `function.arguments` */
  readonly streamedArguments: (args: unknown) => string
  /** the problem a streamed chunk reports, if it is an error */
  readonly streamedError: (json: Json, data: string) => WireProblem | undefined
  readonly notJson: WireProblem
  readonly noMessage: WireProblem
  readonly chunkNotJson: WireProblem
}

/** Tool call arguments as text: as they are, or an object as JSON. */
export const argumentsText = (args: unknown): string => (typeof args === "string" ? args : JSON.stringify(args ?? {}))

/** OpenAI's own: reasoning as `reasoning_content` or `reasoning`, a refusal as text, custom tools. */
export const openAiAnswerDialect: ChatAnswerDialect = {
  usage: usageOf,
  finishReason: finishReasonOf,
  messageContent: (message, output) => {
    const reasoning = message.reasoning_content ?? message.reasoning
    if (typeof reasoning === "string" && reasoning !== "") output.push({ type: "thought", text: reasoning })
    if (typeof message.content === "string" && message.content !== "") output.push({ type: "text", text: message.content })
    if (typeof message.refusal === "string" && message.refusal !== "") output.push({ type: "text", text: message.refusal })
  },
  deltaContent: (delta, content) => {
    const reasoning = delta.reasoning_content ?? delta.reasoning
    if (typeof reasoning === "string" && reasoning !== "") content.push({ type: "thought", id: "0", text: reasoning })
    if (typeof delta.content === "string" && delta.content !== "") content.push({ type: "text", id: "0", text: delta.content })
  },
  customTools: true,
  streamedArguments: (args) => String(args ?? ""),
  streamedError: (json) => (json?.error === undefined ? undefined : streamedErrorProblem(json.error)),
  notJson: new WireProblem("the provider answered with a body that is not JSON"),
  noMessage: new WireProblem("the provider answered without choices[0].message"),
  chunkNotJson: new WireProblem("the provider streamed a chunk that is not JSON")
}

/** A whole Chat Completions answer, read as `dialect` says. */
export const parseChatCompletionsResponse = (text: string, dialect: ChatAnswerDialect): ParsedResponse | WireProblem => {
  let json: Json
  try {
    json = JSON.parse(text)
  } catch {
    return dialect.notJson
  }
  const choice = json?.choices?.[0]
  const message = choice?.message
  if (typeof message !== "object" || message === null) return dialect.noMessage
  const output: Array<OutputBlock> = []
  dialect.messageContent(message, output)
  if (Array.isArray(message.tool_calls)) {
    for (const call of message.tool_calls) {
      if (dialect.customTools && call?.type === "custom") {
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
        raw_arguments: argumentsText(call?.function?.arguments)
      })
    }
  }
  return {
    output,
    usage: dialect.usage(json.usage) ?? { input_tokens: 0, output_tokens: 0 },
    finishReason: dialect.finishReason(choice.finish_reason)
  }
}

export const parseOpenAiResponse = (text: string): ParsedResponse | WireProblem =>
  parseChatCompletionsResponse(text, openAiAnswerDialect)

/**
 * Parses the `data:` payloads of a streamed answer, read as `dialect` says. Tool-call deltas
 * name their call by `index` only after the first one, so the parser remembers each index's id.
 */
export const makeChatCompletionsChunkParser = (dialect: ChatAnswerDialect): StreamEventParser<string> => {
  const toolCallIds = new Map<number, string>()
  return (data) => {
    let json: Json
    try {
      json = JSON.parse(data)
    } catch {
      return dialect.chunkNotJson
    }
    const problem = dialect.streamedError(json, data)
    if (problem !== undefined) return problem
    const content: Array<ChunkDelta> = []
    const choice = json?.choices?.[0]
    const delta = choice?.delta
    if (delta !== undefined && delta !== null) {
      dialect.deltaContent(delta, content)
      if (Array.isArray(delta.tool_calls)) {
        for (const call of delta.tool_calls) {
          const index = typeof call?.index === "number" ? call.index : 0
          let id = toolCallIds.get(index)
          if (id === undefined) {
            id = String(call?.id ?? index)
            toolCallIds.set(index, id)
          }
          // a custom tool streams its free-text input where a function streams its arguments
          if (dialect.customTools && (call?.type === "custom" || call?.custom !== undefined)) {
            content.push({ type: "tool_call", id, raw_name: String(call?.custom?.name ?? ""), raw_arguments: String(call?.custom?.input ?? "") })
          } else {
            content.push({
              type: "tool_call",
              id,
              raw_name: String(call?.function?.name ?? ""),
              raw_arguments: dialect.streamedArguments(call?.function?.arguments)
            })
          }
        }
      }
    }
    return { content, usage: dialect.usage(json.usage), finishReason: dialect.finishReason(choice?.finish_reason), raw: data }
  }
}

export const makeOpenAiChunkParser = (): StreamEventParser<string> => makeChatCompletionsChunkParser(openAiAnswerDialect)
