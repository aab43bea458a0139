/**
 * A batch's records: what is stored when it is submitted (the batch and each inference as
 * sent), the regular inferences and model inferences its results become once the provider
 * finished it (spec 3: "stored as for regular inferences"), and the answers of
 * `GET /batch_inference/...` read back from them. Pure.
 */
import { inferenceUsage } from "../native/response.ts"
import { type ChatOutputBlock, chatOutput, jsonOutput, jsonRawText } from "../inference/output.ts"
import type { ToolConfig, ToolDefinition } from "../inference/types.ts"
import { compileRequestJsonSchema, type JsonSchemaValidator } from "../jsonSchema.ts"
import { toolParamsOf } from "../storedInferences/rows.ts"
import type { StoredInference, StoredModelInference, WriteBatch } from "../analytics/records.ts"
import type { BatchHandle } from "../providers/codec.ts"
import type { BatchResult } from "../providers/types.ts"
import type { BatchInferenceRequest } from "../api/batch.ts"
import type { PreparedBatch } from "./prepare.ts"
import type { StoredBatch, StoredBatchInference } from "./store.ts"

/** the batch's rows at submission: the batch (pending) and each inference as sent */
export const submittedRows = (
  batch: PreparedBatch,
  request: BatchInferenceRequest,
  handle: BatchHandle,
  rawRequests: ReadonlyArray<string>,
  now: number,
  workspace: string
): { readonly batch: StoredBatch; readonly inferences: ReadonlyArray<StoredBatchInference> } => ({
  batch: {
    id: batch.batchId,
    workspace,
    functionName: batch.functionName,
    functionType: batch.fn.type,
    variantName: batch.variant.name,
    modelName: batch.modelName,
    modelProviderName: batch.provider.config.name,
    providerBatchId: handle.providerBatchId,
    providerBatchData: handle.data ?? null,
    batchParams: { params: request.params ?? {}, tags: request.tags ?? null },
    status: "pending",
    timestamp: batchTimestamp(batch),
    updatedAt: now
  },
  inferences: batch.inferences.map(({ prepared, modelRequest }, index) => {
    const { json_mode: _, ...requestParams } = prepared.params ?? {}
    return {
      batchId: batch.batchId,
      workspace,
      inferenceId: prepared.inferenceId,
      episodeId: prepared.episodeId,
      index,
      functionName: batch.functionName,
      variantName: batch.variant.name,
      input: prepared.request.input,
      system: modelRequest.system,
      inputMessages: modelRequest.messages,
      toolParams: batch.fn.type === "chat" ? toolParamsOf(prepared.tools) : undefined,
      outputSchema: batch.fn.type === "json" ? prepared.outputSchema?.schema ?? {} : undefined,
      inferenceParams: { chat_completion: { ...modelRequest.params, ...requestParams, json_mode: modelRequest.jsonMode } },
      rawRequest: rawRequests[index],
      modelName: batch.modelName,
      modelProviderName: batch.provider.config.name,
      tags: prepared.request.tags ?? {},
      timestamp: prepared.startedAt
    }
  })
})

const batchTimestamp = (batch: PreparedBatch): number => batch.inferences[0]?.prepared.startedAt ?? 0

/**
 * The id of the model inference behind a batch's inference: derived from the inference's id
 * (same time, other random bits), so that completing a batch again after a crash midway writes
 * the same rows, which the stores keep once.
 */
export const modelInferenceIdOf = (inferenceId: string): string => {
  // two halves of 24 bits: JavaScript's bitwise operators work on 32
  const flip = (hex: string) => ((parseInt(hex, 16) ^ 0x5a5a5a) >>> 0).toString(16).padStart(6, "0")
  return inferenceId.slice(0, -12) + flip(inferenceId.slice(-12, -6)) + flip(inferenceId.slice(-6))
}

interface StoredToolParams {
  readonly tools_available?: ReadonlyArray<{ name: string; description: string; parameters: Record<string, unknown>; strict: boolean }>
  readonly allowed_tools?: ReadonlyArray<string> | null
}

/** the schemas of one batch compiled once each, by their JSON text (one cache for every slice of a batch) */
export const schemaCache = () => {
  const compiled = new Map<string, JsonSchemaValidator | undefined>()
  return (schema: unknown): JsonSchemaValidator | undefined => {
    const key = JSON.stringify(schema)
    if (!compiled.has(key)) {
      const result = compileRequestJsonSchema(schema)
      compiled.set(key, "validator" in result ? result.validator : undefined)
    }
    return compiled.get(key)
  }
}

