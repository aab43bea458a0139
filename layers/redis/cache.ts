/**
 * The model answer cache in Valkey/Redis (`[gateway.cache] backend = "valkey"`, a `CacheStore`
 * of src/cache/store.ts), on the server GATEWAY_REDIS_URL names. Each entry is one string,
 * `gateway:cache:<key>` (`gateway:cache:embedding:<key>` for embeddings), holding the entry as
 * JSON and expiring `[gateway.cache.valkey] ttl_s` after it was written; writing a key again
 * replaces it, so a lookup finds the newest answer. `max_age_s` is checked against the entry's
 * own timestamp. Entries are written in the background as calls complete: a failed write is
 * logged (at most once per 10 s) and costs only a later cache miss.
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import type { CacheEntry, EmbeddingCacheEntry } from "../../src/analytics/records.ts"
import type { CacheStore } from "../../src/cache/store.ts"
import { StoreError } from "../../src/storeError.ts"
import { throttledWarning } from "../../src/throttledWarning.ts"
import { describe, makeRedisConnection, withTimeout } from "./connection.ts"

export const answerPrefix = "gateway:cache:"
export const embeddingPrefix = "gateway:cache:embedding:"

interface Stamped {
  readonly timestamp: number
}

/** an entry read back, or undefined when it is missing, too old, or not one (written by something else) */
const fresh = <E extends Stamped>(text: unknown, key: string, maxAgeS: number | undefined, now: number): E | undefined => {
  if (typeof text !== "string") return undefined
  let entry: unknown
  try {
    entry = JSON.parse(text)
  } catch {
    return undefined
  }
  if (typeof entry !== "object" || entry === null || (entry as { key?: unknown }).key !== key) return undefined
  const timestamp = (entry as Partial<Stamped>).timestamp
  if (typeof timestamp !== "number") return undefined
  return maxAgeS === undefined || now - timestamp < maxAgeS * 1000 ? entry as E : undefined
}

/** The cache on the Redis at `url` (connected before it is returned), entries living `ttlS` seconds. */
export const makeRedisCacheStore = (url: string, ttlS: number): Effect.Effect<CacheStore, StoreError, Scope.Scope> =>
  Effect.gen(function*() {
    const connection = yield* makeRedisConnection(url)
    const runLog = Effect.runSyncWith(yield* Effect.context<never>())
    const failedWrite = throttledWarning(10_000)

    const get = <E extends Stamped>(prefix: string, key: string, maxAgeS: number | undefined) =>
      withTimeout(
        Effect.tryPromise({
          try: (signal) => connection.send(prefix + key, ["GET", prefix + key], signal),
          catch: (cause) => new StoreError({ message: `valkey cache lookup failed: ${describe(cause)}`, outage: true })
        }),
        "valkey cache lookup"
      ).pipe(
        Effect.tapError(() => Effect.sync(connection.failed)),
        // ages are measured on the gateway's clock, the one that stamped the entries
        Effect.flatMap((text) => Effect.map(Clock.currentTimeMillis, (now) => fresh<E>(text, key, maxAgeS, now)))
      )

    const set = (prefix: string, entry: CacheEntry | EmbeddingCacheEntry) => {
      connection.send(prefix + entry.key, ["SET", prefix + entry.key, JSON.stringify(entry), "EX", String(ttlS)]).catch((cause: unknown) => {
        connection.failed()
        failedWrite.warn((heldBack) =>
          `valkey cache: could not keep an answer (${describe(cause)})${heldBack === 0 ? "" : ` (and ${heldBack} more since the last warning)`}`
        ).pipe(runLog)
      })
    }

    return {
      backend: "valkey",
      lookup: (key, maxAgeS) => get<CacheEntry>(answerPrefix, key, maxAgeS),
      lookupEmbedding: (key, maxAgeS) => get<EmbeddingCacheEntry>(embeddingPrefix, key, maxAgeS),
      remember: (entry) => set(answerPrefix, entry),
      rememberEmbedding: (entry) => set(embeddingPrefix, entry)
    } satisfies CacheStore
  })
