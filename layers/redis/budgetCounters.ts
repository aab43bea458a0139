/**
 * Budget counters on Redis/Valkey (`BudgetCounters` of src/budgets/store.ts), for
 * GATEWAY_REDIS_URL, beside the rate limit buckets (layers/redis/rateLimitBuckets.ts). One Lua
 * script per call computes each counter's period from Redis's clock (`TIME`) and charges all or
 * nothing; Redis runs a script alone, so that is atomic against every gateway process.
 *
 * A counter is a string `gateway:{rl}:b:<key>:<period start in seconds>` (`:total` for a
 * total) holding the spend. The hash tag `{rl}` is the rate limit buckets' own, so every
 * counter lies in their slot of a cluster, as one script's keys must. A counter expires a day
 * after its period ends (PEXPIREAT); a `total` counter never expires.
 */
import { createHash } from "node:crypto"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import { ErrorReply } from "redis"
import type { BudgetPeriod } from "../../src/budgets/budget.ts"
import type { BudgetCounters, ReserveResult } from "../../src/budgets/store.ts"
import { StoreError } from "../../src/storeError.ts"
import { describe, makeRedisConnection } from "./connection.ts"
import { keyPrefix } from "./rateLimitBuckets.ts"

/** the counters' prefix: the buckets' hash tag, then `b:` so no counter is a bucket */
export const counterPrefix = `${keyPrefix}b:`

/**
 * The period of `period` that the instant `now` (seconds since 1970, UTC) falls in: its start
 * and end in seconds (the end nil for `total`). Days from civil dates by Howard Hinnant's
 * algorithm; 1970-01-01 was a Thursday, so a week starts `(days + 3) % 7` days before. Kept
 * apart so the tests can run it on given instants.
 */
export const periodLua = `
local function days_from_civil(y, m, d)
  if m <= 2 then y = y - 1 end
  local era = math.floor(y / 400)
  local yoe = y - era * 400
  local mp = (m + 9) % 12
  local doy = math.floor((153 * mp + 2) / 5) + d - 1
  local doe = yoe * 365 + math.floor(yoe / 4) - math.floor(yoe / 100) + doy
  return era * 146097 + doe - 719468
end
local function civil_from_days(z)
  z = z + 719468
  local era = math.floor(z / 146097)
  local doe = z - era * 146097
  local yoe = math.floor((doe - math.floor(doe / 1460) + math.floor(doe / 36524) - math.floor(doe / 146096)) / 365)
  local y = yoe + era * 400
  local doy = doe - (365 * yoe + math.floor(yoe / 4) - math.floor(yoe / 100))
  local mp = math.floor((5 * doy + 2) / 153)
  local d = doy - math.floor((153 * mp + 2) / 5) + 1
  local m = mp < 10 and mp + 3 or mp - 9
  if m <= 2 then y = y + 1 end
  return y, m, d
end
local function period_bounds(period, now)
  local days = math.floor(now / 86400)
  if period == 'day' then
    return days * 86400, (days + 1) * 86400
  elseif period == 'week' then
    local start = days - (days + 3) % 7
    return start * 86400, (start + 7) * 86400
  elseif period == 'month' then
    local y, m = civil_from_days(days)
    local ny, nm = y, m + 1
    if nm > 12 then ny, nm = y + 1, 1 end
    return days_from_civil(y, m, 1) * 86400, days_from_civil(ny, nm, 1) * 86400
  elseif period == 'total' then
    return nil, nil
  end
  error('unknown budget period ' .. tostring(period))
end
`

/**
 * ARGV: mode ("reserve", "settle" or "read"), then period, limit and amount of each key (KEYS:
 * the counters without their period). Reserve answers {1, spent, resets, ...} having charged
 * every counter, or {0, index (1-based), spent, resets} having written nothing; settle answers
 * {before, after, ...}; read {spent, resets, ...}. `resets` is the period's end in seconds, or ''
 * for a total. A key named twice is charged twice.
 */
const script = `${periodLua}
local mode = ARGV[1]
local clock = redis.call('TIME')
local now = tonumber(clock[1]) + tonumber(clock[2]) / 1000000
local names, ends, levels = {}, {}, {}
for i = 1, #KEYS do
  local start, finish = period_bounds(ARGV[3 * i - 1], now)
  local name = KEYS[i] .. ':' .. (start == nil and 'total' or string.format('%.0f', start))
  names[i], ends[i] = name, finish
  if levels[name] == nil then levels[name] = tonumber(redis.call('GET', name) or '0') end
end
local function shown(finish) return finish == nil and '' or string.format('%.0f', finish) end
local reply = {}
if mode == 'read' then
  for i = 1, #KEYS do
    reply[#reply + 1] = string.format('%.17g', levels[names[i]])
    reply[#reply + 1] = shown(ends[i])
  end
  return reply
end
local reserve = mode == 'reserve'
if reserve then
  local trial = {}
  for name, level in pairs(levels) do trial[name] = level end
  for i = 1, #KEYS do
    local name = names[i]
    local amount = tonumber(ARGV[3 * i + 1])
    if trial[name] + amount > tonumber(ARGV[3 * i]) then
      return {0, i, string.format('%.17g', trial[name]), shown(ends[i])}
    end
    trial[name] = trial[name] + amount
  end
  reply[1] = 1
end
for i = 1, #KEYS do
  local name = names[i]
  local before = levels[name]
  local after = math.max(0, before + tonumber(ARGV[3 * i + 1]))
  levels[name] = after
  redis.call('SET', name, string.format('%.17g', after))
  if ends[i] ~= nil then redis.call('PEXPIREAT', name, string.format('%.0f', (ends[i] + 86400) * 1000)) end
  if reserve then
    reply[#reply + 1] = string.format('%.17g', after)
    reply[#reply + 1] = shown(ends[i])
  else
    reply[#reply + 1] = string.format('%.17g', before)
    reply[#reply + 1] = string.format('%.17g', after)
  end
end
return reply
`
const scriptSha = createHash("sha1").update(script).digest("hex")

