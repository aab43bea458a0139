/**
 * Budget counters on Postgres (`BudgetCounters` of src/budgets/store.ts), in the relational
 * database (migrations/postgres/0025_budget_spend.sql). A reservation or a settlement is one
 * round trip: `gateway_charge_budgets` computes each counter's period from the database's clock,
 * locks the rows in key order and charges all or nothing. `sweep` deletes the rows of periods
 * that ended more than a day ago, in batches that skip rows a request holds.
 */
import type * as PgClient from "@effect/sql-pg/PgClient"
import * as PgTypes from "@effect/sql-pg/PgTypes"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import type { BudgetPeriod } from "../../src/budgets/budget.ts"
import type { BudgetCounters, ReserveResult } from "../../src/budgets/store.ts"
import { StoreError } from "../../src/storeError.ts"
import { storeError } from "./client.ts"
import { storedBucketKey } from "./rateLimitBuckets.ts"
import { sweepPast } from "./sweepPast.ts"

const textArray = (values: ReadonlyArray<string>) => Result.getOrThrow(PgTypes.array(values, PgTypes.OID.text))
const float8Array = (values: ReadonlyArray<number>) => Result.getOrThrow(PgTypes.array(values, PgTypes.OID.float8))

interface ChargeRow {
  readonly counter_index: number
  readonly spent_before: number
  readonly spent_after: number
  readonly resets_at: Date | null
  readonly refused: boolean
}

const invalidNumbers = (values: ReadonlyArray<number>, what: string): string | undefined => {
  const index = values.findIndex((value) => typeof value !== "number" || !Number.isFinite(value))
  return index < 0 ? undefined : `counter ${index}: the ${what} must be a finite number, not ${values[index]}`
}

export const makePostgresBudgetCounters = (sql: PgClient.PgClient): BudgetCounters => {
  const charge = (
    counters: ReadonlyArray<{ readonly key: string; readonly period: BudgetPeriod; readonly limit: number; readonly amount: number }>,
    allOrNothing: boolean,
    operation: string
  ) => {
    const invalid = invalidNumbers(counters.map((counter) => counter.amount), "amount") ??
      invalidNumbers(counters.map((counter) => counter.limit), "limit")
    if (invalid !== undefined) return Effect.fail(new StoreError({ message: `postgres budget ${operation} failed: ${invalid}` }))
    return sql<ChargeRow>`SELECT counter_index, spent_before, spent_after, resets_at, refused FROM gateway_charge_budgets(
        ${textArray(counters.map((counter) => storedBucketKey(counter.key)))},
        ${textArray(counters.map((counter) => counter.period))},
        ${float8Array(counters.map((counter) => counter.limit))},
        ${float8Array(counters.map((counter) => counter.amount))},
        ${allOrNothing})`.pipe(Effect.mapError(storeError(`budget ${operation}`)))
  }

  const reserve: BudgetCounters["reserve"] = (charges) => {
    if (charges.length === 0) return Effect.succeed({ ok: true, spent: [], resetsAt: [] })
    return Effect.map(charge(charges, true, "reserve"), (rows): ReserveResult => {
      const refused = rows.find((row) => row.refused)
      if (refused !== undefined) {
        return { ok: false, index: refused.counter_index, spent: refused.spent_before, resetsAt: refused.resets_at ?? undefined }
      }
      return { ok: true, spent: rows.map((row) => row.spent_after), resetsAt: rows.map((row) => row.resets_at ?? undefined) }
    })
  }

  const settle: BudgetCounters["settle"] = (settlements) => {
    if (settlements.length === 0) return Effect.succeed([])
    return Effect.map(
      charge(settlements.map((settlement) => ({ ...settlement, limit: 0, amount: settlement.delta })), false, "settle"),
      (rows) => rows.map((row) => ({ before: row.spent_before, after: row.spent_after }))
    )
  }

  const read: BudgetCounters["read"] = (counters) => {
    if (counters.length === 0) return Effect.succeed([])
    return sql<{ spent: number; resets_at: Date | null }>`SELECT coalesce(counter.spent, 0) AS spent, period.period_end AS resets_at
      FROM unnest(${textArray(counters.map((counter) => storedBucketKey(counter.key)))}::text[],
        ${textArray(counters.map((counter) => counter.period))}::text[]) WITH ORDINALITY AS given(key, period, ord)
      CROSS JOIN LATERAL gateway_budget_period(given.period, clock_timestamp()) AS period
      LEFT JOIN budget_spend AS counter ON counter.key = given.key AND counter.period_start = period.period_start
      ORDER BY given.ord`.pipe(
      Effect.map((rows) => rows.map((row) => ({ spent: row.spent, resetsAt: row.resets_at ?? undefined }))),
      Effect.mapError(storeError("budget read"))
    )
  }

  const sweep = sweepPast(sql, "budget_spend", "expires_at", "sweep budget counters")

  return { backend: "postgres", reserve, settle, read, sweep }
}
