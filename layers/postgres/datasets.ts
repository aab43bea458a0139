/**
 * Datapoints on Postgres (`DatasetStore` of src/datasets/store.ts), in the `datapoint` table:
 * names and stalings are updated in place. The changes that apply to live datapoints only
 * (replace, rename, stale) lock their rows in id order (so that two of them never deadlock) and
 * update only rows that are still live: of two concurrent updates of one datapoint, the second
 * finds it stale once the first commits, and rolls back.
 */
import type * as PgClient from "@effect/sql-pg/PgClient"
import { Buffer } from "node:buffer"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import { isSqlError, type SqlError } from "effect/sql/SqlError"
import type { Fragment } from "effect/sql/Statement"
import type { DatapointFilter, DatapointOrder, DatapointQuery, DatasetStore, DatasetSummary, NewDatapoint } from "../../src/datasets/store.ts"
import { distinctUuids, isUuid } from "../../src/ids.ts"
import { jsonArrays } from "../../src/analytics/database.ts"
import { StoreError } from "../../src/storeError.ts"
import { notAUuid, refused, storeError } from "./client.ts"
import { isUnstorableText, storable } from "./database.ts"
import { filterTreeSql, tagOrTimeSql } from "./filters.ts"
import { datapointColumns, datapointJson, datapointLateral, type DatapointRow, readDatapoint } from "./rows.ts"
import type { UnreadColumns } from "./readBounds.ts"
import { wholePage } from "../storePage.ts"

/**
 * JSON per INSERT: each INSERT takes its rows as one JSON array (one bound parameter, no limit
 * on rows per statement), kept to a size Postgres parses without strain; the INSERTs of one
 * batch share a transaction.
 */
const maxChunkBytes = 8 * 1024 * 1024

/** A change found ids that are not live datapoints of the dataset: its transaction rolls back. */
class NotLive extends Data.TaggedError("NotLive")<{ readonly ids: ReadonlyArray<string> }> {}


/** the given ids that are not among `changed` (the live ones the change reached), or that are named twice */
const notLiveAmong = (given: ReadonlyArray<string>, changed: ReadonlySet<string>) => {
  const seen = new Set<string>()
  return given.filter((id) => {
    const key = id.toLowerCase()
    const twice = seen.has(key)
    seen.add(key)
    return twice || !changed.has(key)
  })
}

/** `datapoints` as JSON arrays to insert, each id checked */
const encodeDatapoints = (workspace: string, datapoints: ReadonlyArray<NewDatapoint>): Array<Buffer> =>
  jsonArrays(datapoints.map((datapoint) => {
    for (const id of [datapoint.id, datapoint.episodeId, datapoint.sourceInferenceId, datapoint.firstVersionId]) {
      if (id !== undefined && !isUuid(id)) throw notAUuid(id)
    }
    return datapointJson(workspace, datapoint)
  }), maxChunkBytes)

/** what `build` gives; what it throws (a value it refuses) is a StoreError of `operation` */
const built = <A>(operation: string, build: () => A): Effect.Effect<A, StoreError> =>
  Effect.try({
    try: build,
    catch: (error) => error instanceof StoreError ? error : new StoreError({ message: `postgres ${operation} failed: ${error instanceof Error ? error.message : String(error)}` })
  })