/** the tools an inference was offered, as stored, made into what `chatOutput` checks tool calls with */
const toolConfigOf = (toolParams: unknown, compile: (schema: unknown) => JsonSchemaValidator | undefined): ToolConfig | undefined => {
  const stored = toolParams as StoredToolParams | undefined
  if (stored?.tools_available === undefined) return undefined
  const tools: Array<ToolDefinition> = []
  for (const tool of stored.tools_available) {
    const validator = compile(tool.parameters)
    if (validator !== undefined) tools.push({ ...tool, validator })
  }
  return { tools, allowed: stored.allowed_tools ?? undefined, choice: { type: "auto" } }
}

export interface CompletedRows {
  /** the inferences answered, with their model inferences */
  readonly writes: WriteBatch
  /** the inferences without an answer: why, by inference id */
  readonly failures: Readonly<Record<string, string>>
}

/** A finished batch's results (by inference id) made into regular inference rows for `inferences`, at `now` (epoch ms). */
export const completedRows = (
  batch: StoredBatch,
  inferences: ReadonlyArray<StoredBatchInference>,
  resultsById: ReadonlyMap<string, BatchResult>,
  now: number,
  compile: (schema: unknown) => JsonSchemaValidator | undefined = schemaCache()
): CompletedRows => {
  const byId = resultsById
  const stored: Array<StoredInference> = []
  const calls: Array<StoredModelInference> = []
  const failures: Record<string, string> = {}
  for (const row of inferences) {
    const result = byId.get(row.inferenceId)
    if (result === undefined || !result.ok) {
      failures[row.inferenceId] = result === undefined ? "the provider's batch has no result for this inference" : result.message
      continue
    }
    const response = result.response
    const output: ReadonlyArray<ChatOutputBlock> | { raw: string; parsed: unknown } = batch.functionType === "chat"
      ? chatOutput(response.output, toolConfigOf(row.toolParams, compile))
      : jsonOutput(jsonRawText(response.output), compile(row.outputSchema))
    const elapsed = Math.max(0, now - row.timestamp)
    stored.push({
      id: row.inferenceId,
      workspace: row.workspace,
      functionName: row.functionName,
      functionType: batch.functionType,
      variantName: row.variantName,
      episodeId: row.episodeId,
      input: row.input,
      output,
      toolParams: row.toolParams,
      outputSchema: row.outputSchema,
      inferenceParams: row.inferenceParams,
      processingTimeMs: elapsed,
      tags: row.tags,
      timestamp: row.timestamp
    })
    calls.push({
      id: modelInferenceIdOf(row.inferenceId),
      workspace: row.workspace,
      inferenceId: row.inferenceId,
      modelName: row.modelName,
      modelProviderName: row.modelProviderName,
      rawRequest: row.rawRequest,
      rawResponse: response.rawResponse,
      system: row.system,
      inputMessages: row.inputMessages,
      output: response.output,
      inputTokens: response.usage.input_tokens,
      outputTokens: response.usage.output_tokens,
      cachedInputTokens: response.usage.cached_input_tokens,
      responseTimeMs: elapsed,
      finishReason: response.finishReason,
      cached: false,
      timestamp: row.timestamp
    })
  }
  return { writes: { inferences: stored, modelInferences: calls, feedback: [] }, failures }
}

/** One inference of a completed batch as `GET /batch_inference/...` answers it: `/inference`'s body, or the error the provider gave instead. */
export const batchInferenceBody = (
  row: StoredBatchInference,
  stored: StoredInference | undefined,
  call: StoredModelInference | undefined,
  failure: string | undefined
): Record<string, unknown> => {
  const head = { inference_id: row.inferenceId, episode_id: row.episodeId, variant_name: row.variantName }
  if (stored === undefined) return { ...head, error: failure ?? "the result of this inference is not stored (yet)" }
  const body: Record<string, unknown> = { ...head }
  if (stored.functionType === "chat") body.content = stored.output
  else body.output = stored.output
  body.usage = inferenceUsage(
    { input_tokens: call?.inputTokens ?? 0, output_tokens: call?.outputTokens ?? 0, cached_input_tokens: call?.cachedInputTokens },
    call?.cost
  )
  if (call?.finishReason !== undefined) body.finish_reason = call.finishReason
  return body
}
