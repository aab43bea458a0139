/**
 * Filters (src/storedInferences/store.ts) as Postgres conditions, for every table that carries
 * `tags` (JSONB) and a `timestamp`: inferences and datapoints. The and/or/not plumbing is here
 * once; each table's adapter gives the SQL of the leaves only it knows (metric filters on
 * inferences).
 */
import type * as PgClient from "@effect/sql-pg/PgClient"
import type { Fragment } from "effect/sql/Statement"
import type { ComparisonOperator, FilterBranch, FilterNot, FilterTree, TagFilter, TimeFilter } from "../../src/storedInferences/store.ts"

const operators: Record<ComparisonOperator, string> = { "<": "<", "<=": "<=", ">": ">", ">=": ">=", "=": "=", "!=": "<>" }

/** `operator` as SQL, from a fixed table (never the caller's text) */
export const sqlComparison = (sql: PgClient.PgClient, operator: ComparisonOperator): Fragment => {
  const known = operators[operator]
  if (known === undefined) throw new Error(`not a comparison operator: ${JSON.stringify(operator)}`)
  return sql.literal(known)
}

/** A missing tag matches neither `=` nor `!=` (and so matches `not` of either). */
export const tagSql = (sql: PgClient.PgClient, filter: TagFilter): Fragment =>
  filter.comparison_operator === "="
    ? sql`COALESCE(tags ->> ${filter.key}::text = ${filter.value}::text, FALSE)`
    : sql`COALESCE(tags ->> ${filter.key}::text <> ${filter.value}::text, FALSE)`

/**
 * On `column` (a timestamptz holding whole milliseconds). A fractional bound is rounded the way
 * that keeps the comparison exact, as on ClickHouse (`=` with a fraction matches nothing, `!=` everything).
 */
export const timeSql = (sql: PgClient.PgClient, filter: TimeFilter, column = "timestamp"): Fragment => {
  const operator = filter.comparison_operator
  if (!Number.isInteger(filter.time) && (operator === "=" || operator === "!=")) return sql.literal(operator === "=" ? "FALSE" : "TRUE")
  const whole = operator === "<" || operator === ">=" ? Math.ceil(filter.time) : Math.floor(filter.time)
  return sql`${sql(column)} ${sqlComparison(sql, operator)} ${new Date(whole)}`
}

/** the leaves every filtered table has */
export const tagOrTimeSql = (sql: PgClient.PgClient, leaf: TagFilter | TimeFilter): Fragment =>
  leaf.type === "tag" ? tagSql(sql, leaf) : timeSql(sql, leaf)

/** The condition of a filter tree, `leaf` giving each leaf's. */
export const filterTreeSql = <Leaf extends { readonly type: string }>(
  sql: PgClient.PgClient,
  filter: FilterTree<Leaf>,
  leaf: (filter: Leaf) => Fragment
): Fragment => {
  const tree = (node: FilterTree<Leaf>): Fragment => {
    switch (node.type) {
      case "and":
        return sql.join(" AND ", true, "TRUE")((node as FilterBranch<Leaf>).children.map(tree))
      case "or":
        return sql.join(" OR ", true, "FALSE")((node as FilterBranch<Leaf>).children.map(tree))
      case "not":
        return sql`NOT (${tree((node as FilterNot<Leaf>).child)})`
      default:
        return leaf(node as Leaf)
    }
  }
  return tree(filter)
}
