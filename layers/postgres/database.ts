/**
 * The analytics database on Postgres (`ObservabilityDatabase` of
 * src/analytics/database.ts): the one migration sequence, the health probe, and the write
 * queue's writes. Every value reaches SQL as a bound parameter: rows travel as one JSON array
 * per table, turned into rows by `jsonb_populate_recordset` in one multi-row INSERT per table
 * (its text the same for every batch, so prepared once per connection), so a batch costs the
 * gateway one JSON text per row. Writes are idempotent by id (a retried batch stores each row
 * once). Not COPY: `@effect/sql-pg` has no COPY FROM STDIN, and the INSERT's single parameter
 * already spares per-row statements.
 */
import type * as PgClient from "@effect/sql-pg/PgClient"
import { Buffer } from "node:buffer"
import * as Effect from "effect/Effect"
import type { SqlError } from "effect/sql/SqlError"
import { type EncodedRow, joinTexts, type ObservabilityDatabase, textsByTable } from "../../src/analytics/database.ts"
import { postgresRowsAtFault } from "../../src/analytics/writeFaults.ts"
import { StoreError } from "../../src/storeError.ts"
import { sqlState, storeError } from "./client.ts"
import { migrate } from "./migrator.ts"
import { encode, insertedColumns } from "./rows.ts"

/**
 * Postgres cannot store U+0000 in text or JSONB, nor lone surrogates in JSON. A batch holding
 * one would fail on every retry and block the write queue behind it, so it is written again
 * with those characters replaced by U+FFFD. In JSON text from JSON.stringify both appear only
 * as escapes (`\u0000`, `\udc00`; surrogate pairs are written as characters), and an escape is
 * a backslash preceded by an even number of backslashes.
 */
const unstorableTextCodes = new Set(["22021", "22P05", "22P02"])
export const isUnstorableText = (error: SqlError) => unstorableTextCodes.has(sqlState(error) ?? "")
const unstorableEscape = /(?<!\\)((?:\\\\)*)\\u(?:0000|d[89a-f][0-9a-f]{2})/gi
export const storable = (json: Buffer): Buffer => Buffer.from(json.toString("utf8").replace(unstorableEscape, "$1\\ufffd"))

/** A failed write, with its SQLSTATE and whether the rows are at fault (src/analytics/writeFaults.ts). */
const writeError = (error: SqlError | StoreError): StoreError => {
  if (error._tag === "StoreError") return error
  const code = sqlState(error)
  return new StoreError({ message: storeError("write")(error).message, code, rowsAtFault: postgresRowsAtFault(code) })
}

/** the texts of a batch joined by `join`; what throws there (a batch too large for a buffer) is the rows' fault */
const joined = <A>(join: () => A): Effect.Effect<A, StoreError> =>
  Effect.try({
    try: join,
    catch: (error) =>
      new StoreError({
        message: `postgres write failed: the batch is too large to send (${error instanceof Error ? error.message : String(error)})`,
        rowsAtFault: true
      })
  })

/** rows grouped by table as JSON arrays (UTF-8) */
const jsonArraysByTable = (rows: ReadonlyArray<EncodedRow>): Map<string, Buffer> =>
  new Map(Array.from(textsByTable(rows), ([table, texts]) => [table, joinTexts(texts, ",", "[", "]")]))

export const makePostgresDatabase = (sql: PgClient.PgClient, maxRowBytes: number): ObservabilityDatabase => {
  /** the whole batch in one transaction: stored entirely or not at all; one INSERT per table */
  // The JSON goes as bytes (a bytea parameter, sent as it is) rather than as text, which the
  // driver would take as a string and encode to UTF-8 again; Postgres reads it as UTF-8.
  const writeRows = (tables: ReadonlyMap<string, Buffer>) =>
    sql.withTransaction(Effect.forEach(tables, ([table, rows]) =>
      // one text per table whatever the batch (the rows are its one parameter): prepared once per connection
      sql`INSERT INTO ${sql(table)}
        SELECT ${sql.literal(insertedColumns[table] ?? "*")}
        FROM jsonb_populate_recordset(NULL::${sql(table)}, convert_from(${rows}, 'UTF8')::jsonb)
        ON CONFLICT (id) DO NOTHING`, { discard: true }))

  // The texts are joined inside the effect: a batch too large for a string fails the write
  // (its rows' fault, so the write queue splits it) instead of throwing past it.
  const write = (rows: ReadonlyArray<EncodedRow>) =>
    rows.length === 0 ? Effect.void : Effect.flatMap(joined(() => jsonArraysByTable(rows)), (tables) =>
      writeRows(tables).pipe(
        Effect.catchIf(isUnstorableText, () =>
          Effect.flatMap(
            joined(() => new Map(Array.from(tables, ([table, json]) => [table, storable(json)]))),
            (storableTables) => writeRows(storableTables)
          )),
        Effect.mapError(writeError)
      ))

  return {
    backend: "postgres",
    // the sequence every store on Postgres shares
    migrate: migrate(sql),
    ping: sql`SELECT 1`.pipe(Effect.asVoid, Effect.mapError(storeError("ping"))),
    encode: (batch) => encode(batch, maxRowBytes),
    write
  }
}
