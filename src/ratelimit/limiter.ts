/**
 * Rate limiting of model calls (spec 8): before each call, the buckets of the rules that apply
 * are charged at once, all or nothing; token limits borrow an estimate (the input's size plus
 * `max_tokens`) that is settled with the real usage after the call. Over a limit, the
 * inference stops with a 429 (it is not retried); when the bucket store does not answer,
 * requests in a rate-limited scope get a 503 rather than passing unchecked. A stream cut short
 * (the client left, the provider failed) before its usage arrived keeps at least what it
 * borrowed: otherwise hanging up would make streaming free. Cost limits (`cost_per_<period>`)
 * borrow `[rate_limiting] default_cost` (0 unless set) and settle with the call's cost by its
 * provider's `cost` rules, or `default_cost` when it reported none; a bucket spent below zero
 * refuses the next call, so a budget is overrun by one call at most. Every call (a model call,
 * whole or streamed, an embedding call) is charged and settled by `withinRateLimits`; `reserve`
 * and `settle` are its parts. The budgets that apply to a call (src/budgets/reservation.ts) are
 * reserved and settled there too, after the buckets.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import { applicableBudgets, BudgetTable } from "../budgets/budget.ts"
import { chargedCost } from "../budgets/estimate.ts"
import { type BudgetCounting, type BudgetReservation, reserveBudgets, settleBudgets } from "../budgets/reservation.ts"
import { InvalidRequest, RateLimited, ServiceUnavailable } from "../errors.ts"
import type { ModelPrices } from "../inference/cost.ts"
import type { ModelRequest, Usage } from "../inference/types.ts"
import {
  applicableRules,
  describeLimit,
  describeScope,
  estimateTokens,
  jsonLength,
  maxRetryAfterS,
  type PlannedBucket,
  plannedBuckets,
  type RateLimitRule,
  type RequestScope
} from "./rules.ts"
import type { RateLimitBuckets } from "./store.ts"

/** The rate limits as configured: the rules, and where their buckets are kept. */
export interface RateLimits {
  readonly rules: ReadonlyArray<RateLimitRule>
  readonly store: RateLimitBuckets
  /** reserved before each call under a cost limit, and charged for a call that reports no cost */
  readonly defaultCost?: number | undefined
}

/**
 * The rate limits model calls are checked against: `limits` is undefined when no rule is
 * configured; `budgets` is where the budgets (of `BudgetTable`) are counted, undefined when the
 * gateway started without any.
 */
export class RateLimiter extends Context.Service<RateLimiter, {
  readonly limits: RateLimits | undefined
  readonly budgets?: BudgetCounting | undefined
}>()("gateway/RateLimiter") {
  static readonly none = RateLimiter.of({ limits: undefined })
}

/** What a model call took from the buckets, to settle once its usage is known. */
export interface Reservation {
  readonly limiter: RateLimits
  readonly tokenBuckets: ReadonlyArray<PlannedBucket>
  readonly borrowedTokens: number
  /** the estimate of the input's tokens within `borrowedTokens` */
  readonly inputTokens: number
  readonly costBuckets: ReadonlyArray<PlannedBucket>
  /** `default_cost`, borrowed from the cost buckets until the call's cost is known */
  readonly borrowedCost: number
}

const unavailable = (store: RateLimitBuckets, message: string) =>
  new ServiceUnavailable({
    message: `the rate limit store (${store.backend}) is unavailable, so rate-limited requests are refused: ${message}`
  })

/** about the length of the prompt as JSON text, counted without making the text (a message can be megabytes) */
const promptLength = (request: ModelRequest): number => (request.system?.length ?? 0) + jsonLength(request.messages)

