/**
 * The embedded database's thread as the gateway runs it: PGlite and its socket server in a
 * `worker_threads` Worker (pgliteWorker.ts) on a port of 127.0.0.1 that the gateway's pools
 * reach over TCP, so that no database work can hold the gateway's event loop: a stuck PGlite
 * holds its own thread only, `/health` answers that the database does not, and SIGTERM still
 * ends the process.
 *
 * - Started at start-up: a folder PGlite cannot open is a start-up error.
 * - After a PANIC (a WAL write that failed on a full disk) or a crash of the thread, the thread
 *   is ended at once (a PGlite that panicked only spins) and PGlite started again on the same
 *   port, as a Postgres server restarts after a crash: it recovers from its WAL, so what was
 *   committed stays. Meanwhile connections are refused: writes fail fast and the write queue
 *   retries them; `/health` says the database is restarting. A restart waits for free space
 *   (recovery writes to the WAL: on a full disk it would stop on the same PANIC), then is
 *   tried with a backoff until PGlite serves.
 * - On shutdown PGlite is closed cleanly (a checkpoint), or its thread ended after
 *   `stopTimeout`, at once when it is down.
 */
import * as fs from "node:fs"
import { Worker } from "node:worker_threads"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Schedule from "effect/Schedule"
import type * as Scope from "effect/Scope"
import { freeBytesOf } from "./freeSpace.ts"
import type { FromWorker, ToWorker, WorkerSettings } from "./pgliteWorker.ts"

// from the start-up bundle (dist/bin/gateway.mjs), the thread's bundle beside it (scripts/bundle.ts
// builds both); from the sources, the source
const workerFile = new URL(import.meta.url.endsWith(".mjs") ? "./pgliteWorker.mjs" : "./pgliteWorker.ts", import.meta.url)

/** how long PGlite may take to open its folder (2-3 s on a quiet machine, a recovery included) */
const openTimeout = Duration.seconds(120)
/** how long a clean close may take before the thread is ended */
const stopTimeout = Duration.seconds(10)
/** how often a restart that waits for free space looks again */
const roomCheck = Duration.seconds(1)
/** the pause before another try of a restart that failed: 1 s, doubled each time, 30 s at most */
const restartBackoff = Schedule.exponential(Duration.seconds(1)).pipe(
  Schedule.modifyDelay(({ duration }) => Effect.succeed(Duration.min(duration, Duration.seconds(30))))
)

export interface EmbeddedThread {
  /** why the database cannot be reached now (PGlite is starting again), undefined while it serves */
  readonly down: () => string | undefined
  /** how many times PGlite was started again after a PANIC or a crash */
  readonly restarts: () => number
}

/** One thread and what became of it, recorded from its first event on (none is missed). */
interface Thread {
  readonly worker: Worker
  /** resolves once PGlite serves; rejects with why it will not */
  readonly serving: Promise<void>
  /** why it stopped serving (a PANIC, a failure, its end): resolves at most once */
  readonly failure: Promise<string>
  /** resolves once PGlite is closed or the thread ended */
  readonly stopped: Promise<void>
}

const startThread = (settings: WorkerSettings): Thread => {
  const worker = new Worker(workerFile, { workerData: settings })
  let serve!: () => void
  let refuse!: (why: string) => void
  let fail!: (why: string) => void
  let stop!: () => void
  const serving = new Promise<void>((resolve, reject) => {
    serve = resolve
    refuse = reject
  })
  // a thread that failed before it served is not waited for
  serving.catch(() => undefined)
  const failure = new Promise<string>((resolve) => (fail = resolve))
  const stopped = new Promise<void>((resolve) => (stop = resolve))
  const failed = (why: string) => {
    refuse(why)
    fail(why)
  }
  worker.on("message", (message: FromWorker) => {
    if (message.type === "serving") serve()
    else if (message.type === "failed") failed(message.message)
    else if (message.type === "panic") failed(`PGlite stopped on a PANIC (${message.message})`)
    else stop()
  })
  worker.on("error", (error) => failed(`its thread failed: ${error.message}`))
  worker.on("exit", (code) => {
    failed(`its thread ended (exit code ${code})`)
    stop()
  })
  return { worker, serving, failure, stopped }
}

const ended = (thread: Thread) => Effect.promise(() => thread.worker.terminate()).pipe(Effect.asVoid)

