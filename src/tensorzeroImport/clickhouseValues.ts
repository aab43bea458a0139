/**
 * The values of TensorZero's ClickHouse as its JSONEachRow output gives them, turned into the
 * neutral rows' values (src/tensorzeroImport/source.ts). Both a current ClickHouse (Bool, Map,
 * UInt128, 64-bit integers quoted) and the 18.16 of the tests (UInt8, Nested, decimal strings)
 * come through here. A value that cannot be read throws an `UnreadableValue`, which the source
 * turns into an `UnreadableRow` for that row only.
 */
import { booleanOrNull, fail, stringOf, stringOrNull, stringsOf } from "./columnValues.ts"

/** a Map(String, String) read as its keys and its values (mapKeys/mapValues, or a Nested column's two arrays) */
export const recordOf = (keys: unknown, values: unknown, what: string): Record<string, string> => {
  if (keys === undefined && values === undefined) return {}
  const keyList = stringsOf(keys, `${what} keys`)
  const valueList = stringsOf(values, `${what} values`)
  if (keyList.length !== valueList.length) fail(`${what} has ${keyList.length} keys but ${valueList.length} values`)
  return Object.fromEntries(keyList.map((key, index) => [key, valueList[index]!]))
}

/** epoch ms of a UUIDv7: its first 48 bits */
export const msOfUuidV7 = (uuid: string): number => {
  const hex = uuid.replaceAll("-", "").slice(0, 12)
  return /^[0-9a-fA-F]{12}$/.test(hex) ? Number.parseInt(hex, 16) : fail(`not a UUID: ${JSON.stringify(uuid)}`)
}

const uuidDigits = 39 // 2^128 has 39 decimal digits

/**
 * TensorZero keys some tables by `toUInt128(uuid)`, the UUID read as a big-endian 128-bit number;
 * ClickHouse prints it in decimal. The UUID back, in the canonical lowercase form.
 */
export const uuidOfUInt128 = (decimal: unknown, what: string): string => {
  const text = stringOf(typeof decimal === "number" ? String(decimal) : decimal, what)
  if (!/^\d{1,39}$/.test(text)) return fail(`${what} is not a 128-bit number: ${JSON.stringify(text)}`)
  const value = BigInt(text)
  if (value >= 1n << 128n) return fail(`${what} is larger than 128 bits`)
  const hex = value.toString(16).padStart(32, "0")
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`
}

/** the decimal of a UUID's 128-bit number, zero-padded so that text order is number order (and UUID order) */
export const paddedUInt128OfUuid = (uuid: string): string => {
  const hex = uuid.replaceAll("-", "")
  if (!/^[0-9a-fA-F]{32}$/.test(hex)) return "0".repeat(uuidDigits)
  return BigInt(`0x${hex}`).toString(10).padStart(uuidDigits, "0")
}

/** a JSON text as its value; a text that is not JSON stays text (the mapper judges it) */
export const parsedOrText = (text: string): unknown => {
  try {
    return JSON.parse(text)
  } catch {
    return text
  }
}

/**
 * The tool parameters of a row: the separate columns of migration 0041 when a row has any of
 * them set, in the `{tools_available, provider_tools, allowed_tools, tool_choice,
 * parallel_tool_calls}` shape; the legacy `tool_params` JSON text otherwise (null when empty).
 */
export const toolParamsOf = (row: Record<string, unknown>): unknown => {
  const dynamicTools = row.dynamic_tools === undefined ? [] : stringsOf(row.dynamic_tools, "dynamic_tools")
  const providerTools = row.dynamic_provider_tools === undefined ? [] : stringsOf(row.dynamic_provider_tools, "dynamic_provider_tools")
  const allowedTools = stringOrNull(row.allowed_tools, "allowed_tools")
  const toolChoice = stringOrNull(row.tool_choice, "tool_choice")
  const parallel = booleanOrNull(row.parallel_tool_calls, "parallel_tool_calls")
  const hasColumns = dynamicTools.length > 0 || providerTools.length > 0 || allowedTools !== null || toolChoice !== null || parallel !== null
  if (hasColumns) {
    return {
      tools_available: dynamicTools.map(parsedOrText),
      provider_tools: providerTools.map(parsedOrText),
      allowed_tools: allowedTools === null ? null : parsedOrText(allowedTools),
      tool_choice: toolChoice === null ? null : parsedOrText(toolChoice),
      parallel_tool_calls: parallel
    }
  }
  const legacy = stringOrNull(row.tool_params, "tool_params")
  return legacy === null || legacy === "" ? null : legacy
}
