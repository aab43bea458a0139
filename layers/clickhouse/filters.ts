/**
 * Filters (src/storedInferences/store.ts) as ClickHouse conditions, for every table that carries
 * `tags` (Nested key/value) and a `timestamp_ms`: inferences and datapoints. The and/or/not
 * plumbing is here once; each table's adapter gives the SQL of the leaves only it knows
 * (metric filters on inferences).
 */
import type { FilterBranch, FilterNot, FilterTree, TagFilter, TimeFilter } from "../../src/storedInferences/store.ts"
import { refused, sqlInteger, sqlString } from "./sql.ts"

// checked before it is pasted, even though the API schema admits only these
const comparisonOperators: ReadonlyArray<string> = ["<", "<=", ">", ">=", "=", "!="]

/** `operator` when it is a comparison operator (refused otherwise) */
export const sqlComparison = (operator: string): string => {
  if (!comparisonOperators.includes(operator)) throw refused(`not a comparison operator: ${JSON.stringify(operator)}`)
  return operator
}

/** A missing tag matches neither `=` nor `!=` (and so matches `not` of either). */
export const tagSql = (filter: TagFilter): string => {
  const operator = filter.comparison_operator === "=" ? "=" : "!="
  return `arrayExists((k, v) -> k = ${sqlString(filter.key)} AND v ${operator} ${sqlString(filter.value)}, tags.key, tags.value)`
}

/**
 * Times compare whole milliseconds, so a fractional bound is rounded the way that keeps the
 * comparison exact (`=` with a fraction matches nothing, `!=` everything).
 */
export const timeSql = (filter: TimeFilter, column = "timestamp_ms"): string => {
  const operator = sqlComparison(filter.comparison_operator)
  if (!Number.isFinite(filter.time)) throw refused(`not a time: ${filter.time}`)
  if (!Number.isInteger(filter.time) && (operator === "=" || operator === "!=")) return operator === "=" ? "0" : "1"
  const whole = operator === "<" || operator === ">=" ? Math.ceil(filter.time) : Math.floor(filter.time)
  return `${column} ${operator} ${sqlInteger(Math.min(Math.max(whole, 0), Number.MAX_SAFE_INTEGER))}`
}

/** the leaves every filtered table has */
export const tagOrTimeSql = (leaf: TagFilter | TimeFilter): string => leaf.type === "tag" ? tagSql(leaf) : timeSql(leaf)

/** The condition of a filter tree, `leaf` giving each leaf's. */
export const filterTreeSql = <Leaf extends { readonly type: string }>(
  filter: FilterTree<Leaf>,
  leaf: (filter: Leaf) => string
): string => {
  const tree = (node: FilterTree<Leaf>): string => {
    switch (node.type) {
      case "and": {
        const { children } = node as FilterBranch<Leaf>
        return children.length === 0 ? "1" : children.map((child) => `(${tree(child)})`).join(" AND ")
      }
      case "or": {
        const { children } = node as FilterBranch<Leaf>
        return children.length === 0 ? "0" : children.map((child) => `(${tree(child)})`).join(" OR ")
      }
      case "not":
        return `NOT (${tree((node as FilterNot<Leaf>).child)})`
      default:
        return leaf(node as Leaf)
    }
  }
  return tree(filter)
}
