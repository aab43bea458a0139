/**
 * The import itself: each stream of the TensorZero source, page by page in its keyset order,
 * mapped (src/tensorzeroImport/map.ts), written (destination.ts), and its position saved
 * (positions.ts), in a pipeline that holds a few pages at a time (see `importStream`). A row
 * that cannot be read or mapped is skipped and counted (with `strict`, it stops the import
 * instead). A later run starts from the saved positions, a little before them: rows written
 * near the end of the last run by TensorZero's writers may have become visible after it read
 * past their place, and the writes are idempotent, so reading those minutes again costs little
 * and loses nothing.
 */
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import { type Mapped, mappers, type MappedRecords, rowIds } from "../../src/tensorzeroImport/map.ts"
import type { StoreError } from "../../src/storeError.ts"
import { type Position, type StreamName, streamNames, type StreamRows, type TensorZeroSource } from "../../src/tensorzeroImport/source.ts"
import type { Writers, Written } from "./destination.ts"
import type { ImportPositions } from "./positions.ts"
import { makeProgress, type Output, type StreamTally } from "./progress.ts"

export class ImportFailed extends Data.TaggedError("ImportFailed")<{ readonly message: string }> {}

/** how far before its saved position a later run starts a stream */
export const rereadMs = 10 * 60_000

/** rows per page: payload-heavy streams in smaller pages */
const pageSizes: Readonly<Record<StreamName, number>> = {
  api_keys: 500,
  datapoints: 500,
  inferences: 1000,
  model_inferences: 1000,
  feedback: 2000,
  // each run reads its results back from the destination
  evaluation_runs: 20,
  workflow_evaluation_runs: 500,
  workflow_evaluation_episodes: 1000,
  batches: 20,
  // an append of DICL examples is not idempotent on every backend: never read twice (see `startOf`)
  dicl_examples: 500
}

export interface ImportOptions {
  readonly source: TensorZeroSource
  /** the source's name under which positions are saved (its URL without credentials) */
  readonly sourceName: string
  /** undefined on a dry run: rows are read and mapped, nothing is written */
  readonly writers: Writers | undefined
  readonly positions: ImportPositions | undefined
  readonly workspace: string
  readonly strict: boolean
  readonly output: Output
  /** overrides the page sizes (tests use small pages) */
  readonly pageSize?: number | undefined
}

/** where a stream starts: from its saved position, less `rereadMs` (but DICL examples) */
const startOf = (stream: StreamName, saved: Position | undefined): Position | undefined =>
  // an empty id: every row from that time on (source.ts)
  saved === undefined || stream === "dicl_examples" ? saved : { at: Math.max(0, saved.at - rereadMs), id: "" }

const importStream = <S extends StreamName>(
  stream: S,
  options: ImportOptions,
  saved: Position | undefined,
  progress: ReturnType<typeof makeProgress>
): Effect.Effect<StreamTally, ImportFailed> =>
  Effect.gen(function*() {
    const { source, writers, positions, workspace, strict } = options
    const failed = (what: string) => (error: { readonly message: string }) => new ImportFailed({ message: `${stream}: ${what}: ${error.message}` })
    const position = startOf(stream, saved)
    const estimate = yield* Effect.mapError(source.estimate(stream, position), failed("reading the source"))
    const tally = progress.start(stream, estimate)
    const map: (row: StreamRows[S], workspace: string) => Mapped<MappedRecords[S]> = mappers[stream]
    const idOf: (row: StreamRows[S]) => string = rowIds[stream]
    const read = (after: Position | undefined) =>
      Effect.mapError(source.page(stream, after, options.pageSize ?? pageSizes[stream]), failed("reading the source"))
    /** writes a page's records, then, once the page before it is stored, saves its position */
    const store = (records: ReadonlyArray<MappedRecords[S]>, last: Position, previous: Fiber.Fiber<void, ImportFailed> | undefined) =>
      Effect.gen(function*() {
        if (writers === undefined) tally.written += records.length
        else if (records.length > 0) {
          const write: (records: ReadonlyArray<MappedRecords[S]>) => Effect.Effect<Written, StoreError> = writers[stream]
          const outcome = yield* Effect.mapError(write(records), failed("writing"))
          tally.written += outcome.written
          for (const { id, skip } of outcome.refused) {
            if (strict) return yield* new ImportFailed({ message: `--strict: ${stream} row ${id}: ${skip.reason}` })
            progress.skipped(tally, id, skip)
          }
        }
        // positions are saved in page order: a page is stored only with every page before it
        if (previous !== undefined) yield* Fiber.join(previous)
        if (positions !== undefined) yield* Effect.mapError(positions.save(options.sourceName, stream, last), failed("saving the position"))
        progress.tick(tally)
      })
    // A pipeline: the next page is read while this one is mapped, and a page is written while
    // the next one is mapped and written (the destination works while this process maps), so
    // at most four pages are held: one read, one mapped, two written.
    let next = yield* Effect.forkChild(read(position))
    let storing: Fiber.Fiber<void, ImportFailed> | undefined
    /** fails the stream with `error` once the pages before are stored (with their positions) */
    const stopWith = (error: ImportFailed) => Effect.andThen(storing === undefined ? Effect.void : Fiber.join(storing), Effect.fail(error))
    const stop = (message: string) => stopWith(new ImportFailed({ message }))
    for (;;) {
      const page = yield* Effect.catch(Fiber.join(next), stopWith)
      if (page.rows.length === 0 || page.last === undefined) break
      next = yield* Effect.forkChild(read(page.last))
      const records: Array<MappedRecords[S]> = []
      for (const row of page.rows) {
        tally.read++
        if ("unreadable" in row) {
          if (strict) return yield* stop(`--strict: ${stream} row ${row.id} cannot be read: ${row.reason}`)
          progress.skipped(tally, row.id, { reason: row.reason })
          continue
        }
        const result = map(row as StreamRows[S], workspace)
        if ("record" in result) records.push(result.record)
        else {
          const id = idOf(row as StreamRows[S])
          if (strict) {
            return yield* stop(`--strict: ${stream} row ${id}: ${result.skip.reason}${result.skip.detail === undefined ? "" : ` (${result.skip.detail})`}`)
          }
          progress.skipped(tally, id, result.skip)
        }
      }
      const previous = storing
      storing = yield* Effect.forkChild(store(records, page.last, previous))
      if (previous !== undefined) yield* Fiber.join(previous)
    }
    if (storing !== undefined) yield* Fiber.join(storing)
    progress.done(tally)
    return tally
  })

/** every stream the source holds, in order; the tally of each */
export const runImport = (options: ImportOptions): Effect.Effect<ReadonlyArray<StreamTally>, ImportFailed> =>
  Effect.gen(function*() {
    const progress = makeProgress(options.output)
    const saved = options.positions === undefined
      ? new Map<StreamName, Position>()
      : yield* Effect.mapError(options.positions.load(options.sourceName), (error) => new ImportFailed({ message: `reading the import positions: ${error.message}` }))
    const tallies: Array<StreamTally> = []
    for (const stream of streamNames) {
      if (!options.source.streams.includes(stream)) continue
      tallies.push(yield* importStream(stream, options, saved.get(stream), progress))
    }
    return tallies
  })
