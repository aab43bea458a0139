/**
 * The gateway's answers in OpenAI's shapes (spec 4.2): a `chat.completion`, a stream of
 * `chat.completion.chunk` events, and OpenAI's error body.
 */
import type { VariantConfig } from "../config/types.ts"
import { budgetField, type GatewayError } from "../errors.ts"
import { type ChatOutputBlock, hasToolCalls, type JsonOutput } from "../inference/output.ts"
import type { PreparedInference } from "../inference/prepare.ts"
import { isCustomTool } from "../inference/tools.ts"
import { jsonDelta } from "../inference/chunks.ts"
import { type CompletedInference, totalCost, totalUsage } from "../inference/run.ts"
import type { StreamEncoder } from "../inference/service.ts"
import type { ChunkDelta, FinishReason, Usage } from "../inference/types.ts"
import type { ModelCallRecord } from "../inference/variants/answer.ts"
import type { ApiType } from "../providers/codec.ts"
import { parseQualifiedProviderName } from "../providers/types.ts"
import { openAiErrorJson } from "../api/openaiCompatible.ts"
import { sseDone, sseEvent } from "../sseWriter.ts"
import { functionVariantModel, modelModelPrefix } from "../api/modelField.ts"
import type { TranslatedRequest } from "./request.ts"

const openAiFinishReason = (reason: FinishReason | undefined): string => {
  switch (reason) {
    case "length":
      return "length"
    case "tool_call":
      return "tool_calls"
    case "content_filter":
      return "content_filter"
    default:
      return "stop"
  }
}

/**
 * The finish reason of an answer: `tool_calls` only when it has tool calls to read, which an
 * answer through json_mode `tool` has not (its tool's arguments are its text).
 */
const finishReasonOf = (completed: CompletedInference): string =>
  completed.finishReason === "tool_call" && !hasToolCalls(completed.output)
    ? "stop"
    : openAiFinishReason(completed.finishReason)

const toolCallOf = (prepared: PreparedInference, block: Extract<ChatOutputBlock, { type: "tool_call" }>) =>
  isCustomTool(prepared.tools, block.name)
    ? { id: block.id, type: "custom", custom: { name: block.raw_name, input: block.raw_arguments } }
    : { id: block.id, type: "function", function: { name: block.raw_name, arguments: block.raw_arguments } }

/** `message` of a choice: the text, the tool calls, and thoughts and unknown blocks apart with their position */
const messageOf = (prepared: PreparedInference, output: ReadonlyArray<ChatOutputBlock> | JsonOutput) => {
  if (!Array.isArray(output)) return { role: "assistant", content: (output as JsonOutput).raw }
  const texts: Array<string> = []
  const toolCalls: Array<unknown> = []
  const extra: Array<unknown> = []
  output.forEach((block: ChatOutputBlock, index: number) => {
    switch (block.type) {
      case "text":
        texts.push(block.text)
        break
      case "tool_call":
        toolCalls.push(toolCallOf(prepared, block))
        break
      case "thought":
        extra.push({ type: "thought", insert_index: index, text: block.text, ...(block.signature === undefined ? {} : { signature: block.signature }) })
        break
      case "unknown":
        {
          // as the client sends it back: the model and the provider apart
          const origin = parseQualifiedProviderName(block.model_provider_name)
          extra.push({
            type: "unknown",
            insert_index: index,
            data: block.data,
            ...(origin === undefined ? {} : { model_name: origin.modelName, provider_name: origin.providerName })
          })
        }
        break
    }
  })
  return {
    role: "assistant",
    content: texts.length > 0 ? texts.join("") : null,
    ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}),
    ...(extra.length > 0 ? { gateway_extra_content: extra } : {})
  }
}

const usageIn = (json: string): unknown => {
  try {
    const parsed = JSON.parse(json)
    // Chat Completions (and most): `usage`; a Responses API event: `response.usage`; Gemini: `usageMetadata`
    return parsed?.usage ?? parsed?.response?.usage ?? parsed?.usageMetadata ?? undefined
  } catch {
    return undefined
  }
}

/** a model call's own usage, as its provider reported it: in its body, or (streamed: one chunk a line) in the last chunk that has one */
const providerUsageOf = (rawResponse: string): unknown => {
  const whole = usageIn(rawResponse)
  if (whole !== undefined) return whole
  const lines = rawResponse.split("\n")
  for (let i = lines.length - 1; i >= 0; i--) {
    const usage = usageIn(lines[i])
    if (usage !== undefined) return usage
  }
  return null
}

/** One entry of `gateway_raw_response` or `gateway_raw_usage`: which model call, through which API. */
interface RawEntryHead {
  readonly model_inference_id: string
  readonly provider_type: string
  readonly api_type: ApiType
}

