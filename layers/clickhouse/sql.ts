/**
 * Values in ClickHouse SQL. The SQL is the subset ClickHouse 18.16 shares with current
 * releases, which has no query parameters: no value is ever pasted into SQL as text. Strings
 * travel as hex literals (`unhex('..')`), UUIDs and numbers are checked before use, and rows
 * are sent as JSONEachRow bodies (layers/clickhouse/rows.ts).
 */
import { isUuid } from "../../src/ids.ts"
import { StoreError } from "../../src/storeError.ts"
import { type StorePage, wholePage } from "../storePage.ts"

export const refused = (message: string) => new StoreError({ message: `clickhouse refused a value: ${message}` })

export const sqlString = (value: string) => `unhex('${Buffer.from(value, "utf8").toString("hex")}')`

export const sqlUuid = (value: string) => {
  if (!isUuid(value)) throw refused(`not a UUID: ${JSON.stringify(value.slice(0, 100))}`)
  return `toUUID('${value.toLowerCase()}')`
}

export const sqlUuids = (values: ReadonlyArray<string>) => `(${values.map(sqlUuid).join(", ")})`

/** `LIMIT offset, limit` of a store page, made whole first */
export const sqlLimit = (page: StorePage) => {
  const { limit, offset } = wholePage(page)
  return `LIMIT ${sqlInteger(offset)}, ${sqlInteger(limit)}`
}

export const sqlInteger = (value: number) => {
  if (!Number.isSafeInteger(value)) throw refused(`not an integer: ${value}`)
  return String(value)
}
