/**
 * The Overview's aggregates on Postgres (`OverviewStore` of src/overview/store.ts). The
 * inferences of a range are found by their ids: an id is a UUIDv7 whose leading 48 bits are its
 * time, and Postgres orders UUIDs by their bytes, so `[from, to)` is a range of ids, which the
 * primary key (every function) and the (function_name, id) indexes (one function) serve; the
 * `timestamp` column has no index. Percentiles: percentile_cont (linear interpolation between
 * the closest ranks, as ClickHouse's `quantiles`).
 */
import type * as PgClient from "@effect/sql-pg/PgClient"
import * as Effect from "effect/Effect"
import type {
  BucketCount,
  InferenceCountsQuery,
  MetricVariantStatistics,
  ModelCallStatistics,
  OverviewRange,
  OverviewScope,
  OverviewStore,
  Percentiles
} from "../../src/overview/store.ts"
import type { SqlError } from "effect/sql/SqlError"
import type { StoreError } from "../../src/storeError.ts"
import { refused, storeError } from "./client.ts"

/** the smallest UUIDv7 of the millisecond `ms`: ids at `ms` or later sort after it, earlier ones before */
export const lowestUuidAt = (ms: number): string => {
  if (!Number.isSafeInteger(ms) || ms < 0 || ms >= 2 ** 48) throw refused(`not a time of a UUIDv7: ${ms}`)
  const hex = ms.toString(16).padStart(12, "0")
  return `${hex.slice(0, 8)}-${hex.slice(8)}-0000-0000-000000000000`
}

const percentiles = (values: ReadonlyArray<number> | null): Percentiles | undefined =>
  values === null ? undefined : { p50: values[0], p90: values[1], p99: values[2] }

interface ModelRow {
  readonly model_name: string
  readonly model_provider_name: string
  readonly calls: number
  readonly cached_calls: number
  readonly input_tokens: number
  readonly output_tokens: number
  readonly cost: number | null
  readonly response_time_ms: ReadonlyArray<number>
  readonly ttft_calls: number
  readonly ttft_ms: ReadonlyArray<number> | null
}

