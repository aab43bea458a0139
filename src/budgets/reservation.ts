/**
 * A call's reservation against the budgets that apply to it (docs/budgets.md): the estimate
 * (src/budgets/estimate.ts) taken from every budget's counter at once, all or nothing, before
 * the call; settled with what the call cost at its end. A refusal is a 429 whose body names the
 * budget. The counters answer the spend before and after each charge, so the one process whose
 * charge crosses 50, 80 or 100% of a limit logs it: one line per crossing across all gateways.
 * Used by `withinRateLimits` (src/ratelimit/limiter.ts).
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import { type BudgetRefusal, InvalidRequest, RateLimited, ServiceUnavailable } from "../errors.ts"
import { Metrics, type MetricsRecorder } from "../metrics/metrics.ts"
import { maxRetryAfterS, type RequestScope } from "../ratelimit/rules.ts"
import { type Budget, budgetCounterKey, budgetLabel, shownScope } from "./budget.ts"
import { estimateCost } from "./estimate.ts"
import type { ModelPrices } from "../inference/cost.ts"
import type { BudgetCounters } from "./store.ts"

/** where budgets are counted, and what a call without prices reserves */
export interface BudgetCounting {
  readonly counters: BudgetCounters
  /** `[rate_limiting] default_cost`: reserved by a call whose provider has no prices, charged when it reports no cost */
  readonly defaultCost: number
}

/** What a call took from its budgets' counters, to settle at its end. */
export interface BudgetReservation {
  readonly counting: BudgetCounting
  readonly budgets: ReadonlyArray<Budget>
  readonly keys: ReadonlyArray<string>
  readonly labels: ReadonlyArray<string>
  readonly estimate: number
}

/** the fractions of a limit whose crossing is logged */
const thresholds = [0.5, 0.8, 1] as const

const money = (amount: number) => String(Math.round(amount * 1e6) / 1e6)

/** logs each threshold that the spend crossed going from `before` to `after`, and shows the ratio */
const observe = (metrics: MetricsRecorder, label: string, limit: number, before: number, after: number, resetsAt: Date | undefined | "unknown") =>
  Effect.suspend(() => {
    metrics.budgetUsed?.(label, limit > 0 ? after / limit : after > 0 ? 1 : 0)
    const crossed = thresholds.filter((fraction) => before < fraction * limit && after >= fraction * limit)
    if (crossed.length === 0) return Effect.void
    const top = crossed[crossed.length - 1]
    return Effect.logWarning(
      `budget ${label}: ${top * 100}% used (${money(after)} of ${money(limit)}${
        resetsAt === "unknown" ? "" : resetsAt === undefined ? ", a total: never resets" : `, resets at ${resetsAt.toISOString()}`
      })`
    )
  })

/**
 * Reserves the call's estimate on every budget of `budgets` (those that apply, not empty), or
 * fails: 400 when the provider has prices and the request no `max_tokens`; 429 over a budget;
 * 503 when the counters do not answer.
 */
