/**
 * Rows no larger than what their readers can read (`[gateway.observability] max_row_bytes`): a
 * row whose JSON text is larger is cut down before it is queued, never dropped.
 *
 * - Fields are cut tier by tier: the raw provider payloads first (a copy of what the other
 *   fields hold, in the provider's format), then the input and output, then the rest.
 * - Within a tier, the longest texts are cut first, all to one length (a "water level"), so a
 *   short message beside a huge one is kept whole. Each cut text ends with a marker saying how
 *   much is missing (`cutMarkerPrefix`); the structure around it stays, so a stored input is
 *   still an input.
 * - A field whose structure alone is too large (millions of tiny values) becomes a placeholder
 *   of its shape (`placeholder`), whose text says so.
 * - A cut model call loses its cache key: a truncated answer is never served from the cache.
 *
 * Readers use the same placeholders for a value too large to read (a row stored before rows
 * were bounded). Only rows over the budget pay for any of this: the caller compares the size of
 * the text it encoded anyway.
 */
import { Buffer } from "node:buffer"
import type { StoredFeedback, StoredInference } from "./records.ts"

/** how every cut text's marker starts */
export const cutMarkerPrefix = "[gateway: truncated"
/** how every placeholder's text starts, for a value not stored or not read */
export const placeholderPrefix = "[gateway: "

const cutMarker = (omitted: number, length: number) =>
  `${cutMarkerPrefix} ${omitted} of ${length} characters, the row being over [gateway.observability] max_row_bytes]`

/** the text of a placeholder for a value that was not stored */
export const notStoredText = (bytes: number) =>
  `${placeholderPrefix}not stored: ${bytes} bytes, the row being over [gateway.observability] max_row_bytes]`

/** the text of a placeholder for a stored value too large to read */
export const notReadText = (bytes: number, limit: number) =>
  `${placeholderPrefix}not read: ${bytes} bytes, over the ${limit} a read of one row takes (stored before rows were bounded by max_row_bytes)]`

/** What a field holds, so that a placeholder keeps its shape for every reader (the UI maps over output blocks). */
export type FieldShape =
  /** a string */
  | "text"
  /** an inference input: `{messages: [...]}` */
  | "input"
  /** a model call's messages */
  | "messages"
  /** chat output blocks */
  | "outputBlocks"
  /** a json output: `{raw, parsed}` */
  | "jsonOutput"
  /** strings (an embedding's input) */
  | "texts"
  /** an object (parameters, tags, a schema) */
  | "object"
  /** an optional field: left out */
  | "absent"

/** a value of `shape` that carries `text` where a reader shows it */
export const placeholder = (shape: FieldShape, text: string): unknown => {
  switch (shape) {
    case "text":
      return text
    case "input":
      return { messages: [{ role: "user", content: [{ type: "text", text }] }] }
    case "messages":
      return [{ role: "user", content: [{ type: "text", text }] }]
    case "outputBlocks":
      return [{ type: "text", text }]
    case "jsonOutput":
      return { raw: text, parsed: null }
    case "texts":
      return [text]
    case "object":
      return {}
    case "absent":
      return undefined
  }
}

interface Field {
  /** the record's field */
  readonly key: string
  /** the column it is stored in, for the log */
  readonly column: string
  readonly shape: FieldShape
}

/** How a kind of record is cut: its fields in tiers, cut in that order; and whether it carries a cache key. */
export interface RecordCuts {
  readonly table: string
  readonly tiers: ReadonlyArray<ReadonlyArray<Field>>
  readonly cacheKey: boolean
}

const field = (key: string, column: string, shape: FieldShape): Field => ({ key, column, shape })

const rawPayloads = [field("rawRequest", "raw_request", "text"), field("rawResponse", "raw_response", "text")]

export const inferenceCuts = (inference: StoredInference): RecordCuts => ({
  table: `${inference.functionType}_inference`,
  tiers: [
    [field("input", "input", "input"), field("output", "output", inference.functionType === "chat" ? "outputBlocks" : "jsonOutput")],
    [
      field("toolParams", "tool_params", "absent"),
      field("outputSchema", "output_schema", "object"),
      field("inferenceParams", "inference_params", "object"),
      field("tags", "tags", "object")
    ]
  ],
  cacheKey: false
})

export const modelInferenceCuts: RecordCuts = {
  table: "model_inference",
  tiers: [
    rawPayloads,
    [field("inputMessages", "input_messages", "messages"), field("output", "output", "outputBlocks"), field("system", "system", "text")]
  ],
  cacheKey: true
}

export const embeddingInferenceCuts: RecordCuts = {
  table: "embedding_inference",
  tiers: [rawPayloads, [field("input", "input", "texts")], [field("tags", "tags", "object")]],
  cacheKey: true
}

