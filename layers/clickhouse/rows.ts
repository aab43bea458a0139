/**
 * The records of src/analytics/records.ts as ClickHouse rows, both ways: JSONEachRow
 * objects to write (each row built and checked before any is sent) and the rows queries read
 * back. Tables are ReplacingMergeTrees keyed by id and reads dedupe by id, so a retried batch
 * is seen once. The cache's keys are filled from ModelInference by a materialized view, so an
 * answer is written once.
 */
import { Buffer } from "node:buffer"
import * as Result from "effect/Result"
import type { StoredDatapoint } from "../../src/datasets/store.ts"
import { uuidv7Timestamp } from "../../src/ids.ts"
import { type EncodedRow, encodeRows } from "../../src/analytics/database.ts"
import type {
  CacheEntry,
  EmbeddingCacheEntry,
  FeedbackKind,
  StoredEmbeddingInference,
  StoredFeedback,
  StoredInference,
  StoredModelInference,
  WriteBatch
} from "../../src/analytics/records.ts"
import type { StoreError } from "../../src/storeError.ts"
import type { WorkflowEpisodeRecord, WorkflowRunRecord } from "../../src/workflowEvaluations/store.ts"
import { storeError } from "./client.ts"
import { sqlUuid } from "./sql.ts"

export type Json = string

/** ClickHouse refuses lone UTF-16 surrogates in JSON input: they become U+FFFD. */
export const text = (value: string) => value.toWellFormed()

const json = (value: unknown): Json => JSON.stringify(value) ?? "null"
const optionalJson = (value: unknown): Json | null => (value === undefined ? null : json(value))

// A value the column cannot hold would fail the batch on every retry and block the write
// queue behind it: numbers are brought into range instead (a backward clock step gives 0 ms).
const wholeNumber = (value: number, max: number) => (Number.isFinite(value) ? Math.min(Math.max(Math.round(value), 0), max) : 0)
/** durations and token counts */
const uint32 = (value: number) => wholeNumber(value, 0xffffffff)
/** epoch milliseconds */
const epochMs = (value: number) => wholeNumber(value, Number.MAX_SAFE_INTEGER)

/** `value` as a bit-exact UInt64 (decimal text): 18.16 parses decimal floats inexactly. */
const float64Bits = (value: number) => {
  const view = new DataView(new ArrayBuffer(8))
  view.setFloat64(0, value)
  return view.getBigUint64(0).toString()
}

const float64FromBits = (bits: string) => {
  const view = new DataView(new ArrayBuffer(8))
  view.setBigUint64(0, BigInt(bits))
  return view.getFloat64(0)
}

const assertUuids = (...ids: ReadonlyArray<string>) => ids.forEach(sqlUuid)

interface Tagged {
  readonly "tags.key": ReadonlyArray<string>
  readonly "tags.value": ReadonlyArray<string>
}

const addTagColumns = (row: Record<string, unknown>, tags: Readonly<Record<string, string>>) => {
  const keys: Array<string> = []
  const values: Array<string> = []
  for (const key in tags) {
    keys.push(text(key))
    values.push(text(tags[key]))
  }
  row["tags.key"] = keys
  row["tags.value"] = values
}

const tagColumns = (tags: Readonly<Record<string, string>>): Tagged => {
  const row: Record<string, unknown> = {}
  addTagColumns(row, tags)
  return row as unknown as Tagged
}

const tagsOf = (row: Tagged): Record<string, string> =>
  Object.fromEntries(row["tags.key"].map((key, index) => [key, row["tags.value"][index]]))

// ---- inferences

export interface InferenceRow extends Tagged {
  readonly id: string
  readonly workspace: string
  readonly function_type: "chat" | "json"
  readonly function_name: string
  readonly variant_name: string
  readonly episode_id: string
  readonly input: Json
  readonly output: Json
  readonly tool_params: Json | null
  readonly output_schema: Json | null
  readonly inference_params: Json
  readonly processing_time_ms: number
  readonly ttft_ms: number | null
  readonly timestamp_ms: string
}

