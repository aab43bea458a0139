/**
 * The analytics database (spec 2.10) as the write queue and the operator see it: migrations, a
 * health probe, and writes of rows encoded in the database's own wire format. One
 * implementation per backend (layers/clickhouse/database.ts, layers/postgres/database.ts).
 * Reads are one port per capability: src/storedInferences/store.ts, src/feedback/store.ts,
 * src/cache/store.ts. Writes are idempotent by id, so a retried batch stores each row once.
 */
import { Buffer } from "node:buffer"
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import type * as Result from "effect/Result"
import type { StoreError } from "../storeError.ts"
import type { AnalyticsPort, AnalyticsStore } from "./stores.ts"
import type {
  FeedbackKind,
  StoredEmbeddingInference,
  StoredFeedback,
  StoredInference,
  StoredModelInference,
  WriteBatch
} from "./records.ts"
import { embeddingInferenceCuts, feedbackCuts, fitRecord, inferenceCuts, longTextLength, modelInferenceCuts, type RecordCuts } from "./rowBudget.ts"

export interface ObservabilityDatabase extends AnalyticsStore {
  /** applies pending migrations; the names of those applied */
  readonly migrate: Effect.Effect<ReadonlyArray<string>, StoreError>
  /** a cheap query, for /health */
  readonly ping: Effect.Effect<void, StoreError>
  /**
   * The rows of `batch` in the database's own wire format, made when they are queued: the
   * objects they come from can go at once, and a flush only joins texts. A row over
   * `maxRowBytes` is cut down (`EncodedRow.cut` says how). Fails for a value the database could
   * never take (an id that is not a UUID).
   */
  readonly encode: (batch: WriteBatch) => Result.Result<ReadonlyArray<EncodedRow>, StoreError>
  /** writes encoded rows, in as few statements as their tables allow */
  readonly write: (rows: ReadonlyArray<EncodedRow>) => Effect.Effect<void, StoreError>
  /**
   * why writes are refused now without being tried, undefined while they are tried (an
   * embedded database pauses them when its disk is nearly full): the final flush on shutdown
   * does not wait for what cannot come
   */
  readonly writesPaused?: (() => string | undefined) | undefined
}

/** The analytics database itself (migrations, health, writes), absent while observability is off. */
export class AnalyticsDatabaseService extends Context.Service<AnalyticsDatabaseService, AnalyticsPort<ObservabilityDatabase>>()("gateway/AnalyticsDatabase") {}

/**
 * One row as its database takes it: the JSON text of the row, for `table`, UTF-8 encoded. Rows
 * wait in the queue for up to a flush interval: as bytes outside V8's heap, the garbage
 * collector neither copies them from the young generation into the old one nor marks them
 * there (as strings, that copying and marking cost the gateway more than building them), and
 * the drivers send them as they are.
 */
export interface EncodedRow {
  readonly table: string
  readonly text: Buffer
  /** set when the row was over `max_row_bytes` and cut down: what was cut, for the log */
  readonly cut?: string | undefined
}

/** `row` as JSON text in UTF-8 (JSON.stringify escapes lone surrogates, so nothing is lost) */
const utf8Json = (row: object): Buffer => Buffer.from(JSON.stringify(row))

/** How a database lays records out: the table of each kind of record, and its row (JSON-serializable). */
export interface RowLayout {
  readonly inferenceTable: Readonly<Record<StoredInference["functionType"], string>>
  readonly modelInferenceTable: string
  readonly feedbackTable: (kind: FeedbackKind) => string
  readonly inference: (inference: StoredInference) => object
  readonly modelInference: (call: StoredModelInference) => object
  readonly feedback: (feedback: StoredFeedback) => object
  readonly embeddingInferenceTable: string
  readonly embeddingInference: (call: StoredEmbeddingInference) => object
}

/**
 * `record` as a row of JSON text for `table`, cut down when over `maxRowBytes`
 * (src/analytics/rowBudget.ts); throws when even that cannot bring it under.
 */
