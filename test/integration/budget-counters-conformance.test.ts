/**
 * The budget counters port (src/budgets/store.ts) against each of its stores: Postgres
 * (layers/postgres/budgetCounters.ts, on the server and on the embedded database) and Redis
 * (layers/redis/budgetCounters.ts, logical database 9 of the test Redis). The same tests run on
 * every store: all or nothing, `spent + amount <= limit`, a raised limit applies at once,
 * settlements answer before and after, reads, a counter forgotten a day after its period; and
 * the period each store computes from its clock,
 * checked on given instants (Postgres: the SQL function; Redis: the script's Lua function).
 */
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Scope from "effect/Scope"
import { createClient } from "redis"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { makeRelationalStore } from "../../layers/postgres/relational.ts"
import { makeRedisBudgetCounters, periodLua } from "../../layers/redis/budgetCounters.ts"
import type { BudgetPeriod } from "../../src/budgets/budget.ts"
import type { BudgetCounters } from "../../src/budgets/store.ts"
import { psql, type RedisDatabase, redisDatabase } from "../support/access.ts"
import { freshDatabase, type TestDatabase } from "../support/databases.ts"

const redisIndex = 9
const backends = ["postgres", "pglite", "redis"] as const

let counter = 0
const freshKey = (name: string) => `budget:test-${name}-${counter++}`

/** the period start and end (ISO) `store` computes for `period` at the instant `at` */
type PeriodAt = (period: BudgetPeriod, at: string) => Promise<{ start: string | null; end: string | null }>