/** every model call of an inference, the answer's last: its other calls (candidates, evaluator or fuser, DICL's embedding) first */
const modelCalls = (completed: CompletedInference): ReadonlyArray<readonly [RawEntryHead, string]> => [
  ...completed.otherCalls.map(otherCall),
  [{ model_inference_id: completed.origin.modelInferenceId, provider_type: completed.origin.provider.type, api_type: completed.origin.apiType }, completed.rawResponse]
]

/** a call the variant made besides its answer's, with its raw response; DICL's embedding call says no API (`ModelCallRecord.apiType`) */
const otherCall = (call: ModelCallRecord): readonly [RawEntryHead, string] =>
  [{ model_inference_id: call.modelInferenceId, provider_type: call.providerType, api_type: call.apiType ?? "embeddings" }, call.rawResponse]

/** `gateway_raw_usage` (with `gateway::include_raw_usage`): every model call's usage as its provider reported it */
const rawUsageOf = (completed: CompletedInference) => modelCalls(completed).map(([head, raw]) => ({ ...head, data: providerUsageOf(raw) }))

/** `gateway_raw_response` (with `gateway::include_raw_response`): every model call's raw response */
const rawResponseOf = (completed: CompletedInference) => modelCalls(completed).map(([head, raw]) => ({ ...head, data: raw }))

/** OpenAI's `usage`: the inference's tokens and the gateway's cost (null when the providers have no `cost` rules or they read nothing) */
const usageOf = (completed: CompletedInference) => {
  const usage: Usage = totalUsage(completed)
  return {
    prompt_tokens: usage.input_tokens,
    completion_tokens: usage.output_tokens,
    total_tokens: usage.input_tokens + usage.output_tokens,
    ...(usage.cached_input_tokens === undefined ? {} : { prompt_tokens_details: { cached_tokens: usage.cached_input_tokens } }),
    gateway_cost: totalCost(completed) ?? null
  }
}

/**
 * The `model` of an answer names what answered, so that a client learns the variant:
 * `gateway::function_name::<function>::variant_name::<variant>`, or for a model call
 * `gateway::model_name::<model>` (its one variant is the model).
 */
export const answeringModel = (prepared: PreparedInference, variant: VariantConfig): string =>
  prepared.request.model_name !== undefined
    ? `${modelModelPrefix}${variant.name}`
    : functionVariantModel(prepared.functionName, variant.name)

/** `created` is in Unix seconds, read by the caller: the core reads no clock. */
export const chatCompletionBody = (completed: CompletedInference, options: TranslatedRequest, created: number) => ({
  id: completed.prepared.inferenceId,
  episode_id: completed.prepared.episodeId,
  created,
  model: answeringModel(completed.prepared, completed.variant),
  object: "chat.completion",
  system_fingerprint: "",
  choices: [{
    index: 0,
    finish_reason: finishReasonOf(completed),
    message: messageOf(completed.prepared, completed.output),
    logprobs: null
  }],
  usage: usageOf(completed),
  // beside `usage`, as TensorZero puts it
  ...(options.includeRawUsage ? { gateway_raw_usage: rawUsageOf(completed) } : {}),
  ...(options.includeRawResponse ? { gateway_raw_response: rawResponseOf(completed) } : {})
})

export const openAiErrorBody = (error: GatewayError): string => JSON.stringify(openAiErrorJson(error.message, error.status, budgetField(error)))

/**
 * OpenAI's streaming shape as TensorZero sends it: `chat.completion.chunk` events from the
 * variant that answers, the role in the first, `usage` in every one (null but in the last), and
 * a last chunk with the finish reason in its choice and, with `stream_options.include_usage`,
 * the usage (OpenAI sends the usage in a chunk of its own, with no choices; one chunk carries
 * both here); then `[DONE]`. With `gateway::include_raw_response` each chunk carries the
 * provider's text of it (`gateway_raw_chunk`), and the first the raw responses of the model
 * calls made before the stream (`gateway_raw_response`: candidates, an embedding), when there
 * were any. `created` is in Unix seconds, read by the caller.
 *
 * Per chunk: the delta as a small object stringified once, the rest written as text.
 */
