/**
 * A TensorZero deployment's ClickHouse, read as a TensorZeroSource
 * (src/tensorzeroImport/source.ts). TensorZero's layout changed over 50 migrations
 * (docs/plans/issue-40-tensorzero-clickhouse.md); which tables and columns a database has is read
 * from `system.columns` once, and every query names only the columns found, in SQL that a
 * current ClickHouse and the 18.16 of the tests both run (layers/tensorzeroImport/clickhouseColumns.ts).
 *
 * Every stream is read in keyset pages on `(at, key)`: `at` in epoch ms, computed in SQL, and
 * `key` a text whose order is the order of the row's id (ClickHouse's own UUID order is not the
 * order of their text). Only TensorZero's base tables are read; its lookup tables and views hold
 * the same rows again.
 */
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import {
  type Position,
  SourceError,
  type SourcePage,
  type StreamName,
  streamNames,
  type StreamRows,
  type TensorZeroSource,
  type TzFeedback,
  type UnreadableRow
} from "../../src/tensorzeroImport/source.ts"
import { type ClickHouse, makeClickHouse } from "../clickhouse/client.ts"
import { literal, type Schema, uuidMs } from "./clickhouseColumns.ts"
import { type TableRead, tableReads } from "./clickhouseTables.ts"
import { readBatches } from "./clickhouseBatches.ts"

/** the tables of TensorZero's that the importer reads: one of them must be there */
const baseTables = [
  "ChatInference", "JsonInference", "ModelInference", "BooleanMetricFeedback", "FloatMetricFeedback", "CommentFeedback",
  "DemonstrationFeedback", "ChatInferenceDatapoint", "JsonInferenceDatapoint", "BatchRequest", "BatchModelInference",
  "DynamicInContextLearningExample", "DynamicEvaluationRun", "DynamicEvaluationRunEpisode", "InferenceEvaluationRuns"
]

type Row = Record<string, unknown>

const sourceError = (message: string) => (cause: unknown) =>
  new SourceError({ message: `${message}: ${cause instanceof Error ? cause.message : String(cause)}` })

const unreadable = (id: string, error: unknown): UnreadableRow => ({
  unreadable: true,
  id,
  reason: error instanceof Error ? error.message : String(error)
})

/** whether `a` comes before `b` in `(at, key)` order */
const before = (a: { at: number; key: string }, b: { at: number; key: string }): number =>
  a.at - b.at || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0)

const afterCondition = (read: TableRead, after: Position | undefined): string => {
  if (after === undefined) return ""
  const at = Math.trunc(after.at)
  const key = literal(read.keyOfPosition(after.id))
  return `WHERE (page_at > ${at} OR (page_at = ${at} AND page_key > ${key}))`
}

/** the keys of the page: a narrow query, which reads the ids (and times) only */
const keysQuery = (read: TableRead, after: Position | undefined, limit: number): string =>
  `SELECT ${read.at} AS page_at, ${read.key} AS page_key ` +
  `FROM ${read.table}${read.final ? " FINAL" : ""} ${afterCondition(read, after)} ` +
  `ORDER BY page_at, page_key LIMIT ${Math.max(1, Math.trunc(limit))}`

/** the rows of the chosen keys, whole: the payload columns are read for these rows only */
const rowsQuery = (read: TableRead, keys: ReadonlyArray<string>): string =>
  `SELECT ${read.at} AS page_at, ${read.key} AS page_key, ${read.select.join(", ")} ` +
  `FROM ${read.table}${read.final ? " FINAL" : ""} WHERE ${read.keysFilter(keys)}`

const countQuery = (read: TableRead, after: Position | undefined): string =>
  `SELECT count() AS rows FROM (SELECT ${read.at} AS page_at, ${read.key} AS page_key ` +
  `FROM ${read.table}${read.final ? " FINAL" : ""} ${afterCondition(read, after)})`