export const makePostgresDatasetStore = (sql: PgClient.PgClient): DatasetStore => {
  const columns = sql.literal(datapointColumns)
  const lateral = sql.literal(datapointLateral)
  const pickedColumns = sql.literal(
    "id, dataset_name, function_name, function_type, input, output, episode_id, tags, name, tool_params, output_schema, " +
      "source_inference_id, first_version_id, is_custom, staled_at, updated_at, timestamp"
  )

  /** a version written again (a retried call) is stored once */
  const insertRows = (arrays: ReadonlyArray<Buffer>) =>
    Effect.forEach(arrays, (rows) =>
      sql`INSERT INTO datapoint (workspace, id, dataset_name, function_name, function_type, input, output, episode_id, tags, name,
          tool_params, output_schema, source_inference_id, first_version_id, is_custom, staled_at, updated_at, search_text, timestamp)
        SELECT e->>'workspace', (e->>'id')::uuid, e->>'dataset_name', e->>'function_name', e->>'function_type', e->'input', e->'output',
          (e->>'episode_id')::uuid, e->'tags', e->>'name', e->'tool_params', e->'output_schema', (e->>'source_inference_id')::uuid,
          (e->>'first_version_id')::uuid, (e->>'is_custom')::boolean, (e->>'staled_at')::timestamptz, (e->>'updated_at')::timestamptz, e->>'search_text',
          (e->>'timestamp')::timestamptz
        FROM jsonb_array_elements(convert_from(${rows}, 'UTF8')::jsonb) AS e
        ON CONFLICT (id) DO NOTHING`, { discard: true })

  /**
   * `change` of `arrays` (JSON sent as bytes, read as UTF-8) in one transaction. Postgres cannot
   * store U+0000, nor lone surrogates in JSON: when it refuses them, the change is made again
   * with those characters replaced by U+FFFD (as the write queue does, layers/postgres/database.ts).
   */
  const transaction = <A, E>(arrays: ReadonlyArray<Buffer>, change: (arrays: ReadonlyArray<Buffer>) => Effect.Effect<A, E | SqlError>) =>
    sql.withTransaction(change(arrays)).pipe(
      Effect.catchIf(
        (error): error is SqlError => isSqlError(error) && isUnstorableText(error),
        () => sql.withTransaction(change(arrays.map(storable)))
      )
    )

  /** the outcome of a change that rolls back when it finds ids not live */
  const applied = (operation: string, change: Effect.Effect<void, NotLive | SqlError | StoreError>) =>
    change.pipe(
      Effect.as({ notLive: [] as ReadonlyArray<string> }),
      Effect.catchTag("NotLive", (error) => Effect.succeed({ notLive: error.ids })),
      Effect.mapError(storeError(operation))
    )

  const filterSql = (filter: DatapointFilter): Fragment => filterTreeSql(sql, filter, (leaf) => tagOrTimeSql(sql, leaf))

  const orderSql = (order: DatapointOrder): Fragment => {
    switch (order.by) {
      case "timestamp":
        return sql.literal(order.direction === "ascending" ? "timestamp ASC" : "timestamp DESC")
      case "search_relevance":
        return sql.literal("relevance DESC")
      default:
        throw refused(`not a datapoint order: ${JSON.stringify(order)}`)
    }
  }

  const listStatement = (workspace: string, query: DatapointQuery, limit: number, offset: number) => {
    const terms = [...new Set(query.search ?? [])]
    const contains = terms.map((term) => sql`strpos(search_text, ${term}) > 0`)
    const where = sql.and([
      sql`workspace = ${workspace}`,
      sql`dataset_name = ${query.datasetName}`,
      sql`staled_at IS NULL`,
      ...(query.functionName !== undefined ? [sql`function_name = ${query.functionName}`] : []),
      ...(query.filter !== undefined ? [filterSql(query.filter)] : []),
      ...(terms.length > 0 ? [sql.or(contains)] : []),
      ...(query.after !== undefined ? [sql`id > ${query.after}::uuid`] : [])
    ])
    const relevance = terms.length === 0 ? sql`0` : sql.join(" + ", false)(contains.map((condition) => sql`(${condition})::int`))
    // the id's time orders as the id does: a last `timestamp DESC` is the id order itself, which the index gives
    const last = query.orderBy.at(-1)
    const criteria = last?.by === "timestamp" && last.direction === "descending" ? query.orderBy.slice(0, -1) : query.orderBy
    const order = query.after !== undefined ? [sql.literal("id ASC")] : [...criteria.map(orderSql), sql.literal("id DESC")]
    // the page is picked first, then measured (./readBounds.ts), so that only the rows read are
    return sql<DatapointRow & UnreadColumns>`SELECT ${columns}, relevance
      FROM (SELECT ${pickedColumns}, ${relevance} AS relevance FROM datapoint WHERE ${where}
        ORDER BY ${sql.csv(order)} LIMIT ${limit} OFFSET ${offset}) AS datapoint ${lateral}
      ORDER BY ${sql.csv(order)}`
  }

  return {
    backend: "postgres",
    insertDatapoints: (workspace, datapoints) =>
      datapoints.length === 0 ? Effect.void : built("insertDatapoints", () => encodeDatapoints(workspace, datapoints)).pipe(
        Effect.flatMap((arrays) => transaction(arrays, insertRows)),
        Effect.mapError(storeError("insertDatapoints"))
      ),

    // one transaction, an INSERT (or a few) per part; the database's answer to each is the turn of the event loop between parts
    insertDatapointsInParts: (workspace, parts) => {
      const insertAll = (clean: ((array: Buffer) => Buffer) | undefined) =>
        Effect.gen(function*() {
          for (const part of parts) {
            if (part.length === 0) continue
            const arrays = yield* built("insertDatapoints", () => encodeDatapoints(workspace, part))
            yield* insertRows(clean === undefined ? arrays : arrays.map(clean))
          }
        })
      return sql.withTransaction(insertAll(undefined)).pipe(
        // as `transaction` does: made again with the text Postgres refused made storable
        Effect.catchIf(
          (error): error is SqlError => isSqlError(error) && isUnstorableText(error),
          () => sql.withTransaction(insertAll(storable))
        ),
        Effect.mapError(storeError("insertDatapoints"))
      )
    },

    getDatapoints: (workspace, datasetName, ids) => {
      const valid = distinctUuids(ids)
      if (valid.length === 0) return Effect.succeed([])
      const inDataset = datasetName === undefined ? sql`` : sql`AND dataset_name = ${datasetName}`
      return sql<DatapointRow & UnreadColumns>`SELECT ${columns} FROM datapoint ${lateral} WHERE id = ANY(${valid}::uuid[]) AND workspace = ${workspace} ${inDataset}`.pipe(
        Effect.map((rows) => rows.map(readDatapoint)),
        Effect.mapError(storeError("getDatapoints"))
      )
    },

    listDatapoints: (workspace, query) => {
      const { limit, offset } = wholePage(query)
      if (limit === 0) return Effect.succeed([])
      if (query.after !== undefined && !isUuid(query.after)) return Effect.fail(notAUuid(query.after))
      return built("listDatapoints", () => listStatement(workspace, query, limit, offset)).pipe(
        Effect.flatMap((statement) => statement),
        Effect.map((rows) => rows.map(readDatapoint)),
        Effect.mapError(storeError("listDatapoints"))
      )
    },

    replaceDatapoints: (workspace, datasetName, replacements, now) => {
      if (replacements.length === 0) return Effect.succeed({ notLive: [] })
      const given = replacements.map((replacement) => replacement.previousId)
      const ids = distinctUuids(given)
      const at = new Date(now)
      return applied(
        "replaceDatapoints",
        Effect.flatMap(built("replaceDatapoints", () => encodeDatapoints(workspace, replacements.map((replacement) => replacement.next))), (arrays) =>
          transaction(arrays, (arrays) =>
            Effect.gen(function*() {
              const staled = yield* sql<{ id: string }>`WITH live AS (
                  SELECT id FROM datapoint WHERE id = ANY(${ids}::uuid[]) AND workspace = ${workspace} AND dataset_name = ${datasetName} AND staled_at IS NULL
                  ORDER BY id FOR UPDATE
                )
                UPDATE datapoint SET staled_at = ${at}, updated_at = ${at} FROM live WHERE datapoint.id = live.id
                RETURNING datapoint.id`
              const notLive = notLiveAmong(given, new Set(staled.map((row) => row.id)))
              if (notLive.length > 0) return yield* new NotLive({ ids: notLive })
              yield* insertRows(arrays)
            })))
      )
    },

    renameDatapoints: (workspace, datasetName, names, now) => {
      if (names.length === 0) return Effect.succeed({ notLive: [] })
      // an id named twice takes the last name given
      const latest = new Map(names.filter((item) => isUuid(item.id)).map((item) => [item.id.toLowerCase(), item.name ?? null]))
      const given = [...new Map(names.map((item) => [item.id.toLowerCase(), item.id])).values()]
      const at = new Date(now)
      const rows = Buffer.from(JSON.stringify(Array.from(latest, ([id, name]) => ({ id, name }))))
      return applied(
        "renameDatapoints",
        transaction([rows], ([rows]) =>
          Effect.gen(function*() {
            const renamed = yield* sql<{ id: string }>`WITH given AS (
                SELECT * FROM jsonb_to_recordset(convert_from(${rows}, 'UTF8')::jsonb) AS given(id uuid, name text)
              ),
              live AS (
                SELECT datapoint.id FROM datapoint JOIN given ON datapoint.id = given.id
                WHERE datapoint.workspace = ${workspace} AND datapoint.dataset_name = ${datasetName} AND datapoint.staled_at IS NULL
                ORDER BY datapoint.id FOR UPDATE OF datapoint
              )
              UPDATE datapoint SET name = given.name, updated_at = ${at} FROM live, given
              WHERE datapoint.id = live.id AND given.id = live.id
              RETURNING datapoint.id`
            const notLive = notLiveAmong(given, new Set(renamed.map((row) => row.id)))
            if (notLive.length > 0) return yield* new NotLive({ ids: notLive })
          }))
      )
    },

    staleDatapoints: (workspace, datasetName, ids, now) => {
      const valid = ids === "all" ? undefined : distinctUuids(ids)
      if (valid?.length === 0) return Effect.succeed(0)
      const at = new Date(now)
      const among = valid === undefined ? sql`TRUE` : sql`id = ANY(${valid}::uuid[])`
      return sql<{ count: number }>`WITH live AS (
          SELECT id FROM datapoint WHERE workspace = ${workspace} AND dataset_name = ${datasetName} AND staled_at IS NULL AND ${among}
          ORDER BY id FOR UPDATE
        ),
        staled AS (
          UPDATE datapoint SET staled_at = ${at}, updated_at = ${at} FROM live WHERE datapoint.id = live.id RETURNING 1
        )
        SELECT count(*)::int AS count FROM staled`.pipe(
        Effect.map(([row]) => row.count),
        Effect.mapError(storeError("staleDatapoints"))
      )
    },

    // ids are UUIDv7: their order is the versions' time order
    datapointVersions: (workspace, datasetName, id) =>
      !isUuid(id) ? Effect.succeed([]) : sql<DatapointRow & UnreadColumns>`WITH asked AS (
          SELECT COALESCE(first_version_id, id) AS first_id FROM datapoint WHERE id = ${id}::uuid AND workspace = ${workspace} AND dataset_name = ${datasetName}
        )
        SELECT ${columns} FROM datapoint ${lateral}, asked
        WHERE workspace = ${workspace} AND dataset_name = ${datasetName} AND (datapoint.id = asked.first_id OR first_version_id = asked.first_id)
        ORDER BY datapoint.id DESC`.pipe(
        Effect.map((rows) => rows.map(readDatapoint)),
        Effect.mapError(storeError("datapointVersions"))
      ),

    // names and functions in the order of their bytes (collation "C"), as ClickHouse sorts them
    listDatasets: (workspace) =>
      sql<{ dataset_name: string; functions: Array<string> | null; counts: Array<number> | null; last_updated: Date }>`
        SELECT dataset_name,
          array_agg(function_name ORDER BY function_name COLLATE "C") FILTER (WHERE live > 0) AS functions,
          array_agg(live ORDER BY function_name COLLATE "C") FILTER (WHERE live > 0) AS counts,
          max(last_updated) AS last_updated
        FROM (
          SELECT dataset_name, function_name, (count(*) FILTER (WHERE staled_at IS NULL))::int AS live, max(updated_at) AS last_updated
          FROM datapoint WHERE workspace = ${workspace} GROUP BY dataset_name, function_name
        ) AS per_function
        GROUP BY dataset_name ORDER BY dataset_name COLLATE "C"`.pipe(
        Effect.map((rows) =>
          rows.map((row): DatasetSummary => ({
            name: row.dataset_name,
            functions: (row.functions ?? []).map((functionName, index) => ({ functionName, count: row.counts![index] })),
            lastUpdated: row.last_updated.getTime()
          }))
        ),
        Effect.mapError(storeError("listDatasets"))
      )
  }
}