export const feedbackCuts = (feedback: StoredFeedback): RecordCuts => ({
  table: `${feedback.kind}_feedback`,
  tiers: [[field("value", "value", feedback.kind === "demonstration" ? "outputBlocks" : "text")], [field("tags", "tags", "object")]],
  cacheKey: false
})

// ---- cutting texts to a level

/** texts shorter than this are never cut: names, roles, ids, short messages */
const minCutLength = 64

/** `value` with each string replaced by `map(string)`, containers copied (only rows over the budget pay for this) */
const mapStrings = (value: unknown, map: (text: string) => string): unknown => {
  if (typeof value === "string") return map(value)
  if (Array.isArray(value)) return value.map((item) => mapStrings(item, map))
  if (typeof value === "object" && value !== null) {
    const copy: Record<string, unknown> = {}
    for (const [key, item] of Object.entries(value)) copy[key] = mapStrings(item, map)
    return copy
  }
  return value
}

/** calls `visit` on each string of `value`, in the order `mapStrings` maps them */
const eachString = (value: unknown, visit: (text: string) => void): void => {
  if (typeof value === "string") visit(value)
  else if (Array.isArray(value)) for (const item of value) eachString(item, visit)
  else if (typeof value === "object" && value !== null) for (const item of Object.values(value)) eachString(item, visit)
}

/** texts longer than this have their UTF-8 size estimated from samples rather than counted */
const sampledLength = 256 * 1024
const sampleLength = 4096

/**
 * The UTF-8 bytes of `text`: counted, or for a long text estimated from three samples (its
 * start, middle and end), since counting tens of MB holds the event loop for tens of ms. An
 * estimate off for an unevenly mixed text costs another try of the row (`fitRecord`).
 */
const utf8Size = (text: string): number => {
  if (text.length <= sampledLength) return Buffer.byteLength(text)
  const middle = Math.floor(text.length / 2)
  const sampled = Buffer.byteLength(text.slice(0, sampleLength)) + Buffer.byteLength(text.slice(middle, middle + sampleLength)) +
    Buffer.byteLength(text.slice(-sampleLength))
  return Math.ceil((sampled / (3 * sampleLength)) * text.length)
}

/** the first `count` characters of `text`, never half of a surrogate pair */
const prefix = (text: string, count: number): string => {
  const end = Math.max(0, Math.min(count, text.length))
  const code = end > 0 ? text.charCodeAt(end - 1) : 0
  return text.slice(0, code >= 0xd800 && code <= 0xdbff ? end - 1 : end)
}

/** A text that may be cut: its tier, and its size in the row as estimated (bytes). */
interface LongText {
  readonly tier: number
  readonly size: number
}

/** a tier's level: keep its texts, cut them to a size (bytes), or to nothing but their marker */
type Level = "keep" | number | "all"

/** the largest marker (its numbers at their longest): what a cut text costs at least */
const markerBytes = cutMarker(Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER).length

/** what cutting `sizes` to `level` bytes each removes, markers counted */
const removedAt = (sizes: ReadonlyArray<number>, level: number): number => {
  let removed = 0
  for (const size of sizes) if (size > level + markerBytes) removed += size - level - markerBytes
  return removed
}

/**
 * The level of each tier that removes `excess` bytes: the first tiers cut entirely while that is
 * not enough, then one tier cut to the highest level that is, the later ones kept.
 */
const levelsFor = (texts: ReadonlyArray<LongText>, tiers: number, excess: number): Array<Level> => {
  const levels: Array<Level> = []
  let left = excess
  for (let tier = 0; tier < tiers; tier++) {
    if (left <= 0) {
      levels.push("keep")
      continue
    }
    const sizes = texts.filter((text) => text.tier === tier).map((text) => text.size)
    const all = removedAt(sizes, 0)
    if (all <= left) {
      levels.push("all")
      left -= all
      continue
    }
    let low = 0
    let high = 0
    for (const size of sizes) if (size > high) high = size
    while (low < high) {
      const middle = Math.ceil((low + high) / 2)
      if (removedAt(sizes, middle) >= left) low = middle
      else high = middle - 1
    }
    levels.push(low)
    left = 0
  }
  return levels
}

// ---- fitting a record

export interface FittedRow {
  /** the row's JSON text, within the budget */
  readonly text: Buffer
  /** what was cut, for the log: the table, the record's id, the columns, the sizes */
  readonly note: string
}

/** rows encoded to find the levels, at most, before every text is cut to its marker */
const maxTries = 3

/**
 * The characters of `record`'s long texts in the fields `cuts` may cut: a bound below the bytes
 * they take in any encoding of the row (a character is at least one byte, more when escaped). A
 * record whose long texts alone pass the budget is over it, known without encoding it whole
 * (tens of MB of JSON: hundreds of milliseconds of the event loop).
 */
