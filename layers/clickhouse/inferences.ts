/**
 * Stored inferences on ClickHouse (`InferenceStore` of src/storedInferences/store.ts): chat and json
 * inferences from their two tables, newest first and one row per id, and their model calls.
 * Lookups by id and by episode go through the `InferenceById` and `InferenceByEpisodeId`
 * tables, sorted by those ids. Metric filters read the latest feedback of their metric through
 * uncorrelated `IN` subqueries (18.16 has no correlated ones). Every read is within one
 * workspace: the main tables' `workspace` column is in each base WHERE; the by-id and by-episode
 * tables have none, so what they find is checked against the main tables.
 */
import { isUuid } from "../../src/ids.ts"
import type { InferenceTarget } from "../../src/analytics/records.ts"
import type { InferenceQuery, InferenceStore, MetricFilter, StoreFilter } from "../../src/storedInferences/store.ts"
import type { ClickHouse } from "./client.ts"
import { type InferenceRow, type Json, type ModelInferenceRow, toInference, toModelInference } from "./rows.ts"
import { filterTreeSql, sqlComparison, tagOrTimeSql } from "./filters.ts"
import { refused, sqlInteger, sqlString, sqlUuid, sqlUuids } from "./sql.ts"
import { wholePage } from "../storePage.ts"

const inferenceColumns = (type: "chat" | "json") =>
  `id, workspace, '${type}' AS function_type, function_name, variant_name, episode_id, input, output, ` +
  (type === "chat" ? "tool_params, CAST(NULL AS Nullable(String)) AS output_schema" : "CAST(NULL AS Nullable(String)) AS tool_params, output_schema") +
  ", inference_params, processing_time_ms, ttft_ms, tags.key, tags.value, timestamp_ms"

/** UUIDv7 text order is time order; ClickHouse's own UUID order is not, hence the text. */
const newestFirst = "ORDER BY timestamp_ms DESC, toString(id) DESC LIMIT 1 BY id"

/** Chat and json inferences matching `where`, newest first, one row per id. */
const selectInferences = (where: string) => {
  const branch = (type: "chat" | "json", table: string) =>
    `SELECT * FROM (SELECT ${inferenceColumns(type)} FROM ${table} WHERE ${where} ${newestFirst})`
  return `SELECT * FROM (${branch("chat", "ChatInference")} UNION ALL ${branch("json", "JsonInference")}) ${newestFirst}`
}

/**
 * Validated UUIDs as a set of text literals, which ClickHouse reads as UUIDs: 18.16 takes a
 * third of the time over 1,000 of them that it takes over as many `toUUID` calls (16 ms, 41 ms).
 */
const uuidTexts = (ids: ReadonlyArray<string>) => `(${ids.map((id) => (sqlUuid(id), `'${id.toLowerCase()}'`)).join(", ")})`

/**
 * By id; the function names (known, or else looked up in `InferenceById`, sorted by id) narrow
 * the scan: the inference tables are sorted by function.
 */
const selectByIds = (workspace: string, ids: ReadonlyArray<string>, functionNames?: ReadonlyArray<string>) => {
  const list = uuidTexts(ids)
  const names = functionNames === undefined ? `SELECT function_name FROM InferenceById WHERE id IN ${list}` : functionNames.map(sqlString).join(", ")
  return selectInferences(`function_name IN (${names}) AND id IN ${list} AND workspace = ${sqlString(workspace)}`)
}

/**
 * The ids (and function names) of a page of the chat and json inferences matching `keys` (on
 * each table) and `filter` (on both together, so that its subqueries run once), newest first.
 */
const selectPage = (keys: string, filter: string, offset: number, limit: number) => {
  const branch = (table: string) => `SELECT id, function_name, episode_id, tags.key, tags.value, timestamp_ms FROM ${table} WHERE ${keys}`
  // `page_id`: an alias `id` would stand for the text in WHERE and ORDER BY too
  return `SELECT toString(id) AS page_id, function_name FROM (${branch("ChatInference")} UNION ALL ${branch("JsonInference")}) ` +
    `WHERE ${filter} ${newestFirst} LIMIT ${sqlInteger(offset)}, ${sqlInteger(limit)}`
}

/** `value` as an exact Float64: 18.16 parses decimal floats inexactly, so it goes as its bits. */
const sqlFloat64 = (value: number) => {
  if (!Number.isFinite(value)) throw refused(`not a finite number: ${value}`)
  const view = new DataView(new ArrayBuffer(8))
  view.setFloat64(0, value)
  return `reinterpretAsFloat64(reinterpretAsString(toUInt64(${view.getBigUint64(0).toString()})))`
}

const feedbackTables = { boolean_metric: "BooleanMetricFeedback", float_metric: "FloatMetricFeedback" } as const

/**
 * The targets whose latest value (newest feedback id) of the metric passes `condition`; an
 * uncorrelated `IN` subquery, which 18.16 takes (it has no correlated ones).
 */
const metricSql = (workspace: string, filter: MetricFilter): string => {
  const condition = filter.type === "boolean_metric"
    ? `value = ${filter.value ? 1 : 0}`
    : `value ${sqlComparison(filter.comparison_operator)} ${sqlFloat64(filter.value)}`
  const latest = `SELECT target_id, value FROM ${feedbackTables[filter.type]} ` +
    `WHERE workspace = ${sqlString(workspace)} AND metric_name = ${sqlString(filter.metricName)} ` +
    "ORDER BY target_id, toString(id) DESC LIMIT 1 BY target_id"
  return `${filter.level === "episode" ? "episode_id" : "id"} IN (SELECT target_id FROM (${latest}) WHERE ${condition})`
}

