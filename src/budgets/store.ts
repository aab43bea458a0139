/**
 * The storage port of budget counters: how much each budget's scope spent in its current
 * period, shared by every gateway process (Postgres: layers/postgres/budgetCounters.ts; Redis:
 * layers/redis/budgetCounters.ts). The period is computed by the store from its own clock (the
 * database's or Redis's `TIME`), so gateways with skewed clocks agree at midnight; a counter
 * of a past period is forgotten a day after the period ends.
 */
import type * as Effect from "effect/Effect"
import type { StoreError } from "../storeError.ts"
import type { BudgetPeriod } from "./budget.ts"

export interface CounterCharge {
  /** `budgetCounterKey`: the budget and its scope's values, without the period */
  readonly key: string
  readonly period: BudgetPeriod
  /** the budget's limit now (a limit changed at run time applies to the next charge) */
  readonly limit: number
  /** the estimate reserved */
  readonly amount: number
}

export type ReserveResult =
  /** every counter took its amount; `spent` after it, per counter in order */
  | { readonly ok: true; readonly spent: ReadonlyArray<number>; readonly resetsAt: ReadonlyArray<Date | undefined> }
  /** nothing was taken; `index` is the first counter with `spent + amount > limit`; `resetsAt` undefined for `total` */
  | { readonly ok: false; readonly index: number; readonly spent: number; readonly resetsAt: Date | undefined }

export interface CounterSettlement {
  readonly key: string
  readonly period: BudgetPeriod
  /** what to add (the call's cost minus the estimate; negative gives back) */
  readonly delta: number
}

export interface BudgetCounters {
  readonly backend: "postgres" | "redis"
  /** Takes `amount` on every counter if each has `spent + amount <= limit`, or on none (atomic across gateways). */
  readonly reserve: (charges: ReadonlyArray<CounterCharge>) => Effect.Effect<ReserveResult, StoreError>
  /** Adds each delta, answering the spend before and after (so exactly one process sees a threshold crossed). */
  readonly settle: (
    settlements: ReadonlyArray<CounterSettlement>
  ) => Effect.Effect<ReadonlyArray<{ readonly before: number; readonly after: number }>, StoreError>
  /** The spend of the current period of each counter (0 when none). */
  readonly read: (
    counters: ReadonlyArray<{ readonly key: string; readonly period: BudgetPeriod }>
  ) => Effect.Effect<ReadonlyArray<{ readonly spent: number; readonly resetsAt: Date | undefined }>, StoreError>
  /** Deletes counters of periods that ended more than a day ago (Postgres; Redis keys expire by themselves). */
  readonly sweep?: Effect.Effect<number, StoreError> | undefined
}