const encodeRow = <R extends { readonly id: string }>(
  table: string,
  record: R,
  toRow: (record: R) => object,
  cuts: (record: R) => RecordCuts,
  maxRowBytes: number
): EncodedRow => {
  const recordCuts = cuts(record)
  const fit = (measured: number | undefined): EncodedRow => {
    const fitted = fitRecord(record, recordCuts, (candidate) => utf8Json(toRow(candidate)), measured, maxRowBytes)
    if (fitted === undefined) throw new Error(`a ${table} row (id ${record.id}) cannot be cut under max_row_bytes (${maxRowBytes})`)
    return { table, text: fitted.text, cut: fitted.note }
  }
  // over the budget whatever its encoding: cut without encoding it whole first
  if (longTextLength(record, recordCuts) > maxRowBytes) return fit(undefined)
  const text = utf8Json(toRow(record))
  return text.length <= maxRowBytes ? { table, text } : fit(text.length)
}

/**
 * every record of `batch` as one row of JSON text for its table, none over `maxRowBytes` (a row
 * builder may throw to refuse a value)
 */
export const encodeRows = (batch: WriteBatch, layout: RowLayout, maxRowBytes: number): Array<EncodedRow> => {
  const rows: Array<EncodedRow> = []
  for (const inference of batch.inferences) {
    rows.push(encodeRow(layout.inferenceTable[inference.functionType], inference, layout.inference, inferenceCuts, maxRowBytes))
  }
  for (const call of batch.modelInferences) rows.push(encodeRow(layout.modelInferenceTable, call, layout.modelInference, () => modelInferenceCuts, maxRowBytes))
  for (const feedback of batch.feedback) rows.push(encodeRow(layout.feedbackTable(feedback.kind), feedback, layout.feedback, feedbackCuts, maxRowBytes))
  for (const call of batch.embeddingInferences ?? []) {
    rows.push(encodeRow(layout.embeddingInferenceTable, call, layout.embeddingInference, () => embeddingInferenceCuts, maxRowBytes))
  }
  return rows
}

/** the texts of `rows` by table, in the order tables first appear */
export const textsByTable = (rows: ReadonlyArray<EncodedRow>): Map<string, Array<Buffer>> => {
  const tables = new Map<string, Array<Buffer>>()
  for (const row of rows) {
    const texts = tables.get(row.table)
    if (texts === undefined) tables.set(row.table, [row.text])
    else texts.push(row.text)
  }
  return tables
}

/**
 * `texts` joined into one buffer: `open`, the texts with `separator` between them, `close`.
 * Throws (RangeError) past the largest buffer Node can allocate.
 */
export const joinTexts = (texts: ReadonlyArray<Buffer>, separator: string, open = "", close = ""): Buffer => {
  let length = open.length + close.length + Math.max(0, texts.length - 1) * separator.length
  for (const text of texts) length += text.length
  const joined = Buffer.allocUnsafe(length)
  let offset = joined.write(open, 0, "latin1")
  for (let index = 0; index < texts.length; index++) {
    if (index > 0) offset += joined.write(separator, offset, "latin1")
    offset += texts[index].copy(joined, offset)
  }
  joined.write(close, offset, "latin1")
  return joined
}

/** `texts` as JSON arrays of at most `maxBytes` each (but one text at least): bounded inserts of many rows */
export const jsonArrays = (texts: ReadonlyArray<Buffer>, maxBytes: number): Array<Buffer> => {
  const arrays: Array<Buffer> = []
  let chunk: Array<Buffer> = []
  let bytes = 0
  for (const text of texts) {
    if (chunk.length > 0 && bytes + text.length > maxBytes) {
      arrays.push(joinTexts(chunk, ",", "[", "]"))
      chunk = []
      bytes = 0
    }
    chunk.push(text)
    bytes += text.length + 1
  }
  if (chunk.length > 0) arrays.push(joinTexts(chunk, ",", "[", "]"))
  return arrays
}
