/**
 * Rate limit buckets on Redis/Valkey (`RateLimitBuckets` of src/ratelimit/store.ts), for
 * GATEWAY_REDIS_URL (`redis://`, `rediss://` for TLS; Redis >= 5 or Valkey, a standalone server
 * or a Redis Cluster). One Lua script per call refills every bucket of the request and takes
 * from all of them or from none; Redis runs a script alone, so that is atomic against every
 * gateway process, and the clock is Redis's own (`TIME`), so processes with skewed clocks agree.
 *
 * A bucket is a hash `gateway:{rl}:<key>` of `tokens` and `updated` (microseconds). The hash tag
 * `{rl}` puts every bucket in one slot of a cluster (the slot of `rl`, on one master), so that
 * one script can read and write all the buckets of a request: a cluster refuses a script whose
 * keys lie in several slots. The tag comes before the bucket's own key, which may hold braces
 * itself: only the first `{...}` of a key name counts.
 *
 * A bucket expires once it would have refilled to capacity, when it is indistinguishable from a missing bucket
 * (which starts full), so idle buckets cost nothing. A bucket that never refills never expires.
 *
 * The connection fails fast (layers/redis/connection.ts): a command Redis does not answer in
 * time fails, and may still be applied later: the request was refused, so at worst a bucket was
 * charged for nothing.
 */
import { createHash } from "node:crypto"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import { ErrorReply } from "redis"
import type { ConsumeResult, RateLimitBuckets } from "../../src/ratelimit/store.ts"
import type { BucketRequest } from "../../src/ratelimit/rules.ts"
import { StoreError } from "../../src/storeError.ts"
import { describe, makeRedisConnection, withTimeout } from "./connection.ts"

export const keyPrefix = "gateway:{rl}:"

/** a bucket lives this much longer than it takes to refill, so it never expires a moment early */
const expiryMarginMs = 1_000

/** `retryAfterS` of a bucket that will never hold enough (it does not refill) */
export const neverS = Number.MAX_SAFE_INTEGER

/**
 * ARGV: mode ("consume" or "adjust"), then capacity, refill per second and amount of each key.
 * Consume answers {1} when it took from every bucket, or {0, index (1-based), available}
 * without writing anything. A key named twice is one bucket (refilled with its first
 * capacity and rate) that both amounts are taken from.
 */
const script = `
local consume = ARGV[1] == 'consume'
local clock = redis.call('TIME')
local now = tonumber(clock[1]) * 1000000 + tonumber(clock[2])
local levels, capacities, rates, order = {}, {}, {}, {}
for i = 1, #KEYS do
  local key = KEYS[i]
  local capacity = tonumber(ARGV[3 * i - 1])
  local rate = tonumber(ARGV[3 * i])
  local amount = tonumber(ARGV[3 * i + 1])
  local level = levels[key]
  if level == nil then
    local state = redis.call('HMGET', key, 'tokens', 'updated')
    local tokens, updated = tonumber(state[1]), tonumber(state[2])
    if tokens == nil or updated == nil then
      level = capacity
    else
      level = math.min(capacity, tokens + math.max(0, now - updated) / 1000000 * rate)
    end
    capacities[key], rates[key] = capacity, rate
    order[#order + 1] = key
  end
  if consume then
    if level < amount then
      return {0, i, string.format('%.17g', level)}
    end
    levels[key] = level - amount
  else
    levels[key] = math.min(capacities[key], level - amount)
  end
end
for _, key in ipairs(order) do
  local level, capacity, rate = levels[key], capacities[key], rates[key]
  redis.call('HSET', key, 'tokens', string.format('%.17g', level), 'updated', string.format('%.17g', now))
  local ttl = rate > 0 and math.ceil((capacity - level) / rate * 1000) + ${expiryMarginMs} or nil
  if ttl ~= nil and ttl < 1e15 then
    redis.call('PEXPIRE', key, string.format('%.0f', ttl))
  else
    redis.call('PERSIST', key)
  end
end
return {1}
`
const scriptSha = createHash("sha1").update(script).digest("hex")

