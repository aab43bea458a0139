/**
 * Spend on ClickHouse (`SpendStore` of src/budgets/spendStore.ts), in SQL both 18.16 and current
 * releases run: the workspace's model calls of the range, one row per id (`LIMIT 1 BY id`:
 * ModelInference is a ReplacingMergeTree, and a row written twice is there twice until a merge),
 * summed per period of their time in UTC (`toStartOfDay`, `toMonday`, `toStartOfMonth` of a
 * DateTime in 'UTC', read back as text: a Date has no time zone to shift it). A key's or a tag's
 * calls are those whose inference (chat or json) carries the tag; a key is the
 * `gateway::api_key_public_id` tag.
 */
import type { SpendGranularity } from "../../src/api/spend.ts"
import { scopeTag, type SpendPeriod, type SpendQuery, type SpendStore } from "../../src/budgets/spendStore.ts"
import type { ClickHouse } from "./client.ts"
import { sqlInteger, sqlString } from "./sql.ts"

const utcTime = "toDateTime(intDiv(timestamp_ms, 1000), 'UTC')"

/** the period's first day as YYYY-MM-DD (a day's start comes with its time, cut off when read) */
const periodOf: Record<SpendGranularity, string> = {
  day: `toString(toStartOfDay(${utcTime}))`,
  week: `toString(toMonday(${utcTime}))`,
  month: `toString(toStartOfMonth(${utcTime}))`
}

/** the ids of the workspace's inferences carrying `key` = `value`, begun before `to` (an inference begins before its calls) */
const taggedInferences = (query: SpendQuery, key: string, value: string) => {
  const where = `workspace = ${sqlString(query.workspace)} AND timestamp_ms < ${sqlInteger(query.to)} AND ` +
    `arrayExists((k, v) -> k = ${sqlString(key)} AND v = ${sqlString(value)}, tags.key, tags.value)`
  return `SELECT id FROM ChatInference WHERE ${where} UNION ALL SELECT id FROM JsonInference WHERE ${where}`
}

const scopeCondition = (query: SpendQuery): ReadonlyArray<string> => {
  const tag = scopeTag(query.scope)
  return tag === undefined ? [] : [`inference_id IN (${taggedInferences(query, tag.key, tag.value)})`]
}

export const makeClickHouseSpendStore = ({ run, select }: ClickHouse): SpendStore => ({
  backend: "clickhouse",
  spend: (query) =>
    run("spend", async (signal) => {
      const where = [
        `workspace = ${sqlString(query.workspace)}`,
        `timestamp_ms >= ${sqlInteger(query.from)}`,
        `timestamp_ms < ${sqlInteger(query.to)}`,
        ...scopeCondition(query)
      ].join(" AND ")
      const calls = `SELECT id, cost, ${periodOf[query.granularity]} AS period FROM ModelInference WHERE ${where} LIMIT 1 BY id`
      // aliases differ from the columns: an alias stands for its expression everywhere in the query
      const rows = await select<{ period: string; total_cost: number; calls_count: string }>(
        `SELECT period, sum(ifNull(cost, 0)) AS total_cost, count() AS calls_count FROM (${calls}) GROUP BY period ORDER BY period`,
        signal
      )
      return rows.map((row): SpendPeriod => ({
        periodStart: Date.parse(`${row.period.slice(0, 10)}T00:00:00Z`),
        cost: Number(row.total_cost),
        calls: Number(row.calls_count)
      }))
    })
})
