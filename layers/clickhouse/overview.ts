/**
 * The Overview's aggregates on ClickHouse (`OverviewStore` of src/overview/store.ts), in SQL
 * both 18.16 and current releases run. The inferences of a range come from the two inference
 * tables (sorted by function, so a function's are found by the key), one row per id (`LIMIT 1 BY`:
 * a row written twice is there twice until a merge). Subqueries are repeated rather than named:
 * 18.16 has no `WITH` for them. Percentiles: `quantiles`, which interpolates between the
 * closest ranks as Postgres' percentile_cont does (exactly up to 8,192 values, a uniform sample
 * of them beyond), over Float64: on an integer column it answers integers.
 */
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
import type { ClickHouse } from "./client.ts"
import { sqlInteger, sqlString } from "./sql.ts"

/** the conditions on an inference table's rows of `scope` in `workspace` */
const scopeWhere = (workspace: string, scope: OverviewScope) =>
  [
    `workspace = ${sqlString(workspace)}`,
    ...(scope.functionName !== undefined ? [`function_name = ${sqlString(scope.functionName)}`] : []),
    `timestamp_ms >= ${sqlInteger(scope.from)}`,
    `timestamp_ms < ${sqlInteger(scope.to)}`
  ].join(" AND ")

/** the ids and `columns` of the chat and json inferences of `scope` in `workspace`, one row per id */
const inferencesOf = (workspace: string, scope: OverviewScope, columns: string) => {
  const where = scopeWhere(workspace, scope)
  return `SELECT id, ${columns} FROM (SELECT id, ${columns} FROM ChatInference WHERE ${where} ` +
    `UNION ALL SELECT id, ${columns} FROM JsonInference WHERE ${where}) LIMIT 1 BY id`
}

const levels = "0.5, 0.9, 0.99"

const percentiles = ([p50, p90, p99]: ReadonlyArray<number | null>): Percentiles => ({ p50: p50 ?? 0, p90: p90 ?? 0, p99: p99 ?? 0 })

interface ModelRow {
  readonly model_name: string
  readonly model_provider_name: string
  readonly calls: string
  readonly cached_calls: string
  readonly total_input_tokens: string
  readonly total_output_tokens: string
  readonly total_cost: number
  readonly priced_calls: string
  readonly latency_ms: ReadonlyArray<number | null>
  readonly ttft_calls: string
  readonly ttft_percentiles: ReadonlyArray<number | null>
}

interface MetricRow {
  readonly kind: "boolean" | "float"
  readonly metric_name: string
  readonly level: "inference" | "episode"
  readonly variant_name: string
  readonly count: string
  readonly mean: number
  readonly variance: number
}