export const openAiStreamEncoder = (
  prepared: PreparedInference,
  variant: VariantConfig,
  otherCalls: ReadonlyArray<ModelCallRecord>,
  options: TranslatedRequest,
  created: number
): StreamEncoder => {
  const head = `{"id":"${prepared.inferenceId}","episode_id":"${prepared.episodeId}","created":${created},"model":${
    JSON.stringify(answeringModel(prepared, variant))
  },"object":"chat.completion.chunk","system_fingerprint":"","choices":[{"index":0,"delta":`
  const isChat = prepared.fn.type === "chat"
  // the calls before the stream, with the first chunk
  let firstTail = options.includeRawResponse && otherCalls.length > 0
    ? `,"gateway_raw_response":${JSON.stringify(otherCalls.map(otherCall).map(([entry, raw]) => ({ ...entry, data: raw })))}`
    : ""
  let roleSent = false
  // each tool call's index, and whether it is a custom tool's (its input streams in `custom.input`)
  const toolIndexes = new Map<string, { readonly index: number; readonly custom: boolean }>()
  // where each block of the answer is among its blocks (`insert_index`), as the whole answer's
  // `gateway_extra_content` says: blocks counted in the order they began
  const textBlocks = new Set<string>()
  const thoughtIndexes = new Map<string, number>()
  let blocks = 0
  const event = (delta: Record<string, unknown>, finishReason: string | null, tail: string) => {
    if (!roleSent) {
      roleSent = true
      delta = { role: "assistant", ...delta }
      tail += firstTail
      firstTail = ""
    }
    return sseEvent(`${head}${JSON.stringify(delta)},"finish_reason":${finishReason === null ? "null" : `"${finishReason}"`},"logprobs":null}]${tail}}`)
  }
  const toolCallDelta = (part: Extract<ChunkDelta, { type: "tool_call" }>) => {
    const known = toolIndexes.get(part.id)
    if (known === undefined) {
      const index = toolIndexes.size
      const custom = isCustomTool(prepared.tools, part.raw_name)
      toolIndexes.set(part.id, { index, custom })
      blocks++
      return custom
        ? { index, id: part.id, type: "custom", custom: { name: part.raw_name, input: part.raw_arguments } }
        : { index, id: part.id, type: "function", function: { name: part.raw_name, arguments: part.raw_arguments } }
    }
    // a name streamed in pieces goes on; none is repeated (a client joins them, and OpenAI's SDK refuses a changed one)
    const { index, custom } = known
    return custom
      ? { index, type: "custom", custom: part.raw_name === "" ? { input: part.raw_arguments } : { name: part.raw_name, input: part.raw_arguments } }
      : { index, type: "function", function: part.raw_name === "" ? { arguments: part.raw_arguments } : { name: part.raw_name, arguments: part.raw_arguments } }
  }
  const chatDelta = (content: ReadonlyArray<ChunkDelta>): Record<string, any> => {
    const delta: Record<string, any> = {}
    for (const part of content) {
      switch (part.type) {
        case "text":
          if (!textBlocks.has(part.id)) {
            textBlocks.add(part.id)
            blocks++
          }
          delta.content = (delta.content ?? "") + part.text
          break
        case "tool_call":
          ;(delta.tool_calls ??= []).push(toolCallDelta(part))
          break
        case "thought": {
          let insertIndex = thoughtIndexes.get(part.id)
          if (insertIndex === undefined) {
            insertIndex = blocks++
            thoughtIndexes.set(part.id, insertIndex)
          }
          ;(delta.gateway_extra_content ??= []).push(
            part.signature === undefined
              ? { type: "thought", insert_index: insertIndex, text: part.text }
              : { type: "thought", insert_index: insertIndex, text: part.text, signature: part.signature }
          )
          break
        }
      }
    }
    return delta
  }
  const rawChunk = (raw: string) => options.includeRawResponse && raw !== "" ? `,"gateway_raw_chunk":${JSON.stringify(raw)}` : ""
  return {
    chunk: ({ content, raw }) => {
      const rawTail = rawChunk(raw)
      if (isChat) {
        const delta = content.length === 0 ? {} : chatDelta(content)
        // a chunk with nothing to say is sent only to carry the provider's text of it
        if (rawTail === "" && delta.content === undefined && delta.tool_calls === undefined && delta.gateway_extra_content === undefined) return undefined
        return event(delta, null, `,"usage":null${rawTail}`)
      }
      const text = jsonDelta(content)
      if (text === "" && rawTail === "") return undefined
      return event({ content: text }, null, `,"usage":null${rawTail}`)
    },
    end: (completed) => {
      const usage = options.includeUsage ? JSON.stringify(usageOf(completed)) : "null"
      const rawUsage = options.includeRawUsage ? `,"gateway_raw_usage":${JSON.stringify(rawUsageOf(completed))}` : ""
      // a json function's last chunk says its content is over, as TensorZero's does
      return event(isChat ? {} : { content: "" }, finishReasonOf(completed), `,"usage":${usage}${rawUsage}`) + sseDone
    },
    failure: ({ message }) => sseEvent(JSON.stringify(openAiErrorJson(message, 502)))
  }
}
