/**
 * Untrusted request content. Client-supplied text (field names, header names, format names)
 * inside the gateway's own messages and log lines: quoted as JSON strings, so a line break or
 * a control character cannot forge a log line, and cut short, so a request cannot make a line
 * megabytes long. And the depth a request body may nest.
 */

const defaultMaxChars = 100

/** `text` as a JSON string of at most about `maxChars` characters (`"abc..."` when cut). */
export const quoted = (text: string, maxChars = defaultMaxChars): string =>
  text.length > maxChars ? `${JSON.stringify(text.slice(0, maxChars)).slice(0, -1)}..."` : JSON.stringify(text)

/**
 * `names`, quoted and comma-separated, at most `maxNames` of them followed by `and K more`:
 * `"a", "b\n" and 3 more`.
 */
export const quotedList = (names: ReadonlyArray<string>, maxNames = 20, maxChars = defaultMaxChars): string => {
  const shown = names.slice(0, maxNames).map((name) => quoted(name, maxChars)).join(", ")
  return names.length > maxNames ? `${shown} and ${names.length - maxNames} more` : shown
}

/**
 * How deep a request body may nest. JSON.parse takes any depth, but what walks a value
 * recursively afterwards does not (JSON.stringify overflows the stack at about 10 000 levels,
 * and with it the provider request, the cache key, the stored row); a real request nests a
 * few levels, template arguments and JSON Schemas a few dozen at most.
 */
export const maxJsonDepth = 128

/** a path segment as error messages write it: `.name`, `[3]`, or `["odd name"]` */
const segment = (key: string | number): string =>
  typeof key === "number" ? `[${key}]` : /^[A-Za-z_][\w:-]{0,63}$/.test(key) ? `.${key}` : `[${quoted(key, 40)}]`

/**
 * Where in `json` a value nests deeper than `maxJsonDepth` levels (the body itself is level 1):
 * the first few fields of the way there (`input.system.x`), or undefined. Visits every value,
 * none more than `maxJsonDepth` deep; the path is built only when there is one to report.
 */
export const tooDeepPath = (json: Readonly<Record<string, unknown>>): string | undefined => {
  const shownSegments = 3
  const walk = (value: unknown, depth: number): Array<string | number> | undefined => {
    if (typeof value !== "object" || value === null) return undefined
    if (depth > maxJsonDepth) return []
    if (Array.isArray(value)) {
      for (let i = 0; i < value.length; i++) {
        const path = walk(value[i], depth + 1)
        if (path !== undefined) return depth <= shownSegments ? [i, ...path] : path
      }
    } else {
      for (const key in value) {
        const path = walk((value as Record<string, unknown>)[key], depth + 1)
        if (path !== undefined) return depth <= shownSegments ? [key, ...path] : path
      }
    }
    return undefined
  }
  const path = walk(json, 1)
  return path === undefined ? undefined : path.map(segment).join("").replace(/^\./, "")
}