export const makePostgresOverviewStore = (sql: PgClient.PgClient): OverviewStore => {
  /** `columns` of the chat and json inferences of `scope` in `workspace` */
  const inferencesOf = (workspace: string, scope: OverviewScope, columns: string) => {
    const [from, to] = [lowestUuidAt(scope.from), lowestUuidAt(scope.to)]
    const where = scope.functionName === undefined
      ? sql`workspace = ${workspace} AND id >= ${from}::uuid AND id < ${to}::uuid`
      : sql`workspace = ${workspace} AND function_name = ${scope.functionName} AND id >= ${from}::uuid AND id < ${to}::uuid`
    return sql`SELECT ${sql.literal(columns)} FROM chat_inference WHERE ${where}
      UNION ALL SELECT ${sql.literal(columns)} FROM json_inference WHERE ${where}`
  }

  /** `query` run, a StoreError naming `operation` if it fails, or if the range cannot be a range of ids */
  const attempt = <A>(operation: string, query: () => Effect.Effect<A, SqlError>) =>
    Effect.suspend((): Effect.Effect<A, SqlError | StoreError> => {
      try {
        return query()
      } catch (error) {
        return Effect.fail(error as StoreError)
      }
    }).pipe(Effect.mapError(storeError(operation)))

  return {
    backend: "postgres",
    inferenceCounts: (workspace, query: InferenceCountsQuery) =>
      attempt("inferenceCounts", () => {
        const width = query.bucketMs
        // whole milliseconds below 2^53: exact as float8, which comes back as a number (bigint as a string)
        return sql<{ bucket_start: number; name: string; count: number }>`
          SELECT (div((extract(epoch FROM timestamp) * 1000)::bigint, ${width}::bigint) * ${width}::bigint)::float8 AS bucket_start,
            name, count(*)::int AS count
          FROM (${inferencesOf(workspace, query, `${query.functionName === undefined ? "function_name" : "variant_name"} AS name, timestamp`)}) AS inference
          GROUP BY bucket_start, name ORDER BY bucket_start, name COLLATE "C"`.pipe(
          Effect.map((rows) => rows.map((row): BucketCount => ({ bucketStart: row.bucket_start, name: row.name, count: row.count })))
        )
      }),

    functionCounts: (workspace, range: OverviewRange) =>
      attempt("functionCounts", () =>
        sql<{ function_name: string; count: number }>`
          SELECT function_name, count(*)::int AS count FROM (${inferencesOf(workspace, range, "function_name")}) AS inference
          GROUP BY function_name ORDER BY function_name COLLATE "C"`.pipe(
          Effect.map((rows) => rows.map((row) => ({ functionName: row.function_name, count: row.count })))
        )),

    metricStatistics: (workspace, scope) =>
      attempt("metricStatistics", () =>
        sql<{ kind: "boolean" | "float"; metric_name: string; level: "inference" | "episode"; variant_name: string; count: number; mean: number; variance: number }>`
          WITH inference AS (${inferencesOf(workspace, scope, "id, episode_id, variant_name")}),
          -- the variant each target counts for: an inference's own, an episode's first inference's
          target AS (
            SELECT id AS target_id, 'inference' AS level, variant_name FROM inference
            UNION ALL (SELECT DISTINCT ON (episode_id) episode_id, 'episode', variant_name FROM inference ORDER BY episode_id, id)
          ),
          feedback AS (
            SELECT 'boolean' AS kind, id, metric_name, target_id, target_type, value::int::float8 AS value FROM boolean_metric_feedback
            WHERE workspace = ${workspace} AND target_id IN (SELECT target_id FROM target)
            UNION ALL
            SELECT 'float', id, metric_name, target_id, target_type, value FROM float_metric_feedback
            WHERE workspace = ${workspace} AND target_id IN (SELECT target_id FROM target)
          ),
          latest AS (
            SELECT DISTINCT ON (kind, metric_name, target_id) kind, metric_name, target_id, target_type, value FROM feedback
            ORDER BY kind, metric_name, target_id, id DESC
          )
          SELECT latest.kind, latest.metric_name, target.level, target.variant_name, count(*)::int AS count,
            avg(latest.value) AS mean, coalesce(var_samp(latest.value), 0) AS variance
          FROM latest JOIN target ON target.target_id = latest.target_id AND target.level = latest.target_type
          GROUP BY 1, 2, 3, 4
          ORDER BY latest.metric_name COLLATE "C", latest.kind, target.level, target.variant_name COLLATE "C"`.pipe(
          Effect.map((rows) =>
            rows.map((row): MetricVariantStatistics => ({
              metricName: row.metric_name,
              kind: row.kind,
              level: row.level,
              variantName: row.variant_name,
              count: row.count,
              mean: Number(row.mean),
              variance: Number(row.variance)
            }))
          )
        )),

    modelStatistics: (workspace, scope) =>
      attempt("modelStatistics", () =>
        sql<ModelRow>`
          SELECT model_name, model_provider_name, count(*)::int AS calls, (count(*) FILTER (WHERE cached))::int AS cached_calls,
            sum(input_tokens)::float8 AS input_tokens, sum(output_tokens)::float8 AS output_tokens, sum(cost) AS cost,
            percentile_cont(ARRAY[0.5, 0.9, 0.99]) WITHIN GROUP (ORDER BY response_time_ms) AS response_time_ms,
            count(ttft_ms)::int AS ttft_calls,
            percentile_cont(ARRAY[0.5, 0.9, 0.99]) WITHIN GROUP (ORDER BY ttft_ms) AS ttft_ms
          FROM model_inference WHERE inference_id IN (SELECT id FROM (${inferencesOf(workspace, scope, "id")}) AS inference)
          GROUP BY model_name, model_provider_name
          ORDER BY calls DESC, model_name COLLATE "C", model_provider_name COLLATE "C"`.pipe(
          Effect.map((rows) =>
            rows.map((row): ModelCallStatistics => ({
              modelName: row.model_name,
              providerName: row.model_provider_name,
              calls: row.calls,
              cachedCalls: row.cached_calls,
              inputTokens: row.input_tokens,
              outputTokens: row.output_tokens,
              cost: row.cost ?? undefined,
              responseTimeMs: percentiles(row.response_time_ms)!,
              ttftCalls: row.ttft_calls,
              ttftMs: row.ttft_calls > 0 ? percentiles(row.ttft_ms) : undefined
            }))
          )
        )),

    hasInferences: (workspace, functionName) =>
      sql<{ found: number }>`
        SELECT 1 AS found WHERE EXISTS (SELECT 1 FROM chat_inference WHERE workspace = ${workspace} AND function_name = ${functionName})
          OR EXISTS (SELECT 1 FROM json_inference WHERE workspace = ${workspace} AND function_name = ${functionName})`.pipe(
        Effect.map((rows) => rows.length > 0),
        Effect.mapError(storeError("hasInferences"))
      )
  }
}