export const reserve = (
  limiter: RateLimits,
  scope: RequestScope,
  request: ModelRequest
): Effect.Effect<Reservation | undefined, RateLimited | InvalidRequest | ServiceUnavailable> => {
  const rules = applicableRules(limiter.rules, scope)
  if (rules.length === 0) return Effect.succeed(undefined)
  const tokenRule = rules.find((rule) => rule.limits.some((limit) => limit.resource === "tokens"))
  let tokens = 0
  let inputTokens = 0
  if (tokenRule !== undefined) {
    const maxTokens = request.params.max_tokens
    if (maxTokens === undefined) {
      return Effect.fail(new InvalidRequest({
        message:
          `max_tokens: rate_limiting.rules[${tokenRule.index}] limits tokens, so requests in its scope must set max_tokens (an estimate is borrowed up front)`
      }))
    }
    inputTokens = estimateTokens(promptLength(request))
    tokens = inputTokens + maxTokens
  }
  // a call's cost is known only once it answered: `default_cost` is borrowed meanwhile (0 unless set),
  // so a cost limit refuses calls once its budget is spent (a bucket below zero refuses even 0)
  const cost = rules.some((rule) => rule.limits.some((limit) => limit.resource === "cost")) ? limiter.defaultCost ?? 0 : 0
  const buckets = plannedBuckets(rules, scope, tokens, cost)
  return limiter.store.consume(buckets.map((bucket) => bucket.request)).pipe(
    Effect.mapError((error) => unavailable(limiter.store, error.message)),
    Effect.flatMap((result) => {
      if (result.ok) {
        return Effect.succeed({
          limiter,
          tokenBuckets: buckets.filter((bucket) => bucket.limit.resource === "tokens"),
          borrowedTokens: tokens,
          inputTokens,
          costBuckets: buckets.filter((bucket) => bucket.limit.resource === "cost"),
          borrowedCost: cost
        })
      }
      const { rule, limit, request: bucket } = buckets[result.index]
      // a bucket that never refills, or a call bigger than the bucket, has no useful retry time
      const retryAfterS = Math.min(maxRetryAfterS, Math.max(1, Math.ceil(result.retryAfterS)))
      const outlook = bucket.amount > limit.capacity
        ? `more than the ${limit.capacity} it ever holds: lower max_tokens or raise the limit`
        : result.retryAfterS > maxRetryAfterS
        ? "and it does not refill"
        : `retry in ${retryAfterS} s`
      return Effect.fail(new RateLimited({
        message: `rate limit exceeded: rate_limiting.rules[${rule.index}] (${rule.priority === "always" ? "always" : `priority ${rule.priority}`}) for ${describeScope(rule.scope, scope)}: ${
          Math.max(0, Math.floor(result.available))
        } of ${describeLimit(limit)} available, this call needs ${bucket.amount}, ${outlook}`,
        retryAfterS
      }))
    })
  )
}

const settleTokens = (reservation: Reservation | undefined, used: number): Effect.Effect<void> => {
  if (reservation === undefined || reservation.tokenBuckets.length === 0) return Effect.void
  const delta = used - reservation.borrowedTokens
  if (delta === 0) return Effect.void
  return reservation.limiter.store.adjust(
    reservation.tokenBuckets.map((bucket) => ({ ...bucket.request, amount: delta }))
  ).pipe(Effect.catch((error) => Effect.logWarning(`rate limit: could not settle token usage: ${error.message}`)))
}

/** Settles the borrowed `default_cost` with the call's cost: none when it failed, `default_cost` when it reported none. */
const settleCost = (reservation: Reservation | undefined, outcome: CallCost): Effect.Effect<void> => {
  if (reservation === undefined || reservation.costBuckets.length === 0) return Effect.void
  const used = outcome === "failed" ? 0 : outcome ?? reservation.limiter.defaultCost ?? 0
  const delta = used - reservation.borrowedCost
  if (delta === 0) return Effect.void
  return reservation.limiter.store.adjust(
    reservation.costBuckets.map((bucket) => ({ ...bucket.request, amount: delta }))
  ).pipe(Effect.catch((error) => Effect.logWarning(`rate limit: could not settle a call's cost: ${error.message}`)))
}

/** a call's cost for the limits: its own, undefined when it reported none, "failed" when it did not answer */
export type CallCost = number | undefined | "failed"

/**
 * Settles what was borrowed with what was used: none when the call failed (`usage` undefined),
 * else its tokens and its `cost` (undefined: it reported none, charged `default_cost`). Failures are only logged.
 */
export const settle = (reservation: Reservation | undefined, usage: Usage | undefined, cost?: number): Effect.Effect<void> =>
  Effect.andThen(
    settleTokens(reservation, usage === undefined ? 0 : usage.input_tokens + usage.output_tokens),
    settleCost(reservation, usage === undefined ? "failed" : cost)
  )

/** How a streamed call ended, to settle it. */
export interface StreamOutcome {
  /** the provider's stream ended normally: neither the client nor a failure cut it short */
  readonly finished: boolean
  /** the usage the provider reported, if it got that far */
  readonly usage: Usage | undefined
  /** characters of output received from the provider (text, thoughts, tool calls) */
  readonly streamedCharacters: number
  /** the call's cost, when the provider reported what its `cost` rules read */
  readonly cost?: number | undefined
}

/**
 * The tokens a streamed call is charged: the usage the provider reported at its end. Without it,
 * an estimate of the input plus what was streamed; and a stream cut short is charged at least
 * what it borrowed (the provider may bill the whole answer, and the client chose to leave).
 */
export const streamedTokens = (reservation: Reservation, outcome: StreamOutcome): number => {
  const { usage } = outcome
  const reported = usage === undefined ? 0 : usage.input_tokens + usage.output_tokens
  if (outcome.finished && usage !== undefined) return reported
  const streamed = (usage?.input_tokens ?? reservation.inputTokens) +
    Math.max(usage?.output_tokens ?? 0, estimateTokens(outcome.streamedCharacters))
  return outcome.finished ? streamed : Math.max(reservation.borrowedTokens, reported, streamed)
}

