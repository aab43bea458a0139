/**
 * How each of TensorZero's ClickHouse base tables is read into a stream's neutral rows: the
 * columns it has in this database, the `(at, key)` it is paged on, and the decoding of a row.
 * Batches, assembled from two tables, are layers/tensorzeroImport/clickhouseBatches.ts's.
 */
import type {
  StreamName,
  TzDatapoint,
  TzDiclExample,
  TzEvaluationRun,
  TzFeedback,
  TzInference,
  TzModelInference,
  TzWorkflowEpisode,
  TzWorkflowRun
} from "../../src/tensorzeroImport/source.ts"
import { msOfUuidV7, paddedUInt128OfUuid, recordOf, toolParamsOf, uuidOfUInt128 } from "../../src/tensorzeroImport/clickhouseValues.ts"
import { booleanOf, numberOf, numberOrNull, stringOf, stringOrNull, UnreadableValue } from "../../src/tensorzeroImport/columnValues.ts"
import { hasColumn, literal, paddedUInt128, type Schema, selectList, timeMs, uuidMs } from "./clickhouseColumns.ts"

type Row = Record<string, unknown>

export interface TableRead {
  readonly table: string
  /** ReplacingMergeTree tables: the latest version of each row */
  readonly final: boolean
  /** SQL: the row's `at`, epoch ms */
  readonly at: string
  /** SQL: a text in the order of the row's id */
  readonly key: string
  readonly select: ReadonlyArray<string>
  /** the key a position's id pages from */
  readonly keyOfPosition: (id: string) => string
  /** SQL: the rows of these keys (the keys a first, narrow query chose) */
  readonly keysFilter: (keys: ReadonlyArray<string>) => string
  /** the id a position is given for a row's key */
  readonly positionId: (key: string) => string
  /** the neutral row; throws an UnreadableValue when the row cannot be one */
  readonly decode: (row: Row) => unknown
}

/** the row's values under their column names, without the `c_` of the select list */
const columnsOf = (row: Row): Row =>
  Object.fromEntries(Object.entries(row).filter(([name]) => name.startsWith("c_")).map(([name, value]) => [name.slice(2), value]))

const tagsOf = (row: Row, map = "tags"): Record<string, string> => recordOf(row[`k_${map}`], row[`v_${map}`], map)

const optionalString = (row: Row, column: string): string | null | undefined =>
  column in row ? stringOrNull(row[column], column) : undefined

/** a table keyed by a UUIDv7, paged on its time */
const byUuid = (idColumn: string) => ({
  at: uuidMs(idColumn),
  key: `toString(\`${idColumn}\`)`,
  keyOfPosition: (id: string) => id.toLowerCase(),
  // the column itself, so that TensorZero's bloom filter index on it serves
  keysFilter: (keys: ReadonlyArray<string>) => `\`${idColumn}\` IN (${keys.map(literal).join(", ")})`,
  positionId: (key: string) => key,
  final: false
})

/** a ReplacingMergeTree table keyed by a UInt128 id, paged on its last change */
const byUInt128 = (schema: Schema, table: string, idColumn: string, unit: "us" | "ms") => ({
  at: timeMs(schema, table, "updated_at", unit),
  key: paddedUInt128(idColumn),
  // a key that is no number stays as it is: the position gives it back
  keyOfPosition: (id: string) => /^[0-9a-fA-F-]{36}$/.test(id) ? paddedUInt128OfUuid(id) : id,
  keysFilter: (keys: ReadonlyArray<string>) => `${paddedUInt128(idColumn)} IN (${keys.map(literal).join(", ")})`,
  positionId: (key: string) => {
    try {
      return uuidOfUInt128(key.replace(/^0+(?=\d)/, ""), idColumn)
    } catch {
      return key
    }
  },
  final: true
})

const inferenceColumns = [
  "id", "function_name", "variant_name", "episode_id", "input", "output", "tool_params", "inference_params", "output_schema",
  "processing_time_ms", "extra_body", "ttft_ms", "dynamic_tools", "dynamic_provider_tools", "allowed_tools", "tool_choice",
  "parallel_tool_calls"
]

