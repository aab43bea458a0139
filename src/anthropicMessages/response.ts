/**
 * The gateway's answers in Anthropic's shapes (issue 37, design 2.2 and 2.4): a `message`
 * object, and the error type and body each gateway error takes on `/anthropic/v1/*`.
 */
import type { AnthropicMessage } from "../api/anthropicMessages.ts"
import { type ChatOutputBlock, hasToolCalls, type JsonOutput } from "../inference/output.ts"
import { type CompletedInference, totalUsage } from "../inference/run.ts"
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

/** a block as Anthropic writes it; unknown blocks (another provider's) are left out for now */
const contentOf = (block: ChatOutputBlock): ReadonlyArray<MessageContent> => {
  switch (block.type) {
    case "text":
      return [{ type: "text", text: block.text }]
    case "tool_call":
      return [{ type: "tool_use", id: block.id, name: block.raw_name, input: toolInput(block.raw_arguments) }]
    case "thought":
      return [{ type: "thinking", thinking: block.text ?? "", signature: block.signature ?? "" }]
    case "unknown":
      return []
  }
}

/**
 * `stop_reason`: `tool_use` only when the answer has tool calls to read, which an answer
 * through json_mode `tool` has not (its tool's arguments are its text), as on the chat route.
 */
const stopReasonOf = (completed: CompletedInference): Message["stop_reason"] => {
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

/** `stop_reason`, and `stop_sequence`: the sequence that stopped the answer is known only when one was asked for */
export const stopOf = (completed: CompletedInference, translated: TranslatedMessages): Pick<Message, "stop_reason" | "stop_sequence"> => {
  const stopReason = stopReasonOf(completed)
  const stopSequences = translated.request.params?.chat_completion?.stop_sequences
  return { stop_reason: stopReason, stop_sequence: stopReason === "stop_sequence" && stopSequences?.length === 1 ? stopSequences[0] : null }
}

/** Anthropic counts input without the cache's reads; the gateway counts all of it */
export const usageOf = (completed: CompletedInference): Message["usage"] => {
  const usage = totalUsage(completed)
  const cacheRead = usage.cached_input_tokens ?? 0
  return {
    input_tokens: Math.max(0, usage.input_tokens - cacheRead),
    cache_creation_input_tokens: 0,
    cache_read_input_tokens: cacheRead,
    output_tokens: usage.output_tokens
  }
}

export const messageBody = (completed: CompletedInference, translated: TranslatedMessages): Message => {
  const output = completed.output
  return {
    id: completed.prepared.inferenceId,
    type: "message",
    role: "assistant",
    model: translated.model,
    // a json function's answer is its text
    content: Array.isArray(output) ? output.flatMap(contentOf) : [{ type: "text", text: (output as JsonOutput).raw }],
    ...stopOf(completed, translated),
    usage: usageOf(completed),
    gateway_episode_id: completed.prepared.episodeId,
    gateway_variant_name: completed.variant.name
  }
}