const resetsAtOf = (shown: string): Date | undefined => shown === "" ? undefined : new Date(Number(shown) * 1000)

/**
 * The counters on the Redis at `url`, connected before it is returned (a StoreError when Redis
 * cannot be reached within two seconds); the connection closes with the scope.
 */
export const makeRedisBudgetCounters = (url: string): Effect.Effect<BudgetCounters, StoreError, Scope.Scope> =>
  Effect.gen(function*() {
    const connection = yield* makeRedisConnection(url)

    const run = (
      mode: "reserve" | "settle" | "read",
      counters: ReadonlyArray<{ readonly key: string; readonly period: BudgetPeriod; readonly limit: number; readonly amount: number }>
    ) => {
      const invalid = counters.find((counter) => !Number.isFinite(counter.amount) || !Number.isFinite(counter.limit))
      if (invalid !== undefined) {
        return Effect.fail(new StoreError({ message: `redis budget ${mode} failed: ${JSON.stringify(invalid.key)}: amounts and limits must be finite numbers` }))
      }
      const keys = counters.map((counter) => counterPrefix + counter.key)
      const tail = [String(keys.length), ...keys, mode, ...counters.flatMap((counter) => [counter.period, String(counter.limit), String(counter.amount)])]
      // no abort signal and no timer of our own: the connection's `timeout` bounds the command,
      // and both cost a request under a budget measurably (docs/budgets.md "The cost per request")
      return Effect.tryPromise({
        try: () =>
          connection.send(keys[0]!, ["EVALSHA", scriptSha, ...tail]).catch((error: unknown) => {
            // first use, or Redis restarted and does not know the script
            if (error instanceof ErrorReply && error.message.startsWith("NOSCRIPT")) return connection.send(keys[0]!, ["EVAL", script, ...tail])
            throw error
          }),
        catch: (cause) => new StoreError({ message: `redis budget ${mode} failed: ${describe(cause)}` })
      }).pipe(
        Effect.tapError(() => Effect.sync(connection.failed)),
        Effect.map((reply) => reply as unknown as ReadonlyArray<string | number>)
      )
    }

    const reserve: BudgetCounters["reserve"] = (charges) => {
      if (charges.length === 0) return Effect.succeed({ ok: true, spent: [], resetsAt: [] })
      return Effect.map(run("reserve", charges), (reply): ReserveResult => {
        if (Number(reply[0]) === 0) {
          return { ok: false, index: Number(reply[1]) - 1, spent: Number(reply[2]), resetsAt: resetsAtOf(String(reply[3])) }
        }
        const spent: Array<number> = []
        const resetsAt: Array<Date | undefined> = []
        for (let i = 1; i < reply.length; i += 2) {
          spent.push(Number(reply[i]))
          resetsAt.push(resetsAtOf(String(reply[i + 1])))
        }
        return { ok: true, spent, resetsAt }
      })
    }

    const settle: BudgetCounters["settle"] = (settlements) => {
      if (settlements.length === 0) return Effect.succeed([])
      return Effect.map(run("settle", settlements.map((settlement) => ({ ...settlement, limit: 0, amount: settlement.delta }))), (reply) => {
        const results: Array<{ before: number; after: number }> = []
        for (let i = 0; i < reply.length; i += 2) results.push({ before: Number(reply[i]), after: Number(reply[i + 1]) })
        return results
      })
    }

    const read: BudgetCounters["read"] = (counters) => {
      if (counters.length === 0) return Effect.succeed([])
      return Effect.map(run("read", counters.map((counter) => ({ ...counter, limit: 0, amount: 0 }))), (reply) => {
        const results: Array<{ spent: number; resetsAt: Date | undefined }> = []
        for (let i = 0; i < reply.length; i += 2) results.push({ spent: Number(reply[i]), resetsAt: resetsAtOf(String(reply[i + 1])) })
        return results
      })
    }

    return { backend: "redis", reserve, settle, read } satisfies BudgetCounters
  })
