/**
 * Budgets' pure parts (docs/budgets.md): `[[rate_limiting.budgets]]` parsed into budgets (and
 * the errors naming the field), the estimate a call reserves, what a call is charged at its end,
 * the 429 of a refused call (`resets_at`, Retry-After), and settlements sent together.
 */
import { describe, expect, it } from "vitest"
import { applicableBudgets, budgetCounterKey } from "../../src/budgets/budget.ts"
import { chargedCost, estimateCost, inputTokensUpper } from "../../src/budgets/estimate.ts"
import * as Effect from "effect/Effect"
import { budgetExceeded, reserveBudgets } from "../../src/budgets/reservation.ts"
import type { BudgetCounters } from "../../src/budgets/store.ts"
import { withBatchedSettlements } from "../../src/budgets/batchedSettlements.ts"
import { StoreError } from "../../src/storeError.ts"
import { maxRetryAfterS } from "../../src/ratelimit/rules.ts"
import { BoundedGauge } from "../../layers/metrics/families.ts"
import { buildErrors, buildOk, configPath } from "./fixtures.ts"

const budgetsOf = (toml: string) => buildOk(toml).rateLimiting.budgets

describe("[[rate_limiting.budgets]]", () => {
  it("parses scope, period and limit; every condition kind; an id from the definition", () => {
    const [perKey, perTeam, all] = budgetsOf(`
[[rate_limiting.budgets]]
scope = [{ api_key_public_id = "gateway::each" }, { workspace = "acme" }]
period = "month"
limit = 50

[[rate_limiting.budgets]]
scope = [{ tag_key = "team", tag_value = "gateway::each" }]
period = "week"
limit = 5.5

[[rate_limiting.budgets]]
period = "total"
limit = 1000
`)
    expect(perKey).toMatchObject({
      source: "config",
      scope: [{ kind: "api_key", publicId: "gateway::each" }, { kind: "workspace", workspace: "acme" }],
      period: "month",
      limit: 50
    })
    expect(perTeam).toMatchObject({ scope: [{ kind: "tag", key: "team", value: "gateway::each" }], period: "week", limit: 5.5 })
    expect(all).toMatchObject({ scope: [], period: "total", limit: 1000 })
    expect(new Set([perKey.id, perTeam.id, all.id]).size).toBe(3)
    expect(budgetsOf(`[[rate_limiting.budgets]]\nperiod = "day"\nlimit = 1\n`)[0].id).toBe(budgetsOf(`[[rate_limiting.budgets]]\nperiod = "day"\nlimit = 1\n`)[0].id)
  })

  it("names the field at fault", () => {
    expect(buildErrors(`[[rate_limiting.budgets]]\nperiod = "year"\nlimit = 1\n`)[0]).toMatch(/rate_limiting\.budgets\[0\]\.period: .*"day", "week", "month" or "total"/)
    expect(buildErrors(`[[rate_limiting.budgets]]\nperiod = "day"\nlimit = -1\n`)[0]).toMatch(/rate_limiting\.budgets\[0\]\.limit/)
    expect(buildErrors(`[[rate_limiting.budgets]]\nperiod = "day"\n`)[0]).toMatch(/rate_limiting\.budgets\[0\]\.limit: /)
    expect(buildErrors(`[[rate_limiting.budgets]]\nperiod = "day"\nlimit = 1\nscope = [{ api_key_public_id = "short" }]\n`)).toEqual([
      `${configPath}: rate_limiting.budgets[0].scope[0].api_key_public_id: expected a 12-character public id or "gateway::each", got "short"`
    ])
    expect(buildErrors(`[[rate_limiting.budgets]]\nperiod = "day"\nlimit = 1\ncap = 2\n`)[0]).toMatch(/rate_limiting\.budgets\[0\]\.cap: unknown field/)
  })

  it("are off with [rate_limiting] enabled = false", () => {
    expect(budgetsOf(`[rate_limiting]\nenabled = false\n[[rate_limiting.budgets]]\nperiod = "day"\nlimit = 1\n`)).toEqual([])
  })

  it("apply when every condition holds; one counter per tag value under gateway::each, the same whatever the limit", () => {
    const [team, acme] = budgetsOf(`
[[rate_limiting.budgets]]
scope = [{ tag_key = "team", tag_value = "gateway::each" }]
period = "day"
limit = 1
[[rate_limiting.budgets]]
scope = [{ workspace = "acme" }]
period = "day"
limit = 1
`)
    const request = (workspace: string, tags: Record<string, string>) => ({ workspace, tags })
    expect(applicableBudgets([team, acme], request("acme", { team: "a" }))).toEqual([team, acme])
    expect(applicableBudgets([team, acme], request("other", {}))).toEqual([])
    expect(budgetCounterKey(team, request("x", { team: "a" }))).not.toBe(budgetCounterKey(team, request("x", { team: "b" })))
    expect(budgetCounterKey(team, request("x", { team: "a" }))).toBe(budgetCounterKey({ ...team, limit: 99 }, request("x", { team: "a" })))
  })
})

