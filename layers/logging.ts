/**
 * Logging: `--log-format pretty|json`, to stderr (stdout stays free for what one-shot
 * commands print). The per-request logger is off; requests log only when they fail.
 *
 * Log lines carry text the gateway does not choose (a provider's error body, a database's
 * message, names a client sent), so no field may end a line or drive a terminal: control
 * characters (C0, among them line breaks and ESC, DEL, C1, and the Unicode line and paragraph
 * separators) are written as escapes in every field of both formats. The only line breaks are
 * the logger's own: a pretty entry is its first line (`[time] LEVEL (#fiber): message`) and
 * lines indented by two spaces (further message parts, the cause, one per stack frame, the
 * annotations); a JSON entry is one line.
 */
import * as Cause from "effect/Cause"
import * as Formatter from "effect/Formatter"
import * as Layer from "effect/Layer"
import type * as LogLevel from "effect/LogLevel"
import * as Logger from "effect/Logger"
import * as References from "effect/References"

export type LogFormat = "pretty" | "json"

/** what may not appear raw in a log line */
const controlCharacter = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/
const controlCharacters = new RegExp(controlCharacter.source, "g")
const namedEscapes: Readonly<Record<string, string>> = { "\n": "\\n", "\r": "\\r", "\t": "\\t" }

const hex = (character: string, digits: number) => character.charCodeAt(0).toString(16).padStart(digits, "0")

/** `text` with its control characters escaped (`\n`, `\x1b`, `\u2028`): one line, inert on a terminal */
export const escapeControl = (text: string): string =>
  controlCharacter.test(text)
    ? text.replace(controlCharacters, (character) => namedEscapes[character] ?? (character < "\u0100" ? `\\x${hex(character, 2)}` : `\\u${hex(character, 4)}`))
    : text

/**
 * A JSON line with the characters `JSON.stringify` leaves raw (DEL, C1, U+2028 and U+2029; it
 * escapes C0 itself) escaped too. They can only be inside strings, where `\uXXXX` means the same.
 */
export const escapeJsonLine = (line: string): string => line.replace(/[\u007f-\u009f\u2028\u2029]/g, (character) => `\\u${hex(character, 4)}`)

/** a message part or an annotation's value as one line: text as it is, anything else as JSON */
const oneLine = (value: unknown): string => escapeControl(typeof value === "string" ? value : Formatter.formatJson(value) ?? String(value))

/** an error of a cause: its name and message, then one line per stack frame, then what caused it (indented) */
const errorLines = (error: Error, indent: string): Array<string> => {
  const lines = [`${indent}${oneLine(`${error.name}: ${error.message}`)}`]
  // the frames are the stack's lines from the first "at": the message before them may span lines
  const stack = typeof error.stack === "string" ? error.stack : ""
  const frames = stack.indexOf("\n    at ")
  if (frames >= 0) {
    for (const frame of stack.slice(frames + 1).split("\n")) if (frame.trim() !== "") lines.push(`${indent}${escapeControl(frame)}`)
  }
  if (error.cause instanceof Error) {
    const caused = errorLines(error.cause, `${indent}  `)
    caused[0] = `${indent}  [cause]: ${caused[0].trimStart()}`
    lines.push(...caused)
  }
  return lines
}

const twoDigits = (n: number) => n.toString().padStart(2, "0")
const timeOf = (date: Date) =>
  `${twoDigits(date.getHours())}:${twoDigits(date.getMinutes())}:${twoDigits(date.getSeconds())}.${date.getMilliseconds().toString().padStart(3, "0")}`

/**
 * The pretty format, Effect's `consolePretty` without colours, in lines nothing can add to:
 * `[12:00:00.000] WARN (#12) span=3ms: the message`, then indented lines.
 */
export const formatPretty = Logger.make<unknown, string>(({ cause, date, fiber, logLevel, message }) => {
  const parts = Array.isArray(message) ? message : [message]
  let first = `[${timeOf(date)}] ${logLevel.toUpperCase()} (#${fiber.id})`
  const now = date.getTime()
  for (const [label, started] of fiber.getRef(References.CurrentLogSpans)) first += ` ${escapeControl(label).replace(/[\s="]/g, "_")}=${now - started}ms`
  first += ":"
  let next = 0
  if (typeof parts[0] === "string") {
    first += ` ${escapeControl(parts[0])}`
    next = 1
  }
  const rest: Array<string> = []
  for (; next < parts.length; next++) rest.push(oneLine(parts[next]))
  for (const error of Cause.prettyErrors(cause)) rest.push(...errorLines(error, ""))
  for (const [key, value] of Object.entries(fiber.getRef(References.CurrentLogAnnotations))) rest.push(`${escapeControl(key)}: ${oneLine(value)}`)
  return rest.length === 0 ? first : `${first}\n${rest.map((line) => `  ${line}`).join("\n")}`
})

/** Effect's JSON format (one object per line), with what `JSON.stringify` leaves raw escaped */
export const formatJsonLine = Logger.map(Logger.formatJson, escapeJsonLine)

/** `level` overrides the minimum level; without it, `--log-level` (default info) applies. */
export const LoggingLive = (format: LogFormat, level?: LogLevel.LogLevel) =>
  Layer.mergeAll(
    Logger.layer([Logger.withConsoleError(format === "json" ? formatJsonLine : formatPretty)]),
    level === undefined ? Layer.empty : Layer.succeed(References.MinimumLogLevel, level),
    Layer.succeed(Logger.LogToStderr, true)
  )