describe.each(backends)("budget counters on %s", (backend) => {
  let scope: Scope.Closeable
  let database: TestDatabase | undefined
  let redis: RedisDatabase | undefined
  let store: BudgetCounters
  let periodAt: PeriodAt
  /** Redis: a key's time to live in ms (-1: none), and the keys matching a pattern */
  let pttl: (name: string) => Promise<number>
  let keysMatching: (pattern: string) => Promise<Array<string>>
  const run = <A>(effect: Effect.Effect<A, unknown>) => Effect.runPromise(effect as Effect.Effect<A>)

  beforeAll(async () => {
    scope = Effect.runSync(Scope.make())
    if (backend === "redis") {
      redis = await redisDatabase(redisIndex)
      store = await Effect.runPromise(Scope.provide(scope)(makeRedisBudgetCounters(redis.url)))
      const client = createClient({ url: redis.url })
      await client.connect()
      periodAt = async (period, at) => {
        const reply = await client.eval(`${periodLua}\nlocal s, e = period_bounds(ARGV[1], tonumber(ARGV[2]))\nreturn {s and string.format('%.0f', s) or '', e and string.format('%.0f', e) or ''}`, {
          arguments: [period, String(Date.parse(at) / 1000)]
        }) as Array<string>
        const iso = (seconds: string) => seconds === "" ? null : new Date(Number(seconds) * 1000).toISOString()
        return { start: iso(reply[0]), end: iso(reply[1]) }
      }
      pttl = (name) => client.pTTL(name)
      keysMatching = (pattern) => client.keys(pattern)
      Scope.addFinalizerExit(scope, () => Effect.promise(async () => client.destroy()))
    } else {
      database = await freshDatabase(backend)
      const relational = await Effect.runPromise(Scope.provide(scope)(makeRelationalStore(database.url)))
      await run(relational.migrate)
      store = relational.budgetCounters
      const url = database.url
      periodAt = async (period, at) => {
        const [start, end] = (await psql(url, `SELECT CASE WHEN period_end IS NULL THEN '|' ELSE extract(epoch FROM period_start)::text || '|' || extract(epoch FROM period_end)::text END FROM gateway_budget_period('${period}', '${at}'::timestamptz)`)).trim().split("|")
        const iso = (seconds: string) => seconds === "" ? null : new Date(Number(seconds) * 1000).toISOString()
        return { start: iso(start), end: iso(end) }
      }
    }
  }, 60_000)
  afterAll(async () => {
    await Effect.runPromise(Scope.close(scope, Exit.void))
    await redis?.close()
    await database?.drop()
  })

  it("takes an amount only while spent + amount <= limit, and reads the spend back", async () => {
    const key = freshKey("limit")
    const charge = (amount: number) => run(store.reserve([{ key, period: "day", limit: 1, amount }]))
    expect(await charge(0.4)).toMatchObject({ ok: true, spent: [0.4] })
    expect(await charge(0.6)).toMatchObject({ ok: true, spent: [1] })
    const refused = await charge(0.01)
    expect(refused).toMatchObject({ ok: false, index: 0, spent: 1 })
    expect(await run(store.read([{ key, period: "day" }]))).toMatchObject([{ spent: 1 }])
    expect(await run(store.read([{ key: freshKey("never"), period: "day" }]))).toMatchObject([{ spent: 0 }])
  })

  it("charges all the counters or none", async () => {
    const [a, b] = [freshKey("a"), freshKey("b")]
    await run(store.reserve([{ key: b, period: "month", limit: 10, amount: 9 }]))
    const refused = await run(store.reserve([
      { key: a, period: "day", limit: 10, amount: 2 },
      { key: b, period: "month", limit: 10, amount: 2 }
    ]))
    expect(refused).toMatchObject({ ok: false, index: 1, spent: 9 })
    expect((await run(store.read([{ key: a, period: "day" }, { key: b, period: "month" }]))).map((read) => read.spent)).toEqual([0, 9])
    const taken = await run(store.reserve([
      { key: a, period: "day", limit: 10, amount: 2 },
      { key: b, period: "month", limit: 10, amount: 1 }
    ]))
    expect(taken).toMatchObject({ ok: true, spent: [2, 10] })
  })

  it("applies a limit raised in the middle of a period at once", async () => {
    const key = freshKey("raised")
    await run(store.reserve([{ key, period: "week", limit: 1, amount: 1 }]))
    expect((await run(store.reserve([{ key, period: "week", limit: 1, amount: 0.5 }]))).ok).toBe(false)
    expect(await run(store.reserve([{ key, period: "week", limit: 2, amount: 0.5 }]))).toMatchObject({ ok: true, spent: [1.5] })
  })

  it("settles with the spend before and after, never below zero", async () => {
    const key = freshKey("settle")
    await run(store.reserve([{ key, period: "total", limit: 5, amount: 2 }]))
    expect(await run(store.settle([{ key, period: "total", delta: 0.5 }]))).toEqual([{ before: 2, after: 2.5 }])
    expect(await run(store.settle([{ key, period: "total", delta: -3 }]))).toEqual([{ before: 2.5, after: 0 }])
  })

  it("is atomic under concurrency: 50 parallel reservations of 1 against a limit of 20 let exactly 20 through", async () => {
    const key = freshKey("parallel")
    const results = await Promise.all(Array.from({ length: 50 }, () => run(store.reserve([{ key, period: "day", limit: 20, amount: 1 }]))))
    expect(results.filter((result) => result.ok).length).toBe(20)
    expect(await run(store.read([{ key, period: "day" }]))).toMatchObject([{ spent: 20 }])
  })

  it("answers when the current period resets: the end of the day, week and month in UTC, never for a total", async () => {
    const [day, week, month, total] = [freshKey("d"), freshKey("w"), freshKey("m"), freshKey("t")]
    const result = await run(store.reserve([
      { key: day, period: "day", limit: 1, amount: 0 },
      { key: week, period: "week", limit: 1, amount: 0 },
      { key: month, period: "month", limit: 1, amount: 0 },
      { key: total, period: "total", limit: 1, amount: 0 }
    ]))
    if (!result.ok) throw new Error("refused")
    const now = new Date()
    const expected = (period: BudgetPeriod) => periodAt(period, now.toISOString())
    const [d, w, m] = await Promise.all([expected("day"), expected("week"), expected("month")])
    // the store's clock and this one agree but for a midnight in between
    expect(result.resetsAt.map((date) => date?.toISOString() ?? null)).toEqual([d.end, w.end, m.end, null])
    expect(new Date(d.end!).getUTCHours()).toBe(0)
  })

  it("forgets a counter a day after its period ended (Redis: the key expires; Postgres: the sweep deletes it)", async () => {
    const [past, current, total] = [freshKey("past"), freshKey("current"), freshKey("total")]
    const reserved = await run(store.reserve([
      { key: current, period: "day", limit: 10, amount: 1 },
      { key: total, period: "total", limit: 10, amount: 1 }
    ]))
    expect(reserved.ok).toBe(true)
    if (backend === "redis") {
      const names = await keysMatching(`gateway:{rl}:b:${current}:*`)
      expect(names).toHaveLength(1)
      // the end of today plus a day, from now: between one and two days
      expect(await pttl(names[0])).toBeGreaterThan(86_400_000)
      expect(await pttl(names[0])).toBeLessThanOrEqual(2 * 86_400_000)
      expect(await pttl(`gateway:{rl}:b:${total}:total`)).toBe(-1)
      return
    }
    // a counter of a day that ended two days ago, as a gateway left it
    await psql(database!.url, `INSERT INTO budget_spend (key, period_start, spent, expires_at)
      VALUES ('${past}', date_trunc('day', now()) - interval '2 days', 5, date_trunc('day', now()))`)
    expect(await run(store.sweep!)).toBe(1)
    const left = (await psql(database!.url, `SELECT key FROM budget_spend WHERE key IN ('${past}', '${current}', '${total}') ORDER BY key`)).trim().split("\n")
    expect(left.sort()).toEqual([current, total].sort())
  })

  it.each([
    ["day", "2026-03-04T23:59:59.999Z", "2026-03-04T00:00:00.000Z", "2026-03-05T00:00:00.000Z"],
    ["day", "2026-03-05T00:00:00.000Z", "2026-03-05T00:00:00.000Z", "2026-03-06T00:00:00.000Z"],
    // 2026-03-04 is a Wednesday; its week is from Monday the 2nd
    ["week", "2026-03-04T12:00:00.000Z", "2026-03-02T00:00:00.000Z", "2026-03-09T00:00:00.000Z"],
    // a Sunday is the last day of its week, a Monday the first of the next
    ["week", "2026-03-08T23:00:00.000Z", "2026-03-02T00:00:00.000Z", "2026-03-09T00:00:00.000Z"],
    ["week", "2026-03-09T00:00:00.000Z", "2026-03-09T00:00:00.000Z", "2026-03-16T00:00:00.000Z"],
    // across a year's end, and a leap February
    ["week", "2027-01-01T10:00:00.000Z", "2026-12-28T00:00:00.000Z", "2027-01-04T00:00:00.000Z"],
    ["month", "2028-02-29T23:59:59.000Z", "2028-02-01T00:00:00.000Z", "2028-03-01T00:00:00.000Z"],
    ["month", "2026-12-31T23:59:59.000Z", "2026-12-01T00:00:00.000Z", "2027-01-01T00:00:00.000Z"],
    ["month", "2027-01-01T00:00:00.000Z", "2027-01-01T00:00:00.000Z", "2027-02-01T00:00:00.000Z"],
    ["total", "2026-03-04T12:00:00.000Z", null, null]
  ] as const)("puts %s at %s in the period from %s to %s", async (period, at, start, end) => {
    expect(await periodAt(period, at)).toEqual({ start, end })
  })
})