/** a thread serving PGlite on `settings.port`, or why not (that thread then ended) */
const spawn = (settings: WorkerSettings): Effect.Effect<Thread, string> =>
  Effect.suspend(() => {
    const thread = startThread(settings)
    return Effect.tryPromise({ try: () => thread.serving, catch: (why) => String(why) }).pipe(
      Effect.timeoutOrElse({ duration: openTimeout, orElse: () => Effect.fail(`PGlite did not open within ${Duration.format(openTimeout)}`) }),
      Effect.as(thread),
      // not serving (or interrupted): the thread goes
      Effect.onExit((exit) => (exit._tag === "Success" ? Effect.void : ended(thread)))
    )
  })

/** PGlite closed cleanly, then its thread ended; ended anyway past `stopTimeout` */
const stopGracefully = (thread: Thread): Effect.Effect<void> =>
  Effect.sync(() => thread.worker.postMessage({ type: "stop" } satisfies ToWorker)).pipe(
    Effect.andThen(Effect.promise(() => thread.stopped)),
    Effect.timeoutOption(stopTimeout),
    Effect.andThen(ended(thread))
  )

/** whether PGlite stopped or failed for a full disk (ENOSPC) */
const diskFull = (why: string) => why.includes("No space left on device")

/** the free space of the database's filesystem as the free-space watch last measured it */
export interface Room {
  readonly freeBytes: number
  /** why writes pause (below the minimum), undefined while there is room */
  readonly low: string | undefined
}

/** a full disk is waited for until this much more is free than when PGlite met it */
const freedEnough = 1024 * 1024

/**
 * The free bytes in `dir`'s filesystem measured now, for a restart after a full disk. Not the
 * watch's last figure, which may predate what filled the disk (a PANIC within one check
 * interval of the fill): taken as what PGlite met, the restart would wait for more than was
 * ever free, for good.
 */
const freeBytesNow = (dir: string, room: () => Room) => {
  try {
    return freeBytesOf(fs.statfsSync(dir))
  } catch {
    return room().freeBytes
  }
}

/**
 * PGlite on `settings` in its thread while the scope is open, started again after a PANIC or
 * a crash once `room` says there is free space: above the minimum, and, after a full disk,
 * more than when PGlite met it (a try on a disk still full would only stop on the same PANIC,
 * and costs seconds of CPU). Fails with why PGlite could not open.
 */
export const runThread = (settings: WorkerSettings, room: () => Room): Effect.Effect<EmbeddedThread, string, Scope.Scope> =>
  Effect.gen(function*() {
    let thread = yield* spawn(settings)
    let down: string | undefined
    let restarts = 0
    /** the free bytes when PGlite last met a full disk, until a start succeeds */
    let fullAt: number | undefined
    /** what `fullAt` becomes when PGlite stops or fails to start for `why` */
    const fullAtFor = (why: string) => (diskFull(why) ? freeBytesNow(settings.dataDir, room) : undefined)

    const waitForRoom = Effect.gen(function*() {
      const waiting = () => {
        const now = room()
        if (now.low !== undefined) return now.low
        return fullAt !== undefined && freeBytesNow(settings.dataDir, room) < fullAt + freedEnough ? "the disk is full" : undefined
      }
      const why = waiting()
      if (why === undefined) return
      down = `PGlite is stopped until there is free space (${why})`
      yield* Effect.logWarning(`embedded database: ${down}`)
      while (waiting() !== undefined) yield* Effect.sleep(roomCheck)
    })

    const attempt = Effect.gen(function*() {
      yield* waitForRoom
      down = "PGlite is starting again"
      return yield* spawn(settings).pipe(
        Effect.tapError((why) =>
          Effect.andThen(
            Effect.sync(() => (fullAt = fullAtFor(why))),
            Effect.logWarning(`embedded database: PGlite could not start again (${why}); trying again`)
          ))
      )
    })

    const supervise = Effect.forever(Effect.gen(function*() {
      const why = yield* Effect.promise(() => thread.failure)
      fullAt = fullAtFor(why)
      down = `${why}; starting it again`
      yield* Effect.logError(
        `embedded database: ${why}; its thread is ended, and PGlite starts again on the same port (recovering from its WAL) as soon as ` +
          `it can${fullAt === undefined ? "" : ", once space is freed"}: writes wait meanwhile`
      )
      yield* ended(thread)
      thread = yield* Effect.retry(attempt, restartBackoff)
      restarts++
      down = undefined
      fullAt = undefined
      yield* Effect.logInfo(`embedded database: PGlite serves again, recovered from its WAL (${restarts} restarts in all)`)
    }))

    const supervisor = yield* Effect.forkScoped(supervise)
    yield* Effect.addFinalizer(() =>
      Fiber.interrupt(supervisor).pipe(Effect.andThen(Effect.suspend(() => (down === undefined ? stopGracefully(thread) : ended(thread)))))
    )
    return { down: () => down, restarts: () => restarts }
  })
