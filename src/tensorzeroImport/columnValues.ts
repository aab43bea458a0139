/**
 * What a column of a TensorZero database holds, checked as the neutral rows
 * (src/tensorzeroImport/source.ts) need it, by both sources (its Postgres and its ClickHouse). A
 * value that cannot be read throws an `UnreadableValue`, which the source turns into an
 * `UnreadableRow` for that row only.
 */

export class UnreadableValue extends Error {}

export const fail = (message: string): never => {
  throw new UnreadableValue(message)
}

/** a number, from a number or a (quoted 64-bit) numeric string; null stays null */
export const numberOrNull = (value: unknown, what: string): number | null => {
  if (value === null || value === undefined) return null
  const parsed = typeof value === "number" ? value : typeof value === "string" && value.trim() !== "" ? Number(value) : Number.NaN
  return Number.isFinite(parsed) ? parsed : fail(`${what} is not a number: ${JSON.stringify(value)}`)
}

export const numberOf = (value: unknown, what: string): number => numberOrNull(value, what) ?? fail(`${what} is missing`)

/** Bool (true/false) on current servers, UInt8 (0/1) where Bool is not available */
export const booleanOf = (value: unknown, what: string): boolean => {
  if (value === true || value === 1 || value === "1" || value === "true") return true
  if (value === false || value === 0 || value === "0" || value === "false") return false
  return fail(`${what} is not a boolean: ${JSON.stringify(value)}`)
}

export const booleanOrNull = (value: unknown, what: string): boolean | null =>
  value === null || value === undefined ? null : booleanOf(value, what)

export const stringOf = (value: unknown, what: string): string =>
  typeof value === "string" ? value : fail(`${what} is not a string: ${JSON.stringify(value)}`)

export const stringOrNull = (value: unknown, what: string): string | null =>
  value === null || value === undefined ? null : stringOf(value, what)

export const stringsOf = (value: unknown, what: string): ReadonlyArray<string> =>
  Array.isArray(value) && value.every((item) => typeof item === "string") ? value : fail(`${what} is not a list of strings`)
