/**
 * The gateway's answers in OpenAI's shapes (spec 4.2): a `chat.completion`, a stream of
 * `chat.completion.chunk` events, and OpenAI's error body.
 */
import type { VariantConfig } from "../config/types.ts"
import type { GatewayError } from "../errors.ts"
import type { ChatOutputBlock, JsonOutput } from "../inference/output.ts"
import type { PreparedInference } from "../inference/prepare.ts"
import { jsonDelta } from "../inference/chunks.ts"
import { type CompletedInference, totalCost, totalUsage } from "../inference/run.ts"
import type { StreamEncoder } from "../inference/service.ts"
import type { ChunkDelta, FinishReason, Usage } from "../inference/types.ts"
import { parseQualifiedProviderName } from "../providers/types.ts"
import { openAiErrorJson } from "../api/openaiCompatible.ts"
import { sseDone, sseEvent } from "../sseWriter.ts"
import { functionModelPrefix, modelModelPrefix, type TranslatedRequest } from "./request.ts"

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

const isCustomTool = (prepared: PreparedInference, name: string | null) =>
  prepared.tools?.tools.some((tool) => tool.name === name && tool.custom !== undefined) === true

const toolCallOf = (prepared: PreparedInference, block: Extract<ChatOutputBlock, { type: "tool_call" }>) =>
  isCustomTool(prepared, block.name)
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
    return JSON.parse(json)?.usage ?? undefined
  } catch {
    return undefined
  }
}

/** the provider's own usage: in its body, or (streamed: one chunk a line) in the last chunk that has one */
const rawUsageOf = (completed: CompletedInference): unknown => {
  const whole = usageIn(completed.rawResponse)
  if (whole !== undefined) return whole
  const lines = completed.rawResponse.split("\n")
  for (let i = lines.length - 1; i >= 0; i--) {
    const usage = usageIn(lines[i])
    if (usage !== undefined) return usage
  }
  return undefined
}

const usageOf = (completed: CompletedInference, options: TranslatedRequest) => {
  const usage: Usage = totalUsage(completed)
  return {
    prompt_tokens: usage.input_tokens,
    completion_tokens: usage.output_tokens,
    total_tokens: usage.input_tokens + usage.output_tokens,
    ...(usage.cached_input_tokens === undefined ? {} : { prompt_tokens_details: { cached_tokens: usage.cached_input_tokens } }),
    // null when the provider has no `cost` rules or they read nothing
    gateway_cost: totalCost(completed) ?? null,
    ...(options.includeRawUsage
      ? {
        gateway_raw_usage: [{
          model_inference_id: completed.origin.modelInferenceId,
          provider_type: completed.origin.provider.type,
          api_type: "chat_completions",
          data: rawUsageOf(completed)
        }]
      }
      : {})
  }
}

/** every model call's raw response: a sampling variant's candidates and evaluator or fuser, DICL's embedding, then the answer's */
const rawResponseOf = (completed: CompletedInference) => [
  ...completed.otherCalls.map((call) => ({ model_inference_id: call.modelInferenceId, provider_type: call.providerType, data: call.rawResponse })),
  {
    model_inference_id: completed.origin.modelInferenceId,
    provider_type: completed.origin.provider.type,
    data: completed.rawResponse
  }
]

/**
 * The `model` of an answer names what answered, so that a client learns the variant:
 * `gateway::function_name::<function>::variant_name::<variant>`, or for a model call
 * `gateway::model_name::<model>` (its one variant is the model).
 */
export const answeringModel = (prepared: PreparedInference, variant: VariantConfig): string =>
  prepared.request.model_name !== undefined
    ? `${modelModelPrefix}${variant.name}`
    : `${functionModelPrefix}${prepared.functionName}::variant_name::${variant.name}`

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
    finish_reason: openAiFinishReason(completed.finishReason),
    message: messageOf(completed.prepared, completed.output),
    logprobs: null
  }],
  usage: usageOf(completed, options),
  ...(options.includeRawResponse ? { gateway_raw_response: rawResponseOf(completed) } : {})
})

export const openAiErrorBody = (error: GatewayError): string => JSON.stringify(openAiErrorJson(error.message, error.status))

/**
 * OpenAI's streaming shape: `chat.completion.chunk` events from the variant that answers, the
 * role first, then `[DONE]`. `created` is in Unix seconds, read by the caller.
 */
export const openAiStreamEncoder = (
  prepared: PreparedInference,
  variant: VariantConfig,
  options: TranslatedRequest,
  created: number
): StreamEncoder => {
  const head = `"id":"${prepared.inferenceId}","episode_id":"${prepared.episodeId}","created":${created},"model":${
    JSON.stringify(answeringModel(prepared, variant))
  },"object":"chat.completion.chunk","system_fingerprint":""`
  const isChat = prepared.fn.type === "chat"
  let roleSent = false
  // each tool call's index, and whether it is a custom tool's (its input streams in `custom.input`)
  const toolIndexes = new Map<string, { readonly index: number; readonly custom: boolean }>()
  const choiceEvent = (delta: Record<string, unknown>, finishReason: string | null) => {
    if (!roleSent) {
      roleSent = true
      delta = { role: "assistant", ...delta }
    }
    return sseEvent(`{${head},"choices":[${JSON.stringify({ index: 0, delta, finish_reason: finishReason, logprobs: null })}]}`)
  }
  const deltaOf = (content: ReadonlyArray<ChunkDelta>): Record<string, unknown> | undefined => {
    if (!isChat) {
      const raw = jsonDelta(content)
      return raw === "" ? undefined : { content: raw }
    }
    const delta: Record<string, any> = {}
    for (const part of content) {
      switch (part.type) {
        case "text":
          delta.content = (delta.content ?? "") + part.text
          break
        case "tool_call": {
          const known = toolIndexes.get(part.id)
          const index = known?.index ?? toolIndexes.size
          const custom = known?.custom ?? isCustomTool(prepared, part.raw_name)
          const call = known === undefined
            ? custom
              ? { index, id: part.id, type: "custom", custom: { name: part.raw_name, input: part.raw_arguments } }
              : { index, id: part.id, type: "function", function: { name: part.raw_name, arguments: part.raw_arguments } }
            : custom
            ? { index, custom: { input: part.raw_arguments } }
            : { index, function: { arguments: part.raw_arguments } }
          if (known === undefined) toolIndexes.set(part.id, { index, custom })
          ;(delta.tool_calls ??= []).push(call)
          break
        }
        case "thought":
          ;(delta.gateway_extra_content ??= []).push({ type: "thought", text: part.text })
          break
      }
    }
    return Object.keys(delta).length === 0 ? undefined : delta
  }
  return {
    chunk: (content) => {
      const delta = deltaOf(content)
      return delta === undefined ? undefined : choiceEvent(delta, null)
    },
    end: (completed) => {
      const events = [choiceEvent({}, openAiFinishReason(completed.finishReason))]
      if (options.includeUsage) {
        const usage = usageOf(completed, options)
        const raw = options.includeRawResponse ? `,"gateway_raw_response":${JSON.stringify(rawResponseOf(completed))}` : ""
        events.push(sseEvent(`{${head},"choices":[],"usage":${JSON.stringify(usage)}${raw}}`))
      }
      events.push(sseDone)
      return events.join("")
    },
    failure: (message) => sseEvent(JSON.stringify(openAiErrorJson(message, 502)))
  }
}