export const reserveBudgets = (
  counting: BudgetCounting,
  applicable: ReadonlyArray<Budget>,
  scope: RequestScope,
  prices: ModelPrices | undefined,
  promptLength: number,
  maxTokens: number | undefined
): Effect.Effect<BudgetReservation, RateLimited | InvalidRequest | ServiceUnavailable> => {
  const estimate = estimateCost(prices, promptLength, maxTokens, counting.defaultCost)
  if (!estimate.ok) {
    return Effect.fail(new InvalidRequest({
      message: `max_tokens: a budget applies to this request and its model's provider has prices, so it must set max_tokens (the cost is reserved up front)`
    }))
  }
  // two budgets of one scope and period share a counter: the lower limit holds for both
  const byKey = new Map<string, Budget>()
  for (const budget of applicable) {
    const key = budgetCounterKey(budget, scope)
    const known = byKey.get(key)
    if (known === undefined || budget.limit < known.limit) byKey.set(key, budget)
  }
  const keys = [...byKey.keys()]
  const budgets = [...byKey.values()]
  const labels = budgets.map((budget) => budgetLabel(budget, scope))
  const amount = estimate.cost
  return Effect.flatMap(Metrics, (metrics) =>
    counting.counters.reserve(budgets.map((budget, i) => ({ key: keys[i], period: budget.period, limit: budget.limit, amount }))).pipe(
      Effect.mapError((error) =>
        new ServiceUnavailable({
          message: `the budget store (${counting.counters.backend}) is unavailable, so requests under a budget are refused: ${error.message}`
        })
      ),
      Effect.flatMap((result) => {
        if (result.ok) {
          const reservation: BudgetReservation = { counting, budgets, keys, labels, estimate: amount }
          return Effect.as(
            Effect.forEach(budgets, (budget, i) => observe(metrics, labels[i], budget.limit, result.spent[i] - amount, result.spent[i], result.resetsAt[i]), { discard: true }),
            reservation
          )
        }
        const budget = budgets[result.index]
        metrics.budgetRefused?.(labels[result.index])
        return Effect.flatMap(Clock.currentTimeMillis, (now) => Effect.fail(budgetExceeded(budget, scope, amount, result.spent, result.resetsAt, now)))
      })
    ))
}

/** the 429 of a call that would pass `budget`: retry once the period resets (a total never does: the longest wait) */
export const budgetExceeded = (
  budget: Budget,
  scope: RequestScope,
  estimate: number,
  spent: number,
  resetsAt: Date | undefined,
  nowMs: number
): RateLimited => {
  const refusal: BudgetRefusal = {
    scope: shownScope(budget, scope),
    period: budget.period,
    limit: budget.limit,
    spent,
    remaining: Math.max(0, budget.limit - spent),
    resets_at: resetsAt === undefined ? null : resetsAt.toISOString()
  }
  const retryAfterS = resetsAt === undefined ? maxRetryAfterS : Math.min(maxRetryAfterS, Math.max(1, Math.ceil((resetsAt.getTime() - nowMs) / 1000)))
  return new RateLimited({
    message: `budget exceeded: ${budgetLabel(budget, scope)} has spent ${money(spent)} of ${money(budget.limit)}, and this call may cost up to ${
      money(estimate)
    }; ${resetsAt === undefined ? "the budget is a total and does not reset" : `it resets at ${refusal.resets_at}`}`,
    retryAfterS,
    budget: refusal
  })
}

/**
 * Settles a reservation with what the call was charged (src/budgets/estimate.ts `chargedCost`):
 * the difference with the estimate is added to every counter. A charge above the estimate is
 * logged and counted: it is the one way a budget can be passed by more than one call's estimate.
 * Failures are only logged (the call has answered).
 */
export const settleBudgets = (reservation: BudgetReservation, charged: number): Effect.Effect<void> => {
  const delta = charged - reservation.estimate
  if (delta === 0) return Effect.void
  const { budgets, keys, labels } = reservation
  return Effect.flatMap(Metrics, (metrics) => {
    const under = delta > 0
      ? Effect.andThen(
        Effect.sync(() => metrics.budgetUnderestimated?.()),
        Effect.logWarning(`budget: a call cost ${money(charged)}, more than its estimate ${money(reservation.estimate)} (${labels.join(", ")})`)
      )
      : Effect.void
    return Effect.andThen(
      under,
      reservation.counting.counters.settle(budgets.map((budget, i) => ({ key: keys[i], period: budget.period, delta }))).pipe(
        Effect.flatMap((settled) =>
          Effect.forEach(budgets, (budget, i) => observe(metrics, labels[i], budget.limit, settled[i].before, settled[i].after, "unknown"), { discard: true })
        ),
        Effect.catch((error) => Effect.logWarning(`budget: could not settle a call's cost: ${error.message}`))
      )
    )
  })
}
