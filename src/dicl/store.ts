/**
 * The storage port of dynamic in-context learning examples, in the analytics database: the
 * examples of each (function, variant), and the k nearest to an embedding by cosine distance.
 * Implemented by layers/clickhouse/dicl.ts and layers/postgres/dicl.ts, both checked by the same
 * conformance suite (test/integration/store-dicl.test.ts).
 *
 * Examples are written in generations. A write gets an id (a write version, growing with time),
 * its examples are staged under that id a slice at a time, and nothing of it is read until it is
 * committed. Readers see the committed writes of the variant from its latest committed replace
 * on: a replace never leaves the variant without examples mid-way, and one that fails (or whose
 * task is cancelled) leaves the previous examples as they were. A replace also hides the writes
 * that began before it, committed later or not: their rows are deleted once it commits.
 *
 * Examples belong to a workspace (src/workspace.ts): each workspace has its own generations of
 * a variant's examples, read, counted and replaced apart from the others'.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import type { StoreError } from "../storeError.ts"
import type { ChatOutputBlock, JsonOutput } from "../inference/output.ts"
import type { AnalyticsPort, AnalyticsStore } from "../analytics/stores.ts"

/** A chat example's output: blocks as an inference or a datapoint holds them (text, tool calls; others are ignored). */
export type DiclChatOutput = ReadonlyArray<ChatOutputBlock | Readonly<Record<string, unknown>>>

/** A json example's output: the JSON text and its value. */
export type DiclJsonOutput = JsonOutput

export type DiclOutput = DiclChatOutput | DiclJsonOutput

/** One stored example of a function's variant. */
export interface DiclExample {
  /** UUIDv7 */
  readonly id: string
  readonly functionName: string
  readonly variantName: string
  /** the input (spec 2.2) as the gateway stores it */
  readonly input: unknown
  readonly output: DiclOutput
  /** the embedding of `diclInputText(input)` */
  readonly embedding: ReadonlyArray<number>
  /** the embedding model that made it, as configured or given (a name or a short-hand) */
  readonly embeddingModel: string
  /** epoch milliseconds */
  readonly createdAt: number
}

/** An example as `nearest` finds it: its cosine distance to the query (1 - cosine similarity, 0 to 2). */
export interface DiclNeighbor {
  readonly input: unknown
  readonly output: DiclOutput
  readonly distance: number
}

/** How `nearest` ranks: pgvector's `<=>`, cosine distance computed in SQL on float arrays (Postgres without pgvector), or ClickHouse array functions. */
export type VectorSearch = "pgvector" | "float_array" | "clickhouse"

export type DiclWriteMode = "append" | "replace"

/** A write begun: examples staged under it are read once it is committed. */
export interface DiclWrite {
  /** a write version (layers/writeVersions.ts): later writes get higher ids */
  readonly id: number
  /** the workspace whose examples it writes (and, a replace, the only one whose examples it deletes) */
  readonly workspace: string
  readonly functionName: string
  readonly variantName: string
  readonly mode: DiclWriteMode
}

export interface NearestQuery {
  readonly functionName: string
  readonly variantName: string
  readonly embedding: ReadonlyArray<number>
  readonly k: number
  /** examples farther than this are left out */
  readonly maxDistance?: number | undefined
}

export interface DiclExampleStore extends AnalyticsStore {
  /** how `nearest` ranks here (Postgres reads it from its table once) */
  readonly vectorSearch: Effect.Effect<VectorSearch, StoreError>
  /** begins a write of `workspace`'s examples of the variant: each workspace has its own examples of a shared variant */
  readonly begin: (workspace: string, functionName: string, variantName: string, mode: DiclWriteMode) => Effect.Effect<DiclWrite>
  /**
   * Stores examples under `write`, unread until it is committed. Each must be of the write's
   * function and variant, with an embedding that has a direction (`embeddingProblem`); a
   * refused one stores nothing of the call. Staging the same examples again stores them once.
   */
  readonly stage: (write: DiclWrite, examples: ReadonlyArray<DiclExample>) => Effect.Effect<void, StoreError>
  /** makes the write's examples read (a replace: only from it on) */
  readonly commit: (write: DiclWrite) => Effect.Effect<void, StoreError>
  /** begins, stages and commits `examples` */
  readonly write: (workspace: string, functionName: string, variantName: string, examples: ReadonlyArray<DiclExample>, mode: DiclWriteMode) => Effect.Effect<void, StoreError>
  /**
   * The `k` examples of `workspace` read for the variant nearest to `embedding` by cosine distance, nearest
   * first (ties by example id); only those whose embedding has as many dimensions (another
   * embedding model's are not comparable). None when `embedding` has no direction.
   */
  readonly nearest: (workspace: string, query: NearestQuery) => Effect.Effect<ReadonlyArray<DiclNeighbor>, StoreError>
  /** how many examples of `workspace` are read for the variant */
  readonly count: (workspace: string, functionName: string, variantName: string) => Effect.Effect<number, StoreError>
}

/** The DiclExampleStore of the analytics database, absent while observability is off (provided by layers/observability/). */
export class DiclExampleStoreService extends Context.Service<DiclExampleStoreService, AnalyticsPort<DiclExampleStore>>()("gateway/DiclExampleStore") {}

/** `write` made of `begin`, `stage` and `commit` */
export const withWrite = (store: Omit<DiclExampleStore, "write">): DiclExampleStore => ({
  ...store,
  write: (workspace, functionName, variantName, examples, mode) =>
    Effect.flatMap(store.begin(workspace, functionName, variantName, mode), (write) =>
      Effect.andThen(store.stage(write, examples), store.commit(write)))
})

/**
 * Distances as the databases compute them (a rounding may fall just outside [0, 2]) brought
 * into range, and those past `maxDistance` left out. Rows come nearest first, so filtering the
 * first k equals taking the first k of those within `maxDistance`.
 */
export const neighborsWithin = (rows: ReadonlyArray<DiclNeighbor>, maxDistance: number | undefined): Array<DiclNeighbor> =>
  rows
    .map((row) => ({ ...row, distance: Math.min(2, Math.max(0, row.distance)) }))
    .filter((row) => maxDistance === undefined || row.distance <= maxDistance)

/** `k` as a row count: whole, at least 0 (NaN is 0) */
export const wholeK = (k: number): number => (Number.isFinite(k) ? Math.max(0, Math.floor(k)) : k === Infinity ? Number.MAX_SAFE_INTEGER : 0)