describe("the estimate", () => {
  const prices = { inputPerMillion: 3, outputPerMillion: 15 }

  it("is ceil(promptLength / 3) input tokens at the input price plus max_tokens at the output price", () => {
    expect(inputTokensUpper(10)).toBe(4)
    expect(estimateCost(prices, 3000, 500, 0)).toEqual({ ok: true, cost: (1000 * 3 + 500 * 15) / 1e6 })
    expect(estimateCost(prices, 1, 0, 0)).toEqual({ ok: true, cost: 3 / 1e6 })
  })

  it("needs max_tokens when the provider has prices, and is default_cost when it has none", () => {
    expect(estimateCost(prices, 3000, undefined, 0.5)).toEqual({ ok: false })
    expect(estimateCost(undefined, 3000, undefined, 0.5)).toEqual({ ok: true, cost: 0.5 })
    expect(estimateCost(undefined, 3000, 100, 0)).toEqual({ ok: true, cost: 0 })
  })
})

describe("a reservation", () => {
  const [budget] = budgetsOf(`[[rate_limiting.budgets]]\nperiod = "day"\nlimit = 1\n`)
  /** a store the reservation must not reach */
  const untouched: BudgetCounters = {
    backend: "postgres",
    reserve: () => Effect.die("reserved"),
    settle: () => Effect.die("settled"),
    read: () => Effect.die("read")
  }

  it("of a provider with prices and a request without max_tokens is a 400 naming max_tokens, before the store is asked", async () => {
    const error = await Effect.runPromise(Effect.flip(
      reserveBudgets({ counters: untouched, defaultCost: 0 }, [budget], { workspace: "default", tags: {} }, { inputPerMillion: 1, outputPerMillion: 2 }, 100, undefined)
    ))
    expect(error._tag).toBe("InvalidRequest")
    expect(error.message).toMatch(/^max_tokens: a budget applies/)
  })
})

describe("what a call is charged", () => {
  it("nothing when it failed; its cost, or default_cost when it reported none; a stream cut short at least its estimate", () => {
    expect(chargedCost("failed", 0.5, 0.1)).toBe(0)
    expect(chargedCost({ cost: 0.2, cutShort: false }, 0.5, 0.1)).toBe(0.2)
    expect(chargedCost({ cost: undefined, cutShort: false }, 0.5, 0.1)).toBe(0.1)
    expect(chargedCost({ cost: 0.2, cutShort: true }, 0.5, 0.1)).toBe(0.5)
    expect(chargedCost({ cost: 0.9, cutShort: true }, 0.5, 0.1)).toBe(0.9)
    expect(chargedCost({ cost: undefined, cutShort: true }, 0.5, 0.1)).toBe(0.5)
  })
})

