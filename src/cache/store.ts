/**
 * The storage port of the model answer cache (spec 4.1 `cache_options`): answers are written
 * once, as model inferences carrying a cache key (src/storedInferences/rows.ts); the
 * cache finds the newest one of a key. Implemented by layers/clickhouse/cache.ts and
 * layers/postgres/cache.ts.
 */
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import type { CacheEntry, EmbeddingCacheEntry } from "../analytics/records.ts"
import type { StoreError } from "../storeError.ts"
import type { AnalyticsPort, AnalyticsStore } from "../analytics/stores.ts"

export interface CacheStore extends AnalyticsStore {
  /** the newest entry for `key`, when younger than `maxAgeS` seconds (any age when undefined) */
  readonly lookup: (key: string, maxAgeS: number | undefined) => Effect.Effect<CacheEntry | undefined, StoreError>
  /** the same for embeddings: the newest embedding inference written under `key` (src/embeddings/) */
  readonly lookupEmbedding: (key: string, maxAgeS: number | undefined) => Effect.Effect<EmbeddingCacheEntry | undefined, StoreError>
}

/** The CacheStore of the analytics database, absent while observability is off (provided by layers/observability/). */
export class CacheStoreService extends Context.Service<CacheStoreService, AnalyticsPort<CacheStore>>()("gateway/CacheStore") {}
