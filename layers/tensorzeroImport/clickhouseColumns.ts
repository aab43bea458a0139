/**
 * The SQL that reads one column of TensorZero's ClickHouse, chosen from the column's type in
 * `system.columns`: a current server's Map, Bool, DateTime64 and UInt128, or the 18.16
 * stand-ins of test/fixtures/tensorzero (Nested, UInt8, UInt64 microseconds, decimal strings).
 * Only functions both 18.16 and current releases have.
 */

/** table -> column -> type */
export type Schema = ReadonlyMap<string, ReadonlyMap<string, string>>

export const hasColumn = (schema: Schema, table: string, column: string): boolean => schema.get(table)?.has(column) ?? false

const quoted = (name: string): string => `\`${name.replaceAll("`", "")}\``

/** a string literal */
export const literal = (text: string): string => `'${text.replaceAll("\\", "\\\\").replaceAll("'", "\\'")}'`

/** epoch ms of a UUIDv7 column: its first 48 bits (UUIDv7ToDateTime is not on 18.16, and has second precision) */
export const uuidMs = (column: string): string =>
  `reinterpretAsUInt64(reverse(unhex(substring(replaceAll(toString(${quoted(column)}), '-', ''), 1, 12))))`

/**
 * epoch ms of a time column: DateTime64 (TensorZero), DateTime, or the 18.16 stand-in UInt64
 * in `unit` (microseconds for DateTime64(6), milliseconds for DateTime64(3))
 */
export const timeMs = (schema: Schema, table: string, column: string, unit: "us" | "ms"): string => {
  const type = schema.get(table)?.get(column) ?? ""
  const name = quoted(column)
  if (type.includes("DateTime64")) return `toUnixTimestamp64Milli(${name})`
  if (type.includes("DateTime")) return `toUInt64(${name}) * 1000`
  return unit === "us" ? `intDiv(${name}, 1000)` : name
}

/** the keys and values of a Map(String, String) column, or of the Nested column standing in for it; undefined when absent */
export const mapColumns = (schema: Schema, table: string, column: string): readonly [string, string] | undefined => {
  const type = schema.get(table)?.get(column)
  if (type !== undefined && type.startsWith("Map(")) return [`mapKeys(${quoted(column)})`, `mapValues(${quoted(column)})`]
  if (hasColumn(schema, table, `${column}.key`) && hasColumn(schema, table, `${column}.value`)) {
    return [quoted(`${column}.key`), quoted(`${column}.value`)]
  }
  return undefined
}

const zeros = "0".repeat(39)

/**
 * a UInt128 column (or its 18.16 stand-in, a decimal string) as a zero-padded decimal, whose
 * text order is its number order and so the order of the UUIDs it holds
 */
export const paddedUInt128 = (column: string): string => {
  const text = `toString(${quoted(column)})`
  return `substring(concat('${zeros}', ${text}), length(${text}) + 1, 39)`
}

/**
 * The select list of `table`: each wanted column that the table has, under an alias of its own
 * name (`toString` for UUIDs, `toString` for a Decimal), plus the keys and values of its maps.
 */
export const selectList = (
  schema: Schema,
  table: string,
  columns: ReadonlyArray<string>,
  maps: ReadonlyArray<string> = []
): Array<string> => {
  const items: Array<string> = []
  for (const column of columns) {
    const type = schema.get(table)?.get(column)
    if (type === undefined) continue
    const plain = type.replace(/^Nullable\((.*)\)$/, "$1")
    const expression = plain === "UUID" || plain.startsWith("Decimal") || plain === "UInt256" || plain === "UInt128"
      ? `toString(${quoted(column)})`
      : plain.startsWith("LowCardinality") ? `toString(${quoted(column)})` : quoted(column)
    items.push(`${expression} AS ${quoted(`c_${column}`)}`)
  }
  for (const map of maps) {
    const found = mapColumns(schema, table, map)
    if (found === undefined) continue
    items.push(`${found[0]} AS ${quoted(`k_${map}`)}`, `${found[1]} AS ${quoted(`v_${map}`)}`)
  }
  return items
}
