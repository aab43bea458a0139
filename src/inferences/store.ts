/**
 * The storage port of stored inferences (spec 4.4): reading inferences and their model calls
 * back, and what feedback needs to know about its target. Implemented by
 * layers/clickhouse/inferences.ts and layers/postgres/inferences.ts, both checked by the same
 * conformance suite.
 */
import type * as Effect from "effect/Effect"
import type { StoredInference, StoredModelInference } from "../observability/records.ts"
import type { StoreError } from "../storeError.ts"

/** `InferenceFilter` of the API, with times parsed to epoch milliseconds. */
export type StoreFilter =
  | { readonly type: "tag"; readonly key: string; readonly value: string; readonly comparison_operator: "=" | "!=" }
  | { readonly type: "time"; readonly time: number; readonly comparison_operator: "<" | "<=" | ">" | ">=" }
  | { readonly type: "and" | "or"; readonly children: ReadonlyArray<StoreFilter> }
  | { readonly type: "not"; readonly child: StoreFilter }

export interface InferenceQuery {
  readonly functionName?: string | undefined
  readonly variantName?: string | undefined
  readonly episodeId?: string | undefined
  readonly filter?: StoreFilter | undefined
  readonly limit: number
  readonly offset: number
}

/** What feedback needs to know about the inference it targets. */
export interface InferenceTarget {
  readonly functionName: string
  readonly functionType: "chat" | "json"
  readonly episodeId: string
  readonly outputSchema?: unknown
}

export interface InferenceStore {
  readonly getInferences: (ids: ReadonlyArray<string>) => Effect.Effect<ReadonlyArray<StoredInference>, StoreError>
  /** newest first */
  readonly listInferences: (query: InferenceQuery) => Effect.Effect<ReadonlyArray<StoredInference>, StoreError>
  readonly getModelInferences: (inferenceIds: ReadonlyArray<string>) => Effect.Effect<ReadonlyArray<StoredModelInference>, StoreError>
  readonly findInference: (id: string) => Effect.Effect<InferenceTarget | undefined, StoreError>
  readonly episodeExists: (id: string) => Effect.Effect<boolean, StoreError>
}
