/**
 * The storage port of the model answer cache (spec 4.1 `cache_options`). In the analytics
 * database (layers/clickhouse/cache.ts, layers/postgres/cache.ts) answers are written once, as
 * model inferences carrying a cache key (src/storedInferences/rows.ts), and the cache finds the
 * newest one of a key. In Valkey/Redis (`[gateway.cache] backend = "valkey"`,
 * layers/redis/cache.ts) the cache keeps entries of its own, written as each call completes,
 * whether observability is on or off.
 */
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import type { Backend } from "../analytics/stores.ts"
import type { CacheEntry, EmbeddingCacheEntry } from "../analytics/records.ts"
import type { StoreError } from "../storeError.ts"

export interface CacheStore {
  /** where the entries live, for messages */
  readonly backend: Backend | "valkey"
  /** the newest entry for `key`, when younger than `maxAgeS` seconds (any age when undefined) */
  readonly lookup: (key: string, maxAgeS: number | undefined) => Effect.Effect<CacheEntry | undefined, StoreError>
  /** the same for embeddings: the newest embedding inference written under `key` (src/embeddings/) */
  readonly lookupEmbedding: (key: string, maxAgeS: number | undefined) => Effect.Effect<EmbeddingCacheEntry | undefined, StoreError>
  /**
   * Set by a cache that keeps its own entries (Valkey): keeps `entry` in the background (a
   * failure is logged, never the caller's). Absent for the analytics database, whose entries
   * are the model inferences the write queue stores.
   */
  readonly remember?: ((entry: CacheEntry) => void) | undefined
  readonly rememberEmbedding?: ((entry: EmbeddingCacheEntry) => void) | undefined
}

/** The cache's store, absent while there is none (observability off, and no Valkey). */
export class CacheStoreService extends Context.Service<CacheStoreService, { readonly store: CacheStore | undefined }>()("gateway/CacheStore") {}