describe("the 429 of a budget", () => {
  const [monthly] = budgetsOf(`[[rate_limiting.budgets]]\nscope = [{ workspace = "gateway::each" }]\nperiod = "month"\nlimit = 5\n`)
  const [total] = budgetsOf(`[[rate_limiting.budgets]]\nscope = [{ tag_key = "team", tag_value = "gateway::each" }]\nperiod = "total"\nlimit = 5\n`)
  const scope = { workspace: "acme", tags: { team: "blue" } }

  it("gives the budget, resets_at in RFC 3339 and Retry-After in seconds until then", () => {
    const now = Date.parse("2026-03-31T23:59:00.500Z")
    const error = budgetExceeded(monthly, scope, 0.25, 4.9, new Date("2026-04-01T00:00:00Z"), now)
    expect(error.status).toBe(429)
    expect(error.retryAfterS).toBe(60)
    expect(error.budget).toEqual({
      scope: { kind: "workspace", value: "acme" },
      period: "month",
      limit: 5,
      spent: 4.9,
      remaining: expect.closeTo(0.1, 12),
      resets_at: "2026-04-01T00:00:00.000Z"
    })
    expect(error.message).toBe(
      "budget exceeded: workspace:acme/month has spent 4.9 of 5, and this call may cost up to 0.25; it resets at 2026-04-01T00:00:00.000Z"
    )
  })

  it("of a total: resets_at null and the longest Retry-After", () => {
    const error = budgetExceeded(total, scope, 0.25, 5.2, undefined, Date.now())
    expect(error.budget).toMatchObject({ scope: { kind: "tag", value: "team=blue" }, remaining: 0, resets_at: null })
    expect(error.retryAfterS).toBe(maxRetryAfterS)
  })
})

describe("gateway_budget_used_ratio's series", () => {
  it("keep the most recently set labels, at most the capacity", () => {
    const gauge = new BoundedGauge(2)
    gauge.set("a", 0.1)
    gauge.set("b", 0.2)
    gauge.set("a", 0.3)
    gauge.set("c", 0.4)
    expect(gauge.samples("budget")).toEqual([{ labels: { budget: "a" }, value: 0.3 }, { labels: { budget: "c" }, value: 0.4 }])
  })
})

describe("settlements sent together", () => {
  /** counters kept in a map, recording each settle call */
  const recorded = () => {
    const levels = new Map<string, number>()
    const calls: Array<ReadonlyArray<{ key: string; delta: number }>> = []
    let failing = false
    const counters: BudgetCounters = {
      backend: "postgres",
      reserve: () => Effect.die("not used"),
      read: () => Effect.die("not used"),
      settle: (settlements) =>
        Effect.suspend(() => {
          if (failing) return Effect.fail(new StoreError({ message: "down" }))
          calls.push(settlements.map(({ key, delta }) => ({ key, delta })))
          return Effect.succeed(settlements.map(({ key, delta }) => {
            const before = levels.get(key) ?? 0
            const after = Math.max(0, before + delta)
            levels.set(key, after)
            return { before, after }
          }))
        })
    }
    return { counters, levels, calls, fail: () => { failing = true } }
  }
  const settle = (counters: BudgetCounters, key: string, delta: number) => counters.settle([{ key, period: "day", delta }])

  it("sends the settlements of one window in one call, a counter's deltas summed, each answering as if sent alone", async () => {
    const store = recorded()
    store.levels.set("a", 10)
    const answers = await Effect.runPromise(Effect.scoped(Effect.flatMap(withBatchedSettlements(store.counters, 20), (batched) =>
      Effect.all([settle(batched, "a", -2), settle(batched, "a", -3), settle(batched, "b", 4)], { concurrency: "unbounded" }))))
    expect(store.calls).toEqual([[{ key: "a", delta: -5 }, { key: "b", delta: 4 }]])
    expect(answers).toEqual([[{ before: 10, after: 8 }], [{ before: 8, after: 5 }], [{ before: 0, after: 4 }]])
    expect(store.levels.get("a")).toBe(5)
  })

  it("fails every settlement of a batch the store refused, and flushes what is queued when its scope closes", async () => {
    const down = recorded()
    down.fail()
    const failed = await Effect.runPromise(Effect.scoped(Effect.flatMap(withBatchedSettlements(down.counters, 5), (batched) =>
      Effect.all([Effect.flip(settle(batched, "a", 1)), Effect.flip(settle(batched, "b", 1))], { concurrency: "unbounded" }))))
    expect(failed.map((error) => error.message)).toEqual(["down", "down"])
    // a window far longer than the test: only closing the scope sends it
    const store = recorded()
    await Effect.runPromise(Effect.scoped(Effect.flatMap(withBatchedSettlements(store.counters, 60_000), (batched) =>
      Effect.andThen(Effect.forkDetach(settle(batched, "a", 7)), Effect.sleep(10)))))
    expect(store.levels.get("a")).toBe(7)
  })
})
