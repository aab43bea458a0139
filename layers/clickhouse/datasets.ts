/**
 * Datapoints on ClickHouse (`DatasetStore` of src/datasets/store.ts), in the `Datapoint` table:
 * a rename or a staling writes the whole row again under the same id with a higher version, and
 * reads take the newest version of each id. Only the name and the staling differ between the
 * versions of an id, so every other condition (function, tags, time, search) may be checked
 * before the versions are deduplicated; whether a version is live only after.
 *
 * ClickHouse has no transactions. The changes that apply to live datapoints only (replace,
 * rename, stale) are serialized per dataset within this process: each reads the current
 * versions under the dataset's lock, refuses when one is not live, and writes everything in one
 * INSERT (one block, which ClickHouse stores entirely or not at all). Across several gateway
 * processes nothing serializes them: two concurrent updates of one datapoint in two processes
 * may both win, and ClickHouse cannot guarantee a single winner there.
 */
import { Buffer } from "node:buffer"
import * as Arr from "effect/Array"
import * as Effect from "effect/Effect"
import * as Semaphore from "effect/Semaphore"
import type { DatapointFilter, DatapointOrder, DatapointQuery, DatasetStore, DatasetSummary, StoredDatapoint } from "../../src/datasets/store.ts"
import { ioTurn } from "../../src/eventLoop.ts"
import { joinTexts } from "../../src/analytics/database.ts"
import { distinctUuids, isUuid } from "../../src/ids.ts"
import type { ClickHouse } from "./client.ts"
import { filterTreeSql, tagOrTimeSql } from "./filters.ts"
import { datapointColumns, datapointLine, type DatapointRow, toDatapoint } from "./rows.ts"
import { refused, sqlInteger, sqlString, sqlUuid, sqlUuids } from "./sql.ts"
import { wholePage } from "../storePage.ts"

/** every column of the table, in the order INSERT ... SELECT writes them */
const tableColumns = "workspace, dataset_name, id, function_name, function_type, input, output, episode_id, tags.key, tags.value, name, " +
  "tool_params, output_schema, source_inference_id, first_version_id, is_custom, staled_at_ms, updated_at_ms, search_text, timestamp_ms, version"

/** ids per query: a list of ids is pasted into the query text, which the server bounds (max_query_size, 256 KiB by default) */
const idsPerQuery = 1000

/** how many locks the datasets' names are spread over: a bounded set, however many datasets there are */
const lockStripes = 64

/** the newest version of each id among the rows `where` selects */
const newestVersions = (columns: string, where: string) => `SELECT ${columns} FROM Datapoint WHERE ${where} ORDER BY version DESC LIMIT 1 BY id`

/** the workspace's rows (names are per workspace) */
const inWorkspace = (workspace: string) => `workspace = ${sqlString(workspace)}`

const inDataset = (workspace: string, datasetName: string) => `${inWorkspace(workspace)} AND dataset_name = ${sqlString(datasetName)}`

/** a version after `row`'s: later than every version of its id even within one millisecond */
const nextVersion = (row: DatapointRow, now: number) => Math.max(Math.floor(now), Number(row.version) + 1)

const filterSql = (filter: DatapointFilter): string => filterTreeSql(filter, tagOrTimeSql)

/** how many of `terms` the search text holds (0 without terms) */
const relevanceSql = (terms: ReadonlyArray<string>) =>
  terms.length === 0 ? "0" : terms.map((term) => `(position(search_text, ${sqlString(term)}) > 0)`).join(" + ")

const orderSql = (order: DatapointOrder): string => {
  switch (order.by) {
    case "timestamp":
      return order.direction === "ascending" ? "timestamp_ms ASC" : "timestamp_ms DESC"
    case "search_relevance":
      return "relevance DESC"
    default:
      throw refused(`not a datapoint order: ${JSON.stringify(order)}`)
  }
}

/** `record` with its name set, or without one */
const named = (record: StoredDatapoint, name: string | undefined): StoredDatapoint => {
  const { name: _previous, ...rest } = record
  return name === undefined ? rest : { ...rest, name }
}

