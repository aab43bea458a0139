/**
 * Bedrock Converse answers -> provider-neutral output, usage and finish reason; ConverseStream
 * events (AWS event-stream messages with JSON payloads) -> chunks; and what an error body says.
 * https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_Converse.html
 * https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_ConverseStream.html
 */
import type { ChunkDelta, FinishReason, OutputBlock, Usage } from "../../inference/types.ts"
import { cacheApartUsage } from "../answerReaders.ts"
import { type ParsedResponse, type StreamEventParser, WireProblem } from "../codec.ts"
import { type AwsEvent, exceptionMessage, payloadText } from "./eventStream.ts"

type Json = Record<string, any>

const type = "aws_bedrock"

export const converseFinishReason = (reason: unknown): FinishReason | undefined => {
  switch (reason) {
    case undefined:
    case null:
      return undefined
    case "end_turn":
      return "stop"
    case "tool_use":
      return "tool_call"
    case "max_tokens":
    case "model_context_window_exceeded":
      return "length"
    case "stop_sequence":
      return "stop_sequence"
    case "content_filtered":
    case "guardrail_intervened":
      return "content_filter"
    default:
      return "unknown"
  }
}

/**
 * Bedrock counts cache reads and writes apart from `inputTokens`; the gateway's input tokens are
 * all of them, of which `cached_input_tokens` were read from the cache.
 */
export const converseUsage = (usage: Json | undefined | null): Usage | undefined => {
  if (usage === undefined || usage === null) return undefined
  const read = usage.cacheReadInputTokens
  return cacheApartUsage(usage.inputTokens, usage.outputTokens, read, usage.cacheWriteInputTokens, read !== undefined)
}

/** AWS error bodies: `{"message": "..."}` (some services write `Message`). */
export const awsErrorMessage = (body: string): string | undefined => {
  try {
    const parsed = JSON.parse(body)
    if (typeof parsed?.message === "string") return parsed.message
    if (typeof parsed?.Message === "string") return parsed.Message
  } catch {
    // not JSON: nothing to take from it
  }
  return undefined
}

const outputBlock = (block: Json, providerName: string): OutputBlock | undefined => {
  if (typeof block?.text === "string") return block.text === "" ? undefined : { type: "text", text: block.text }
  if (block?.toolUse !== undefined) {
    const use = block.toolUse
    return {
      type: "tool_call",
      id: String(use?.toolUseId ?? ""),
      raw_name: String(use?.name ?? ""),
      raw_arguments: JSON.stringify(use?.input ?? {})
    }
  }
  const reasoning = block?.reasoningContent?.reasoningText
  if (reasoning !== undefined && typeof reasoning?.text === "string") {
    return typeof reasoning.signature === "string"
      ? { type: "thought", text: reasoning.text, signature: reasoning.signature }
      : { type: "thought", text: reasoning.text }
  }
  // redacted reasoning, citations, images...: kept as they are, and sent back to this provider
  return { type: "unknown", data: block, model_provider_name: providerName }
}

const notJson = new WireProblem(`the ${type} provider answered with a body that is not JSON`)
const noMessage = new WireProblem(`the ${type} provider answered without output.message`)

/** A Converse answer, its `unknown` blocks marked as this provider's (`qualifiedName`). */
export const parseConverseResponse = (text: string, qualifiedName: string): ParsedResponse | WireProblem => {
  let json: Json
  try {
    json = JSON.parse(text)
  } catch {
    return notJson
  }
  const content = json?.output?.message?.content
  if (!Array.isArray(content)) return noMessage
  const output: Array<OutputBlock> = []
  for (const block of content) {
    const converted = outputBlock(block, qualifiedName)
    if (converted !== undefined) output.push(converted)
  }
  return {
    output,
    usage: converseUsage(json.usage) ?? { input_tokens: 0, output_tokens: 0 },
    finishReason: converseFinishReason(json.stopReason)
  }
}

const noContent: ReadonlyArray<ChunkDelta> = []

/**
 * Reads ConverseStream's events. Blocks are named by `contentBlockIndex`; a tool call's id and
 * name come in its `contentBlockStart` only, so the parser remembers its id by index. Streamed
 * `raw_name` and `raw_arguments` are deltas, as for every provider: the name goes out with the
 * start, the argument deltas after it carry none.
 */
export const makeConverseStreamParser = (): StreamEventParser<AwsEvent> => {
  const toolUseIds = new Map<number, string>()
  return (event) => {
    if (event.messageType !== "event") return new WireProblem(`the ${type} provider streamed an error: ${exceptionMessage(event)}`)
    const raw = payloadText(event)
    let json: Json
    try {
      json = raw === "" ? {} : JSON.parse(raw)
    } catch {
      return new WireProblem(`the ${type} provider streamed a ${event.eventType} event that is not JSON`)
    }
    const index = typeof json?.contentBlockIndex === "number" ? json.contentBlockIndex : 0
    const id = String(index)
    switch (event.eventType) {
      case "contentBlockStart": {
        const start = json?.start?.toolUse
        if (start === undefined) return { content: noContent, raw }
        const toolUseId = String(start.toolUseId ?? id)
        toolUseIds.set(index, toolUseId)
        return { content: [{ type: "tool_call", id: toolUseId, raw_name: String(start.name ?? ""), raw_arguments: "" }], raw }
      }
      case "contentBlockDelta": {
        const delta = json?.delta
        if (typeof delta?.text === "string") return { content: delta.text === "" ? noContent : [{ type: "text", id, text: delta.text }], raw }
        if (delta?.toolUse !== undefined) {
          return {
            content: [{ type: "tool_call", id: toolUseIds.get(index) ?? id, raw_name: "", raw_arguments: String(delta.toolUse.input ?? "") }],
            raw
          }
        }
        const reasoning = delta?.reasoningContent
        if (typeof reasoning?.text === "string") return { content: [{ type: "thought", id, text: reasoning.text }], raw }
        if (typeof reasoning?.signature === "string") {
          return { content: [{ type: "thought", id, text: "", signature: reasoning.signature }], raw }
        }
        // redacted reasoning and other deltas have no streamed form in the gateway: kept in the raw chunk
        return { content: noContent, raw }
      }
      case "messageStop":
        return { content: noContent, finishReason: converseFinishReason(json?.stopReason), raw }
      case "metadata":
        return { content: noContent, usage: converseUsage(json?.usage), raw }
      default:
        // messageStart, contentBlockStop, and events added later
        return { content: noContent, raw }
    }
  }
}
