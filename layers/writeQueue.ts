/**
 * The write queue: every row the gateway stores goes through it, off the response path.
 * `submit` encodes a unit's rows into the database's wire format (so the objects they come
 * from can be collected young) and appends them to an in-memory queue; a background fiber
 * flushes it in batches (when `maxRows` units or `maxBatchBytes` wait, or every
 * `flushIntervalMs`).
 *
 * - Bounded: past `maxQueued` units or `maxQueuedBytes` of encoded rows, new units are dropped
 *   and counted (and logged), so a long outage cannot exhaust memory. `submit` says so, for
 *   feedback to refuse what it cannot store.
 * - Batches are bounded in bytes as well as in units (a unit larger than `maxBatchBytes` goes
 *   alone), so joining a batch's texts stays far below the largest buffer Node allocates.
 * - A failed batch (or one not answered within `writeTimeoutMs`: a connection that hangs) is
 *   retried with backoff (`retryBackoff`) for as long as it takes, unless the database
 *   refuses the rows themselves (`StoreError.rowsAtFault`, per backend in
 *   src/analytics/writeFaults.ts) or the write dies (a defect): then the batch is split in
 *   halves until the units at fault are alone, and only they are dropped (`rejected`).
 * - A row over `max_row_bytes` comes encoded cut down (src/analytics/rowBudget.ts): it is
 *   counted (`truncatedRows`) and logged with what was cut, and queued like any other.
 * - The flusher never stops: whatever escapes a flush is logged and the loop goes on.
 * - When the scope closes (SIGTERM), what is queued is flushed before the process exits (not
 *   waited for while the database pauses writes: the units left are counted in the log).
 * - Durable (`log`, layers/durableQueue/log.ts): a unit enters the log when it is queued, before
 *   its answer leaves (`submitSoon` then submits at once), and leaves it once written; a unit
 *   the log cannot take (past its bound) is dropped as if the queue were full. A background
 *   fiber writes the units left in the logs of dead processes (at start, then every
 *   `replayIntervalMs`).
 */
import * as Cause from "effect/Cause"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Result from "effect/Result"
import * as Schedule from "effect/Schedule"
import type * as Scope from "effect/Scope"
import type { InferenceTarget } from "../src/analytics/records.ts"
import type { EncodedRow, ObservabilityDatabase } from "../src/analytics/database.ts"
import type { Submitted, WriteQueue, WriteUnit } from "../src/analytics/writeQueue.ts"
import { StoreError } from "../src/storeError.ts"
import { type QueueLog, rowBytes, takeOrphanLog } from "./durableQueue/log.ts"
import { makeNap } from "./nap.ts"

export interface WriterOptions {
  /** units in a batch, at most */
  readonly maxRows: number
  /** encoded bytes in a batch, at most (a larger unit is written alone) */
  readonly maxBatchBytes: number
  readonly flushIntervalMs: number
  /** units queued, at most */
  readonly maxQueued: number
  /** encoded bytes queued, at most */
  readonly maxQueuedBytes: number
  /** how long the final flush may take on shutdown */
  readonly shutdownTimeoutMs: number
  /** a write not answered by then is abandoned and tried again (a connection that hangs) */
  readonly writeTimeoutMs: number
  /** the queue's durable log, opened (and closed) by the caller; undefined: the queue lives in memory only */
  readonly log?: { readonly log: QueueLog; readonly folder: string; readonly replayIntervalMs: number } | undefined
}

/** A unit as queued: its rows encoded and their size, and the inference feedback may look for. */
interface QueuedUnit {
  readonly inference: WriteUnit["inference"]
  readonly rows: ReadonlyArray<EncodedRow>
  /** bytes of the rows' texts (UTF-8) */
  readonly bytes: number
  /** its number in the durable log, when it is there */
  readonly sequence?: number | undefined
}

/** What a batch's write came to: how many units were stored, and how many dropped for their own rows. */
interface Flushed {
  readonly stored: number
  readonly rejected: number
}