const invalid = (request: BucketRequest, consuming: boolean): string | undefined => {
  if (typeof request.key !== "string") return "its key must be a string"
  if (!Number.isFinite(request.capacity) || request.capacity <= 0) return "capacity must be a finite number above 0"
  if (!Number.isFinite(request.refillPerSecond) || request.refillPerSecond < 0) return "refillPerSecond must be a finite number, 0 or more"
  if (!Number.isFinite(request.amount)) return "amount must be a finite number"
  if (consuming && request.amount < 0) return "amount to consume must not be negative"
  return undefined
}

const validate = (requests: ReadonlyArray<BucketRequest>, consuming: boolean): StoreError | undefined => {
  for (const request of requests) {
    const problem = invalid(request, consuming)
    if (problem !== undefined) {
      return new StoreError({ message: `invalid rate limit bucket ${JSON.stringify(String(request.key))}: ${problem}` })
    }
  }
  return undefined
}

/**
 * The buckets on the Redis at `url`, connected before it is returned (a StoreError when
 * Redis cannot be reached within two seconds); the connection closes with the scope.
 */
export const makeRedisRateLimitBuckets = (url: string): Effect.Effect<RateLimitBuckets, StoreError, Scope.Scope> =>
  Effect.gen(function*() {
    const connection = yield* makeRedisConnection(url)

    /** `keys` is never empty; on a cluster the script goes to the master of their one slot */
    const evaluate = (keys: ReadonlyArray<string>, args: ReadonlyArray<string>, signal: AbortSignal) => {
      const tail = [String(keys.length), ...keys, ...args]
      const slotKey = keys[0]!
      return connection.send(slotKey, ["EVALSHA", scriptSha, ...tail], signal).catch((error: unknown) => {
        // first use, or Redis restarted (or a replica took over) and does not know the script
        if (error instanceof ErrorReply && error.message.startsWith("NOSCRIPT")) return connection.send(slotKey, ["EVAL", script, ...tail], signal)
        throw error
      })
    }

    const run = (mode: "consume" | "adjust", requests: ReadonlyArray<BucketRequest>) =>
      withTimeout(
        Effect.tryPromise({
          try: (signal) =>
            evaluate(
              requests.map((request) => keyPrefix + request.key),
              [mode, ...requests.flatMap((request) => [String(request.capacity), String(request.refillPerSecond), String(request.amount)])],
              signal
            ),
          catch: (cause) => new StoreError({ message: `redis rate limit ${mode} failed: ${describe(cause)}` })
        }),
        `redis rate limit ${mode}`
      ).pipe(Effect.tapError(() => Effect.sync(connection.failed)))

    const consume = (requests: ReadonlyArray<BucketRequest>): Effect.Effect<ConsumeResult, StoreError> => {
      const problem = validate(requests, true)
      if (problem !== undefined) return Effect.fail(problem)
      if (requests.length === 0) return Effect.succeed({ ok: true })
      return Effect.flatMap(run("consume", requests), (reply): Effect.Effect<ConsumeResult, StoreError> => {
        const [taken, position, level] = reply as unknown as [number, number?, string?]
        if (taken === 1) return Effect.succeed({ ok: true })
        const index = Number(position) - 1
        const request = requests[index]
        const available = Number(level)
        if (request === undefined || !Number.isFinite(available)) {
          return Effect.fail(new StoreError({ message: `redis rate limit consume failed: unexpected reply ${JSON.stringify(reply)}` }))
        }
        const retryAfterS = request.refillPerSecond > 0
          ? Math.min(neverS, Math.max(1, Math.ceil((request.amount - available) / request.refillPerSecond)))
          : neverS
        return Effect.succeed({ ok: false, index, available, retryAfterS })
      })
    }

    const adjust = (requests: ReadonlyArray<BucketRequest>): Effect.Effect<void, StoreError> => {
      const problem = validate(requests, false)
      if (problem !== undefined) return Effect.fail(problem)
      if (requests.length === 0) return Effect.void
      return Effect.asVoid(run("adjust", requests))
    }

    return { backend: "redis", consume, adjust } satisfies RateLimitBuckets
  })
