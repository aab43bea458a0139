/**
 * Stored inferences on Postgres (`InferenceStore` of src/inferences/store.ts): chat and json
 * inferences from their two tables, newest first, and their model calls. Columns are named:
 * a prepared `SELECT *` breaks when a migration adds one. Metric filters read the latest
 * feedback of their metric through the same uncorrelated `IN` subqueries as ClickHouse's.
 */
import type * as PgClient from "@effect/sql-pg/PgClient"
import * as Effect from "effect/Effect"
import type { Fragment } from "effect/sql/Statement"
import { isUuid } from "../../src/ids.ts"
import type { InferenceQuery, InferenceStore, InferenceTarget, MetricFilter, StoreFilter } from "../../src/inferences/store.ts"
import { storeError } from "./client.ts"
import { filterTreeSql, sqlComparison, tagOrTimeSql } from "./filters.ts"
import { type InferenceRow, type ModelInferenceRow, toInference, toModelInference } from "./rows.ts"
import { wholePage } from "../storePage.ts"

export const makePostgresInferenceStore = (sql: PgClient.PgClient): InferenceStore => {
  const modelInferenceColumns = sql.literal(
    "id, inference_id, model_name, model_provider_name, raw_request, raw_response, system, input_messages, output, " +
      "input_tokens, output_tokens, cached_input_tokens, cost, response_time_ms, ttft_ms, finish_reason, cached, cache_key, timestamp"
  )

  const inferenceSelect = (type: "chat" | "json", where: Fragment) =>
    type === "chat"
      ? sql`SELECT 'chat' AS function_type, id, function_name, variant_name, episode_id, input, output,
          tool_params, NULL::jsonb AS output_schema, inference_params, processing_time_ms, ttft_ms, tags, timestamp
          FROM chat_inference WHERE ${where}`
      : sql`SELECT 'json' AS function_type, id, function_name, variant_name, episode_id, input, output,
          NULL::jsonb AS tool_params, output_schema, inference_params, processing_time_ms, ttft_ms, tags, timestamp
          FROM json_inference WHERE ${where}`

  /** the targets whose latest value (newest feedback id) of the metric passes the filter's condition */
  const metricSql = (filter: MetricFilter): Fragment => {
    const latest = filter.type === "boolean_metric"
      ? sql`SELECT DISTINCT ON (target_id) target_id, value FROM boolean_metric_feedback
          WHERE metric_name = ${filter.metricName} ORDER BY target_id, id DESC`
      : sql`SELECT DISTINCT ON (target_id) target_id, value FROM float_metric_feedback
          WHERE metric_name = ${filter.metricName} ORDER BY target_id, id DESC`
    const condition = filter.type === "boolean_metric"
      ? sql`value = ${filter.value}`
      : sql`value ${sqlComparison(sql, filter.comparison_operator)} ${filter.value}::float8`
    return sql`${sql(filter.level === "episode" ? "episode_id" : "id")} IN (SELECT target_id FROM (${latest}) AS latest WHERE ${condition})`
  }

  /** The leaves only inferences have (metrics, demonstrations) come with their own SQL; none is NULL, so `NOT` is exact. */
  const filterSql = (filter: StoreFilter): Fragment =>
    filterTreeSql(sql, filter, (leaf) => {
      switch (leaf.type) {
        case "tag":
        case "time":
          return tagOrTimeSql(sql, leaf)
        case "boolean_metric":
        case "float_metric":
          return metricSql(leaf)
        case "demonstration":
          return sql`id IN (SELECT target_id FROM demonstration_feedback)`
        default:
          throw new Error(`not a filter: ${JSON.stringify(leaf)}`)
      }
    })

  const getInferences = (ids: ReadonlyArray<string>) => {
    const valid = ids.filter(isUuid)
    if (valid.length === 0) return Effect.succeed([])
    const where = sql`id = ANY(${valid}::uuid[])`
    return sql<InferenceRow>`${inferenceSelect("chat", where)} UNION ALL ${inferenceSelect("json", where)} ORDER BY id DESC`.pipe(
      Effect.map((rows) => rows.map(toInference)),
      Effect.mapError(storeError("getInferences"))
    )
  }

  const listInferences = (query: InferenceQuery) => {
    const { limit, offset } = wholePage(query)
    if (limit === 0 || [query.episodeId, query.before].some((id) => id !== undefined && !isUuid(id))) return Effect.succeed([])
    const where = sql.and([
      ...(query.functionName !== undefined ? [sql`function_name = ${query.functionName}`] : []),
      ...(query.variantName !== undefined ? [sql`variant_name = ${query.variantName}`] : []),
      ...(query.episodeId !== undefined ? [sql`episode_id = ${query.episodeId}`] : []),
      ...(query.before !== undefined ? [sql`id < ${query.before}::uuid`] : []),
      ...(query.filter !== undefined ? [filterSql(query.filter)] : [])
    ])
    // each table contributes at most its newest `offset + limit` rows
    const window = offset + limit
    return sql<InferenceRow>`SELECT * FROM (
      (${inferenceSelect("chat", where)} ORDER BY id DESC LIMIT ${window})
      UNION ALL
      (${inferenceSelect("json", where)} ORDER BY id DESC LIMIT ${window})
    ) AS inference ORDER BY id DESC LIMIT ${limit} OFFSET ${offset}`.pipe(
      Effect.map((rows) => rows.map(toInference)),
      Effect.mapError(storeError("listInferences"))
    )
  }

  const getModelInferences = (inferenceIds: ReadonlyArray<string>) => {
    const valid = inferenceIds.filter(isUuid)
    if (valid.length === 0) return Effect.succeed([])
    return sql<ModelInferenceRow>`SELECT ${modelInferenceColumns} FROM model_inference WHERE inference_id = ANY(${valid}::uuid[]) ORDER BY id`.pipe(
      Effect.map((rows) => rows.map(toModelInference)),
      Effect.mapError(storeError("getModelInferences"))
    )
  }

  const findInference = (id: string) => {
    if (!isUuid(id)) return Effect.succeed(undefined)
    return sql<{ function_type: "chat" | "json"; function_name: string; episode_id: string; output_schema: unknown }>`
      SELECT 'chat' AS function_type, function_name, episode_id, NULL::jsonb AS output_schema FROM chat_inference WHERE id = ${id}
      UNION ALL
      SELECT 'json', function_name, episode_id, output_schema FROM json_inference WHERE id = ${id}`.pipe(
      Effect.map(([row]): InferenceTarget | undefined =>
        row === undefined ? undefined : {
          functionName: row.function_name,
          functionType: row.function_type,
          episodeId: row.episode_id,
          ...(row.output_schema !== null && { outputSchema: row.output_schema })
        }
      ),
      Effect.mapError(storeError("findInference"))
    )
  }

  const episodeExists = (id: string) => {
    if (!isUuid(id)) return Effect.succeed(false)
    return sql<{ found: boolean }>`SELECT EXISTS (SELECT 1 FROM chat_inference WHERE episode_id = ${id})
      OR EXISTS (SELECT 1 FROM json_inference WHERE episode_id = ${id}) AS found`.pipe(
      Effect.map(([row]) => row.found),
      Effect.mapError(storeError("episodeExists"))
    )
  }

  return { getInferences, listInferences, getModelInferences, findInference, episodeExists }
}
