/**
 * The storage service the core needs (spec 2.10, 4.3): one interface, implemented by a
 * ClickHouse layer and a Postgres layer (`layers/observability/`), both checked by the same
 * conformance suite. Writes are idempotent by id, so a retried batch stores each row once.
 */
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import type * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import type { CacheEntry, FeedbackKind, StoredFeedback, StoredInference, StoredModelInference, WriteBatch } from "./records.ts"

export class StoreError extends Schema.TaggedError<StoreError>()("StoreError", {
  message: Schema.String,
  /** the database's own code for the failure (a SQLSTATE, a ClickHouse error code), when it gave one */
  code: Schema.optional(Schema.String),
  /**
   * A write failed because of the rows themselves (the database refuses a value, or the batch
   * is too large to send): trying the same rows again cannot succeed. Any other failed write
   * (the database down, full, read-only, overloaded, timing out) may succeed later.
   */
  rowsAtFault: Schema.optional(Schema.Boolean)
}) {}

export type Backend = "clickhouse" | "postgres"

/** `InferenceFilter` of the API, with times parsed to epoch milliseconds. */
export type StoreFilter =
  | { readonly type: "tag"; readonly key: string; readonly value: string; readonly comparison_operator: "=" | "!=" }
  | { readonly type: "time"; readonly time: number; readonly comparison_operator: "<" | "<=" | ">" | ">=" }
  | { readonly type: "and" | "or"; readonly children: ReadonlyArray<StoreFilter> }
  | { readonly type: "not"; readonly child: StoreFilter }

export interface InferenceQuery {
  readonly functionName?: string | undefined
  readonly variantName?: string | undefined
  readonly episodeId?: string | undefined
  readonly filter?: StoreFilter | undefined
  readonly limit: number
  readonly offset: number
}

/** What feedback needs to know about the inference it targets. */
export interface InferenceTarget {
  readonly functionName: string
  readonly functionType: "chat" | "json"
  readonly episodeId: string
  readonly outputSchema?: unknown
}

export interface Store {
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
  readonly getInferences: (ids: ReadonlyArray<string>) => Effect.Effect<ReadonlyArray<StoredInference>, StoreError>
  /** newest first */
  readonly listInferences: (query: InferenceQuery) => Effect.Effect<ReadonlyArray<StoredInference>, StoreError>
  readonly getModelInferences: (inferenceIds: ReadonlyArray<string>) => Effect.Effect<ReadonlyArray<StoredModelInference>, StoreError>
  /** feedback whose target is one of `targetIds` (inference or episode ids) */
  readonly getFeedback: (targetIds: ReadonlyArray<string>) => Effect.Effect<ReadonlyArray<StoredFeedback>, StoreError>
  readonly findInference: (id: string) => Effect.Effect<InferenceTarget | undefined, StoreError>
  readonly episodeExists: (id: string) => Effect.Effect<boolean, StoreError>
  /** the newest entry for `key`, when younger than `maxAgeS` seconds (any age when undefined) */
  readonly cacheLookup: (key: string, maxAgeS: number | undefined) => Effect.Effect<CacheEntry | undefined, StoreError>
}

/** One row as its store sends it: JSON text of the row, for `table`. */
export interface EncodedRow {
  readonly table: string
  readonly text: string
}

/** How a store lays records out: the table of each kind of record, and its row (JSON-serializable). */
export interface RowLayout {
  readonly inferenceTable: Readonly<Record<StoredInference["functionType"], string>>
  readonly modelInferenceTable: string
  readonly feedbackTable: (kind: FeedbackKind) => string
  readonly inference: (inference: StoredInference) => object
  readonly modelInference: (call: StoredModelInference) => object
  readonly feedback: (feedback: StoredFeedback) => object
}

/** every record of `batch` as one row of JSON text for its table (a row builder may throw to refuse a value) */
export const encodeRows = (batch: WriteBatch, layout: RowLayout): Array<EncodedRow> => [
  ...batch.inferences.map((inference) => ({ table: layout.inferenceTable[inference.functionType], text: JSON.stringify(layout.inference(inference)) })),
  ...batch.modelInferences.map((call) => ({ table: layout.modelInferenceTable, text: JSON.stringify(layout.modelInference(call)) })),
  ...batch.feedback.map((feedback) => ({ table: layout.feedbackTable(feedback.kind), text: JSON.stringify(layout.feedback(feedback)) }))
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

/**
 * What the gateway submits for storage: rows that belong together. The inference it carries,
 * if any, is visible to feedback from the moment it is queued.
 */
export interface WriteUnit {
  readonly inference?: { readonly id: string; readonly target: InferenceTarget } | undefined
  readonly batch: WriteBatch
}

export interface WriterStats {
  /** units waiting to be written, including a batch being retried */
  readonly queued: number
  /** the size of their encoded rows (characters of JSON text: bytes for ASCII) */
  readonly queuedBytes: number
  /** units stored */
  readonly written: number
  /** units refused because the queue was full (`max_queued_writes` units or `max_queued_bytes`) */
  readonly dropped: number
  /**
   * units dropped for their own rows: refused when queued (a value the database could never
   * take), or refused by the database on their own (bad data) or failing with a defect
   */
  readonly rejected: number
  /** failed tries of a batch that is retried (the database down, full, read-only...) */
  readonly failedAttempts: number
}

/**
 * What became of a submitted unit: `queued` (it will be written), `full` (dropped: the queue
 * is at its bound, the database being down or slow), `refused` (dropped: its rows could never
 * be stored), `off` (observability is off).
 */
export type Submitted = "queued" | "full" | "refused" | "off"

/**
 * Observability as the rest of the gateway sees it. `store` is undefined when
 * `GATEWAY_ANALYTICS_DB_URL` is unset: nothing is stored, and reads answer 503.
 */
export class Observability extends Context.Service<Observability, {
  readonly store: Store | undefined
  /**
   * Queues rows to write; never waits, never throws. Drops and counts a unit when the queue is
   * full, and says so: feedback answers 503 rather than accept what it cannot store.
   */
  readonly submit: (unit: WriteUnit) => Submitted
  readonly stats: () => WriterStats
  /** an inference submitted but not written yet, so feedback can target it at once */
  readonly queuedInference: (id: string) => InferenceTarget | undefined
  readonly queuedEpisode: (id: string) => boolean
}>()("gateway/Observability") {}

export const analyticsUrlVariable = "GATEWAY_ANALYTICS_DB_URL"

export const backendOf = (url: string): Backend | undefined =>
  /^https?:\/\//i.test(url) ? "clickhouse" : /^postgres(ql)?:\/\//i.test(url) ? "postgres" : undefined
