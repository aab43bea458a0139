/**
 * The model answer cache on ClickHouse (`CacheStore` of src/cache/store.ts): the newest model
 * inference written under a key, found through `ModelInferenceCacheKey` (sorted by key, filled
 * from ModelInference by a materialized view).
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import type { CacheStore } from "../../src/cache/store.ts"
import type { ClickHouse } from "./client.ts"
import { type CacheRow, type EmbeddingCacheRow, toCacheEntry, toEmbeddingCacheEntry } from "./rows.ts"
import { refused, sqlInteger, sqlString } from "./sql.ts"

export const makeClickHouseCacheStore = ({ run, select }: ClickHouse): CacheStore => ({
  backend: "clickhouse",
  lookup: (key, maxAgeS) =>
    // ages are measured on the gateway's clock, the one that stamped the entries
    Effect.flatMap(Clock.currentTimeMillis, (now) =>
      run("cacheLookup", async (signal) => {
        if (maxAgeS !== undefined && !Number.isFinite(maxAgeS)) throw refused(`not an age: ${maxAgeS}`)
        const fresh = maxAgeS === undefined ? "" : ` AND timestamp_ms > ${sqlInteger(Math.max(0, Math.floor(now - maxAgeS * 1000)))}`
        // the newest model inference written under the key, found by its sorting key
        const newest = `SELECT inference_id, id FROM ModelInferenceCacheKey WHERE cache_key = ${sqlString(key)}${fresh} ` +
          "ORDER BY timestamp_ms DESC, toString(id) DESC LIMIT 1"
        const [row] = await select<CacheRow>(
          "SELECT output, raw_request, raw_response, finish_reason, stream_chunking, timestamp_ms FROM ModelInference " +
            `WHERE inference_id IN (SELECT inference_id FROM (${newest})) AND id IN (SELECT id FROM (${newest})) LIMIT 1`,
          signal
        )
        return row === undefined ? undefined : toCacheEntry(key, row)
      }))
  ,
  lookupEmbedding: (key, maxAgeS) =>
    Effect.flatMap(Clock.currentTimeMillis, (now) =>
      run("embeddingCacheLookup", async (signal) => {
        if (maxAgeS !== undefined && !Number.isFinite(maxAgeS)) throw refused(`not an age: ${maxAgeS}`)
        const fresh = maxAgeS === undefined ? "" : ` AND timestamp_ms > ${sqlInteger(Math.max(0, Math.floor(now - maxAgeS * 1000)))}`
        // EmbeddingInference is sorted by cache key: the newest row of a key is found by its prefix
        const [row] = await select<EmbeddingCacheRow>(
          "SELECT raw_request, raw_response, timestamp_ms FROM EmbeddingInference " +
            `WHERE cache_key = ${sqlString(key)}${fresh} ORDER BY timestamp_ms DESC, toString(id) DESC LIMIT 1`,
          signal
        )
        return row === undefined ? undefined : toEmbeddingCacheEntry(key, row)
      }))
})
