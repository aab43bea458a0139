/**
 * The storage port of the UI's Overview (`GET /v1/ui/overview`): aggregates of the stored
 * inferences of a time range, computed by the database (counts per time bucket, per function,
 * the statistics of the latest feedback per variant, the model calls' counts and latency
 * percentiles), never by reading rows back. Implemented by layers/clickhouse/overview.ts and
 * layers/postgres/overview.ts, both checked by test/integration/store-overview.test.ts.
 *
 * A range is `[from, to)` in epoch milliseconds, on the time of the inference (its UUIDv7 id);
 * model calls and feedback count when their inference is in the range, whenever they came.
 * Every aggregate is of one workspace's inferences, model calls and feedback (src/workspace.ts).
 */
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import type { StoreError } from "../storeError.ts"
import type { AnalyticsPort, AnalyticsStore } from "../analytics/stores.ts"

export interface OverviewRange {
  readonly from: number
  readonly to: number
}

/** The inferences of one function, or of every function when `functionName` is undefined. */
export interface OverviewScope extends OverviewRange {
  readonly functionName?: string | undefined
}

export interface InferenceCountsQuery extends OverviewScope {
  /** the width of a bucket; buckets start at multiples of it since the epoch (UTC) */
  readonly bucketMs: number
}

/** the inferences of a bucket, of a variant (a function's) or of a function (every function's) */
export interface BucketCount {
  readonly bucketStart: number
  readonly name: string
  readonly count: number
}

export interface FunctionCount {
  readonly functionName: string
  readonly count: number
}

/**
 * The latest value (newest feedback) of a metric on each target of a variant: the variant's
 * inferences (inference-level feedback) or the episodes whose first inference of the function in
 * the range is the variant's (episode-level feedback). Booleans count as 0 and 1.
 */
export interface MetricVariantStatistics {
  readonly metricName: string
  readonly kind: "boolean" | "float"
  readonly level: "inference" | "episode"
  readonly variantName: string
  readonly count: number
  readonly mean: number
  /** the sample variance (divided by count - 1); 0 for a single value */
  readonly variance: number
}

/** linear interpolation between the closest ranks (Postgres' percentile_cont) */
export interface Percentiles {
  readonly p50: number
  readonly p90: number
  readonly p99: number
}

/**
 * The stored calls of one provider of a model. Only answered calls are stored: a provider's
 * failure (and an inference that failed altogether) leaves no row, so there is no error count.
 */
export interface ModelCallStatistics {
  readonly modelName: string
  readonly providerName: string
  readonly calls: number
  /** answered from the gateway's cache */
  readonly cachedCalls: number
  readonly inputTokens: number
  readonly outputTokens: number
  /** the sum over the calls that have a cost; undefined when none has */
  readonly cost?: number | undefined
  readonly responseTimeMs: Percentiles
  /** the streamed calls, which alone have a time to the first token */
  readonly ttftCalls: number
  readonly ttftMs?: Percentiles | undefined
}

export interface OverviewStore extends AnalyticsStore {
  /** per bucket and variant (a function) or function (every function); no row for an empty bucket */
  readonly inferenceCounts: (workspace: string, query: InferenceCountsQuery) => Effect.Effect<ReadonlyArray<BucketCount>, StoreError>
  /** the functions with inferences in the range, by name */
  readonly functionCounts: (workspace: string, range: OverviewRange) => Effect.Effect<ReadonlyArray<FunctionCount>, StoreError>
  /** by metric name, kind, level and variant name */
  readonly metricStatistics: (workspace: string, scope: OverviewScope & { readonly functionName: string }) => Effect.Effect<ReadonlyArray<MetricVariantStatistics>, StoreError>
  /** most calls first */
  readonly modelStatistics: (workspace: string, scope: OverviewScope) => Effect.Effect<ReadonlyArray<ModelCallStatistics>, StoreError>
  /** whether any inference of the function is stored, at any time */
  readonly hasInferences: (workspace: string, functionName: string) => Effect.Effect<boolean, StoreError>
}

/** The OverviewStore of the analytics database, absent while observability is off (provided by layers/observability/). */
export class OverviewStoreService extends Context.Service<OverviewStoreService, AnalyticsPort<OverviewStore>>()("gateway/OverviewStore") {}