export const longTextLength = (record: object, cuts: RecordCuts): number => {
  let length = 0
  for (const fields of cuts.tiers) {
    for (const { key } of fields) {
      eachString((record as Record<string, unknown>)[key], (text) => {
        if (text.length >= minCutLength) length += text.length
      })
    }
  }
  return length
}

/**
 * `record` cut down so that `encode` makes at most `maxBytes` of it (it made `bytes` of it;
 * undefined: not encoded whole, since `longTextLength` showed it over), or undefined when not
 * even placeholders for every field bring it under (its fixed fields are too large).
 *
 * The cost is a few encodings of the row at its new size: the texts' sizes are estimated from
 * their UTF-8 length, scaled by what they weigh in the encoded row (escapes, and ClickHouse's
 * JSON inside JSON), measured once by encoding the row with every long text cut to its marker.
 * When texts weigh unevenly the first try is over, and the next ones cut more.
 */
export const fitRecord = <R extends { readonly id: string }>(
  record: R,
  cuts: RecordCuts,
  encode: (record: R) => Buffer,
  measured: number | undefined,
  maxBytes: number
): FittedRow | undefined => {
  const base: Record<string, unknown> = { ...record }
  // a row cut down is not cached: its key goes, and with it how its stream was cut
  if (cuts.cacheKey) {
    base.cacheKey = undefined
    base.streamChunking = undefined
  }
  const texts: Array<LongText> = []
  let utf8Bytes = 0
  cuts.tiers.forEach((fields, tier) => {
    for (const { key } of fields) {
      eachString(base[key], (text) => {
        if (text.length < minCutLength) return
        const size = utf8Size(text)
        utf8Bytes += size
        texts.push({ tier, size })
      })
    }
  })
  const columns = new Set<string>()
  /** `base` with each tier's texts at its level; `sizes`: the texts' sizes in the units of the levels */
  const build = (levels: ReadonlyArray<Level>, sizes: ReadonlyArray<LongText> = texts): R => {
    const built = { ...base }
    let index = 0
    cuts.tiers.forEach((fields, tier) => {
      for (const { key, column } of fields) {
        built[key] = mapStrings(base[key], (text) => {
          if (text.length < minCutLength) return text
          const { size } = sizes[index++]
          const level = levels[tier]
          if (level === "keep" || (level !== "all" && size <= level + markerBytes)) return text
          columns.add(column)
          // bytes per character of this text: the level in characters, as near as its mix of characters allows
          const kept = level === "all" ? "" : prefix(text, Math.floor((level * text.length) / size))
          return kept + cutMarker(text.length - kept.length, text.length)
        })
      }
    })
    return built as unknown as R
  }
  const everyTextCut = cuts.tiers.map((): Level => "all")
  const hollow = build(everyTextCut)
  const hollowText = encode(hollow)
  // not measured: the row's bytes as its long texts' UTF-8 would make them unescaped (at least that)
  const bytes = measured ?? hollowText.length - texts.length * markerBytes + utf8Bytes
  const fitted = (text: Buffer, how: string): FittedRow => ({
    text,
    note: `a ${cuts.table} row (id ${record.id}) of ${measured === undefined ? "at least " : ""}${bytes} bytes was cut to ${text.length}, over max_row_bytes (${maxBytes}): ` +
      `${how} ${[...columns].join(", ")}${cuts.cacheKey && (record as { readonly cacheKey?: string }).cacheKey !== undefined ? "; its answer is not cached" : ""}`
  })

  if (hollowText.length <= maxBytes) {
    // what the long texts weigh in the row, per byte of their UTF-8
    const weight = utf8Bytes === 0 ? 1 : Math.max(1, (bytes - hollowText.length + texts.length * markerBytes) / utf8Bytes)
    const sized = texts.map((text) => ({ tier: text.tier, size: Math.ceil(text.size * weight) }))
    // aimed a little under the budget: an estimate that lands just over it costs another encoding of the row
    let excess = bytes - maxBytes + Math.ceil(maxBytes / 1000)
    for (let attempt = 0; attempt < maxTries; attempt++) {
      columns.clear()
      const text = encode(build(levelsFor(sized, cuts.tiers.length, excess), sized))
      if (text.length <= maxBytes) return fitted(text, "texts cut in")
      excess += text.length - maxBytes + Math.ceil(maxBytes / 100)
    }
    columns.clear()
    build(everyTextCut)
    return fitted(hollowText, "texts cut in")
  }
  // the structure alone is too large: placeholders, field by field in tier order
  const current: Record<string, unknown> = { ...hollow }
  for (const fields of cuts.tiers) {
    for (const { key, column, shape } of fields) {
      if (current[key] === undefined) continue
      current[key] = placeholder(shape, notStoredText(Buffer.byteLength(JSON.stringify(record[key as keyof R]) ?? "")))
      columns.add(column)
      const text = encode(current as unknown as R)
      if (text.length <= maxBytes) return fitted(text, "texts cut or replaced by placeholders in")
    }
  }
  return undefined
}
