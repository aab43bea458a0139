/**
 * Untrusted request content. Client-supplied text (field names, header names, format names)
 * inside the gateway's own messages and log lines: quoted as JSON strings, so a line break or
 * a control character cannot forge a log line, and cut short, so a request cannot make a line
 * megabytes long. (The shape a request body may have is jsonShape.ts's.)
 */

const defaultMaxChars = 100

/** `text` as a JSON string of at most about `maxChars` characters (`"abc..."` when cut). */
export const quoted = (text: string, maxChars = defaultMaxChars): string =>
  text.length > maxChars ? `${JSON.stringify(text.slice(0, maxChars)).slice(0, -1)}..."` : JSON.stringify(text)

const plainName = /^[A-Za-z0-9_.:/-]{1,100}$/

/**
 * `name` as it is when it is a plain name (letters, digits and `_.:/-`, at most 100), which
 * can forge nothing; quoted otherwise. For messages whose wording clients match on
 * (TensorZero's `Unknown function: <name>`).
 */
export const plainOrQuoted = (name: string): string => plainName.test(name) ? name : quoted(name)

/**
 * `names`, quoted and comma-separated, at most `maxNames` of them followed by `and K more`:
 * `"a", "b\n" and 3 more`.
 */
export const quotedList = (names: ReadonlyArray<string>, maxNames = 20, maxChars = defaultMaxChars): string => {
  const shown = names.slice(0, maxNames).map((name) => quoted(name, maxChars)).join(", ")
  return names.length > maxNames ? `${shown} and ${names.length - maxNames} more` : shown
}