const inferenceRead = (schema: Schema, table: string, kind: "chat" | "json"): TableRead => ({
  table,
  ...byUuid("id"),
  select: selectList(schema, table, inferenceColumns, ["tags"]),
  decode: (row): TzInference => {
    const c = columnsOf(row)
    const id = stringOf(c.id, "id")
    return {
      id,
      kind,
      functionName: stringOf(c.function_name, "function_name"),
      variantName: stringOf(c.variant_name, "variant_name"),
      episodeId: stringOf(c.episode_id, "episode_id"),
      input: c.input,
      output: c.output,
      ...(kind === "chat" ? { toolParams: toolParamsOf(c) } : { outputSchema: c.output_schema }),
      inferenceParams: c.inference_params,
      extraBody: optionalString(c, "extra_body"),
      processingTimeMs: numberOrNull(c.processing_time_ms, "processing_time_ms"),
      ttftMs: numberOrNull(c.ttft_ms, "ttft_ms"),
      tags: tagsOf(row),
      timestamp: msOfUuidV7(id)
    }
  }
})

const finishReasons = new Set(["stop", "length", "tool_call", "content_filter", "unknown", "stop_sequence"])

const modelInferenceRead = (schema: Schema): TableRead => ({
  table: "ModelInference",
  ...byUuid("id"),
  select: selectList(schema, "ModelInference", [
    "id", "inference_id", "raw_request", "raw_response", "system", "input_messages", "output", "input_tokens", "output_tokens",
    "response_time_ms", "ttft_ms", "model_name", "model_provider_name", "cached", "finish_reason", "cost"
  ]),
  decode: (row): TzModelInference => {
    const c = columnsOf(row)
    const id = stringOf(c.id, "id")
    const finishReason = optionalString(c, "finish_reason")
    if (finishReason !== undefined && finishReason !== null && !finishReasons.has(finishReason)) {
      throw new UnreadableValue(`finish_reason ${JSON.stringify(finishReason)} is not one of TensorZero's`)
    }
    return {
      id,
      inferenceId: stringOf(c.inference_id, "inference_id"),
      rawRequest: optionalString(c, "raw_request"),
      rawResponse: optionalString(c, "raw_response"),
      system: optionalString(c, "system"),
      inputMessages: c.input_messages,
      output: c.output,
      inputTokens: numberOrNull(c.input_tokens, "input_tokens"),
      outputTokens: numberOrNull(c.output_tokens, "output_tokens"),
      cost: numberOrNull(c.cost, "cost"),
      responseTimeMs: numberOrNull(c.response_time_ms, "response_time_ms"),
      ttftMs: numberOrNull(c.ttft_ms, "ttft_ms"),
      modelName: stringOf(c.model_name, "model_name"),
      modelProviderName: stringOf(c.model_provider_name, "model_provider_name"),
      cached: c.cached === undefined ? false : booleanOf(c.cached, "cached"),
      finishReason: finishReason ?? null,
      timestamp: msOfUuidV7(id)
    }
  }
})

const feedbackRead = (schema: Schema, table: string, kind: TzFeedback["kind"]): TableRead => {
  const targetColumn = kind === "demonstration" ? "inference_id" : "target_id"
  return {
    table,
    ...byUuid("id"),
    select: selectList(schema, table, ["id", targetColumn, "metric_name", "target_type", "value"], ["tags"]),
    decode: (row): TzFeedback => {
      const c = columnsOf(row)
      const id = stringOf(c.id, "id")
      const targetType = kind === "comment" ? stringOf(c.target_type, "target_type") : "inference"
      if (targetType !== "inference" && targetType !== "episode") throw new UnreadableValue(`target_type ${targetType}`)
      return {
        id,
        kind,
        metricName: kind === "boolean" || kind === "float" ? stringOf(c.metric_name, "metric_name") : kind,
        targetId: stringOf(c[targetColumn], targetColumn),
        // boolean and float: settled by looking the id up among the inferences (clickhouseSource.ts)
        targetType,
        value: kind === "boolean" ? booleanOf(c.value, "value") : kind === "float" ? numberOf(c.value, "value") : stringOf(c.value, "value"),
        tags: tagsOf(row),
        timestamp: msOfUuidV7(id)
      }
    }
  }
}

