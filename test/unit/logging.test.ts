/**
 * The log formats (layers/logging.ts): text with control characters in every field of an entry
 * (the message and its further parts, a span's label, an annotation's key and value, the
 * message of an error in the cause and of what caused it) cannot add a line to the log or reach
 * the terminal raw, in the pretty format and in JSON. The hardening test over HTTP is
 * test/integration/hardening-logging.test.ts.
 */
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Logger from "effect/Logger"
import { describe, expect, it } from "vitest"
import { escapeControl, escapeJsonLine, formatJsonLine, formatPretty } from "../../layers/logging.ts"

const forged = "\n[12:00:00.000] ERROR (#1): forged\r\x1b[2K\u2028\u2029\u0085\u009b\x07\x00\x7f end"
/** what may not appear in a log's output, raw */
const raw = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u2028\u2029]/

/** the entries one hostile log call writes in `format` */
const entries = (format: Logger.Logger<unknown, string>): Array<string> => {
  const written: Array<string> = []
  const capture = Logger.make((options) => written.push(format.log(options)))
  const error = new Error(`provider said:${forged}`, { cause: new Error(`because:${forged}`) })
  Effect.runSync(
    Effect.logWarning(`answer:${forged}`, `part:${forged}`, { nested: `value:${forged}` }, Cause.fail(error)).pipe(
      Effect.annotateLogs(`key${forged}`, `annotation:${forged}`),
      Effect.withLogSpan(`span${forged}`),
      Effect.provide(Logger.layer([capture]))
    )
  )
  return written
}

describe("log formats", () => {
  it("escape control characters, line and paragraph separators as escapes a reader can decode", () => {
    expect(escapeControl("a\nb\r\tc\x1b[31m\u2028\u0085\x00")).toBe("a\\nb\\r\\tc\\x1b[31m\\u2028\\x85\\x00")
    expect(escapeControl("plain text, unicode é ✓")).toBe("plain text, unicode é ✓")
    expect(JSON.parse(escapeJsonLine(JSON.stringify({ m: "a\u2028b\u0085c\u007f" })))).toEqual({ m: "a\u2028b\u0085c\u007f" })
  })

  it("pretty: one first line, then only indented lines, whatever the fields hold", () => {
    const [entry] = entries(formatPretty)
    expect(entry).not.toMatch(raw)
    const lines = entry.split("\n")
    expect(lines[0]).toMatch(/^\[\d\d:\d\d:\d\d\.\d{3}\] WARN \(#\d+\) span\\n\[12:00:00\.000\]_ERROR_\(#1\):_forged\\r\\x1b\[2K\\u2028\\u2029\\x85\\x9b\\x07\\x00\\x7f_end=\d+ms: answer:\\n\[12:00:00\.000\] ERROR \(#1\): forged\\r/)
    for (const line of lines.slice(1)) expect(line).toMatch(/^ {2}/)
    // every field is there, escaped
    const text = lines.join("\n")
    for (const field of ["part:", `"nested":"value:`, "Error: provider said:", "[cause]: Error: because:", "annotation:"]) {
      expect(text).toContain(`${field}\\n[12:00:00.000] ERROR (#1): forged`)
    }
    expect(text).toContain("key\\n[12:00:00.000] ERROR (#1): forged")
    // the stack frames, one per line
    expect(lines.some((line) => /^ {2} {4}at /.test(line))).toBe(true)
    // no line but the first starts an entry
    expect(lines.filter((line) => line.startsWith("["))).toHaveLength(1)
  })

  it("json: one line of JSON holding every field as it was", () => {
    const [entry] = entries(formatJsonLine)
    expect(entry).not.toMatch(raw)
    expect(entry).not.toContain("\n")
    const parsed = JSON.parse(entry)
    expect(parsed.message[0]).toBe(`answer:${forged}`)
    expect(parsed.message[1]).toBe(`part:${forged}`)
    expect(parsed.annotations[`key${forged}`]).toBe(`annotation:${forged}`)
    expect(parsed.cause).toContain(`provider said:${forged}`)
  })
})
