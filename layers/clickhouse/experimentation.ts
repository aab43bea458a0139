/**
 * Adaptive experimentation on ClickHouse (`ExperimentationStore` of src/experimentation/store.ts).
 * Statistics: the latest feedback of the metric per target (newest id, `LIMIT 1 BY`), joined
 * to the variant of its target through `InferenceById` (inference-level metrics) or to the
 * variant of the episode's first inference of the function through `InferenceByEpisodeId`
 * (episode-level); `ANY` keeps one row of a lookup table written twice. Uncorrelated `IN`
 * subqueries narrow the feedback to the function's targets (18.16 has no correlated ones).
 * Probabilities: one `VariantSampling` row per computation, the newest read by id.
 */
import type { ExperimentationStore, StatisticsQuery } from "../../src/experimentation/store.ts"
import { fromSamplingJson, samplingJson } from "../../src/experimentation/store.ts"
import type { ClickHouse } from "./client.ts"
import { feedbackKinds } from "./rows.ts"
import { sqlInteger, sqlString, sqlUuid } from "./sql.ts"

const statisticsSql = (query: StatisticsQuery): string => {
  const fn = sqlString(query.functionName)
  const table = feedbackKinds[query.metricType].table
  const [key, targets, variants] = query.level === "inference"
    ? ["id", `SELECT id FROM InferenceById WHERE function_name = ${fn}`, `SELECT id, variant_name FROM InferenceById WHERE function_name = ${fn}`]
    : [
      "episode_id",
      `SELECT episode_id FROM InferenceByEpisodeId WHERE function_name = ${fn}`,
      // the episode's first inference (UUIDv7 text order is time order)
      `SELECT episode_id, argMin(variant_name, toString(id)) AS variant_name FROM InferenceByEpisodeId WHERE function_name = ${fn} GROUP BY episode_id`
    ]
  const latest = `SELECT target_id, value FROM ${table} WHERE metric_name = ${sqlString(query.metricName)} AND target_id IN (${targets}) ` +
    "ORDER BY target_id, toString(id) DESC LIMIT 1 BY target_id"
  return `SELECT variant_name, count() AS count, avg(value) AS mean, varPop(value) AS variance ` +
    `FROM (SELECT target_id AS ${key}, toFloat64(value) AS value FROM (${latest})) ` +
    `ANY INNER JOIN (${variants}) USING ${key} GROUP BY variant_name ORDER BY variant_name`
}

interface SamplingRow {
  readonly function_name: string
  readonly config_key: string
  readonly sampling_id: string
  readonly computed_at_ms: string
  readonly sampling: string
}

export const makeClickHouseExperimentationStore = ({ insert, run, select }: ClickHouse): ExperimentationStore => ({
  backend: "clickhouse",
  variantStatistics: (query) =>
    run("variantStatistics", async (signal) => {
      const rows = await select<{ variant_name: string; count: string; mean: number; variance: number }>(statisticsSql(query), signal)
      return rows.map((row) => ({ name: row.variant_name, count: Number(row.count), mean: row.mean, variance: row.variance }))
    }),

  saveSampling: (sampling) =>
    run("saveSampling", async (signal) => {
      sqlUuid(sampling.id) // refused unless a UUID
      const line = JSON.stringify({
        function_name: sampling.functionName,
        config_key: sampling.configKey,
        id: sampling.id,
        computed_at_ms: sampling.computedAt,
        sampling: samplingJson(sampling)
      })
      await insert("VariantSampling", [Buffer.from(line)], signal)
    }),

  latestSamplings: (functionName, configKey, limit) =>
    run("latestSamplings", async (signal) => {
      const rows = await select<SamplingRow>(
        `SELECT function_name, config_key, toString(id) AS sampling_id, computed_at_ms, sampling FROM VariantSampling ` +
          `WHERE function_name = ${sqlString(functionName)} AND config_key = ${sqlString(configKey)} ` +
          `ORDER BY sampling_id DESC LIMIT 1 BY sampling_id LIMIT ${sqlInteger(limit)}`,
        signal
      )
      return rows.map((row) =>
        fromSamplingJson(
          { id: row.sampling_id, functionName: row.function_name, configKey: row.config_key, computedAt: Number(row.computed_at_ms) },
          row.sampling
        )
      )
    })
})
