/**
 * The write queue: every row the gateway stores goes through it, off the response path.
 * `submit` encodes a unit's rows into the database's wire format (so the objects they come
 * from can be collected young) and appends them to an in-memory queue; a background fiber
 * flushes it in batches (when `maxRows` are waiting, or every `flushIntervalMs`), and retries a
 * failed batch with backoff for as long as the database is down. The queue is bounded: past
 * `maxQueued` units, new ones are dropped and counted (and logged), so a long outage cannot
 * exhaust memory. When the scope closes (SIGTERM), what is queued is flushed before the process
 * exits.
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Result from "effect/Result"
import type * as Scope from "effect/Scope"
import type { EncodedRow, InferenceTarget, Store, WriteUnit, WriterStats } from "../../src/observability/store.ts"
import { makeNap } from "../nap.ts"

export interface WriterOptions {
  readonly maxRows: number
  readonly flushIntervalMs: number
  readonly maxQueued: number
  /** how long the final flush may take on shutdown */
  readonly shutdownTimeoutMs: number
}

export interface Writer {
  readonly submit: (unit: WriteUnit) => void
  readonly stats: () => WriterStats
  readonly queuedInference: (id: string) => InferenceTarget | undefined
  readonly queuedEpisode: (id: string) => boolean
}

/** A unit as queued: its rows encoded, and the inference feedback may look for. */
interface QueuedUnit {
  readonly inference: WriteUnit["inference"]
  readonly rows: ReadonlyArray<EncodedRow>
}

const rowsOf = (units: ReadonlyArray<QueuedUnit>): Array<EncodedRow> => units.flatMap((unit) => unit.rows)

const maxBackoffMs = 5_000

export const makeWriter = (store: Store, options: WriterOptions): Effect.Effect<Writer, never, Scope.Scope> =>
  Effect.gen(function*() {
    const queue: Array<QueuedUnit> = []
    let written = 0
    let dropped = 0
    let droppedReported = 0
    let failedAttempts = 0
    let rejected = 0
    /** why units were refused when queued, logged by the flusher (submit cannot log) */
    const refusals: Array<string> = []
    // the flusher's sleep, cut short when the queue holds a full batch
    const { nap, wake } = makeNap()

    const submit = (unit: WriteUnit): void => {
      if (queue.length >= options.maxQueued) {
        dropped++
        return
      }
      const rows = store.encode(unit.batch)
      if (Result.isFailure(rows)) {
        rejected++
        if (refusals.length < 10) refusals.push(rows.failure.message)
        return
      }
      queue.push({ inference: unit.inference, rows: rows.success })
      if (queue.length === options.maxRows) wake()
    }

    // Feedback looks up queued inferences rarely, inferences are queued all the time: a scan of
    // the queue costs the rare lookup, where an index would cost every inference.
    const queuedInference = (id: string): InferenceTarget | undefined =>
      queue.find((unit) => unit.inference?.id === id)?.inference?.target
    const queuedEpisode = (id: string): boolean => queue.some((unit) => unit.inference?.target.episodeId === id)

    const reportDrops = Effect.suspend(() => {
      const refused = refusals.splice(0).map((reason) =>
        Effect.logError(`observability: a write was refused before it was queued, and is dropped: ${reason}`)
      )
      if (dropped === droppedReported) return Effect.all(refused, { discard: true })
      const count = dropped - droppedReported
      droppedReported = dropped
      return Effect.all([
        ...refused,
        Effect.logWarning(`observability queue full (${options.maxQueued} units): dropped ${count} writes (${dropped} in all)`)
      ], { discard: true })
    })

    /**
     * Writes units one at a time, once each: for a batch the database refuses while it
     * answers, so that one bad row cannot hold up every write behind it. Refused units are
     * counted and logged with the database's reason; the result is how many were written.
     */
    const writeSeparately = (units: ReadonlyArray<QueuedUnit>) =>
      Effect.map(
        Effect.forEach(units, (unit) =>
          store.write(unit.rows).pipe(
            Effect.as(true),
            Effect.catch((error) =>
              Effect.sync(() => rejected++).pipe(
                Effect.andThen(Effect.logError(`observability: the database refused a write, which is dropped: ${error.message}`)),
                Effect.as(false)
              )
            )
          )),
        (stored) => stored.filter(Boolean).length
      )

    /** writes the oldest batch, retrying until it is stored; the units leave the queue only then */
    const flushOnce = Effect.gen(function*() {
      const units = queue.slice(0, options.maxRows)
      if (units.length === 0) return
      const rows = rowsOf(units)
      let stored = units.length
      for (let attempt = 0;; attempt++) {
        const result = yield* Effect.result(store.write(rows))
        if (result._tag === "Success") break
        failedAttempts++
        // failing again and again while the database answers: the batch itself is the problem
        if (attempt >= 2 && (yield* Effect.result(store.ping))._tag === "Success") {
          stored = yield* writeSeparately(units)
          break
        }
        const delay = Math.min(maxBackoffMs, 100 * 2 ** attempt)
        if (attempt === 0 || attempt % 10 === 0) {
          yield* Effect.logWarning(
            `observability write failed (${queue.length} units queued), retrying in ${delay} ms: ${result.failure.message}`
          )
        }
        yield* reportDrops
        yield* Effect.sleep(Duration.millis(delay))
      }
      queue.splice(0, units.length)
      written += stored
    })

    const loop = Effect.forever(Effect.gen(function*() {
      if (queue.length < options.maxRows) yield* nap(options.flushIntervalMs)
      yield* reportDrops
      yield* flushOnce
    }))

    const flusher = yield* Effect.forkScoped(loop)

    // on shutdown: stop the loop (a batch it was writing stays queued), then flush what is left
    yield* Effect.addFinalizer(() =>
      Effect.gen(function*() {
        yield* Fiber.interrupt(flusher)
        if (queue.length === 0) return
        const pending = queue.length
        const drained = yield* Effect.timeoutOption(
          Effect.gen(function*() {
            while (queue.length > 0) yield* flushOnce
          }),
          Duration.millis(options.shutdownTimeoutMs)
        )
        if (drained._tag === "Some") yield* Effect.logInfo(`observability: wrote ${pending} queued units before stopping`)
        else yield* Effect.logError(`observability: could not write ${queue.length} queued units before stopping`)
        yield* reportDrops
      })
    )

    return {
      submit,
      stats: () => ({ queued: queue.length, written, dropped, rejected, failedAttempts }),
      queuedInference,
      queuedEpisode
    }
  })
