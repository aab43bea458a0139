/**
 * Rate limit buckets on Postgres (`RateLimitBuckets` of src/ratelimit/store.ts), in the
 * relational database. A bucket call is one round trip: `gateway_take_from_buckets`
 * (0002_api_keys_and_rate_limits.sql; all or nothing to consume, not to settle) refills, checks
 * and charges every bucket of a request in one transaction, on the database's clock, locking
 * the rows in key order so calls on overlapping buckets never deadlock. Each bucket row carries
 * when it will be full again (0004_rate_limit_bucket_expiry.sql); `sweep` deletes the rows past
 * that, in batches that skip rows a request holds.
 */
import type * as PgClient from "@effect/sql-pg/PgClient"
import * as PgTypes from "@effect/sql-pg/PgTypes"
import { createHash } from "node:crypto"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import type { ConsumeResult, RateLimitBuckets } from "../../src/ratelimit/store.ts"
import type { BucketRequest } from "../../src/ratelimit/rules.ts"
import { StoreError } from "../../src/storeError.ts"
import { storeError } from "./client.ts"
import { sweepPast } from "./sweepPast.ts"

/** The longest bucket key stored as it is; a btree entry holds at most about 2.7 kB. */
const maxStoredKeyLength = 512

/**
 * The row key of a bucket key, one to one: backslashes, NUL and lone surrogates escaped (a
 * key may carry a client's tag value), and a long key replaced by its SHA-256 (`\h<hex>`,
 * which no escaped key starts with). Keys of plain text are stored as they are.
 */
export const storedBucketKey = (key: string): string => {
  let escaped = key
  if (/[\\\0\uD800-\uDFFF]/.test(key)) {
    escaped = ""
    for (let i = 0; i < key.length; i++) {
      const code = key.charCodeAt(i)
      if (code === 0x5c) escaped += "\\\\"
      else if (code === 0) escaped += "\\0"
      else if (code >= 0xd800 && code <= 0xdbff && i + 1 < key.length && (key.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
        escaped += key[i] + key[i + 1]
        i++
      } else if (code >= 0xd800 && code <= 0xdfff) escaped += `\\u${code.toString(16).padStart(4, "0")}`
      else escaped += key[i]
    }
  }
  return escaped.length <= maxStoredKeyLength ? escaped : `\\h${createHash("sha256").update(escaped, "utf8").digest("hex")}`
}

const textArray = (values: ReadonlyArray<string>) => Result.getOrThrow(PgTypes.array(values, PgTypes.OID.text))
const float8Array = (values: ReadonlyArray<number>) => Result.getOrThrow(PgTypes.array(values, PgTypes.OID.float8))

/** why `requests` cannot be sent, if they cannot */
const invalidRequests = (requests: ReadonlyArray<BucketRequest>, negativeAmounts: boolean): string | undefined => {
  for (let index = 0; index < requests.length; index++) {
    const { key, capacity, refillPerSecond, amount } = requests[index]
    if (typeof key !== "string") return `bucket ${index}: the key must be a string`
    if (typeof capacity !== "number" || !Number.isFinite(capacity) || capacity <= 0) {
      return `bucket ${index}: the capacity must be a finite number above 0, not ${capacity}`
    }
    if (typeof refillPerSecond !== "number" || !Number.isFinite(refillPerSecond) || refillPerSecond < 0) {
      return `bucket ${index}: the refill rate must be a finite number of at least 0, not ${refillPerSecond}`
    }
    if (typeof amount !== "number" || !Number.isFinite(amount) || (!negativeAmounts && amount < 0)) {
      return `bucket ${index}: the amount must be a finite number${negativeAmounts ? "" : " of at least 0"}, not ${amount}`
    }
  }
  return undefined
}

/** the four arrays the bucket functions take */
const bucketArguments = (requests: ReadonlyArray<BucketRequest>) => [
  textArray(requests.map((request) => storedBucketKey(request.key))),
  float8Array(requests.map((request) => request.capacity)),
  float8Array(requests.map((request) => request.refillPerSecond)),
  float8Array(requests.map((request) => request.amount))
] as const

interface ConsumeRow {
  readonly short_index: number | null
  readonly available: number | null
  readonly retry_after_s: number | null
}

const passed: ConsumeResult = { ok: true }

/** `retryAfterS` of a bucket that will never hold enough (it does not refill), as the Redis store says it */
export const neverS = Number.MAX_SAFE_INTEGER

export const makePostgresRateLimitBuckets = (sql: PgClient.PgClient): RateLimitBuckets => {
  const consume: RateLimitBuckets["consume"] = (requests) => {
    if (requests.length === 0) return Effect.succeed(passed)
    const invalid = invalidRequests(requests, false)
    if (invalid !== undefined) return Effect.fail(new StoreError({ message: `postgres consume failed: ${invalid}` }))
    const [bucketKeys, capacities, rates, amounts] = bucketArguments(requests)
    return sql<ConsumeRow>`SELECT short_index, available, retry_after_s
      FROM gateway_take_from_buckets(${bucketKeys}, ${capacities}, ${rates}, ${amounts}, true)`.pipe(
      Effect.map(([row]): ConsumeResult =>
        row === undefined || row.short_index === null ? passed : {
          ok: false,
          index: row.short_index,
          available: row.available ?? 0,
          retryAfterS: row.retry_after_s !== null && row.retry_after_s < neverS ? row.retry_after_s : neverS
        }
      ),
      Effect.mapError(storeError("consume"))
    )
  }

  const adjust: RateLimitBuckets["adjust"] = (requests) => {
    if (requests.length === 0) return Effect.void
    const invalid = invalidRequests(requests, true)
    if (invalid !== undefined) return Effect.fail(new StoreError({ message: `postgres adjust failed: ${invalid}` }))
    const [bucketKeys, capacities, rates, amounts] = bucketArguments(requests)
    return sql`SELECT FROM gateway_take_from_buckets(${bucketKeys}, ${capacities}, ${rates}, ${amounts}, false)`.pipe(
      Effect.asVoid,
      Effect.mapError(storeError("adjust"))
    )
  }

  const sweep = sweepPast(sql, "rate_limit_buckets", "full_at", "sweep rate limit buckets")

  return { backend: "postgres", consume, adjust, sweep }
}
