/**
 * The storage port of stored inferences (spec 4.4): reading inferences and their model calls
 * back, and what feedback needs to know about its target. Implemented by
 * layers/clickhouse/inferences.ts and layers/postgres/inferences.ts, both checked by the same
 * conformance suite.
 */
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import type { InferenceTarget, StoredInference, StoredModelInference } from "../analytics/records.ts"
import type { StoreError } from "../storeError.ts"
import type { AnalyticsPort, AnalyticsStore } from "../analytics/stores.ts"

export type ComparisonOperator = "<" | "<=" | ">" | ">=" | "=" | "!="

export type TagFilter = { readonly type: "tag"; readonly key: string; readonly value: string; readonly comparison_operator: "=" | "!=" }
/** on the time of the row's UUIDv7 id, in epoch milliseconds */
export type TimeFilter = { readonly type: "time"; readonly time: number; readonly comparison_operator: ComparisonOperator }
/**
 * The latest value of a metric (the newest feedback of that metric) on the inference, or on its
 * episode when the metric is episode-level; an inference without one matches no metric filter.
 */
export type MetricFilter =
  | { readonly type: "boolean_metric"; readonly metricName: string; readonly level: "inference" | "episode"; readonly value: boolean }
  | {
    readonly type: "float_metric"
    readonly metricName: string
    readonly level: "inference" | "episode"
    readonly value: number
    readonly comparison_operator: ComparisonOperator
  }
/** the inference has at least one demonstration */
export type DemonstrationFilter = { readonly type: "demonstration" }

/** A tree of `Leaf` conditions combined with and/or/not. */
export type FilterTree<Leaf> = Leaf | FilterBranch<Leaf> | FilterNot<Leaf>
export type FilterBranch<Leaf> = { readonly type: "and" | "or"; readonly children: ReadonlyArray<FilterTree<Leaf>> }
export type FilterNot<Leaf> = { readonly type: "not"; readonly child: FilterTree<Leaf> }

/** `InferenceFilter` of the API, checked, with times parsed and metric levels looked up. */
export type StoreFilter = FilterTree<TagFilter | TimeFilter | MetricFilter | DemonstrationFilter>

export interface InferenceQuery {
  readonly functionName?: string | undefined
  readonly variantName?: string | undefined
  readonly episodeId?: string | undefined
  readonly filter?: StoreFilter | undefined
  /** keyset paging (newest first): only inferences whose id is older than this one */
  readonly before?: string | undefined
  readonly limit: number
  readonly offset: number
}

/**
 * Every method reads within `workspace` (src/workspace.ts): another workspace's inference is
 * not found, as if it did not exist.
 */
export interface InferenceStore extends AnalyticsStore {
  readonly getInferences: (workspace: string, ids: ReadonlyArray<string>) => Effect.Effect<ReadonlyArray<StoredInference>, StoreError>
  /** newest first */
  readonly listInferences: (workspace: string, query: InferenceQuery) => Effect.Effect<ReadonlyArray<StoredInference>, StoreError>
  readonly getModelInferences: (
    workspace: string,
    inferenceIds: ReadonlyArray<string>
  ) => Effect.Effect<ReadonlyArray<StoredModelInference>, StoreError>
  readonly findInference: (workspace: string, id: string) => Effect.Effect<InferenceTarget | undefined, StoreError>
  /** whether the episode holds an inference of `workspace` (a client-chosen episode id may hold inferences of several) */
  readonly episodeExists: (workspace: string, id: string) => Effect.Effect<boolean, StoreError>
}

/** The InferenceStore of the analytics database, absent while observability is off (provided by layers/observability/). */
export class InferenceStoreService extends Context.Service<InferenceStoreService, AnalyticsPort<InferenceStore>>()("gateway/InferenceStore") {}