/** Settles a streamed call once its stream is over, as `streamedTokens` counts it. */
const settleStream = (reservation: Reservation | undefined, outcome: StreamOutcome): Effect.Effect<void> =>
  reservation === undefined ? Effect.void : Effect.andThen(
    settleTokens(reservation, streamedTokens(reservation, outcome)),
    // a stream cut short is charged at least what it borrowed, as its tokens are
    settleCost(reservation, outcome.cost === undefined ? undefined : Math.max(outcome.cost, outcome.finished ? outcome.cost : reservation.borrowedCost))
  )

/** What a call that answered whole used: its usage, and its cost (undefined: it reported none, charged `default_cost`). */
export interface CallUsed {
  readonly usage: Usage
  readonly cost?: number | undefined
}

/**
 * Settles a streamed call's reservations by how its stream ended, answering the cost it was
 * charged when a budget or a cost limit charged one (a stream cut short: at least its estimate),
 * which is the cost stored for it.
 */
export type SettleStream = (outcome: StreamOutcome) => Effect.Effect<number | undefined>

/**
 * `call` within the rate limits and budgets, the one place model calls, streams and embedding
 * calls are charged: the buckets of the rules that apply to `scope`, then the counters of the
 * budgets that apply (their estimate from `prices`, the provider's), are charged before it runs
 * (over a limit or a budget it does not run), and settled in the background from how it ended:
 * with what `usedBy` reads from its answer; for a stream, when the stream ends (`usedBy`
 * answers "at stream end", and `call` was given the settlement to run then: undefined when
 * nothing was charged); with nothing used when it failed or was interrupted. Budgets take a
 * second round trip to their store, only when one applies.
 */
export const withinRateLimits = <A, E, R>(
  scope: RequestScope,
  request: ModelRequest,
  prices: ModelPrices | undefined,
  call: (settleStream: SettleStream | undefined) => Effect.Effect<A, E, R>,
  usedBy: (answer: A) => CallUsed | "at stream end"
): Effect.Effect<A, E | RateLimited | InvalidRequest | ServiceUnavailable, R | RateLimiter | BudgetTable> =>
  Effect.flatMap(RateLimiter, ({ limits, budgets: counting }) =>
    Effect.flatMap(BudgetTable, (table) => {
      const budgets = counting === undefined ? [] : applicableBudgets(table.current(), scope)
      if (limits === undefined && budgets.length === 0) return call(undefined)
      const limited = limits === undefined ? Effect.succeed(undefined) : reserve(limits, scope, request)
      return Effect.flatMap(limited, (reservation) => {
        if (budgets.length === 0) {
          return reservation === undefined ? call(undefined) : charged(reservation, undefined, call, usedBy)
        }
        return reserveBudgets(counting!, budgets, scope, prices, promptLength(request), request.params.max_tokens).pipe(
          // refused by a budget: what the rate limits lent is given back, in the background as every settlement
          Effect.tapError(() => Effect.forkDetach(settle(reservation, undefined))),
          Effect.flatMap((budgetReservation) => charged(reservation, budgetReservation, call, usedBy))
        )
      })
    }))

/** runs `call` on what was reserved, and settles the buckets and the budgets by how it ended */
const charged = <A, E, R>(
  reservation: Reservation | undefined,
  budgets: BudgetReservation | undefined,
  call: (settleStream: SettleStream | undefined) => Effect.Effect<A, E, R>,
  usedBy: (answer: A) => CallUsed | "at stream end"
): Effect.Effect<A, E, R> => {
  const defaultCost = budgets?.counting.defaultCost ?? reservation?.limiter.defaultCost ?? 0
  const settleBoth = (usage: Usage | undefined, cost: number | undefined): Effect.Effect<void> =>
    budgets === undefined
      ? settle(reservation, usage, cost)
      : Effect.andThen(
        settle(reservation, usage, cost),
        settleBudgets(budgets, chargedCost(usage === undefined ? "failed" : { cost, cutShort: false }, budgets.estimate, defaultCost))
      )
  const streamSettled: SettleStream = (outcome) => {
    const cost = budgets !== undefined
      ? chargedCost({ cost: outcome.cost, cutShort: !outcome.finished }, budgets.estimate, defaultCost)
      : reservation !== undefined && reservation.costBuckets.length > 0
      ? (outcome.finished ? outcome.cost : Math.max(outcome.cost ?? defaultCost, reservation.borrowedCost)) ?? defaultCost
      : undefined
    return Effect.as(
      Effect.andThen(settleStream(reservation, outcome), budgets === undefined ? Effect.void : settleBudgets(budgets, cost ?? 0)),
      cost
    )
  }
  return call(streamSettled).pipe(
    Effect.onExit((exit) => {
      if (exit._tag === "Failure") return Effect.forkDetach(settleBoth(undefined, undefined))
      const used = usedBy(exit.value)
      return used === "at stream end" ? Effect.void : Effect.forkDetach(settleBoth(used.usage, used.cost))
    })
  )
}
