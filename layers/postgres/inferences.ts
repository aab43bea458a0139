/**
 * Stored inferences on Postgres (`InferenceStore` of src/storedInferences/store.ts): chat and json
 * inferences from their two tables, newest first, and their model calls. Columns are named:
 * a prepared `SELECT *` breaks when a migration adds one. The large ones are read within the
 * driver's limit on a row (./readBounds.ts): a row too large reads with placeholders. Metric filters read the latest
 * feedback of their metric through the same uncorrelated `IN` subqueries as ClickHouse's. Every
 * read is within one workspace: `workspace = $` is in each base WHERE.
 */
import type * as PgClient from "@effect/sql-pg/PgClient"
import * as Effect from "effect/Effect"
import type { Fragment } from "effect/sql/Statement"
import { isUuid } from "../../src/ids.ts"
import type { InferenceTarget } from "../../src/analytics/records.ts"
import type { InferenceQuery, InferenceStore, MetricFilter, StoreFilter } from "../../src/storedInferences/store.ts"
import { storeError } from "./client.ts"
import { filterTreeSql, sqlComparison, tagOrTimeSql } from "./filters.ts"
import type { FieldShape } from "../../src/analytics/rowBudget.ts"
import { type BoundedColumn, boundedSelect, type UnreadColumns, withPlaceholders } from "./readBounds.ts"
import { type InferenceRow, type ModelInferenceRow, toInference, toModelInference } from "./rows.ts"
import { wholePage } from "../storePage.ts"

/** the large columns of each inference table, read within the driver's limit (./readBounds.ts) */
const inferenceColumns = (schemaColumn: "tool_params" | "output_schema"): ReadonlyArray<BoundedColumn> =>
  ["input", "output", schemaColumn, "inference_params", "tags"].map((name) => ({ name, type: "jsonb" }))
const chatBounds = boundedSelect("chat_inference", inferenceColumns("tool_params"))
const jsonBounds = boundedSelect("json_inference", inferenceColumns("output_schema"))

const modelInferenceBounded: ReadonlyArray<BoundedColumn> = [
  { name: "raw_request", type: "text" },
  { name: "raw_response", type: "text" },
  { name: "system", type: "text" },
  { name: "input_messages", type: "jsonb" },
  { name: "output", type: "jsonb" }
]
const modelInferenceBounds = boundedSelect("model_inference", modelInferenceBounded)

/** the shape of what a column holds, for the placeholder of a value too large to read */
const inferenceShape = (functionType: "chat" | "json") => (column: string): FieldShape => {
  switch (column) {
    case "input":
      return "input"
    case "output":
      return functionType === "chat" ? "outputBlocks" : "jsonOutput"
    case "tool_params":
      return "absent"
    default:
      return "object"
  }
}

const modelInferenceShape = (column: string): FieldShape =>
  column === "input_messages" ? "messages" : column === "output" ? "outputBlocks" : "text"

const readInference = (row: InferenceRow & UnreadColumns) =>
  toInference(withPlaceholders(row, inferenceColumns(row.function_type === "chat" ? "tool_params" : "output_schema"), inferenceShape(row.function_type)))

const readModelInference = (row: ModelInferenceRow & UnreadColumns) => toModelInference(withPlaceholders(row, modelInferenceBounded, modelInferenceShape))