// Built without spreads (each a copy through the runtime): the row is made once per inference.
const inferenceRow = (inference: StoredInference) => {
  assertUuids(inference.id, inference.episodeId)
  const row: Record<string, unknown> = {
    id: inference.id,
    workspace: inference.workspace,
    function_name: text(inference.functionName),
    variant_name: text(inference.variantName),
    episode_id: inference.episodeId,
    input: json(inference.input),
    output: json(inference.output)
  }
  if (inference.functionType === "chat") row.tool_params = optionalJson(inference.toolParams)
  else row.output_schema = optionalJson(inference.outputSchema)
  row.inference_params = json(inference.inferenceParams)
  row.processing_time_ms = uint32(inference.processingTimeMs)
  row.ttft_ms = inference.ttftMs === undefined ? null : uint32(inference.ttftMs)
  addTagColumns(row, inference.tags)
  row.timestamp_ms = epochMs(inference.timestamp)
  return row
}

// Optional fields are NULL when absent, and absent again when read.
export const toInference = (row: InferenceRow): StoredInference => ({
  id: row.id,
  workspace: row.workspace,
  functionName: row.function_name,
  functionType: row.function_type,
  variantName: row.variant_name,
  episodeId: row.episode_id,
  input: JSON.parse(row.input),
  output: JSON.parse(row.output),
  ...(row.tool_params !== null && { toolParams: JSON.parse(row.tool_params) }),
  ...(row.output_schema !== null && { outputSchema: JSON.parse(row.output_schema) }),
  inferenceParams: JSON.parse(row.inference_params),
  processingTimeMs: row.processing_time_ms,
  ...(row.ttft_ms !== null && { ttftMs: row.ttft_ms }),
  tags: tagsOf(row),
  timestamp: Number(row.timestamp_ms)
})

// ---- model inferences

export interface ModelInferenceRow {
  readonly id: string
  readonly workspace: string
  readonly inference_id: string
  readonly model_name: string
  readonly model_provider_name: string
  readonly raw_request: string
  readonly raw_response: string
  readonly system: string | null
  readonly input_messages: Json
  readonly output: Json
  readonly input_tokens: number
  readonly output_tokens: number
  readonly cached_input_tokens: number | null
  readonly cost: number | null
  readonly response_time_ms: number
  readonly ttft_ms: number | null
  readonly finish_reason: StoredModelInference["finishReason"] | null
  readonly cached: number
  /** '' when the answer is not to be served from the cache */
  readonly cache_key: string
  readonly timestamp_ms: string
}

const modelInferenceRow = (call: StoredModelInference) => {
  assertUuids(call.id, call.inferenceId)
  return {
    id: call.id,
    workspace: call.workspace,
    inference_id: call.inferenceId,
    model_name: text(call.modelName),
    model_provider_name: text(call.modelProviderName),
    raw_request: text(call.rawRequest),
    raw_response: text(call.rawResponse),
    system: call.system === undefined ? null : text(call.system),
    input_messages: json(call.inputMessages),
    output: json(call.output),
    input_tokens: uint32(call.inputTokens),
    output_tokens: uint32(call.outputTokens),
    cached_input_tokens: call.cachedInputTokens === undefined ? null : uint32(call.cachedInputTokens),
    cost: call.cost === undefined || !Number.isFinite(call.cost) ? null : call.cost,
    response_time_ms: uint32(call.responseTimeMs),
    ttft_ms: call.ttftMs === undefined ? null : uint32(call.ttftMs),
    finish_reason: call.finishReason ?? null,
    cached: call.cached ? 1 : 0,
    cache_key: call.cacheKey === undefined ? "" : text(call.cacheKey),
    stream_chunking: call.streamChunking ?? "",
    timestamp_ms: epochMs(call.timestamp)
  }
}

