/**
 * The shape of a request's JSON, checked on its UTF-8 bytes before anything parses them: how deep
 * it nests, how many values and keys it holds, how many distinct keys. JSON.parse takes any
 * nesting, and what walks a value recursively afterwards does not (JSON.stringify overflows the
 * stack at about 10,000 levels); and parsing 10 MiB nested millions of levels deep took 1.6 s of
 * a blocked event loop (issue 33). Past the nesting, what a parse costs grows with the values it
 * makes rather than with the bytes: 10 MiB of `{}` are 3.5 million objects (1.6 s, 200 MB of
 * heap), 10 MiB of distinct keys 870,000 hidden classes (2.8 s), where 10 MiB of text parses in
 * 60 ms (on the 2-core test machine, loaded). So a body also holds a bounded number of values and
 * of distinct keys, and its parse work, like the work of what walks the value afterwards, is
 * bounded with them: within the limits, the slowest body parses in 0.2 to 0.6 s there (a million
 * nested arrays), the usual one in microseconds.
 *
 * One pass over the bytes: outside strings, a table lookup per byte; a string is skipped with
 * `indexOf` to its closing quote. Multi-byte UTF-8 sequences never contain ASCII bytes, so the
 * bytes tested are always the characters they look like. Malformed JSON is not refused here
 * (JSON.parse does that, and says where); what is counted is then only an estimate, never an
 * excuse to skip the parse's own checks.
 */
import { quoted } from "./untrusted.ts"

/**
 * How deep a request body may nest (the body itself is level 1): a real request nests a few
 * levels, template arguments and JSON Schemas a few dozen at most.
 */
export const maxJsonDepth = 128

/**
 * How many values and keys a request body may hold (each `{`, `[`, `,` and `:` outside strings
 * counts one): a batch of 50,000 inputs of a few messages each fits (about 650,000).
 */
export const maxJsonValues = 1_000_000

/**
 * How many distinct object keys a request body may hold: each new one costs JSON.parse a hidden
 * class (20,000 objects of a key of their own parse in 60 ms, 500,000 in 2 s). Requests use a
 * vocabulary of field names (plus tags, schema properties, template arguments): hundreds,
 * rarely thousands.
 */
export const maxJsonDistinctKeys = 20_000

/** What is wrong with a JSON text's shape, where it was found (a byte offset) */
export type JsonShapeProblem =
  | { readonly kind: "depth"; readonly offset: number }
  | { readonly kind: "values"; readonly offset: number }
  | { readonly kind: "keys"; readonly offset: number }

const quote = 0x22
const backslash = 0x5c

/** what a byte is, outside strings: 0 nothing to count */
const other = 0
const stringStart = 1
const opening = 2
const closing = 3
const separator = 4
const colon = 5
const byteKinds = new Uint8Array(256)
byteKinds[quote] = stringStart
byteKinds[0x7b] = opening
byteKinds[0x5b] = opening
byteKinds[0x7d] = closing
byteKinds[0x5d] = closing
byteKinds[0x2c] = separator
byteKinds[0x3a] = colon

/** how far a string is read byte by byte before `indexOf` takes over (most strings are short keys) */
const shortString = 32

/**
 * The offset of the quote that closes the string whose text starts at `from`, or `end` when
 * none does before `end`.
 */
const stringEnd = (bytes: Uint8Array, from: number, end: number): number => {
  const probeEnd = Math.min(end, from + shortString)
  let i = from
  for (; i < probeEnd; i++) {
    const byte = bytes[i]
    if (byte === backslash) i++
    else if (byte === quote) return i
  }
  if (i >= end) return end
  for (;;) {
    const found = bytes.indexOf(quote, i)
    if (found === -1 || found >= end) return end
    // escaped when an odd number of backslashes precede it (the opening quote stops the count)
    let backslashes = 0
    while (bytes[found - 1 - backslashes] === backslash) backslashes++
    if ((backslashes & 1) === 0) return found
    i = found + 1
  }
}

/** FNV-1a of `bytes[start, end)`: distinct keys are counted by hash (a collision only undercounts) */
const hashOf = (bytes: Uint8Array, start: number, end: number): number => {
  let hash = 0x811c9dc5
  for (let i = start; i < end; i++) hash = Math.imul(hash ^ bytes[i], 0x01000193)
  return hash >>> 0
}

/**
 * The first problem with the shape of the JSON text `bytes[start, end)`, or undefined: a value
 * nested deeper than `maxJsonDepth`, more than `maxJsonValues` values and keys, more than
 * `maxJsonDistinctKeys` distinct keys. One linear pass; it runs on every request body.
 */
