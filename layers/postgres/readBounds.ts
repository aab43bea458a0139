/**
 * Reads that survive a row too large for the driver. @effect/sql-pg reads a row (one DataRow
 * message) of at most 16 MiB (`PgProtocol.defaultMaxMessageSize`) and drops the connection on a
 * larger one. The gateway writes no such row (`max_row_bytes`, src/analytics/rowBudget.ts),
 * but one stored by an earlier version, or a value Postgres writes back larger than it was sent
 * (JSONB prints `1e300` as 301 digits), would make every read that touches it fail.
 *
 * So the reads of the large columns of inferences, model calls and datapoints measure them on
 * the server (in a LATERAL subquery, once per row): a row whose large columns together weigh at
 * most `readBudgetBytes` is read whole; in a larger one each column over its share is read as
 * NULL and named in the extra column `unread` with its size, and the adapter puts a placeholder
 * of the field's shape in its place (`placeholder`, whose text says so). Measuring a JSONB
 * column prints it (`::text`) once more on the server: the cost of a read, not of an inference.
 */
import * as PgProtocol from "@effect/sql-pg/PgProtocol"
import { type FieldShape, notReadText, placeholder } from "../../src/analytics/rowBudget.ts"

/** what the large columns of one row may weigh together: the driver's limit, less room for the rest of the row */
export const readBudgetBytes = PgProtocol.defaultMaxMessageSize - 1024 * 1024

export interface BoundedColumn {
  readonly name: string
  readonly type: "jsonb" | "text"
}

export interface BoundedSelect {
  /** the column `name`, or NULL when the row is over the budget and the column over its share */
  readonly read: (name: string) => string
  /** the extra column `unread`: NULL, or `{column: bytes}` for the columns left out */
  readonly unread: string
  /** the subquery measuring them, to join after the table: `FROM <table> CROSS JOIN LATERAL ...` */
  readonly lateral: string
}

/** the share of the budget each column is read within when the row is over it */
export const shareOf = (columns: ReadonlyArray<BoundedColumn>): number => Math.floor(readBudgetBytes / columns.length)

/**
 * The expressions reading `columns` (trusted names, of `table` or its alias) within the budget,
 * and the LATERAL subquery they need (`OFFSET 0` keeps Postgres from inlining it, which would
 * measure each column again in every expression naming its size).
 */
export const boundedSelect = (table: string, columns: ReadonlyArray<BoundedColumn>): BoundedSelect => {
  const share = shareOf(columns)
  const size = (name: string) => `read_size.${name}_bytes`
  const measured = columns
    .map((column) => `octet_length(${table}.${column.name}${column.type === "jsonb" ? "::text" : ""}) AS ${column.name}_bytes`)
    .join(", ")
  const total = columns.map((column) => `coalesce(${column.name}_bytes, 0)`).join(" + ")
  return {
    read: (name) => {
      if (!columns.some((column) => column.name === name)) throw new Error(`not a bounded column: ${name}`)
      return `CASE WHEN read_size.fits OR ${size(name)} <= ${share} THEN ${table}.${name} END AS ${name}`
    },
    unread: `CASE WHEN read_size.fits THEN NULL ELSE jsonb_strip_nulls(jsonb_build_object(${
      columns.map((column) => `'${column.name}', CASE WHEN ${size(column.name)} > ${share} THEN ${size(column.name)} END`).join(", ")
    })) END AS unread`,
    lateral: `CROSS JOIN LATERAL (SELECT measured.*, ${total} <= ${readBudgetBytes} AS fits ` +
      `FROM (SELECT ${measured} OFFSET 0) AS measured) AS read_size`
  }
}

/** what a row read through `boundedSelect` carries besides its columns */
export interface UnreadColumns {
  /** the columns left out for their size, and their sizes in bytes */
  readonly unread: Readonly<Record<string, number>> | null
}

/**
 * `row` with a placeholder (of the shape `shapes` gives) in each column left out for its size,
 * saying so; the row itself when none was.
 */
export const withPlaceholders = <Row extends UnreadColumns>(
  row: Row,
  columns: ReadonlyArray<BoundedColumn>,
  shapes: (column: string) => FieldShape
): Row => {
  if (row.unread === null) return row
  const share = shareOf(columns)
  const filled: Record<string, unknown> = { ...(row as object) }
  for (const [column, bytes] of Object.entries(row.unread)) {
    const value = placeholder(shapes(column), notReadText(bytes, share))
    filled[column] = value === undefined ? null : value
  }
  return filled as Row
}