export const toModelInference = (row: ModelInferenceRow): StoredModelInference => ({
  id: row.id,
  workspace: row.workspace,
  inferenceId: row.inference_id,
  modelName: row.model_name,
  modelProviderName: row.model_provider_name,
  rawRequest: row.raw_request,
  rawResponse: row.raw_response,
  ...(row.system !== null && { system: row.system }),
  inputMessages: JSON.parse(row.input_messages),
  output: JSON.parse(row.output),
  inputTokens: row.input_tokens,
  outputTokens: row.output_tokens,
  ...(row.cached_input_tokens !== null && row.cached_input_tokens !== undefined && { cachedInputTokens: row.cached_input_tokens }),
  ...(row.cost !== null && row.cost !== undefined && { cost: row.cost }),
  responseTimeMs: row.response_time_ms,
  ...(row.ttft_ms !== null && { ttftMs: row.ttft_ms }),
  ...(row.finish_reason !== null && { finishReason: row.finish_reason }),
  cached: row.cached === 1,
  ...(row.cache_key !== "" && { cacheKey: row.cache_key }),
  timestamp: Number(row.timestamp_ms)
})

// ---- feedback

/** Each kind of feedback: its table, and how its value is stored and read back. */
export const feedbackKinds: Record<FeedbackKind, {
  readonly table: string
  readonly store: (value: unknown) => Record<string, unknown>
  readonly read: (row: any) => unknown
}> = {
  boolean: {
    table: "BooleanMetricFeedback",
    store: (value) => ({ value: value === true ? 1 : 0 }),
    read: (row: { value: number }) => row.value === 1
  },
  float: {
    table: "FloatMetricFeedback",
    store: (value) => ({ value_bits: float64Bits(Number(value)) }),
    read: (row: { value_bits: string }) => float64FromBits(row.value_bits)
  },
  comment: {
    table: "CommentFeedback",
    store: (value) => ({ value: text(String(value)) }),
    read: (row: { value: string }) => row.value
  },
  demonstration: {
    table: "DemonstrationFeedback",
    store: (value) => ({ value: json(value) }),
    read: (row: { value: Json }) => JSON.parse(row.value)
  }
}

export interface FeedbackRow extends Tagged {
  readonly id: string
  readonly workspace: string
  readonly target_id: string
  readonly target_type: "inference" | "episode"
  readonly metric_name: string
  readonly timestamp_ms: string
}

const feedbackRow = (feedback: StoredFeedback) => {
  assertUuids(feedback.id, feedback.targetId)
  return {
    id: feedback.id,
    workspace: feedback.workspace,
    target_id: feedback.targetId,
    target_type: feedback.targetType,
    metric_name: text(feedback.metricName),
    ...feedbackKinds[feedback.kind].store(feedback.value),
    ...tagColumns(feedback.tags),
    timestamp_ms: epochMs(feedback.timestamp)
  }
}

export const toFeedback = (kind: FeedbackKind) => (row: FeedbackRow): StoredFeedback => ({
  id: row.id,
  workspace: row.workspace,
  kind,
  metricName: row.metric_name,
  targetType: row.target_type,
  targetId: row.target_id,
  value: feedbackKinds[kind].read(row),
  tags: tagsOf(row),
  timestamp: Number(row.timestamp_ms)
})

// ---- cache entries

export interface CacheRow {
  readonly output: Json
  readonly raw_request: string
  readonly raw_response: string
  readonly finish_reason: CacheEntry["finishReason"] | null
  /** '' when the answer came whole */
  readonly stream_chunking: string
  readonly timestamp_ms: string
}

export const toCacheEntry = (key: string, row: CacheRow): CacheEntry => ({
  key,
  output: JSON.parse(row.output),
  rawRequest: row.raw_request,
  rawResponse: row.raw_response,
  ...(row.finish_reason !== null && { finishReason: row.finish_reason }),
  ...(row.stream_chunking !== "" && { streamChunking: row.stream_chunking }),
  timestamp: Number(row.timestamp_ms)
})

// ---- embedding inferences

export interface EmbeddingInferenceRow extends Tagged {
  readonly id: string
  readonly model_name: string
  readonly model_provider_name: string
  readonly input: Json
  readonly dimensions: number | null
  readonly raw_request: string
  readonly raw_response: string
  readonly input_tokens: number
  readonly response_time_ms: number
  readonly cached: number
  /** '' when the answer is not to be served from the cache */
  readonly cache_key: string
  readonly timestamp_ms: string
}