export const makeClickHouseOverviewStore = ({ run, select }: ClickHouse): OverviewStore => ({
  backend: "clickhouse",
  inferenceCounts: (workspace, query: InferenceCountsQuery) =>
    run("inferenceCounts", async (signal) => {
      const width = sqlInteger(query.bucketMs)
      const name = query.functionName === undefined ? "function_name" : "variant_name"
      const rows = await select<{ bucket_start: string; name: string; count: string }>(
        `SELECT intDiv(timestamp_ms, ${width}) * ${width} AS bucket_start, ${name} AS name, count() AS count ` +
          `FROM (${inferencesOf(workspace, query, `${name}, timestamp_ms`)}) GROUP BY bucket_start, name ORDER BY bucket_start, name`,
        signal
      )
      return rows.map((row): BucketCount => ({ bucketStart: Number(row.bucket_start), name: row.name, count: Number(row.count) }))
    }),

  functionCounts: (workspace, range: OverviewRange) =>
    run("functionCounts", async (signal) => {
      const rows = await select<{ function_name: string; count: string }>(
        `SELECT function_name, count() AS count FROM (${inferencesOf(workspace, range, "function_name")}) GROUP BY function_name ORDER BY function_name`,
        signal
      )
      return rows.map((row) => ({ functionName: row.function_name, count: Number(row.count) }))
    }),

  metricStatistics: (workspace, scope) =>
    run("metricStatistics", async (signal) => {
      const inferences = inferencesOf(workspace, scope, "episode_id, variant_name")
      // the variant each target counts for: an inference's own, an episode's first inference's (UUIDv7 text order is time order)
      const targets = `SELECT toString(id) AS target, 'inference' AS level, variant_name FROM (${inferences}) ` +
        `UNION ALL SELECT toString(episode_id) AS target, 'episode' AS level, argMin(variant_name, toString(id)) AS variant_name ` +
        `FROM (${inferences}) GROUP BY episode_id`
      const targeted = `target_id IN (SELECT id FROM (${inferences})) OR target_id IN (SELECT episode_id FROM (${inferences}))`
      const feedback = (kind: "boolean" | "float", table: string) =>
        `SELECT '${kind}' AS kind, metric_name, toString(target_id) AS target, toString(target_type) AS level, toFloat64(value) AS value, ` +
        `toString(id) AS feedback_id FROM ${table} WHERE workspace = ${sqlString(workspace)} AND (${targeted})`
      const latest = `SELECT kind, metric_name, target, level, value FROM (${feedback("boolean", "BooleanMetricFeedback")} ` +
        `UNION ALL ${feedback("float", "FloatMetricFeedback")}) ORDER BY kind, metric_name, target, feedback_id DESC LIMIT 1 BY kind, metric_name, target`
      const rows = await select<MetricRow>(
        // varSamp of one value is not a number, which JSON cannot carry
        `SELECT kind, metric_name, level, variant_name, count() AS count, avg(value) AS mean, if(count() > 1, varSamp(value), 0) AS variance ` +
          `FROM (${latest}) ANY INNER JOIN (${targets}) USING (target, level) ` +
          `GROUP BY kind, metric_name, level, variant_name ORDER BY metric_name, kind, level, variant_name`,
        signal
      )
      return rows.map((row): MetricVariantStatistics => ({
        metricName: row.metric_name,
        kind: row.kind,
        level: row.level,
        variantName: row.variant_name,
        count: Number(row.count),
        mean: row.mean,
        variance: row.variance
      }))
    }),

  modelStatistics: (workspace, scope) =>
    run("modelStatistics", async (signal) => {
      const where = scopeWhere(workspace, scope)
      const ids = `SELECT id FROM ChatInference WHERE ${where} UNION ALL SELECT id FROM JsonInference WHERE ${where}`
      const calls = "SELECT id, model_name, model_provider_name, cached, input_tokens, output_tokens, cost, response_time_ms, ttft_ms " +
        `FROM ModelInference WHERE inference_id IN (${ids}) LIMIT 1 BY id`
      const rows = await select<ModelRow>(
        // aliases differ from the columns: an alias stands for its expression everywhere in the query
        "SELECT model_name, model_provider_name, count() AS calls, sum(cached) AS cached_calls, " +
          "sum(input_tokens) AS total_input_tokens, sum(output_tokens) AS total_output_tokens, sum(ifNull(cost, 0)) AS total_cost, count(cost) AS priced_calls, " +
          `quantiles(${levels})(toFloat64(response_time_ms)) AS latency_ms, count(ttft_ms) AS ttft_calls, ` +
          // over the calls that have one: 18.16 answers wrong percentiles of a Nullable column
          `quantilesIf(${levels})(toFloat64(assumeNotNull(ttft_ms)), isNotNull(ttft_ms)) AS ttft_percentiles ` +
          `FROM (${calls}) GROUP BY model_name, model_provider_name ORDER BY calls DESC, model_name, model_provider_name`,
        signal
      )
      return rows.map((row): ModelCallStatistics => ({
        modelName: row.model_name,
        providerName: row.model_provider_name,
        calls: Number(row.calls),
        cachedCalls: Number(row.cached_calls),
        inputTokens: Number(row.total_input_tokens),
        outputTokens: Number(row.total_output_tokens),
        cost: Number(row.priced_calls) > 0 ? row.total_cost : undefined,
        responseTimeMs: percentiles(row.latency_ms),
        ttftCalls: Number(row.ttft_calls),
        ttftMs: Number(row.ttft_calls) > 0 ? percentiles(row.ttft_percentiles) : undefined
      }))
    }),

  hasInferences: (workspace, functionName) =>
    run("hasInferences", async (signal) => {
      const where = `workspace = ${sqlString(workspace)} AND function_name = ${sqlString(functionName)}`
      const rows = await select(
        `SELECT 1 AS found FROM ChatInference WHERE ${where} LIMIT 1 UNION ALL SELECT 1 AS found FROM JsonInference WHERE ${where} LIMIT 1`,
        signal
      )
      return rows.length > 0
    })
})
