/**
 * The gateway's answers in Anthropic's shapes (issue 37, design 2.2 and 2.4): a `message`
 * object, and the error type and body each gateway error takes on `/anthropic/v1/*`.
 */
import { type AnthropicMessage, anthropicStopReasons } from "../api/anthropicMessages.ts"
import { type ChatOutputBlock, hasToolCalls, type JsonOutput } from "../inference/output.ts"
import { type CompletedInference, totalUsage } from "../inference/run.ts"
import type { ProviderStop } from "../inference/types.ts"
import { providerFamily, signatureForClient } from "../providers/families.ts"
import type { TranslatedMessages } from "./request.ts"

type Message = typeof AnthropicMessage.Type
type MessageContent = Message["content"][number]

/** Anthropic's SDKs need a tool_use input to be an object: arguments that are not JSON are none */
const toolInput = (rawArguments: string): unknown => {
  try {
    return JSON.parse(rawArguments)
  } catch {
    return {}
  }
}

/** an Anthropic block as the provider wrote it: what an Anthropic-type provider's `unknown` blocks hold */
const isAnthropicBlock = (data: unknown): data is MessageContent =>
  typeof data === "object" && data !== null && typeof (data as { type?: unknown }).type === "string"

/**
 * A block as Anthropic writes it. A thought's signature that another family made goes wrapped
 * with its maker's type (`signatureForClient`); an Anthropic-type provider's blocks the gateway
 * does not model (redacted thinking, server tool use and results) go as the provider wrote
 * them, another family's are left out.
 */
export const contentOf = (block: ChatOutputBlock, fromAnthropic: () => boolean): ReadonlyArray<MessageContent> => {
  switch (block.type) {
    case "text":
      return [{ type: "text", text: block.text }]
    case "tool_call":
      return [{ type: "tool_use", id: block.id, name: block.raw_name, input: toolInput(block.raw_arguments) }]
    case "thought":
      return [{
        type: "thinking",
        thinking: block.text ?? "",
        signature: block.signature === undefined ? "" : signatureForClient(block.signature, block.provider_type, "anthropic")
      }]
    case "unknown":
      return isAnthropicBlock(block.data) && fromAnthropic() ? [block.data] : []
  }
}

const anthropicReasons: ReadonlySet<string> = new Set(anthropicStopReasons)

/** an Anthropic-type provider's own stop reason (`pause_turn`...) and matched sequence, when it answered */
const anthropicStop = (completed: CompletedInference): ProviderStop | undefined => {
  const stop = completed.providerStop
  return stop !== undefined && anthropicReasons.has(stop.reason) && providerFamily(completed.origin.provider) === "anthropic" ? stop : undefined
}

/**
 * `stop_reason`: an Anthropic-type provider's as it said it; otherwise from the finish reason,
 * `tool_use` only when the answer has tool calls to read, which an answer through json_mode
 * `tool` has not (its tool's arguments are its text), as on the chat route.
 */
const stopReasonOf = (completed: CompletedInference): Message["stop_reason"] => {
  const own = anthropicStop(completed)
  if (own !== undefined) return own.reason as Message["stop_reason"]
  switch (completed.finishReason) {
    case "stop_sequence":
      return "stop_sequence"
    case "length":
      return "max_tokens"
    case "content_filter":
      return "refusal"
    case "tool_call":
      return hasToolCalls(completed.output) ? "tool_use" : "end_turn"
    default:
      return "end_turn"
  }
}

/** Anthropic counts input without the cache's reads and writes; the gateway counts all of it */
export const usageOf = (completed: CompletedInference): Message["usage"] => {
  const usage = totalUsage(completed)
  const cacheRead = usage.cached_input_tokens ?? 0
  const cacheWrite = usage.cache_write_input_tokens ?? 0
  return {
    input_tokens: Math.max(0, usage.input_tokens - cacheRead - cacheWrite),
    cache_creation_input_tokens: cacheWrite,
    cache_read_input_tokens: cacheRead,
    output_tokens: usage.output_tokens
  }
}

/** the sequence that stopped the answer: the provider's when it said, else the one asked for when only one was */
const stopSequenceOf = (completed: CompletedInference, stopReason: Message["stop_reason"], translated: TranslatedMessages): string | null => {
  if (stopReason !== "stop_sequence") return null
  const said = anthropicStop(completed)?.sequence
  if (said !== undefined) return said
  const asked = translated.request.params?.chat_completion?.stop_sequences
  return asked?.length === 1 ? asked[0] : null
}

/** `stop_reason` and `stop_sequence` of a completed inference */
export const stopOf = (completed: CompletedInference, translated: TranslatedMessages): Pick<Message, "stop_reason" | "stop_sequence"> => {
  const stopReason = stopReasonOf(completed)
  return { stop_reason: stopReason, stop_sequence: stopSequenceOf(completed, stopReason, translated) }
}

export const messageBody = (completed: CompletedInference, translated: TranslatedMessages): Message => {
  const output = completed.output
  return {
    id: completed.prepared.inferenceId,
    type: "message",
    role: "assistant",
    model: translated.model,
    // a json function's answer is its text
    content: Array.isArray(output)
      ? output.flatMap((block) => contentOf(block, () => providerFamily(completed.origin.provider) === "anthropic"))
      : [{ type: "text", text: (output as JsonOutput).raw }],
    ...stopOf(completed, translated),
    usage: usageOf(completed),
    gateway_episode_id: completed.prepared.episodeId,
    gateway_variant_name: completed.variant.name
  }
}
