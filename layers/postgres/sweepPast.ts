/**
 * Deletes the rows of a table whose expiry has passed (the rate limit buckets refilled to full,
 * the budget counters of past periods), in statements of at most 1,000 rows that skip rows a
 * request holds, 100 statements at most per sweep, so that a sweep never holds many locks nor
 * runs long. Answers how many rows it deleted.
 */
import type * as PgClient from "@effect/sql-pg/PgClient"
import * as Effect from "effect/Effect"
import type { StoreError } from "../../src/storeError.ts"
import { storeError } from "./client.ts"

/** rows one statement of a sweep deletes at most, and statements of one sweep at most */
const sweepBatchRows = 1_000
const maxSweepBatches = 100

export const sweepPast = (
  sql: PgClient.PgClient,
  table: "rate_limit_buckets" | "budget_spend",
  expiry: "full_at" | "expires_at",
  what: string
): Effect.Effect<number, StoreError> => {
  // ctid = ANY (ARRAY(...)): a TID scan of the rows just locked, not a join over the table
  const batch = sql<{ deleted: number }>`WITH deleted AS (
      DELETE FROM ${sql(table)} WHERE ctid = ANY (ARRAY(
        SELECT ctid FROM ${sql(table)} WHERE ${sql(expiry)} < now() LIMIT ${sweepBatchRows} FOR UPDATE SKIP LOCKED
      )) RETURNING 1
    )
    SELECT count(*)::int AS deleted FROM deleted`.pipe(
    Effect.map(([row]) => row?.deleted ?? 0),
    Effect.mapError(storeError(what))
  )
  return Effect.gen(function*() {
    let total = 0
    for (let round = 0; round < maxSweepBatches; round++) {
      const deleted = yield* batch
      total += deleted
      if (deleted < sweepBatchRows) break
    }
    return total
  })
}