const rowsOf = (units: ReadonlyArray<QueuedUnit>): Array<EncodedRow> => units.flatMap((unit) => unit.rows)

/** the pause before the next try of a batch the database could not take: 100 ms, doubled each time, 5 s at most */
const retryBackoff = Schedule.exponential(Duration.millis(100)).pipe(
  Schedule.modifyDelay(({ duration }) => Effect.succeed(Duration.min(duration, Duration.seconds(5))))
)
/** the pause after something escaped a flush, so that a fault that repeats cannot spin */
const recoveryPauseMs = 1_000

const messageOf = (error: unknown): string => (error instanceof Error ? error.message : String(error))

/** Outcome of one try at a batch: undefined when stored. */
interface WriteFailure {
  readonly message: string
  readonly rowsAtFault: boolean
  readonly died: boolean
}

export const makeWriteQueue = (
  database: ObservabilityDatabase,
  options: WriterOptions
): Effect.Effect<WriteQueue["Service"], never, Scope.Scope> =>
  Effect.gen(function*() {
    const queue: Array<QueuedUnit> = []
    let queuedBytes = 0
    let written = 0
    let dropped = 0
    let droppedReported = 0
    let failedAttempts = 0
    let rejected = 0
    let truncatedRows = 0
    /** set on shutdown, before the flusher is interrupted: only then may an interruption end it */
    let stopping = false
    /** why units were refused when queued, logged by the flusher (submit cannot log) */
    const refusals: Array<string> = []
    /** what was cut of rows over max_row_bytes, logged by the flusher (the first ten between two flushes) */
    const cuts: Array<string> = []
    /** why units could not enter the durable log (queued in memory only), logged by the flusher */
    const logFailures: Array<string> = []
    const log = options.log?.log
    // the flusher's sleep, cut short when the queue holds a full batch
    const { nap, wake } = makeNap()
    const batchWaiting = () => queue.length >= options.maxRows || queuedBytes >= options.maxBatchBytes

    const refuse = (reason: string): Submitted => {
      rejected++
      if (refusals.length < 10) refusals.push(reason)
      return "refused"
    }

    const submit = (unit: WriteUnit): Submitted => {
      if (queue.length >= options.maxQueued) {
        dropped++
        return "full"
      }
      // encoding may throw (a row over V8's string limit): submit runs outside any fiber
      let rows: Result.Result<ReadonlyArray<EncodedRow>, { readonly message: string }>
      try {
        rows = database.encode(unit.batch)
      } catch (error) {
        return refuse(messageOf(error))
      }
      if (Result.isFailure(rows)) return refuse(rows.failure.message)
      let bytes = 0
      for (const row of rows.success) bytes += row.text.length
      if (queuedBytes + bytes > options.maxQueuedBytes) {
        dropped++
        return "full"
      }
      let sequence: number | undefined
      if (log !== undefined) {
        const appended = log.append(rows.success)
        if (appended === "full") {
          dropped++
          return "full"
        }
        // a disk that fails: the unit is kept in memory, as without the log, and the failure logged
        if (typeof appended === "object") {
          if (logFailures.length < 10) logFailures.push(appended.failed)
        } else {
          sequence = appended
        }
      }
      for (const row of rows.success) {
        if (row.cut === undefined) continue
        truncatedRows++
        if (cuts.length < 10) cuts.push(row.cut)
      }
      queue.push({ inference: unit.inference, rows: rows.success, bytes, sequence })
      queuedBytes += bytes
      if (batchWaiting()) wake()
      return "queued"
    }

    // Feedback looks up queued inferences rarely, inferences are queued all the time: a scan of
    // the queue costs the rare lookup, where an index would cost every inference. The scan
    // starts from the newest, which feedback most often targets.
    // inferences whose rows wait for their input files to be written (src/objectStorage/), by id
    const awaiting = new Map<string, InferenceTarget>()
    const awaitInference = (inference: { readonly id: string; readonly target: InferenceTarget }) => {
      awaiting.set(inference.id, inference.target)
      return (unit: WriteUnit): void => {
        awaiting.delete(inference.id)
        submit(unit)
      }
    }
    // another workspace's queued inference is not found, as in the store
    const queuedInference = (workspace: string, id: string): InferenceTarget | undefined => {
      const awaited = awaiting.get(id)
      if (awaited !== undefined) return awaited.workspace === workspace ? awaited : undefined
      for (let i = queue.length - 1; i >= 0; i--) {
        const inference = queue[i].inference
        if (inference !== undefined && inference.id === id) return inference.target.workspace === workspace ? inference.target : undefined
      }
      return undefined
    }
    const queuedEpisode = (workspace: string, id: string): boolean => {
      for (const target of awaiting.values()) if (target.episodeId === id && target.workspace === workspace) return true
      for (let i = queue.length - 1; i >= 0; i--) {
        const target = queue[i].inference?.target
        if (target !== undefined && target.episodeId === id && target.workspace === workspace) return true
      }
      return false
    }

    const reportDrops = Effect.suspend(() => {
      const refused = [
        ...refusals.splice(0).map((reason) => Effect.logError(`observability: a write was refused before it was queued, and is dropped: ${reason}`)),
        ...logFailures.splice(0).map((reason) => Effect.logError(`observability: a write could not enter the durable queue (kept in memory only): ${reason}`)),
        ...cuts.splice(0).map((note) => Effect.logWarning(`observability: ${note}`))
      ]
      if (dropped === droppedReported) return Effect.all(refused, { discard: true })
      const count = dropped - droppedReported
      droppedReported = dropped
      return Effect.all([
        ...refused,
        Effect.logWarning(
          `observability queue full (${options.maxQueued} units or ${options.maxQueuedBytes} bytes): dropped ${count} writes (${dropped} in all)`
        )
      ], { discard: true })
    })

    /**
     * One try at writing `units`: undefined when stored, else why not and whether the rows are
     * at fault. Failures and defects alike become an answer (a defect, a bug a batch set off,
     * counts as the rows' fault, so that splitting finds the unit that sets it off); only an
     * interruption goes through.
     */
    const tryWrite = (units: ReadonlyArray<QueuedUnit>): Effect.Effect<WriteFailure | undefined> =>
      Effect.suspend(() => database.write(rowsOf(units))).pipe(
        Effect.timeoutOrElse({
          duration: Duration.millis(options.writeTimeoutMs),
          orElse: () => Effect.fail(new StoreError({ message: `${database.backend}: the write had no answer within ${options.writeTimeoutMs} ms` }))
        }),
        Effect.as(undefined),
        Effect.catchCause((cause) => {
          if (Cause.hasInterrupts(cause)) return Effect.interrupt
          const failure = Cause.findError(cause)
          return Effect.succeed(
            Result.isSuccess(failure)
              ? { message: failure.success.message, rowsAtFault: failure.success.rowsAtFault === true, died: false }
              : { message: Cause.pretty(cause), rowsAtFault: true, died: true }
          )
        })
      )

    /** each failed try that will be tried again: counted, logged on the first and every tenth */
    const retrying = retryBackoff.pipe(
      Schedule.setInputType<WriteFailure>(),
      Schedule.tap(({ attempt, duration, input }) => Effect.suspend(() => {
        failedAttempts++
        const warn = attempt % 10 === 1
          ? Effect.logWarning(
            `observability write failed (${queue.length} units queued), retrying in ${Duration.toMillis(duration)} ms: ${input.message}`
          )
          : Effect.void
        return Effect.andThen(warn, reportDrops)
      }))
    )

    /** one try at `units`, failing when the database could not take them (and they may be tried again) */
    const tryAgainLater = (units: ReadonlyArray<QueuedUnit>): Effect.Effect<WriteFailure | undefined, WriteFailure> =>
      Effect.flatMap(tryWrite(units), (failed) =>
        failed === undefined || failed.rowsAtFault ? Effect.succeed(failed) : Effect.fail(failed))

    /**
     * Writes `units`, retrying (`retryBackoff`, forever) while the database cannot take them;
     * when it refuses the rows themselves, the halves are written on their own, down to the
     * units at fault, which are dropped and logged with the database's reason.
     */
    const writeUnits = (units: ReadonlyArray<QueuedUnit>): Effect.Effect<Flushed> =>
      Effect.gen(function*() {
        // the schedule never ends: a batch the database cannot take now waits for it
        const failed = yield* Effect.orDie(Effect.retry(tryAgainLater(units), retrying))
        if (failed === undefined) return { stored: units.length, rejected: 0 }
        if (units.length === 1) {
          yield* Effect.logError(
            failed.died
              ? `observability: a write died (a bug), and is dropped: ${failed.message}`
              : `observability: the database refused a write, which is dropped: ${failed.message}`
          )
          return { stored: 0, rejected: 1 }
        }
        const half = Math.ceil(units.length / 2)
        const first = yield* writeUnits(units.slice(0, half))
        const second = yield* writeUnits(units.slice(half))
        return { stored: first.stored + second.stored, rejected: first.rejected + second.rejected }
      })

    /** the oldest units that make a batch: up to `maxRows`, and `maxBatchBytes` unless the first is larger alone */
    const nextBatch = (): number => {
      let count = 0
      let bytes = 0
      while (count < queue.length && count < options.maxRows) {
        const next = queue[count].bytes
        if (count > 0 && bytes + next > options.maxBatchBytes) break
        bytes += next
        count++
      }
      return count
    }

    /** writes the oldest batch; its units leave the queue only once each is stored or dropped */
    const flushOnce = Effect.gen(function*() {
      const count = nextBatch()
      if (count === 0) return
      const flushed = yield* writeUnits(queue.slice(0, count))
      let lastLogged = 0
      for (const unit of queue.splice(0, count)) {
        queuedBytes -= unit.bytes
        if (unit.sequence !== undefined) lastLogged = unit.sequence
      }
      if (lastLogged > 0) log?.written(lastLogged)
      written += flushed.stored
      rejected += flushed.rejected
    })

    /** `effect`, with whatever escapes it logged (and a pause) rather than ending the caller */
    const guarded = (effect: Effect.Effect<void>) =>
      Effect.catchCause(effect, (cause) =>
        stopping && Cause.hasInterrupts(cause)
          ? Effect.failCause(cause)
          : Effect.logError("observability: the write queue recovered from a fault", cause).pipe(
            Effect.andThen(Effect.sleep(Duration.millis(recoveryPauseMs)))
          ))

    const loop = Effect.forever(guarded(Effect.gen(function*() {
      if (!batchWaiting()) yield* nap(options.flushIntervalMs)
      yield* reportDrops
      yield* flushOnce
    })))

    // Units to submit once the answers being sent are written: one immediate for all the
    // requests that complete in a turn of the event loop, rather than one each.
    let soon: Array<() => WriteUnit> = []
    const submitPending = () => {
      const pending = soon
      soon = []
      for (const make of pending) submit(make())
    }
    // with the durable log, a unit must be in it before its answer leaves: submitted at once
    const submitSoon = (make: () => WriteUnit): void => {
      if (log !== undefined) submit(make())
      else if (soon.push(make) === 1) setImmediate(submitPending)
    }

    /** writes what a dead process's log held that it had not written, then deletes the log */
    const replayOrphan = (folder: string, own: string) =>
      Effect.acquireUseRelease(
        Effect.sync(() => takeOrphanLog(folder, own)),
        (orphan) =>
          Effect.gen(function*() {
            if (orphan === undefined) return false
            const units: Array<QueuedUnit> = orphan.units.map((unit) => ({ inference: undefined, rows: unit.rows, bytes: rowBytes(unit.rows) }))
            let stored = 0
            let refused = 0
            for (let start = 0; start < units.length;) {
              let end = start
              let bytes = 0
              while (end < units.length && end - start < options.maxRows && (end === start || bytes + units[end].bytes <= options.maxBatchBytes)) {
                bytes += units[end].bytes
                end++
              }
              const flushed = yield* writeUnits(units.slice(start, end))
              stored += flushed.stored
              refused += flushed.rejected
              start = end
            }
            written += stored
            rejected += refused
            orphan.remove()
            yield* Effect.logInfo(
              `observability: wrote ${stored} units left in the durable queue of a stopped process (${orphan.owner})` +
                (refused > 0 ? `, ${refused} refused by the database` : "") +
                (orphan.ignoredBytes > 0 ? `; ${orphan.ignoredBytes} bytes of it were cut short or damaged, and ignored` : "")
            )
            return true
          }),
        // interrupted (shutdown) or failed: kept for a later replay
        (orphan, exit) => Effect.sync(() => {
          if (orphan !== undefined && exit._tag === "Failure") orphan.release()
        })
      )

    const flusher = yield* Effect.forkScoped(loop)
    const durable = options.log
    const replayer = durable === undefined ? undefined : yield* Effect.forkScoped(Effect.forever(
      guarded(Effect.gen(function*() {
        while (yield* replayOrphan(durable.folder, durable.log.owner)) yield* Effect.void
        yield* Effect.sleep(Duration.millis(durable.replayIntervalMs))
      }))
    ))

    // on shutdown: stop the loop (a batch it was writing stays queued), then flush what is left
    yield* Effect.addFinalizer(() =>
      Effect.gen(function*() {
        stopping = true
        if (replayer !== undefined) yield* Fiber.interrupt(replayer)
        yield* Fiber.interrupt(flusher)
        // inferences whose input files are being written submit their rows when done: waited for, within the time to flush
        const awaitedBy = Date.now() + options.shutdownTimeoutMs / 2
        while (awaiting.size > 0 && Date.now() < awaitedBy) yield* Effect.sleep(Duration.millis(10))
        if (awaiting.size > 0) yield* Effect.logError(`observability: ${awaiting.size} inferences still writing their input files at shutdown are not stored`)
        if (queue.length === 0) return yield* reportDrops
        const paused = database.writesPaused?.()
        if (paused !== undefined) {
          yield* Effect.logError(`observability: could not write ${queue.length} queued units before stopping: writes are paused (${paused})`)
          return yield* reportDrops
        }
        const pending = queue.length
        const drained = yield* Effect.timeoutOption(
          Effect.gen(function*() {
            while (queue.length > 0) yield* guarded(flushOnce)
          }),
          Duration.millis(options.shutdownTimeoutMs)
        )
        if (drained._tag === "Some") yield* Effect.logInfo(`observability: wrote ${pending} queued units before stopping`)
        else yield* Effect.logError(`observability: could not write ${queue.length} queued units before stopping`)
        yield* reportDrops
      }).pipe(Effect.catchCause((cause) => Effect.logError("observability: the final flush failed", cause)))
    )

    return {
      enabled: true,
      submit,
      submitSoon,
      awaitInference,
      stats: () => ({ queued: queue.length, queuedBytes, written, dropped, rejected, failedAttempts, truncatedRows }),
      queuedByTable: () => {
        const byTable = new Map<string, { rows: number; bytes: number }>()
        for (const unit of queue) {
          for (const row of unit.rows) {
            const table = byTable.get(row.table) ?? { rows: 0, bytes: 0 }
            table.rows++
            table.bytes += row.text.length
            byTable.set(row.table, table)
          }
        }
        return byTable
      },
      queuedInference,
      queuedEpisode
    }
  })