const embeddingInferenceRow = (call: StoredEmbeddingInference) => {
  assertUuids(call.id)
  return {
    id: call.id,
    workspace: call.workspace,
    model_name: text(call.modelName),
    model_provider_name: text(call.modelProviderName),
    input: json(call.input.map(text)),
    dimensions: call.dimensions === undefined ? null : uint32(call.dimensions),
    raw_request: text(call.rawRequest),
    raw_response: text(call.rawResponse),
    input_tokens: uint32(call.inputTokens),
    response_time_ms: uint32(call.responseTimeMs),
    cached: call.cached ? 1 : 0,
    cache_key: call.cacheKey === undefined ? "" : text(call.cacheKey),
    ...tagColumns(call.tags),
    timestamp_ms: epochMs(call.timestamp)
  }
}

export interface EmbeddingCacheRow {
  readonly raw_request: string
  readonly raw_response: string
  readonly timestamp_ms: string
}

export const toEmbeddingCacheEntry = (key: string, row: EmbeddingCacheRow): EmbeddingCacheEntry => ({
  key,
  rawRequest: row.raw_request,
  rawResponse: row.raw_response,
  timestamp: Number(row.timestamp_ms)
})

// ---- writes

export const inferenceTables: ReadonlySet<string> = new Set(["ChatInference", "JsonInference"])

/** `batch` as JSONEachRow lines, each row built (and checked, and cut down past `maxRowBytes`) before any is sent */
export const encode = (batch: WriteBatch, maxRowBytes: number): Result.Result<ReadonlyArray<EncodedRow>, StoreError> =>
  Result.try({
    try: () =>
      encodeRows(batch, {
        inferenceTable: { chat: "ChatInference", json: "JsonInference" },
        modelInferenceTable: "ModelInference",
        feedbackTable: (kind) => feedbackKinds[kind].table,
        inference: inferenceRow,
        modelInference: modelInferenceRow,
        feedback: feedbackRow,
        embeddingInferenceTable: "EmbeddingInference",
        embeddingInference: embeddingInferenceRow
      }, maxRowBytes),
    catch: storeError("encode")
  })

// ---- datapoints

export interface DatapointRow extends Tagged {
  readonly dataset_name: string
  readonly id: string
  readonly function_name: string
  readonly function_type: "chat" | "json"
  readonly input: Json
  readonly output: Json | null
  readonly episode_id: string | null
  readonly name: string | null
  readonly tool_params: Json | null
  readonly output_schema: Json | null
  readonly source_inference_id: string | null
  readonly first_version_id: string | null
  readonly is_custom: number
  readonly staled_at_ms: string | null
  readonly updated_at_ms: string
  readonly search_text: string
  readonly version: string
}

/** the columns a datapoint version is read back with (its search text and version, to write it again) */
export const datapointColumns = "dataset_name, id, function_name, function_type, input, output, episode_id, tags.key, tags.value, name, " +
  "tool_params, output_schema, source_inference_id, first_version_id, is_custom, staled_at_ms, updated_at_ms, search_text, version"

/** One version as a JSONEachRow line; `version` orders the versions of its id (the highest is read). */
export const datapointLine = (workspace: string, datapoint: StoredDatapoint, searchText: string, version: number): Buffer => {
  assertUuids(datapoint.id)
  if (datapoint.episodeId !== undefined) assertUuids(datapoint.episodeId)
  if (datapoint.sourceInferenceId !== undefined) assertUuids(datapoint.sourceInferenceId)
  if (datapoint.firstVersionId !== undefined) assertUuids(datapoint.firstVersionId)
  const row: Record<string, unknown> = {
    workspace,
    dataset_name: text(datapoint.datasetName),
    id: datapoint.id,
    function_name: text(datapoint.functionName),
    function_type: datapoint.functionType,
    input: json(datapoint.input),
    output: optionalJson(datapoint.output),
    episode_id: datapoint.episodeId ?? null
  }
  addTagColumns(row, datapoint.tags)
  row.name = datapoint.name === undefined ? null : text(datapoint.name)
  row.tool_params = optionalJson(datapoint.toolParams)
  row.output_schema = optionalJson(datapoint.outputSchema)
  row.source_inference_id = datapoint.sourceInferenceId ?? null
  row.first_version_id = datapoint.firstVersionId ?? null
  row.is_custom = datapoint.isCustom ? 1 : 0
  row.staled_at_ms = datapoint.staledAt === undefined ? null : epochMs(datapoint.staledAt)
  row.updated_at_ms = epochMs(datapoint.updatedAt)
  row.search_text = text(searchText)
  row.timestamp_ms = uuidv7Timestamp(datapoint.id)
  row.version = epochMs(version)
  return Buffer.from(JSON.stringify(row))
}