export const makePostgresInferenceStore = (sql: PgClient.PgClient): InferenceStore => {
  const modelInferenceColumns = sql.literal(
    "id, workspace, inference_id, model_name, model_provider_name, " +
      ["raw_request", "raw_response", "system", "input_messages", "output"].map(modelInferenceBounds.read).join(", ") +
      ", input_tokens, output_tokens, cached_input_tokens, cost, response_time_ms, ttft_ms, finish_reason, cached, cache_key, timestamp, " +
      modelInferenceBounds.unread
  )

  // the same columns in the same places in both tables (they are read in one UNION)
  const chatColumns = sql.literal(
    `${["input", "output", "tool_params"].map(chatBounds.read).join(", ")}, NULL::jsonb AS output_schema, ` +
      `${["inference_params", "tags"].map(chatBounds.read).join(", ")}, ${chatBounds.unread}`
  )
  const jsonColumns = sql.literal(
    `${["input", "output"].map(jsonBounds.read).join(", ")}, NULL::jsonb AS tool_params, ${jsonBounds.read("output_schema")}, ` +
      `${["inference_params", "tags"].map(jsonBounds.read).join(", ")}, ${jsonBounds.unread}`
  )

  /**
   * The inferences of one table matching `where` (the newest `limit` of them, when given): the
   * rows are picked first, then measured (./readBounds.ts), so that only the rows read are.
   */
  const inferenceSelect = (type: "chat" | "json", where: Fragment, limit?: number) => {
    const picked = limit === undefined ? sql`` : sql`ORDER BY id DESC LIMIT ${limit}`
    return type === "chat"
      ? sql`SELECT 'chat' AS function_type, id, workspace, function_name, variant_name, episode_id, ${chatColumns},
          processing_time_ms, ttft_ms, timestamp
          FROM (SELECT id, workspace, function_name, variant_name, episode_id, input, output, tool_params, inference_params,
            processing_time_ms, ttft_ms, tags, timestamp FROM chat_inference WHERE ${where} ${picked}) AS chat_inference
          ${sql.literal(chatBounds.lateral)}`
      : sql`SELECT 'json' AS function_type, id, workspace, function_name, variant_name, episode_id, ${jsonColumns},
          processing_time_ms, ttft_ms, timestamp
          FROM (SELECT id, workspace, function_name, variant_name, episode_id, input, output, output_schema, inference_params,
            processing_time_ms, ttft_ms, tags, timestamp FROM json_inference WHERE ${where} ${picked}) AS json_inference
          ${sql.literal(jsonBounds.lateral)}`
  }

  /** the targets whose latest value (newest feedback id) of the metric passes the filter's condition */
  const metricSql = (workspace: string, filter: MetricFilter): Fragment => {
    const latest = filter.type === "boolean_metric"
      ? sql`SELECT DISTINCT ON (target_id) target_id, value FROM boolean_metric_feedback
          WHERE workspace = ${workspace} AND metric_name = ${filter.metricName} ORDER BY target_id, id DESC`
      : sql`SELECT DISTINCT ON (target_id) target_id, value FROM float_metric_feedback
          WHERE workspace = ${workspace} AND metric_name = ${filter.metricName} ORDER BY target_id, id DESC`
    const condition = filter.type === "boolean_metric"
      ? sql`value = ${filter.value}`
      : sql`value ${sqlComparison(sql, filter.comparison_operator)} ${filter.value}::float8`
    return sql`${sql(filter.level === "episode" ? "episode_id" : "id")} IN (SELECT target_id FROM (${latest}) AS latest WHERE ${condition})`
  }

  /**
   * The leaves only inferences have (metrics, demonstrations) come with their own SQL, on the
   * feedback of `workspace`; none is NULL, so `NOT` is exact.
   */
  const filterSql = (workspace: string, filter: StoreFilter): Fragment =>
    filterTreeSql(sql, filter, (leaf) => {
      switch (leaf.type) {
        case "tag":
        case "time":
          return tagOrTimeSql(sql, leaf)
        case "boolean_metric":
        case "float_metric":
          return metricSql(workspace, leaf)
        case "demonstration":
          return sql`id IN (SELECT target_id FROM demonstration_feedback WHERE workspace = ${workspace})`
        default:
          throw new Error(`not a filter: ${JSON.stringify(leaf)}`)
      }
    })

  const getInferences = (workspace: string, ids: ReadonlyArray<string>) => {
    const valid = ids.filter(isUuid)
    if (valid.length === 0) return Effect.succeed([])
    const where = sql`id = ANY(${valid}::uuid[]) AND workspace = ${workspace}`
    return sql<InferenceRow & UnreadColumns>`${inferenceSelect("chat", where)} UNION ALL ${inferenceSelect("json", where)} ORDER BY id DESC`.pipe(
      Effect.map((rows) => rows.map(readInference)),
      Effect.mapError(storeError("getInferences"))
    )
  }

  const listInferences = (workspace: string, query: InferenceQuery) => {
    const { limit, offset } = wholePage(query)
    if (limit === 0 || [query.episodeId, query.before].some((id) => id !== undefined && !isUuid(id))) return Effect.succeed([])
    const where = sql.and([
      sql`workspace = ${workspace}`,
      ...(query.functionName !== undefined ? [sql`function_name = ${query.functionName}`] : []),
      ...(query.variantName !== undefined ? [sql`variant_name = ${query.variantName}`] : []),
      ...(query.episodeId !== undefined ? [sql`episode_id = ${query.episodeId}`] : []),
      ...(query.before !== undefined ? [sql`id < ${query.before}::uuid`] : []),
      ...(query.filter !== undefined ? [filterSql(workspace, query.filter)] : [])
    ])
    // each table contributes at most its newest `offset + limit` rows
    const window = offset + limit
    return sql<InferenceRow & UnreadColumns>`SELECT * FROM (
      (${inferenceSelect("chat", where, window)})
      UNION ALL
      (${inferenceSelect("json", where, window)})
    ) AS inference ORDER BY id DESC LIMIT ${limit} OFFSET ${offset}`.pipe(
      Effect.map((rows) => rows.map(readInference)),
      Effect.mapError(storeError("listInferences"))
    )
  }

  const getModelInferences = (workspace: string, inferenceIds: ReadonlyArray<string>) => {
    const valid = inferenceIds.filter(isUuid)
    if (valid.length === 0) return Effect.succeed([])
    return sql<ModelInferenceRow & UnreadColumns>`SELECT ${modelInferenceColumns} FROM model_inference ${sql.literal(modelInferenceBounds.lateral)}
      WHERE inference_id = ANY(${valid}::uuid[]) AND workspace = ${workspace} ORDER BY id`.pipe(
      Effect.map((rows) => rows.map(readModelInference)),
      Effect.mapError(storeError("getModelInferences"))
    )
  }

  const findInference = (workspace: string, id: string) => {
    if (!isUuid(id)) return Effect.succeed(undefined)
    return sql<{ function_type: "chat" | "json"; workspace: string; function_name: string; episode_id: string; output_schema: unknown }>`
      SELECT 'chat' AS function_type, workspace, function_name, episode_id, NULL::jsonb AS output_schema FROM chat_inference WHERE id = ${id} AND workspace = ${workspace}
      UNION ALL
      SELECT 'json', workspace, function_name, episode_id, output_schema FROM json_inference WHERE id = ${id} AND workspace = ${workspace}`.pipe(
      Effect.map(([row]): InferenceTarget | undefined =>
        row === undefined ? undefined : {
          workspace: row.workspace,
          functionName: row.function_name,
          functionType: row.function_type,
          episodeId: row.episode_id,
          ...(row.output_schema !== null && { outputSchema: row.output_schema })
        }
      ),
      Effect.mapError(storeError("findInference"))
    )
  }

  const episodeExists = (workspace: string, id: string) => {
    if (!isUuid(id)) return Effect.succeed(false)
    return sql<{ found: boolean }>`SELECT EXISTS (SELECT 1 FROM chat_inference WHERE episode_id = ${id} AND workspace = ${workspace})
      OR EXISTS (SELECT 1 FROM json_inference WHERE episode_id = ${id} AND workspace = ${workspace}) AS found`.pipe(
      Effect.map(([row]) => row.found),
      Effect.mapError(storeError("episodeExists"))
    )
  }

  return { backend: "postgres", getInferences, listInferences, getModelInferences, findInference, episodeExists }
}