const datapointRead = (schema: Schema, table: string, kind: "chat" | "json"): TableRead => {
  const staled = hasColumn(schema, table, "staled_at") ? [`${timeMs(schema, table, "staled_at", "us")} AS staled_ms`] : []
  return {
    table,
    ...byUuid("id"),
    at: timeMs(schema, table, "updated_at", "us"),
    final: true,
    select: [
      ...selectList(schema, table, [
        "id", "dataset_name", "function_name", "episode_id", "input", "output", "tool_params", "output_schema", "is_deleted",
        "source_inference_id", "is_custom", "name", "dynamic_tools", "dynamic_provider_tools", "allowed_tools", "tool_choice",
        "parallel_tool_calls"
      ], ["tags"]),
      ...staled
    ],
    decode: (row): TzDatapoint => {
      const c = columnsOf(row)
      const updatedAt = numberOf(row.page_at, "updated_at")
      const deleted = c.is_deleted !== undefined && booleanOf(c.is_deleted, "is_deleted")
      // a deleted datapoint (the older way) counts as staled at its deletion
      const staledAt = numberOrNull(row.staled_ms, "staled_at") ?? (deleted ? updatedAt : null)
      return {
        id: stringOf(c.id, "id"),
        kind,
        datasetName: stringOf(c.dataset_name, "dataset_name"),
        functionName: stringOf(c.function_name, "function_name"),
        episodeId: stringOrNull(c.episode_id, "episode_id"),
        input: c.input,
        output: c.output ?? null,
        ...(kind === "chat" ? { toolParams: toolParamsOf(c) } : { outputSchema: c.output_schema }),
        tags: tagsOf(row),
        isCustom: c.is_custom === undefined ? false : booleanOf(c.is_custom, "is_custom"),
        sourceInferenceId: optionalString(c, "source_inference_id") ?? null,
        name: optionalString(c, "name") ?? null,
        staledAt,
        updatedAt
      }
    }
  }
}

const workflowRunRead = (schema: Schema): TableRead => ({
  table: "DynamicEvaluationRun",
  ...byUInt128(schema, "DynamicEvaluationRun", "run_id_uint", "us"),
  select: selectList(schema, "DynamicEvaluationRun", ["run_id_uint", "project_name", "run_display_name", "is_deleted"], [
    "tags",
    "variant_pins"
  ]),
  decode: (row): TzWorkflowRun => {
    const c = columnsOf(row)
    const runId = uuidOfUInt128(c.run_id_uint, "run_id_uint")
    const updatedAt = numberOf(row.page_at, "updated_at")
    return {
      runId,
      projectName: optionalString(c, "project_name") ?? null,
      displayName: optionalString(c, "run_display_name") ?? null,
      variantPins: tagsOf(row, "variant_pins"),
      tags: tagsOf(row),
      staledAt: c.is_deleted !== undefined && booleanOf(c.is_deleted, "is_deleted") ? updatedAt : null,
      timestamp: msOfUuidV7(runId),
      updatedAt
    }
  }
})

const workflowEpisodeRead = (schema: Schema): TableRead => ({
  table: "DynamicEvaluationRunEpisode",
  ...byUInt128(schema, "DynamicEvaluationRunEpisode", "episode_id_uint", "us"),
  select: selectList(schema, "DynamicEvaluationRunEpisode", ["episode_id_uint", "run_id", "datapoint_name", "is_deleted"], [
    "tags",
    "variant_pins"
  ]),
  decode: (row): TzWorkflowEpisode => {
    const c = columnsOf(row)
    const episodeId = uuidOfUInt128(c.episode_id_uint, "episode_id_uint")
    const updatedAt = numberOf(row.page_at, "updated_at")
    return {
      episodeId,
      runId: stringOf(c.run_id, "run_id"),
      taskName: optionalString(c, "datapoint_name") ?? null,
      variantPins: tagsOf(row, "variant_pins"),
      tags: tagsOf(row),
      staledAt: c.is_deleted !== undefined && booleanOf(c.is_deleted, "is_deleted") ? updatedAt : null,
      timestamp: msOfUuidV7(episodeId),
      updatedAt
    }
  }
})

