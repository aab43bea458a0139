/**
 * The records of src/analytics/records.ts as Postgres rows, both ways: JSON objects for
 * `jsonb_populate_recordset` (keys are column names, JSONB columns take the value itself,
 * timestamps ISO 8601 text), and the rows queries read back. Optional fields are NULL when
 * absent, and absent again when read.
 */
import { Buffer } from "node:buffer"
import * as Result from "effect/Result"
import type { NewDatapoint, StoredDatapoint } from "../../src/datasets/store.ts"
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
import type { FieldShape } from "../../src/analytics/rowBudget.ts"
import { StoreError } from "../../src/storeError.ts"
import { type BoundedColumn, boundedSelect, type UnreadColumns, withPlaceholders } from "./readBounds.ts"

/**
 * `value` as Postgres can store it: no U+0000 in text or JSONB, nor lone surrogates in JSONB;
 * they become U+FFFD, as the write queue makes them (layers/postgres/database.ts)
 */
export const storable = (value: string) => value.toWellFormed().replaceAll("\u0000", "\ufffd")

/** an optional text as a column takes it: storable, or NULL */
export const storableText = (value: string | undefined) => (value === undefined ? null : storable(value))

export const feedbackTables: Record<FeedbackKind, string> = {
  boolean: "boolean_metric_feedback",
  float: "float_metric_feedback",
  comment: "comment_feedback",
  demonstration: "demonstration_feedback"
}

export interface InferenceRow {
  readonly function_type: "chat" | "json"
  readonly id: string
  readonly workspace: string
  readonly function_name: string
  readonly variant_name: string
  readonly episode_id: string
  readonly input: unknown
  readonly output: any
  readonly tool_params: unknown
  readonly output_schema: unknown
  readonly inference_params: unknown
  readonly processing_time_ms: number
  readonly ttft_ms: number | null
  readonly tags: Record<string, string>
  readonly timestamp: Date
}

export interface ModelInferenceRow {
  readonly id: string
  readonly workspace: string
  readonly inference_id: string
  readonly model_name: string
  readonly model_provider_name: string
  readonly raw_request: string
  readonly raw_response: string
  readonly system: string | null
  readonly input_messages: unknown
  readonly output: any
  readonly input_tokens: number
  readonly output_tokens: number
  readonly cached_input_tokens: number | null
  readonly cost: number | null
  readonly response_time_ms: number
  readonly ttft_ms: number | null
  readonly finish_reason: StoredModelInference["finishReason"] | null
  readonly cached: boolean
  readonly cache_key: string | null
  readonly timestamp: Date
}

export interface FeedbackRow {
  readonly id: string
  readonly workspace: string
  readonly target_id: string
  readonly target_type: "inference" | "episode"
  readonly metric_name: string
  readonly value: unknown
  readonly tags: Record<string, string>
  readonly timestamp: Date
}

export interface CacheRow {
  readonly output: any
  readonly raw_request: string
  readonly raw_response: string
  readonly finish_reason: CacheEntry["finishReason"] | null
  readonly stream_chunking: string | null
  readonly timestamp: Date
}

// ---- read back

export const toInference = (row: InferenceRow): StoredInference => ({
  id: row.id,
  workspace: row.workspace,
  functionName: row.function_name,
  functionType: row.function_type,
  variantName: row.variant_name,
  episodeId: row.episode_id,
  input: row.input,
  output: row.output,
  ...(row.tool_params !== null && { toolParams: row.tool_params }),
  ...(row.output_schema !== null && { outputSchema: row.output_schema }),
  inferenceParams: row.inference_params,
  processingTimeMs: row.processing_time_ms,
  ...(row.ttft_ms !== null && { ttftMs: row.ttft_ms }),
  tags: row.tags,
  timestamp: row.timestamp.getTime()
})

export const toModelInference = (row: ModelInferenceRow): StoredModelInference => ({
  id: row.id,
  workspace: row.workspace,
  inferenceId: row.inference_id,
  modelName: row.model_name,
  modelProviderName: row.model_provider_name,
  rawRequest: row.raw_request,
  rawResponse: row.raw_response,
  ...(row.system !== null && { system: row.system }),
  inputMessages: row.input_messages,
  output: row.output,
  inputTokens: row.input_tokens,
  outputTokens: row.output_tokens,
  ...(row.cached_input_tokens !== null && { cachedInputTokens: row.cached_input_tokens }),
  ...(row.cost !== null && { cost: row.cost }),
  responseTimeMs: row.response_time_ms,
  ...(row.ttft_ms !== null && { ttftMs: row.ttft_ms }),
  ...(row.finish_reason !== null && { finishReason: row.finish_reason }),
  cached: row.cached,
  ...(row.cache_key !== null && { cacheKey: row.cache_key }),
  timestamp: row.timestamp.getTime()
})