/** The leaves only inferences have (metrics, demonstrations) come with their own SQL, on the feedback of `workspace`. */
const filterSql = (workspace: string, filter: StoreFilter): string =>
  filterTreeSql(filter, (leaf) => {
    switch (leaf.type) {
      case "tag":
      case "time":
        return tagOrTimeSql(leaf)
      case "boolean_metric":
      case "float_metric":
        return metricSql(workspace, leaf)
      case "demonstration":
        return `id IN (SELECT target_id FROM DemonstrationFeedback WHERE workspace = ${sqlString(workspace)})`
      default:
        throw refused(`not a filter: ${JSON.stringify(leaf)}`)
    }
  })

export const makeClickHouseInferenceStore = ({ run, select }: ClickHouse): InferenceStore => ({
  backend: "clickhouse",
  getInferences: (workspace, ids) =>
    run("getInferences", async (signal) => {
      const valid = ids.filter(isUuid)
      if (valid.length === 0) return []
      return (await select<InferenceRow>(selectByIds(workspace, valid), signal)).map(toInference)
    }),

  listInferences: (workspace: string, query: InferenceQuery) =>
    run("listInferences", async (signal) => {
      const { limit, offset } = wholePage(query)
      if (limit === 0) return []
      for (const id of [query.episodeId, query.before]) if (id !== undefined && !isUuid(id)) return []
      const keys = [
        `workspace = ${sqlString(workspace)}`,
        ...(query.functionName !== undefined ? [`function_name = ${sqlString(query.functionName)}`] : []),
        ...(query.variantName !== undefined ? [`variant_name = ${sqlString(query.variantName)}`] : []),
        ...(query.episodeId !== undefined ? [`episode_id = ${sqlUuid(query.episodeId)}`] : []),
        ...(query.before !== undefined ? [`toString(id) < ${sqlString(query.before.toLowerCase())}`] : [])
      ]
      const filter = query.filter === undefined ? "1" : filterSql(workspace, query.filter)
      // Two queries: the page's ids, sorting ids alone, then whole rows for these only. One
      // query sorting whole rows read every input and output that matched to answer 20 (a
      // function of 100,000 inferences: 270 ms, against 50 ms).
      const page = await select<{ page_id: string; function_name: string }>(
        selectPage(keys.join(" AND "), filter, offset, limit),
        signal
      )
      if (page.length === 0) return []
      const sql = selectByIds(workspace, page.map((row) => row.page_id), [...new Set(page.map((row) => row.function_name))])
      return (await select<InferenceRow>(sql, signal)).map(toInference)
    }),

  getModelInferences: (workspace, inferenceIds) =>
    run("getModelInferences", async (signal) => {
      const valid = inferenceIds.filter(isUuid)
      if (valid.length === 0) return []
      const rows = await select<ModelInferenceRow>(
        `SELECT * FROM ModelInference WHERE inference_id IN ${sqlUuids(valid)} AND workspace = ${sqlString(workspace)} ORDER BY toString(id) LIMIT 1 BY id`,
        signal
      )
      return rows.map(toModelInference)
    }),

  findInference: (workspace, id) =>
    run("findInference", async (signal): Promise<InferenceTarget | undefined> => {
      if (!isUuid(id)) return undefined
      const [row] = await select<{ function_name: string; variant_name: string; function_type: "chat" | "json"; episode_id: string; output_schema: Json | null }>(
        `SELECT function_name, variant_name, function_type, episode_id, output_schema FROM InferenceById WHERE id = ${sqlUuid(id)} LIMIT 1`,
        signal
      )
      if (row === undefined) return undefined
      // the by-id table has no workspace: the main table's row, found by its whole sort key, has
      const table = row.function_type === "chat" ? "ChatInference" : "JsonInference"
      const owned = await select(
        `SELECT 1 AS found FROM ${table} WHERE function_name = ${sqlString(row.function_name)} AND variant_name = ${sqlString(row.variant_name)} ` +
          `AND episode_id = ${sqlUuid(row.episode_id)} AND id = ${sqlUuid(id)} AND workspace = ${sqlString(workspace)} LIMIT 1`,
        signal
      )
      return owned.length === 0 ? undefined : {
        workspace,
        functionName: row.function_name,
        functionType: row.function_type,
        episodeId: row.episode_id,
        ...(row.output_schema !== null && { outputSchema: JSON.parse(row.output_schema) })
      }
    }),

  episodeExists: (workspace, id) =>
    run("episodeExists", async (signal) => {
      if (!isUuid(id)) return false
      // the by-episode table has no workspace: its rows' functions and variants narrow the main tables' scan
      const episode = sqlUuid(id)
      const keys = (column: string) => `${column} IN (SELECT ${column} FROM InferenceByEpisodeId WHERE episode_id = ${episode})`
      const owned = (table: string) =>
        `SELECT 1 AS found FROM ${table} WHERE ${keys("function_name")} AND ${keys("variant_name")} ` +
        `AND episode_id = ${episode} AND workspace = ${sqlString(workspace)} LIMIT 1`
      const rows = await select(`SELECT found FROM (${owned("ChatInference")} UNION ALL ${owned("JsonInference")}) LIMIT 1`, signal)
      return rows.length > 0
    })
})
