/**
 * Where each stream of a TensorZero database was imported up to, kept in the destination's
 * analytics database (migrations 0029_tensorzero_import / ClickHouse 0015_tensorzero_import):
 * what makes `gateway import-tensorzero` resumable. A position is saved after the page it ends
 * was written, so a run killed midway reads that page again at most (writes are idempotent).
 */
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import type { Position, StreamName } from "../../src/tensorzeroImport/source.ts"
import type { StoreError } from "../../src/storeError.ts"
import { makeClickHouse } from "../clickhouse/client.ts"
import { refused, sqlInteger, sqlString } from "../clickhouse/sql.ts"
import { makePgClient, storeError } from "../postgres/client.ts"

export interface ImportPositions {
  /** the saved position of every stream of `source` that has one */
  readonly load: (source: string) => Effect.Effect<ReadonlyMap<StreamName, Position>, StoreError>
  readonly save: (source: string, stream: StreamName, position: Position) => Effect.Effect<void, StoreError>
}

/** Positions in a Postgres database (the server, or an embedded one reached over its socket). */
export const postgresPositions = (url: string): Effect.Effect<ImportPositions, StoreError, Scope.Scope> =>
  Effect.map(makePgClient(url, { maxConnections: 1, applicationName: "gateway import-tensorzero" }), (sql): ImportPositions => ({
    load: (source) =>
      sql<{ stream: StreamName; at_ms: number; id: string }>`SELECT stream, at_ms, id FROM tensorzero_import_position WHERE source = ${source}`.pipe(
        Effect.map((rows) => new Map(rows.map((row) => [row.stream, { at: Number(row.at_ms), id: row.id }]))),
        Effect.mapError(storeError("load import positions"))
      ),
    save: (source, stream, position) =>
      sql`INSERT INTO tensorzero_import_position (source, stream, at_ms, id, updated_at)
        VALUES (${source}, ${stream}, ${position.at}, ${position.id}, now())
        ON CONFLICT (source, stream) DO UPDATE SET at_ms = EXCLUDED.at_ms, id = EXCLUDED.id, updated_at = EXCLUDED.updated_at`.pipe(
        Effect.asVoid,
        Effect.mapError(storeError("save import position"))
      )
  }))

/** a position's time (epoch ms, a fraction where the source keeps microseconds) as a literal that reads back the same number */
const sqlFloat = (value: number): string => {
  if (!Number.isFinite(value)) throw refused(`not a number: ${value}`)
  return `toFloat64(${JSON.stringify(value)})`
}

/** Positions in a ClickHouse database: the latest row per stream wins. */
export const clickHousePositions = (urls: string): Effect.Effect<ImportPositions, StoreError, Scope.Scope> =>
  Effect.map(makeClickHouse(urls), (clickHouse): ImportPositions => ({
    load: (source) =>
      clickHouse.run("load import positions", (signal) =>
        clickHouse.select<{ stream: StreamName; at_ms: string; id: string }>(
          `SELECT stream, argMax(at_ms, updated_at_ms) AS at_ms, argMax(id, updated_at_ms) AS id FROM TensorZeroImportPosition ` +
            `WHERE source = ${sqlString(source)} GROUP BY stream`,
          signal
        )).pipe(Effect.map((rows) => new Map(rows.map((row) => [row.stream, { at: Number(row.at_ms), id: row.id }])))),
    save: (source, stream, position) =>
      clickHouse.run("save import position", (signal) =>
        clickHouse.command(
          `INSERT INTO TensorZeroImportPosition (source, stream, at_ms, id, updated_at_ms) VALUES ` +
            `(${sqlString(source)}, ${sqlString(stream)}, ${sqlFloat(position.at)}, ${sqlString(position.id)}, ${sqlInteger(Date.now())})`,
          signal
        )).pipe(Effect.asVoid)
  }))