export const toFeedback = (kind: FeedbackKind) => (row: FeedbackRow): StoredFeedback => ({
  id: row.id,
  workspace: row.workspace,
  kind,
  metricName: row.metric_name,
  targetType: row.target_type,
  targetId: row.target_id,
  value: row.value,
  tags: row.tags,
  timestamp: row.timestamp.getTime()
})

export const toCacheEntry = (key: string, row: CacheRow): CacheEntry => ({
  key,
  output: row.output,
  rawRequest: row.raw_request,
  rawResponse: row.raw_response,
  ...(row.finish_reason !== null && { finishReason: row.finish_reason }),
  ...(row.stream_chunking !== null && { streamChunking: row.stream_chunking }),
  timestamp: row.timestamp.getTime()
})

export interface EmbeddingCacheRow {
  readonly raw_request: string
  readonly raw_response: string
  readonly timestamp: Date
}

export const toEmbeddingCacheEntry = (key: string, row: EmbeddingCacheRow): EmbeddingCacheEntry => ({
  key,
  rawRequest: row.raw_request,
  rawResponse: row.raw_response,
  timestamp: row.timestamp.getTime()
})

// ---- written

// Built without a spread (a copy through the runtime): the row is made once per inference.
const inferenceRow = (row: StoredInference) => {
  const encoded: Record<string, unknown> = {
    id: row.id,
    workspace: row.workspace,
    function_name: row.functionName,
    variant_name: row.variantName,
    episode_id: row.episodeId,
    input: row.input,
    output: row.output
  }
  if (row.functionType === "chat") encoded.tool_params = row.toolParams
  else encoded.output_schema = row.outputSchema
  encoded.inference_params = row.inferenceParams
  encoded.processing_time_ms = row.processingTimeMs
  encoded.ttft_ms = row.ttftMs
  encoded.tags = row.tags
  encoded.timestamp = new Date(row.timestamp).toISOString()
  return encoded
}

const modelInferenceRow = (row: StoredModelInference) => ({
  id: row.id,
  workspace: row.workspace,
  inference_id: row.inferenceId,
  model_name: row.modelName,
  model_provider_name: row.modelProviderName,
  raw_request: row.rawRequest,
  raw_response: row.rawResponse,
  system: row.system,
  input_messages: row.inputMessages,
  output: row.output,
  input_tokens: row.inputTokens,
  output_tokens: row.outputTokens,
  cached_input_tokens: row.cachedInputTokens ?? null,
  cost: row.cost ?? null,
  response_time_ms: row.responseTimeMs,
  ttft_ms: row.ttftMs,
  finish_reason: row.finishReason,
  cached: row.cached,
  cache_key: row.cacheKey,
  stream_chunking: row.streamChunking,
  timestamp: new Date(row.timestamp).toISOString()
})

const feedbackRow = (row: StoredFeedback) => ({
  id: row.id,
  workspace: row.workspace,
  target_id: row.targetId,
  target_type: row.targetType,
  metric_name: row.metricName,
  value: row.value,
  tags: row.tags,
  timestamp: new Date(row.timestamp).toISOString()
})

const embeddingInferenceRow = (row: StoredEmbeddingInference) => ({
  id: row.id,
  workspace: row.workspace,
  model_name: row.modelName,
  model_provider_name: row.modelProviderName,
  input: row.input,
  dimensions: row.dimensions,
  raw_request: row.rawRequest,
  raw_response: row.rawResponse,
  input_tokens: row.inputTokens,
  response_time_ms: row.responseTimeMs,
  cached: row.cached,
  cache_key: row.cacheKey,
  tags: row.tags,
  timestamp: new Date(row.timestamp).toISOString()
})

/**
 * Absent fields are NULL; a value JSON cannot carry (a number out of range) fails the row in
 * Postgres. A row JSON.stringify cannot make (over V8's string limit) is refused here; one over
 * `maxRowBytes` is cut down (src/analytics/rowBudget.ts).
 */
export const encode = (batch: WriteBatch, maxRowBytes: number): Result.Result<ReadonlyArray<EncodedRow>, StoreError> =>
  Result.try({
    try: () =>
      encodeRows(batch, {
        inferenceTable: { chat: "chat_inference", json: "json_inference" },
        modelInferenceTable: "model_inference",
        feedbackTable: (kind) => feedbackTables[kind],
        inference: inferenceRow,
        modelInference: modelInferenceRow,
        feedback: feedbackRow,
        embeddingInferenceTable: "embedding_inference",
        embeddingInference: embeddingInferenceRow
      }, maxRowBytes),
    catch: (error) => new StoreError({ message: `postgres encode failed: ${error instanceof Error ? error.message : String(error)}`, rowsAtFault: true })
  })

/**
 * The columns each table takes from its JSON rows. A JSON null becomes SQL NULL, so a
 * demonstration whose value is JSON null is put back as the JSONB value `null`.
 */