const readSchema = (clickHouse: ClickHouse) =>
  clickHouse.run("read the schema", (signal) =>
    clickHouse.select<{ table: string; name: string; type: string }>(
      "SELECT table, name, type FROM system.columns WHERE database = currentDatabase()",
      signal
    )).pipe(
      Effect.map((rows) => {
        const schema = new Map<string, Map<string, string>>()
        for (const row of rows) {
          const columns = schema.get(row.table) ?? new Map<string, string>()
          columns.set(row.name, row.type)
          schema.set(row.table, columns)
        }
        return schema as Schema
      })
    )

/** "migrations through 0049" from TensorZero's own record, when the deployment is recent enough to keep one */
const describeLayout = (clickHouse: ClickHouse, schema: Schema) =>
  Effect.gen(function*() {
    const version = (yield* clickHouse.run("read the server version", (signal) =>
      clickHouse.select<{ version: string }>("SELECT version() AS version", signal)))[0]?.version ?? "unknown"
    if (!schema.has("TensorZeroMigration")) return `layout of a release without a migration record, ClickHouse ${version}`
    const rows = yield* clickHouse.run("read the migrations", (signal) =>
      clickHouse.select<{ last: number | string }>("SELECT max(migration_id) AS last FROM TensorZeroMigration", signal))
    return `migrations through ${String(rows[0]?.last ?? "?").padStart(4, "0")}, ClickHouse ${version}`
  })

/**
 * Boolean and float feedback names an inference or an episode, which only TensorZero's
 * configuration says: an id found among the inferences is an inference's.
 */
const resolveTargets = (clickHouse: ClickHouse, schema: Schema, rows: Array<TzFeedback | UnreadableRow>) =>
  Effect.gen(function*() {
    const open = rows.filter((row): row is TzFeedback =>
      !("unreadable" in row) && (row.kind === "boolean" || row.kind === "float"))
    const ids = [...new Set(open.map((row) => row.targetId))].filter((id) => /^[0-9a-f-]{36}$/.test(id))
    if (ids.length === 0) return rows
    const inferences = new Set<string>()
    for (const table of ["ChatInference", "JsonInference"].filter((table) => schema.has(table))) {
      const found = yield* clickHouse.run("look feedback targets up", (signal) =>
        clickHouse.select<{ id: string }>(`SELECT toString(id) AS id FROM ${table} WHERE id IN (${ids.map(literal).join(", ")})`, signal))
      for (const row of found) inferences.add(row.id)
    }
    return rows.map((row) =>
      "unreadable" in row || (row.kind !== "boolean" && row.kind !== "float")
        ? row
        : { ...row, targetType: inferences.has(row.targetId) ? "inference" as const : "episode" as const }
    )
  })

