/**
 * Spend on Postgres and the embedded database (`SpendStore` of src/budgets/spendStore.ts): the
 * workspace's model calls of the range, found by their ids (UUIDv7s, whose leading bits are their
 * time: `[from, to)` is a range of the primary key), summed per `date_trunc` of their time in UTC
 * (`week` is ISO's, from Monday). A key's or a tag's calls are those whose inference (chat or
 * json, by its primary key) carries the tag; a key is the `gateway::api_key_public_id` tag.
 */
import type * as PgClient from "@effect/sql-pg/PgClient"
import * as Effect from "effect/Effect"
import type { SqlError } from "effect/sql/SqlError"
import { scopeTag, type SpendPeriod, type SpendQuery, type SpendStore } from "../../src/budgets/spendStore.ts"
import type { StoreError } from "../../src/storeError.ts"
import { storeError } from "./client.ts"
import { lowestUuidAt } from "./overview.ts"

export const makePostgresSpendStore = (sql: PgClient.PgClient): SpendStore => {
  /** the condition on a model call `m` that its inference carries `key` = `value` */
  const tagged = (key: string, value: string) =>
    sql`(EXISTS (SELECT 1 FROM chat_inference i WHERE i.id = m.inference_id AND i.tags ->> ${key}::text = ${value}::text)
      OR EXISTS (SELECT 1 FROM json_inference i WHERE i.id = m.inference_id AND i.tags ->> ${key}::text = ${value}::text))`

  const read = (query: SpendQuery) => {
    const [from, to] = [lowestUuidAt(query.from), lowestUuidAt(query.to)]
    const tag = scopeTag(query.scope)
    const scope = tag === undefined ? sql`TRUE` : tagged(tag.key, tag.value)
    // whole milliseconds below 2^53: exact as float8, which comes back as a number (bigint and numeric as strings)
    return sql<{ period_start: number; cost: number; calls: number }>`
      SELECT (extract(epoch FROM date_trunc(${query.granularity}::text, m.timestamp AT TIME ZONE 'UTC')) * 1000)::float8 AS period_start,
        coalesce(sum(m.cost), 0)::float8 AS cost, count(*)::int AS calls
      FROM model_inference m
      WHERE m.workspace = ${query.workspace} AND m.id >= ${from}::uuid AND m.id < ${to}::uuid AND ${scope}
      GROUP BY 1 ORDER BY 1`.pipe(
      Effect.map((rows) => rows.map((row): SpendPeriod => ({ periodStart: row.period_start, cost: row.cost, calls: row.calls })))
    )
  }

  return {
    backend: "postgres",
    spend: (query) =>
      Effect.suspend((): Effect.Effect<ReadonlyArray<SpendPeriod>, SqlError | StoreError> => {
        try {
          return read(query)
        } catch (error) {
          // a range that cannot be a range of ids (lowestUuidAt)
          return Effect.fail(error as StoreError)
        }
      }).pipe(Effect.mapError(storeError("spend")))
  }
}
