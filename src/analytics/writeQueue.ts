/**
 * The write queue as the rest of the gateway sees it: every row the gateway stores is
 * submitted here and written off the response path (layers/writeQueue.ts). Submitting never
 * waits and never throws.
 */
import * as Context from "effect/Context"
import type { InferenceTarget } from "./records.ts"
import type { WriteBatch } from "./records.ts"

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
  /** the size of their encoded rows (bytes of JSON text in UTF-8) */
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
  /** rows over `max_row_bytes`, cut down (marked) and queued rather than dropped */
  readonly truncatedRows: number
}

/**
 * What became of a submitted unit: `queued` (it will be written), `full` (dropped: the queue
 * is at its bound, the database being down or slow), `refused` (dropped: its rows could never
 * be stored), `off` (observability is off).
 */
export type Submitted = "queued" | "full" | "refused" | "off"

export class WriteQueue extends Context.Service<WriteQueue, {
  /** false when observability is off: nothing is stored */
  readonly enabled: boolean
  /**
   * Queues rows to write. Drops and counts a unit when the queue is full, and says so:
   * feedback answers 503 rather than accept what it cannot store.
   */
  readonly submit: (unit: WriteUnit) => Submitted
  /**
   * Submits the unit `make` builds once the answer being sent is written (the check phase of
   * this turn of the event loop, before any request that could target it is read): building
   * and encoding rows stays off the response's latency.
   */
  readonly submitSoon: (make: () => WriteUnit) => void
  /**
   * Makes `inference` visible to feedback now, as if queued, for rows that are submitted later
   * (once its input files are written to object storage): the answer says "submit them".
   */
  readonly awaitInference: (inference: { readonly id: string; readonly target: InferenceTarget }) => (unit: WriteUnit) => void
  readonly stats: () => WriterStats
  /**
   * the queued rows and their bytes by table, counted from the queue when asked (for
   * `/metrics`: nothing is counted per write)
   */
  readonly queuedByTable?: () => ReadonlyMap<string, { readonly rows: number; readonly bytes: number }>
  /** an inference of `workspace` submitted but not written yet, so feedback can target it at once */
  readonly queuedInference: (workspace: string, id: string) => InferenceTarget | undefined
  /** whether an inference of `workspace` in the episode is submitted but not written yet */
  readonly queuedEpisode: (workspace: string, id: string) => boolean
}>()("gateway/WriteQueue") {
  /** the queue while observability is off: nothing is queued */
  static readonly off = WriteQueue.of({
    enabled: false,
    submit: () => "off",
    submitSoon: () => {},
    awaitInference: () => () => {},
    stats: () => ({ queued: 0, queuedBytes: 0, written: 0, dropped: 0, rejected: 0, failedAttempts: 0, truncatedRows: 0 }),
    queuedInference: () => undefined,
    queuedEpisode: () => false
  })
}