export const makeClickHouseDatasetStore = ({ command, run, select, insert, insertParts }: ClickHouse): DatasetStore => {
  const locks = Array.from({ length: lockStripes }, () => Semaphore.makeUnsafe(1))
  /** runs `effect` while no other change of the workspace's dataset runs in this process */
  const exclusively = (workspace: string, datasetName: string) => {
    const key = `${workspace}\0${datasetName}`
    let hash = 0
    for (let i = 0; i < key.length; i++) hash = (Math.imul(hash, 31) + key.charCodeAt(i)) | 0
    return locks[(hash >>> 0) % lockStripes].withPermits(1)
  }

  /** the newest version of each of `ids` in the dataset, by id (ids must be valid and lower-cased) */
  const currentVersions = async (workspace: string, datasetName: string | undefined, ids: ReadonlyArray<string>, signal: AbortSignal) => {
    const found = new Map<string, DatapointRow>()
    for (const chunk of Arr.chunksOf(ids, idsPerQuery)) {
      const among = `id IN ${sqlUuids(chunk)}`
      const rows = await select<DatapointRow>(newestVersions(datapointColumns, `${datasetName === undefined ? inWorkspace(workspace) : inDataset(workspace, datasetName)} AND ${among}`), signal)
      for (const row of rows) found.set(row.id, row)
    }
    return found
  }

  /** the given ids that do not name a live datapoint of `current`, or that are named twice */
  const notLiveAmong = (given: ReadonlyArray<string>, current: ReadonlyMap<string, DatapointRow>) => {
    const seen = new Set<string>()
    return given.filter((id) => {
      const key = id.toLowerCase()
      const twice = seen.has(key)
      seen.add(key)
      const row = current.get(key)
      return twice || row === undefined || row.staled_at_ms !== null
    })
  }

  return {
    backend: "clickhouse",
    // One INSERT, one block: stored entirely or not at all (up to max_insert_block_size rows, a million by default).
    insertDatapoints: (workspace, datapoints) =>
      datapoints.length === 0 ? Effect.void : run("insertDatapoints", async (signal) => {
        const lines = datapoints.map((datapoint) => datapointLine(workspace, datapoint, datapoint.searchText, datapoint.updatedAt))
        await insert("Datapoint", lines, signal)
      }),

    // One INSERT, as above, its body given whole: sent in parts as they were made, ClickHouse could
    // store the first ones before refusing a later one. Each part becomes its text (a third larger
    // than its JSON, with the search text) before the next is made, with a turn of the event loop
    // between parts.
    insertDatapointsInParts: (workspace, parts) =>
      run("insertDatapoints", async (signal) => {
        const texts: Array<Buffer> = []
        for (const part of parts) {
          if (part.length === 0) continue
          texts.push(joinTexts(part.map((datapoint) => datapointLine(workspace, datapoint, datapoint.searchText, datapoint.updatedAt)), "\n", "", "\n"))
          await ioTurn()
        }
        if (texts.length > 0) await insertParts("Datapoint", texts, signal)
      }),

    getDatapoints: (workspace, datasetName, ids) =>
      run("getDatapoints", async (signal) => {
        const valid = distinctUuids(ids)
        if (valid.length === 0) return []
        return Array.from((await currentVersions(workspace, datasetName, valid, signal)).values(), toDatapoint)
      }),

    // The page's ids are found on the narrow columns first, then only its rows are read whole.
    listDatapoints: (workspace, query: DatapointQuery) =>
      run("listDatapoints", async (signal) => {
        const { limit, offset } = wholePage(query)
        if (limit === 0) return []
        if (query.after !== undefined && !isUuid(query.after)) throw refused(`not a UUID: ${JSON.stringify(query.after.slice(0, 100))}`)
        const terms = [...new Set(query.search ?? [])]
        const conditions = [
          inDataset(workspace, query.datasetName),
          ...(query.functionName !== undefined ? [`function_name = ${sqlString(query.functionName)}`] : []),
          ...(query.filter !== undefined ? [`(${filterSql(query.filter)})`] : []),
          ...(terms.length > 0 ? [`(${relevanceSql(terms)}) > 0`] : []),
          ...(query.after !== undefined ? [`toString(id) > ${sqlString(query.after.toLowerCase())}`] : [])
        ]
        // UUIDv7 text order is time order; ClickHouse's own UUID order is not, hence the text
        const order = query.after !== undefined ? ["id_text ASC"] : [...query.orderBy.map(orderSql), "id_text DESC"]
        const versions = newestVersions(
          `id, toString(id) AS id_text, timestamp_ms, staled_at_ms, ${relevanceSql(terms)} AS relevance`,
          conditions.join(" AND ")
        )
        const page = await select<{ id_text: string }>(
          `SELECT id_text FROM (${versions}) WHERE isNull(staled_at_ms) ` +
            `ORDER BY ${order.join(", ")} LIMIT ${sqlInteger(offset)}, ${sqlInteger(limit)}`,
          signal
        )
        if (page.length === 0) return []
        const rows = await currentVersions(workspace, query.datasetName, page.map((row) => row.id_text), signal)
        // a datapoint staled between the two reads is left out
        return page.flatMap(({ id_text }) => {
          const row = rows.get(id_text)
          return row === undefined || row.staled_at_ms !== null ? [] : [toDatapoint(row)]
        })
      }),

    replaceDatapoints: (workspace, datasetName, replacements, now) =>
      exclusively(workspace, datasetName)(run("replaceDatapoints", async (signal) => {
        if (replacements.length === 0) return { notLive: [] }
        const given = replacements.map((replacement) => replacement.previousId)
        const current = await currentVersions(workspace, datasetName, distinctUuids(given), signal)
        const notLive = notLiveAmong(given, current)
        if (notLive.length > 0) return { notLive }
        const lines = [
          ...replacements.map(({ previousId }) => {
            const row = current.get(previousId.toLowerCase())!
            return datapointLine(workspace, { ...toDatapoint(row), staledAt: now, updatedAt: now }, row.search_text, nextVersion(row, now))
          }),
          ...replacements.map(({ next }) => datapointLine(workspace, next, next.searchText, next.updatedAt))
        ]
        await insert("Datapoint", lines, signal)
        return { notLive: [] }
      })),

    renameDatapoints: (workspace, datasetName, names, now) =>
      exclusively(workspace, datasetName)(run("renameDatapoints", async (signal) => {
        // an id named twice takes the last name given
        const latest = new Map(names.map((item) => [item.id.toLowerCase(), item]))
        const current = await currentVersions(workspace, datasetName, distinctUuids(names.map((item) => item.id)), signal)
        const notLive = notLiveAmong(Array.from(latest.values(), (item) => item.id), current)
        if (notLive.length > 0) return { notLive }
        const lines = Array.from(latest, ([id, { name }]) => {
          const row = current.get(id)!
          return datapointLine(workspace, { ...named(toDatapoint(row), name), updatedAt: now }, row.search_text, nextVersion(row, now))
        })
        if (lines.length > 0) await insert("Datapoint", lines, signal)
        return { notLive: [] }
      })),

    // Written by the server from the versions it holds (INSERT ... SELECT): a whole dataset is not sent back and forth.
    staleDatapoints: (workspace, datasetName, ids, now) =>
      exclusively(workspace, datasetName)(run("staleDatapoints", async (signal) => {
        const at = sqlInteger(Math.max(0, Math.floor(now)))
        const scopes = ids === "all"
          ? [inDataset(workspace, datasetName)]
          : Arr.chunksOf(distinctUuids(ids), idsPerQuery).map((chunk) => `${inDataset(workspace, datasetName)} AND id IN ${sqlUuids(chunk)}`)
        let staled = 0
        for (const where of scopes) {
          const live = `SELECT * FROM (${newestVersions("*", where)}) WHERE isNull(staled_at_ms)`
          const [{ count }] = await select<{ count: string }>(`SELECT count() AS count FROM (${live})`, signal)
          if (Number(count) === 0) continue
          await command(
            `INSERT INTO Datapoint (${tableColumns}) SELECT workspace, dataset_name, id, function_name, function_type, input, output, ` +
              "episode_id, tags.key, tags.value, name, tool_params, output_schema, source_inference_id, first_version_id, is_custom, " +
              `toNullable(toUInt64(${at})), toUInt64(${at}), search_text, timestamp_ms, greatest(toUInt64(${at}), version + 1) FROM (${live})`,
            signal
          )
          staled += Number(count)
        }
        return staled
      })),

    // The first version's id is found first: a version's own row names it. ClickHouse's UUID
    // order is not UUIDv7's time order, so the versions are sorted here, by their ids' text.
    datapointVersions: (workspace, datasetName, id) =>
      run("datapointVersions", async (signal) => {
        if (!isUuid(id)) return []
        const asked = (await currentVersions(workspace, datasetName, [id.toLowerCase()], signal)).get(id.toLowerCase())
        if (asked === undefined) return []
        const first = sqlUuid(asked.first_version_id ?? asked.id)
        const rows = await select<DatapointRow>(
          newestVersions(datapointColumns, `${inDataset(workspace, datasetName)} AND (id = ${first} OR first_version_id = ${first})`),
          signal
        )
        return rows.map(toDatapoint).sort((a, b) => (a.id < b.id ? 1 : a.id > b.id ? -1 : 0))
      }),

    listDatasets: (workspace) =>
      run("listDatasets", async (signal) => {
        const perFunction = "SELECT dataset_name, function_name, countIf(isNull(staled_at_ms)) AS live, max(updated_at_ms) AS last_updated FROM (" +
          `SELECT dataset_name, id, function_name, staled_at_ms, updated_at_ms FROM Datapoint WHERE ${inWorkspace(workspace)} ORDER BY version DESC LIMIT 1 BY dataset_name, id` +
          ") GROUP BY dataset_name, function_name"
        const rows = await select<{ dataset_name: string; functions: Array<string>; counts: Array<string>; last_updated: string }>(
          "SELECT dataset_name, groupArrayIf(function_name, live > 0) AS functions, groupArrayIf(live, live > 0) AS counts, " +
            `max(last_updated) AS last_updated FROM (${perFunction}) GROUP BY dataset_name ORDER BY dataset_name`,
          signal
        )
        return rows.map((row): DatasetSummary => ({
          name: row.dataset_name,
          functions: row.functions
            .map((functionName, index) => ({ functionName, count: Number(row.counts[index]) }))
            .sort((a, b) => byBytes(a.functionName, b.functionName)),
          lastUpdated: Number(row.last_updated)
        }))
      })
  }
}

/** the order of the names' UTF-8 bytes, as ClickHouse sorts strings */
const byBytes = (a: string, b: string) => Buffer.compare(Buffer.from(a), Buffer.from(b))