export const insertedColumns: Readonly<Record<string, string>> = {
  demonstration_feedback: "id, target_id, target_type, metric_name, COALESCE(value, 'null'::jsonb), tags, timestamp, workspace"
}

// ---- datapoints

export interface DatapointRow {
  readonly id: string
  readonly dataset_name: string
  readonly function_name: string
  readonly function_type: "chat" | "json"
  readonly input: unknown
  /** a JSON null reads as null too: `has_output` tells it from an absent output */
  readonly output: unknown
  readonly has_output: boolean
  readonly episode_id: string | null
  readonly tags: Record<string, string>
  readonly name: string | null
  readonly tool_params: StoredDatapoint["toolParams"] | null
  readonly output_schema: unknown
  readonly has_output_schema: boolean
  readonly source_inference_id: string | null
  readonly first_version_id: string | null
  readonly is_custom: boolean
  readonly staled_at: Date | null
  readonly updated_at: Date
}

/** the large columns of a datapoint, read within the driver's limit (./readBounds.ts) */
export const datapointBounded: ReadonlyArray<BoundedColumn> = [
  { name: "input", type: "jsonb" },
  { name: "output", type: "jsonb" },
  { name: "tags", type: "jsonb" },
  { name: "name", type: "text" },
  { name: "tool_params", type: "jsonb" },
  { name: "output_schema", type: "jsonb" }
]
const datapointBounds = boundedSelect("datapoint", datapointBounded)

/** the columns of `DatapointRow`, as a select list, for a FROM clause of `datapoint` then `datapointLateral` */
export const datapointColumns = "datapoint.id, dataset_name, function_name, function_type, " +
  ["input", "output"].map(datapointBounds.read).join(", ") + ", datapoint.output IS NOT NULL AS has_output, episode_id, " +
  ["tags", "name", "tool_params", "output_schema"].map(datapointBounds.read).join(", ") +
  ", datapoint.output_schema IS NOT NULL AS has_output_schema, source_inference_id, first_version_id, is_custom, staled_at, updated_at, " +
  datapointBounds.unread

/** what `datapointColumns` needs after `FROM datapoint` */
export const datapointLateral = datapointBounds.lateral

/** the shape of a datapoint's column, for the placeholder of a value too large to read */
const datapointShape = (functionType: "chat" | "json") => (column: string): FieldShape => {
  switch (column) {
    case "input":
      return "input"
    case "output":
      return functionType === "chat" ? "outputBlocks" : "text"
    case "tags":
      return "object"
    case "name":
      return "text"
    default:
      return "absent"
  }
}

/**
 * One version as a JSON object for `jsonb_array_elements` (layers/postgres/datasets.ts): an
 * absent field is a missing key (SQL NULL), a JSON null stays JSON null.
 */
export const datapointJson = (workspace: string, datapoint: NewDatapoint): Buffer =>
  Buffer.from(JSON.stringify({
    workspace,
    id: datapoint.id,
    dataset_name: datapoint.datasetName,
    function_name: datapoint.functionName,
    function_type: datapoint.functionType,
    input: datapoint.input,
    output: datapoint.output,
    episode_id: datapoint.episodeId,
    tags: datapoint.tags,
    name: datapoint.name,
    tool_params: datapoint.toolParams,
    output_schema: datapoint.outputSchema,
    source_inference_id: datapoint.sourceInferenceId,
    first_version_id: datapoint.firstVersionId,
    is_custom: datapoint.isCustom,
    staled_at: datapoint.staledAt === undefined ? undefined : new Date(datapoint.staledAt).toISOString(),
    updated_at: new Date(datapoint.updatedAt).toISOString(),
    search_text: datapoint.searchText,
    timestamp: new Date(uuidv7Timestamp(datapoint.id)).toISOString()
  }))

/** a datapoint read through `datapointColumns`: a value too large to read is a placeholder saying so */
export const readDatapoint = (row: DatapointRow & UnreadColumns): StoredDatapoint =>
  toDatapoint(withPlaceholders(row, datapointBounded, datapointShape(row.function_type)))

const toDatapoint = (row: DatapointRow): StoredDatapoint => ({
  id: row.id,
  datasetName: row.dataset_name,
  functionName: row.function_name,
  functionType: row.function_type,
  input: row.input,
  ...(row.has_output && { output: row.output }),
  ...(row.episode_id !== null && { episodeId: row.episode_id }),
  tags: row.tags,
  ...(row.name !== null && { name: row.name }),
  ...(row.tool_params !== null && { toolParams: row.tool_params }),
  ...(row.has_output_schema && { outputSchema: row.output_schema }),
  ...(row.source_inference_id !== null && { sourceInferenceId: row.source_inference_id }),
  ...(row.first_version_id !== null && { firstVersionId: row.first_version_id }),
  isCustom: row.is_custom,
  ...(row.staled_at !== null && { staledAt: row.staled_at.getTime() }),
  updatedAt: row.updated_at.getTime()
})
