/**
 * The model answer cache on Postgres (`CacheStore` of src/cache/store.ts): the newest model
 * inference written with a key (`model_inference.cache_key`, indexed).
 */
import type * as PgClient from "@effect/sql-pg/PgClient"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import type { CacheStore } from "../../src/cache/store.ts"
import { storeError } from "./client.ts"
import { type CacheRow, type EmbeddingCacheRow, toCacheEntry, toEmbeddingCacheEntry } from "./rows.ts"

export const makePostgresCacheStore = (sql: PgClient.PgClient): CacheStore => {
  const cacheColumns = sql.literal("output, raw_request, raw_response, finish_reason, stream_chunking, timestamp")
  return {
    backend: "postgres",
    lookup: (key, maxAgeS) =>
      Effect.gen(function*() {
        // ages are measured on the gateway's clock, the one that stamped the entries
        const fresh = maxAgeS === undefined
          ? sql`TRUE`
          : sql`timestamp > ${new Date((yield* Clock.currentTimeMillis) - maxAgeS * 1000)}`
        // the newest answer written under the key (ids order answers of the same millisecond)
        const [row] = yield* sql<CacheRow>`SELECT ${cacheColumns} FROM model_inference
          WHERE cache_key = ${key} AND ${fresh} ORDER BY timestamp DESC, id DESC LIMIT 1`
        return row === undefined ? undefined : toCacheEntry(key, row)
      }).pipe(Effect.mapError(storeError("cacheLookup"))),
    lookupEmbedding: (key, maxAgeS) =>
      Effect.gen(function*() {
        const fresh = maxAgeS === undefined
          ? sql`TRUE`
          : sql`timestamp > ${new Date((yield* Clock.currentTimeMillis) - maxAgeS * 1000)}`
        const [row] = yield* sql<EmbeddingCacheRow>`SELECT raw_request, raw_response, timestamp FROM embedding_inference
          WHERE cache_key = ${key} AND ${fresh} ORDER BY timestamp DESC, id DESC LIMIT 1`
        return row === undefined ? undefined : toEmbeddingCacheEntry(key, row)
      }).pipe(Effect.mapError(storeError("embeddingCacheLookup")))
  }
}
