/**
 * The write queue: every row the gateway stores goes through it, off the response path.
 * `submit` only appends to an in-memory queue; a background fiber flushes it in batches
 * (when `maxRows` are waiting, or every `flushIntervalMs`), and retries a failed batch with
 * backoff for as long as the database is down. The queue is bounded: past `maxQueued` units,
 * new ones are dropped and counted (and logged), so a long outage cannot exhaust memory.
 * When the scope closes (SIGTERM), what is queued is flushed before the process exits.
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import type * as Scope from "effect/Scope"
import { emptyBatch, type WriteBatch } from "../../src/observability/records.ts"
import type { InferenceTarget, Store, WriteUnit, WriterStats } from "../../src/observability/store.ts"

export interface WriterOptions {
  readonly maxRows: number
  readonly flushIntervalMs: number
  readonly maxQueued: number
  /** how long the final flush may take on shutdown */
  readonly shutdownTimeoutMs: number
}

export const defaultWriterOptions: WriterOptions = {
  maxRows: 1000,
  flushIntervalMs: 100,
  maxQueued: 100_000,
  shutdownTimeoutMs: 10_000
}

export interface Writer {
  readonly submit: (unit: WriteUnit) => void
  readonly stats: () => WriterStats
  readonly queuedInference: (id: string) => InferenceTarget | undefined
  readonly queuedEpisode: (id: string) => boolean
}

const merge = (units: ReadonlyArray<WriteUnit>): WriteBatch => {
  const batch = emptyBatch()
  for (const unit of units) {
    const rows = unit.rows()
    batch.inferences.push(...rows.inferences)
    batch.modelInferences.push(...rows.modelInferences)
    batch.feedback.push(...rows.feedback)
    batch.cache.push(...rows.cache)
  }
  return batch
}

const maxBackoffMs = 5_000

export const makeWriter = (store: Store, options: WriterOptions): Effect.Effect<Writer, never, Scope.Scope> =>
  Effect.gen(function*() {
    const queue: Array<WriteUnit> = []
    const queuedInferences = new Map<string, InferenceTarget>()
    const queuedEpisodes = new Map<string, number>()
    let written = 0
    let dropped = 0
    let droppedReported = 0
    let failedAttempts = 0
    let rejected = 0
    let wake: (() => void) | undefined

    const forget = (units: ReadonlyArray<WriteUnit>) => {
      for (const unit of units) {
        if (unit.inference === undefined) continue
        queuedInferences.delete(unit.inference.id)
        const episode = unit.inference.target.episodeId
        const count = queuedEpisodes.get(episode) ?? 0
        if (count <= 1) queuedEpisodes.delete(episode)
        else queuedEpisodes.set(episode, count - 1)
      }
    }

    const submit = (unit: WriteUnit): void => {
      if (queue.length >= options.maxQueued) {
        dropped++
        return
      }
      queue.push(unit)
      if (unit.inference !== undefined) {
        queuedInferences.set(unit.inference.id, unit.inference.target)
        const episode = unit.inference.target.episodeId
        queuedEpisodes.set(episode, (queuedEpisodes.get(episode) ?? 0) + 1)
      }
      if (queue.length === options.maxRows) wake?.()
    }

    /** sleeps for `ms`, or until the queue holds a full batch */
    const nap = (ms: number) =>
      Effect.callback<void>((resume) => {
        const timer = setTimeout(() => resume(Effect.void), ms)
        wake = () => {
          wake = undefined
          clearTimeout(timer)
          resume(Effect.void)
        }
        return Effect.sync(() => {
          clearTimeout(timer)
          wake = undefined
        })
      })

    const reportDrops = Effect.suspend(() => {
      if (dropped === droppedReported) return Effect.void
      const count = dropped - droppedReported
      droppedReported = dropped
      return Effect.logWarning(`observability queue full (${options.maxQueued} units): dropped ${count} writes (${dropped} in all)`)
    })

    /**
     * Writes units one at a time, once each: for a batch the database refuses while it
     * answers, so that one bad row cannot hold up every write behind it. Refused units are
     * counted and logged with the database's reason.
     */
    const writeSeparately = (units: ReadonlyArray<WriteUnit>) =>
      Effect.forEach(units, (unit) =>
        Effect.catch(store.write(merge([unit])), (error) =>
          Effect.sync(() => rejected++).pipe(
            Effect.andThen(Effect.logError(`observability: the database refused a write, which is dropped: ${error.message}`))
          )), { discard: true })

    /** writes the oldest batch, retrying until it is stored; the units leave the queue only then */
    const flushOnce = Effect.gen(function*() {
      const units = queue.slice(0, options.maxRows)
      if (units.length === 0) return
      const batch = merge(units)
      for (let attempt = 0;; attempt++) {
        const result = yield* Effect.result(store.write(batch))
        if (result._tag === "Success") break
        failedAttempts++
        // failing again and again while the database answers: the batch itself is the problem
        if (attempt >= 2 && (yield* Effect.result(store.ping))._tag === "Success") {
          yield* writeSeparately(units)
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
      forget(units)
      written += units.length
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
      queuedInference: (id) => queuedInferences.get(id),
      queuedEpisode: (id) => queuedEpisodes.has(id)
    }
  })
