/**
 * The analytics database (spec 2.10) as the write queue and the operator see it: migrations, a
 * health probe, and writes of rows encoded in the database's own wire format. One
 * implementation per backend (layers/clickhouse/database.ts, layers/postgres/database.ts).
 * Reads are one port per capability: src/inferences/store.ts, src/feedback/store.ts,
 * src/cache/store.ts. Writes are idempotent by id, so a retried batch stores each row once.
 */
import type * as Effect from "effect/Effect"
import type * as Result from "effect/Result"
import type { StoreError } from "../storeError.ts"
import type {
  FeedbackKind,
  StoredEmbeddingInference,
  StoredFeedback,
  StoredInference,
  StoredModelInference,
  WriteBatch
} from "./records.ts"

export type Backend = "clickhouse" | "postgres"

export interface ObservabilityDatabase {
  readonly backend: Backend
  /** applies pending migrations; the names of those applied */
  readonly migrate: Effect.Effect<ReadonlyArray<string>, StoreError>
  /** a cheap query, for /health */
  readonly ping: Effect.Effect<void, StoreError>
  /**
   * The rows of `batch` in the database's own wire format, made when they are queued: the
   * objects they come from can go at once, and a flush only joins texts. Fails for a value the
   * database could never take (an id that is not a UUID).
   */
  readonly encode: (batch: WriteBatch) => Result.Result<ReadonlyArray<EncodedRow>, StoreError>
  /** writes encoded rows, in as few statements as their tables allow */
  readonly write: (rows: ReadonlyArray<EncodedRow>) => Effect.Effect<void, StoreError>
}

/** One row as its database takes it: JSON text of the row, for `table`. */
export interface EncodedRow {
  readonly table: string
  readonly text: string
}

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

/** every record of `batch` as one row of JSON text for its table (a row builder may throw to refuse a value) */
export const encodeRows = (batch: WriteBatch, layout: RowLayout): Array<EncodedRow> => [
  ...batch.inferences.map((inference) => ({ table: layout.inferenceTable[inference.functionType], text: JSON.stringify(layout.inference(inference)) })),
  ...batch.modelInferences.map((call) => ({ table: layout.modelInferenceTable, text: JSON.stringify(layout.modelInference(call)) })),
  ...batch.feedback.map((feedback) => ({ table: layout.feedbackTable(feedback.kind), text: JSON.stringify(layout.feedback(feedback)) })),
  ...(batch.embeddingInferences ?? []).map((call) => ({
    table: layout.embeddingInferenceTable,
    text: JSON.stringify(layout.embeddingInference(call))
  }))
]

/** the texts of `rows` by table, in the order tables first appear */
export const textsByTable = (rows: ReadonlyArray<EncodedRow>): Map<string, Array<string>> => {
  const tables = new Map<string, Array<string>>()
  for (const row of rows) {
    const texts = tables.get(row.table)
    if (texts === undefined) tables.set(row.table, [row.text])
    else texts.push(row.text)
  }
  return tables
}
