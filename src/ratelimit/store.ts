/**
 * The storage port of rate limit buckets: Postgres (layers/postgres/rateLimitBuckets.ts, shared
 * by every gateway process, atomic across the buckets of one request) or Redis/Valkey
 * (layers/redis/rateLimitBuckets.ts: the same, with lower latency). Buckets are token
 * buckets: a new bucket starts full; it refills continuously at `refillPerSecond` up to
 * `capacity`. A bucket that is full again is forgotten, so idle buckets cost nothing.
 */
import type * as Effect from "effect/Effect"
import type { StoreError } from "../storeError.ts"
import type { BucketRequest } from "./rules.ts"


export type ConsumeResult =
  | { readonly ok: true }
  /** nothing was taken from any bucket; `index` is the first bucket short of `amount` */
  | { readonly ok: false; readonly index: number; readonly available: number; readonly retryAfterS: number }

export interface RateLimitBuckets {
  readonly backend: "postgres" | "redis"
  /**
   * Refills each bucket, then takes `amount` from every one of them if all have enough, or
   * from none (all or nothing, atomic against every other gateway process).
   */
  readonly consume: (requests: ReadonlyArray<BucketRequest>) => Effect.Effect<ConsumeResult, StoreError>
  /**
   * Settles borrowed amounts: takes `amount` more from each bucket (a negative amount gives
   * back, never above capacity). A bucket may go below zero: the debt is refilled first.
   */
  readonly adjust: (requests: ReadonlyArray<BucketRequest>) => Effect.Effect<void, StoreError>
  /**
   * Deletes buckets that have refilled to capacity (a missing bucket is a full one), answering
   * how many; for a store whose buckets do not expire by themselves (Postgres; Redis keys carry
   * a TTL), which the gateway runs in the background.
   */
  readonly sweep?: Effect.Effect<number, StoreError> | undefined
}
