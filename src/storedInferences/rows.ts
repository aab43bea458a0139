/**
 * A completed inference -> the rows that record it: the inference and its model call, with a
 * cache key when the request writes the cache and the answer is valid.
 */
import type { Input } from "../api/inference.ts"
import { uuidv7Timestamp } from "../ids.ts"
import type { ChatOutputBlock, JsonOutput } from "../inference/output.ts"
import type { PreparedInference } from "../inference/prepare.ts"
import type { CompletedInference } from "../inference/run.ts"
import type { ToolConfig } from "../inference/types.ts"
import { cacheKey } from "../cache/policy.ts"
import type { CacheEntry, StoredModelInference, WriteBatch } from "../analytics/records.ts"
import type { ModelCallRecord } from "../inference/variants/answer.ts"
import type { InferenceTarget } from "../analytics/records.ts"
import type { WriteUnit } from "../analytics/writeQueue.ts"

/** Invalid answers (tool calls that failed validation, json that does not parse or fit) are not cached. */
export const isValidOutput = (output: ReadonlyArray<ChatOutputBlock> | JsonOutput): boolean =>
  Array.isArray(output)
    ? output.every((block) => block.type !== "tool_call" || (block.name !== null && block.arguments !== null))
    : (output as JsonOutput).parsed !== null

export const toolParamsOf = (tools: ToolConfig | undefined) =>
  tools === undefined ? undefined : {
    tools_available: tools.tools.map((tool) => ({
      name: tool.name,
      description: tool.description,
      parameters: tool.parameters,
      strict: tool.strict
    })),
    tool_choice: tools.choice.type === "specific" ? { specific: tools.choice.name } : tools.choice.type,
    parallel_tool_calls: tools.parallelToolCalls ?? null,
    allowed_tools: tools.allowed ?? null
  }

export const inferenceTarget = (prepared: PreparedInference): InferenceTarget => ({
  workspace: prepared.workspace,
  functionName: prepared.functionName,
  functionType: prepared.fn.type,
  episodeId: prepared.episodeId,
  outputSchema: prepared.fn.type === "json" ? prepared.outputSchema?.schema : undefined
})

/**
 * The key the answer is cached under, when the request writes the cache and the answer is new
 * and valid. Hashed once per inference: a cache that keeps its own entries (Valkey) and the
 * stored row both ask for it (a memo of a pure function, forgotten with the inference).
 */
const cacheKeys = new WeakMap<CompletedInference, string | undefined>()
const answerCacheKey = (done: CompletedInference): string | undefined => {
  if (cacheKeys.has(done)) return cacheKeys.get(done)
  const { prepared, origin, output } = done
  const key = prepared.cache.write && !origin.cached && isValidOutput(output) ? cacheKey(origin.provider, origin.call, prepared.cache.scope) : undefined
  cacheKeys.set(done, key)
  return key
}

/** The answer as a cache that keeps its own entries holds it (see `CacheStore.remember`), when it is cached. */
export const cacheEntryOf = (done: CompletedInference): CacheEntry | undefined => {
  const key = answerCacheKey(done)
  return key === undefined ? undefined : {
    key,
    output: done.providerOutput,
    rawRequest: done.rawRequest,
    rawResponse: done.rawResponse,
    finishReason: done.finishReason,
    streamChunking: done.streamChunking,
    timestamp: uuidv7Timestamp(done.origin.modelInferenceId)
  }
}

/** `input`: the input as stored (its files in object storage), when not the prepared one */
export const inferenceRows = (done: CompletedInference, input?: Input): WriteBatch => {
  const { prepared, origin, modelRequest } = done
  const timestamp = uuidv7Timestamp(prepared.inferenceId)
  const key = answerCacheKey(done)
  const { json_mode: _, ...requestParams } = prepared.params ?? {}
  return {
    inferences: [{
      id: prepared.inferenceId,
      workspace: prepared.workspace,
      functionName: prepared.functionName,
      functionType: prepared.fn.type,
      variantName: done.variant.name,
      episodeId: prepared.episodeId,
      input: input ?? prepared.storedInput ?? prepared.request.input,
      output: done.output,
      toolParams: prepared.fn.type === "chat" ? toolParamsOf(prepared.tools) : undefined,
      outputSchema: prepared.fn.type === "json" ? prepared.outputSchema?.schema ?? {} : undefined,
      inferenceParams: { chat_completion: { ...modelRequest.params, ...requestParams, json_mode: modelRequest.jsonMode } },
      processingTimeMs: done.processingTimeMs,
      ttftMs: done.ttftMs,
      tags: prepared.request.tags ?? {},
      timestamp
    }],
    modelInferences: [...done.otherCalls.map((call) => otherCallRow(prepared.workspace, prepared.inferenceId, call)), {
      id: origin.modelInferenceId,
      workspace: prepared.workspace,
      inferenceId: prepared.inferenceId,
      modelName: origin.modelName,
      modelProviderName: origin.providerName,
      rawRequest: done.rawRequest,
      rawResponse: done.rawResponse,
      system: modelRequest.system,
      inputMessages: modelRequest.messages,
      output: done.providerOutput,
      inputTokens: done.usage.input_tokens,
      outputTokens: done.usage.output_tokens,
      cachedInputTokens: done.usage.cached_input_tokens,
      cost: done.cost,
      responseTimeMs: done.responseTimeMs,
      ttftMs: done.ttftMs,
      finishReason: done.finishReason,
      cached: origin.cached,
      cacheKey: key,
      streamChunking: key === undefined ? undefined : done.streamChunking,
      timestamp: uuidv7Timestamp(origin.modelInferenceId)
    }],
    feedback: []
  }
}

/** a model call of the inference besides the one that answered (a candidate, an evaluator, an embedding) */
const otherCallRow = (workspace: string, inferenceId: string, call: ModelCallRecord): StoredModelInference => ({
  id: call.modelInferenceId,
  workspace,
  inferenceId,
  modelName: call.modelName,
  modelProviderName: call.providerName,
  rawRequest: call.rawRequest,
  rawResponse: call.rawResponse,
  system: call.system,
  inputMessages: call.inputMessages,
  output: call.output,
  inputTokens: call.usage.input_tokens,
  outputTokens: call.usage.output_tokens,
  cachedInputTokens: call.usage.cached_input_tokens,
  cost: call.cost,
  responseTimeMs: call.responseTimeMs,
  finishReason: call.finishReason,
  cached: call.cached,
  timestamp: uuidv7Timestamp(call.modelInferenceId)
})

export const inferenceWriteUnit = (done: CompletedInference, input?: Input): WriteUnit => ({
  inference: { id: done.prepared.inferenceId, target: inferenceTarget(done.prepared) },
  batch: inferenceRows(done, input)
})