const evaluationRunRead = (schema: Schema): TableRead => ({
  table: "InferenceEvaluationRuns",
  ...byUInt128(schema, "InferenceEvaluationRuns", "run_id_uint", "ms"),
  select: [
    ...selectList(schema, "InferenceEvaluationRuns", [
      "run_id_uint", "evaluation_name", "function_name", "function_type", "dataset_name", "variant_names", "metrics", "source"
    ]),
    `${timeMs(schema, "InferenceEvaluationRuns", "created_at", "ms")} AS created_ms`
  ],
  decode: (row): TzEvaluationRun => {
    const c = columnsOf(row)
    const functionType = stringOf(c.function_type, "function_type")
    if (functionType !== "chat" && functionType !== "json") throw new UnreadableValue(`function_type ${functionType}`)
    const variantNames = c.variant_names
    if (!Array.isArray(variantNames) || !variantNames.every((name) => typeof name === "string")) {
      throw new UnreadableValue("variant_names is not a list of names")
    }
    return {
      runId: uuidOfUInt128(c.run_id_uint, "run_id_uint"),
      evaluationName: stringOf(c.evaluation_name, "evaluation_name"),
      functionName: stringOf(c.function_name, "function_name"),
      functionType,
      datasetName: stringOf(c.dataset_name, "dataset_name"),
      variantNames,
      metrics: c.metrics,
      source: optionalString(c, "source") ?? null,
      createdAt: numberOf(row.created_ms, "created_at"),
      updatedAt: numberOf(row.page_at, "updated_at")
    }
  }
})

const diclRead = (schema: Schema): TableRead => ({
  table: "DynamicInContextLearningExample",
  ...byUuid("id"),
  select: selectList(schema, "DynamicInContextLearningExample", [
    "id", "function_name", "variant_name", "namespace", "input", "output", "embedding"
  ]),
  decode: (row): TzDiclExample => {
    const c = columnsOf(row)
    const id = stringOf(c.id, "id")
    const embedding = Array.isArray(c.embedding) ? c.embedding.map((value) => numberOf(value, "embedding")) : []
    return {
      id,
      functionName: stringOf(c.function_name, "function_name"),
      variantName: stringOf(c.variant_name, "variant_name"),
      namespace: optionalString(c, "namespace") ?? null,
      input: c.input,
      output: c.output,
      embedding,
      timestamp: msOfUuidV7(id)
    }
  }
})

/** the tables each stream is read from, those of them this database has (batches: clickhouseBatches.ts) */
export const tableReads = (schema: Schema): Partial<Record<StreamName, ReadonlyArray<TableRead>>> => {
  const present = (reads: ReadonlyArray<TableRead>) => reads.filter((read) => schema.has(read.table))
  const when = (table: string, read: () => TableRead) => schema.has(table) ? [read()] : []
  return {
    datapoints: present([
      ...when("ChatInferenceDatapoint", () => datapointRead(schema, "ChatInferenceDatapoint", "chat")),
      ...when("JsonInferenceDatapoint", () => datapointRead(schema, "JsonInferenceDatapoint", "json"))
    ]),
    inferences: [
      ...when("ChatInference", () => inferenceRead(schema, "ChatInference", "chat")),
      ...when("JsonInference", () => inferenceRead(schema, "JsonInference", "json"))
    ],
    model_inferences: when("ModelInference", () => modelInferenceRead(schema)),
    feedback: [
      ...when("BooleanMetricFeedback", () => feedbackRead(schema, "BooleanMetricFeedback", "boolean")),
      ...when("FloatMetricFeedback", () => feedbackRead(schema, "FloatMetricFeedback", "float")),
      ...when("CommentFeedback", () => feedbackRead(schema, "CommentFeedback", "comment")),
      ...when("DemonstrationFeedback", () => feedbackRead(schema, "DemonstrationFeedback", "demonstration"))
    ],
    evaluation_runs: when("InferenceEvaluationRuns", () => evaluationRunRead(schema)),
    workflow_evaluation_runs: when("DynamicEvaluationRun", () => workflowRunRead(schema)),
    workflow_evaluation_episodes: when("DynamicEvaluationRunEpisode", () => workflowEpisodeRead(schema)),
    batches: [],
    dicl_examples: when("DynamicInContextLearningExample", () => diclRead(schema))
  }
}