export const toDatapoint = (row: DatapointRow): StoredDatapoint => ({
  id: row.id,
  datasetName: row.dataset_name,
  functionName: row.function_name,
  functionType: row.function_type,
  input: JSON.parse(row.input),
  ...(row.output !== null && { output: JSON.parse(row.output) }),
  ...(row.episode_id !== null && { episodeId: row.episode_id }),
  tags: tagsOf(row),
  ...(row.name !== null && { name: row.name }),
  ...(row.tool_params !== null && { toolParams: JSON.parse(row.tool_params) }),
  ...(row.output_schema !== null && { outputSchema: JSON.parse(row.output_schema) }),
  ...(row.source_inference_id !== null && { sourceInferenceId: row.source_inference_id }),
  ...(row.first_version_id !== null && { firstVersionId: row.first_version_id }),
  isCustom: row.is_custom === 1,
  ...(row.staled_at_ms !== null && { staledAt: Number(row.staled_at_ms) }),
  updatedAt: Number(row.updated_at_ms)
})

// ---- workflow evaluation runs and their episodes

export interface WorkflowRunRow extends Tagged {
  readonly id: string
  readonly "variants.function_name": ReadonlyArray<string>
  readonly "variants.variant_name": ReadonlyArray<string>
  readonly project_name: string | null
  readonly display_name: string | null
  readonly timestamp_ms: string
}

export const workflowRunColumns = "id, variants.function_name, variants.variant_name, project_name, display_name, tags.key, tags.value, timestamp_ms"

export const workflowRunLine = (workspace: string, run: WorkflowRunRecord): Buffer => {
  assertUuids(run.id)
  const functions: Array<string> = []
  const variants: Array<string> = []
  for (const functionName in run.variants) {
    functions.push(text(functionName))
    variants.push(text(run.variants[functionName]))
  }
  const row: Record<string, unknown> = {
    workspace,
    id: run.id,
    "variants.function_name": functions,
    "variants.variant_name": variants,
    project_name: run.projectName === undefined ? null : text(run.projectName),
    display_name: run.displayName === undefined ? null : text(run.displayName)
  }
  addTagColumns(row, run.tags)
  row.timestamp_ms = epochMs(run.timestamp)
  return Buffer.from(JSON.stringify(row))
}

export const toWorkflowRun = (row: WorkflowRunRow): WorkflowRunRecord => ({
  id: row.id,
  variants: Object.fromEntries(row["variants.function_name"].map((functionName, index) => [functionName, row["variants.variant_name"][index]])),
  ...(row.project_name !== null && { projectName: row.project_name }),
  ...(row.display_name !== null && { displayName: row.display_name }),
  tags: tagsOf(row),
  timestamp: Number(row.timestamp_ms)
})

export interface WorkflowEpisodeRow extends Tagged {
  readonly id: string
  readonly run_id: string
  readonly task_name: string | null
  readonly timestamp_ms: string
}

export const workflowEpisodeColumns = "id, run_id, task_name, tags.key, tags.value, timestamp_ms"

export const workflowEpisodeLine = (workspace: string, episode: WorkflowEpisodeRecord): Buffer => {
  assertUuids(episode.id, episode.runId)
  const row: Record<string, unknown> = {
    workspace,
    id: episode.id,
    run_id: episode.runId,
    task_name: episode.taskName === undefined ? null : text(episode.taskName)
  }
  addTagColumns(row, episode.tags)
  row.timestamp_ms = epochMs(episode.timestamp)
  return Buffer.from(JSON.stringify(row))
}

export const toWorkflowEpisode = (row: WorkflowEpisodeRow): WorkflowEpisodeRecord => ({
  id: row.id,
  runId: row.run_id,
  ...(row.task_name !== null && { taskName: row.task_name }),
  tags: tagsOf(row),
  timestamp: Number(row.timestamp_ms)
})
