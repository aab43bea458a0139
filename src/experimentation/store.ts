/**
 * The storage port of adaptive experimentation: each variant's statistics of a metric, read
 * from the feedback in the analytics database, and the sampling probabilities computed from
 * them, stored there so that every gateway process draws with the same ones. Implemented by
 * layers/clickhouse/experimentation.ts and layers/postgres/experimentation.ts, both checked
 * by the same suite (test/integration/store-experimentation.test.ts).
 */
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import type { StoreError } from "../storeError.ts"
import type { AnalyticsPort, AnalyticsStore } from "../analytics/stores.ts"

/** a variant's observations of the metric, as the store aggregates them */
export interface VariantStatistics {
  readonly name: string
  /** observations (feedback values) of the metric on this variant */
  readonly count: number
  readonly mean: number
  /** the population variance of the observations */
  readonly variance: number
}

/** Which feedback makes a function's statistics. */
export interface StatisticsQuery {
  readonly functionName: string
  readonly metricName: string
  readonly metricType: "boolean" | "float"
  /**
   * `inference`: the feedback on the function's inferences, by their variant; `episode`: the
   * feedback on episodes, by the variant of the episode's first inference of the function.
   * Only the latest feedback (newest id) of a target counts, as in metric filters.
   */
  readonly level: "inference" | "episode"
}

/** One computation of a function's sampling probabilities, as stored. */
export interface StoredSampling {
  /** a UUIDv7 carrying `computedAt` */
  readonly id: string
  readonly functionName: string
  /**
   * the settings it was computed under (src/experimentation/service.ts): a change of
   * candidates, metric or parameters starts afresh rather than reading another's probabilities
   */
  readonly configKey: string
  /** epoch milliseconds */
  readonly computedAt: number
  readonly probabilities: ReadonlyArray<{ readonly name: string; readonly probability: number }>
  readonly statistics: ReadonlyArray<VariantStatistics>
  readonly stopped: boolean
  readonly winner?: string | undefined
  readonly exploring: ReadonlyArray<string>
}

export interface ExperimentationStore extends AnalyticsStore {
  /** per variant with feedback (no row for a variant without any) */
  readonly variantStatistics: (query: StatisticsQuery) => Effect.Effect<ReadonlyArray<VariantStatistics>, StoreError>
  readonly saveSampling: (sampling: StoredSampling) => Effect.Effect<void, StoreError>
  /** the `limit` newest computations of `functionName` under `configKey`, newest first */
  readonly latestSamplings: (functionName: string, configKey: string, limit: number) => Effect.Effect<ReadonlyArray<StoredSampling>, StoreError>
}

/** The ExperimentationStore of the analytics database, absent while observability is off (provided by layers/observability/). */
export class ExperimentationStoreService extends Context.Service<ExperimentationStoreService, AnalyticsPort<ExperimentationStore>>()("gateway/ExperimentationStore") {}

/** what is stored in the row's JSON column besides its keys */
export const samplingJson = (sampling: StoredSampling): string =>
  JSON.stringify({
    probabilities: sampling.probabilities,
    statistics: sampling.statistics,
    stopped: sampling.stopped,
    ...(sampling.winner !== undefined && { winner: sampling.winner }),
    exploring: sampling.exploring
  })

/** a stored row back, from its keys and its JSON column */
export const fromSamplingJson = (keys: Pick<StoredSampling, "id" | "functionName" | "configKey" | "computedAt">, json: unknown): StoredSampling => {
  const body = (typeof json === "string" ? JSON.parse(json) : json) as Omit<StoredSampling, "id" | "functionName" | "configKey" | "computedAt">
  return {
    ...keys,
    probabilities: body.probabilities,
    statistics: body.statistics,
    stopped: body.stopped,
    ...(body.winner !== undefined && { winner: body.winner }),
    exploring: body.exploring
  }
}
