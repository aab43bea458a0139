/**
 * Text the gateway writes into prompts of its own (an LLM judge's message, GEPA's analysis and
 * mutation messages): values cut to a bound saying how much was left out, pretty JSON with
 * base64 file contents named rather than shown, and fences no backtick run inside can close.
 */

import { isRecord } from "./isRecord.ts"

/** where to cut `text` to keep at most `max` characters without splitting a surrogate pair */
export const cutIndex = (text: string, max: number): number => {
  if (text.length <= max) return text.length
  const low = text.charCodeAt(max)
  return low >= 0xDC00 && low <= 0xDFFF ? max - 1 : max
}

/** `text` cut to `max` characters, saying how much was left out */
export const bounded = (text: string, max: number): string => {
  const end = cutIndex(text, max)
  return end === text.length ? text : `${text.slice(0, end)}\n[... ${text.length - end} more characters left out]`
}

/** pretty JSON, with base64 file contents named rather than shown (a model cannot read them as text) */
export const prettyJson = (value: unknown): string =>
  JSON.stringify(
    value,
    (_key, item: unknown) =>
      isRecord(item) && item.type === "file" && typeof item.data === "string"
        ? { ...item, data: `[${item.data.length} characters of base64 data]` }
        : item,
    2
  ) ?? "null"

/** a fence longer than any run of backticks in `text`, so that the text cannot close it */
export const fenced = (text: string): string => {
  const longestRun = Math.max(0, ...(text.match(/`+/g) ?? []).map((run) => run.length))
  const fence = "`".repeat(Math.max(3, longestRun + 1))
  return `${fence}\n${text}\n${fence}`
}