export const jsonShapeProblem = (bytes: Uint8Array, start = 0, end = bytes.length): JsonShapeProblem | undefined => {
  let depth = 0
  let values = 0
  let keyStart = 0
  let keyEnd = 0
  // a key takes 5 bytes at least (`"a":0`): a smaller body cannot hold too many, and the hot path skips counting them
  const keys = end - start > maxJsonDistinctKeys * 5 ? new Set<number>() : undefined
  for (let i = start; i < end; i++) {
    const kind = byteKinds[bytes[i]]
    if (kind === other) continue
    if (kind === stringStart) {
      keyStart = i + 1
      i = keyEnd = stringEnd(bytes, keyStart, end)
    } else if (kind === closing) {
      depth--
    } else {
      if (++values > maxJsonValues) return { kind: "values", offset: i }
      if (kind === opening) {
        if (++depth > maxJsonDepth) return { kind: "depth", offset: i }
      } else if (kind === colon && keys !== undefined) {
        // the string just read is a key
        keys.add(hashOf(bytes, keyStart, keyEnd))
        if (keys.size > maxJsonDistinctKeys) return { kind: "keys", offset: keyStart - 1 }
      }
    }
  }
  return undefined
}

const textDecoder = new TextDecoder()

/** a path segment as error messages write it: `.name`, `[3]`, or `["odd name"]` */
const segment = (key: string | number): string =>
  typeof key === "number" ? `[${key}]` : /^[A-Za-z_][\w:-]{0,63}$/.test(key) ? `.${key}` : `[${quoted(key, 40)}]`

/** the text of the JSON string `bytes[start, end)` (its quotes excluded), as the parse would read it */
const keyText = (bytes: Uint8Array, start: number, end: number): string => {
  const raw = textDecoder.decode(bytes.subarray(start, end))
  try {
    return JSON.parse(`"${raw}"`) as string
  } catch {
    return raw
  }
}

/** how many segments of a path messages show: the first few fields say where; the rest is noise */
const shownSegments = 3

/**
 * The first fields on the way to the byte at `offset` of the JSON text `bytes[start, ...)`
 * (`input.system.x`): a second pass up to `offset`, run only for a message.
 */
export const jsonPathAt = (bytes: Uint8Array, offset: number, start = 0): string => {
  // for each of the first levels: its key (a byte range) in an object, its index in an array
  const isArray: Array<boolean> = []
  const index: Array<number> = []
  const keyFrom: Array<number> = []
  const keyTo: Array<number> = []
  let depth = 0
  let lastStart = 0
  let lastEnd = 0
  for (let i = start; i < offset; i++) {
    const kind = byteKinds[bytes[i]]
    if (kind === stringStart) {
      lastStart = i + 1
      i = lastEnd = stringEnd(bytes, lastStart, offset)
    } else if (kind === opening) {
      depth++
      if (depth <= shownSegments) {
        isArray[depth] = bytes[i] === 0x5b
        index[depth] = 0
        keyFrom[depth] = keyTo[depth] = -1
      }
    } else if (kind === closing) {
      depth--
    } else if (kind === separator && depth <= shownSegments) {
      index[depth]++
    } else if (kind === colon && depth <= shownSegments) {
      keyFrom[depth] = lastStart
      keyTo[depth] = lastEnd
    }
  }
  const segments: Array<string> = []
  for (let level = 1; level <= Math.min(depth, shownSegments); level++) {
    if (isArray[level]) segments.push(segment(index[level]))
    else if (keyFrom[level] >= 0) segments.push(segment(keyText(bytes, keyFrom[level], keyTo[level])))
  }
  return segments.join("").replace(/^\./, "")
}

/**
 * What is wrong with the shape of a JSON text, for a 400's message: `input.system.x: nests
 * deeper than 128 levels, the limit of a request body`, or `<subject> holds more than ...`.
 */
export const jsonShapeMessage = (problem: JsonShapeProblem, bytes: Uint8Array, start = 0, subject = "the request body"): string => {
  switch (problem.kind) {
    case "depth": {
      const path = jsonPathAt(bytes, problem.offset, start)
      return `${path === "" ? `byte ${problem.offset - start}` : path}: nests deeper than ${maxJsonDepth} levels, the limit of a request body`
    }
    case "values":
      return `${subject} holds more than ${maxJsonValues} JSON values and keys, the limit of a request body`
    case "keys":
      return `${subject} holds more than ${maxJsonDistinctKeys} distinct object keys, the limit of a request body`
  }
}