/** Opens TensorZero's ClickHouse at `url` (`http://user:password@host:8123/database`), closed with the scope. */
export const openTensorZeroClickHouse = (url: string): Effect.Effect<TensorZeroSource, SourceError, Scope.Scope> =>
  Effect.gen(function*() {
    const clickHouse = yield* makeClickHouse(url)
    const schema = yield* readSchema(clickHouse)
    if (!baseTables.some((table) => schema.has(table))) {
      return yield* new SourceError({
        message: `database ${clickHouse.connection.database} holds no TensorZero tables (looked for ${baseTables.slice(0, 4).join(", ")}, ...)`
      })
    }
    const reads = tableReads(schema)
    const streams = streamNames.filter((stream) =>
      stream === "batches" ? schema.has("BatchRequest") : (reads[stream]?.length ?? 0) > 0
    )
    const description = `TensorZero ClickHouse (${yield* describeLayout(clickHouse, schema)})`

    const select = <R>(operation: string, query: string) => clickHouse.run(operation, (signal) => clickHouse.select<R>(query, signal))

    /** the next `limit` keys of each of the stream's tables, merged, the first `limit` of them kept */
    const pageKeys = (reads: ReadonlyArray<TableRead>, after: Position | undefined, limit: number) =>
      Effect.forEach(reads, (read) =>
        select<{ page_at: string | number; page_key: string }>(`read ${read.table}`, keysQuery(read, after, limit)).pipe(
          Effect.map((rows) => rows.map((row) => ({ read, at: Number(row.page_at), key: String(row.page_key) })))
        )).pipe(Effect.map((parts) => parts.flat().sort(before).slice(0, Math.max(1, Math.trunc(limit)))))

    const rowsOf = (read: TableRead, keys: ReadonlyArray<string>) =>
      keys.length === 0
        ? Effect.succeed([])
        : select<Row>(`read ${read.table}`, rowsQuery(read, keys)).pipe(
          Effect.map((rows) =>
            rows.map((row) => {
              const key = String(row.page_key)
              let value: unknown
              try {
                value = read.decode(row)
              } catch (error) {
                value = unreadable(read.positionId(key), error)
              }
              return { key, value }
            })
          )
        )

    const page = <S extends StreamName>(stream: S, after: Position | undefined, limit: number) =>
      Effect.gen(function*() {
        if (stream === "batches") {
          return (yield* readBatches(clickHouse, schema, after, limit)) as unknown as SourcePage<S>
        }
        const tables = reads[stream] ?? []
        const keys = yield* pageKeys(tables, after, limit)
        const parts = yield* Effect.forEach(tables, (read) =>
          rowsOf(read, keys.filter((key) => key.read === read).map((key) => key.key)))
        // in the order the keys were chosen in, and the position the last key's: a row changed
        // between the two queries comes with its new `at`, which must not move the position past
        // rows not read yet (it is read again, changed, when the position reaches it)
        const order = new Map(keys.map((key, index) => [`${key.read.table}\u0000${key.key}`, index]))
        const rank = (table: string, key: string) => order.get(`${table}\u0000${key}`) ?? keys.length
        const merged = parts.flatMap((part, index) => part.map((row) => ({ ...row, rank: rank(tables[index]!.table, row.key) })))
          .sort((a, b) => a.rank - b.rank)
        let rows = merged.map((entry) => entry.value as StreamRows[S] | UnreadableRow)
        if (stream === "feedback") {
          rows = (yield* resolveTargets(clickHouse, schema, rows as Array<TzFeedback | UnreadableRow>)) as typeof rows
        }
        const last = keys.at(-1)
        return {
          rows,
          last: last === undefined ? undefined : { at: last.at, id: last.read.positionId(last.key) }
        } satisfies SourcePage<S>
      }).pipe(Effect.mapError((error) => error instanceof SourceError ? error : sourceError(`read ${stream}`)(error)))

    const estimate = (stream: StreamName, after: Position | undefined) =>
      Effect.gen(function*() {
        if (stream === "batches") {
          if (!schema.has("BatchRequest")) return undefined
          const rows = yield* clickHouse.run("count batches", (signal) =>
            clickHouse.select<{ rows: string }>(
              `SELECT uniqExact(batch_id) AS rows FROM BatchRequest${
                after === undefined ? "" : ` WHERE ${uuidMs("id")} >= ${Math.trunc(after.at)}`
              }`,
              signal
            ))
          return Number(rows[0]?.rows ?? 0)
        }
        const tables = reads[stream]
        if (tables === undefined || tables.length === 0) return undefined
        let total = 0
        for (const read of tables) {
          const rows = yield* clickHouse.run(`count ${read.table}`, (signal) =>
            clickHouse.select<{ rows: string }>(countQuery(read, after), signal))
          total += Number(rows[0]?.rows ?? 0)
        }
        return total
      }).pipe(Effect.mapError(sourceError(`count ${stream}`)))

    return { description, streams, estimate, page } satisfies TensorZeroSource
  }).pipe(Effect.mapError((error) => error instanceof SourceError ? error : sourceError("TensorZero ClickHouse")(error)))
