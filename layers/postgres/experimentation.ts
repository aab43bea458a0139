/**
 * Adaptive experimentation on Postgres (`ExperimentationStore` of src/experimentation/store.ts).
 * Statistics: the latest feedback of the metric per target (newest id, `DISTINCT ON`), joined
 * to the variant of its inference (inference-level metrics) or of the episode's first
 * inference of the function (episode-level), both found by the inference tables' function
 * indexes. Probabilities: one `variant_sampling` row per computation, the newest read by the
 * (function, settings, id) index.
 */
import type * as PgClient from "@effect/sql-pg/PgClient"
import * as Effect from "effect/Effect"
import type { ExperimentationStore, StatisticsQuery } from "../../src/experimentation/store.ts"
import { fromSamplingJson, samplingJson } from "../../src/experimentation/store.ts"
import { isUuid } from "../../src/ids.ts"
import { notAUuid, storeError } from "./client.ts"
import { feedbackTables } from "./rows.ts"

interface SamplingRow {
  readonly id: string
  readonly function_name: string
  readonly config_key: string
  readonly computed_at: Date
  readonly sampling: unknown
}

export const makePostgresExperimentationStore = (sql: PgClient.PgClient): ExperimentationStore => {
  const statistics = (query: StatisticsQuery) => {
    const fn = query.functionName
    const inferences = sql`SELECT id, episode_id, variant_name FROM chat_inference WHERE function_name = ${fn}
      UNION ALL SELECT id, episode_id, variant_name FROM json_inference WHERE function_name = ${fn}`
    const variants = query.level === "inference"
      ? sql`SELECT id AS target_id, variant_name FROM (${inferences}) AS inference`
      : sql`SELECT DISTINCT ON (episode_id) episode_id AS target_id, variant_name FROM (${inferences}) AS inference ORDER BY episode_id, id`
    const value = query.metricType === "boolean" ? sql.literal("value::int::float8") : sql.literal("value")
    return sql<{ variant_name: string; count: number; mean: number; variance: number }>`
      WITH variant AS (${variants}),
      latest AS (
        SELECT DISTINCT ON (target_id) target_id, ${value} AS value FROM ${sql.literal(feedbackTables[query.metricType])}
        WHERE metric_name = ${query.metricName} AND target_id IN (SELECT target_id FROM variant) ORDER BY target_id, id DESC
      )
      SELECT variant.variant_name, count(*)::int AS count, avg(latest.value) AS mean, var_pop(latest.value) AS variance
      FROM latest JOIN variant ON variant.target_id = latest.target_id
      GROUP BY variant.variant_name ORDER BY variant.variant_name COLLATE "C"`
  }

  return {
    backend: "postgres",
    variantStatistics: (query) =>
      statistics(query).pipe(
        Effect.map((rows) => rows.map((row) => ({ name: row.variant_name, count: row.count, mean: Number(row.mean), variance: Number(row.variance) }))),
        Effect.mapError(storeError("variantStatistics"))
      ),

    saveSampling: (sampling) =>
      isUuid(sampling.id)
        ? sql`INSERT INTO variant_sampling (id, function_name, config_key, computed_at, sampling)
            VALUES (${sampling.id}::uuid, ${sampling.functionName}, ${sampling.configKey}, ${new Date(sampling.computedAt)}, ${samplingJson(sampling)}::jsonb)
            ON CONFLICT (id) DO NOTHING`.pipe(Effect.asVoid, Effect.mapError(storeError("saveSampling")))
        : Effect.fail(notAUuid(sampling.id)),

    latestSamplings: (functionName, configKey, limit) =>
      sql<SamplingRow>`SELECT id, function_name, config_key, computed_at, sampling FROM variant_sampling
        WHERE function_name = ${functionName} AND config_key = ${configKey} ORDER BY id DESC LIMIT ${limit}`.pipe(
        Effect.map((rows) =>
          rows.map((row) =>
            fromSamplingJson({ id: row.id, functionName: row.function_name, configKey: row.config_key, computedAt: row.computed_at.getTime() }, row.sampling)
          )
        ),
        Effect.mapError(storeError("latestSamplings"))
      )
  }
}
