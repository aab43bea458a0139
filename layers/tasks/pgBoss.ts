/**
 * The `Tasks` service on pg-boss, in a schema of its own (`gateway_tasks`) of the relational
 * database (GATEWAY_RELATIONAL_DB_URL), shared by every gateway process on it.
 *
 * - Each kind is a pg-boss queue with the `stately` policy: per singleton key at most one task
 *   waits and one runs. A task enqueued without `key` gets a key of its own (its id), so only
 *   keyed tasks are deduplicated.
 * - A running task's heartbeat is refreshed by pg-boss every heartbeatS / 2; the supervisor of any
 *   process puts a task whose heartbeat stopped (its process died) back in the queue, checking
 *   every `superviseIntervalS`, so it runs again elsewhere within heartbeatS + a few seconds.
 * - Progress goes to `gateway_task_progress` (migrations/postgres/0011_task_progress.sql):
 *   pg-boss cannot write a running job's data or output.
 * - Tries are counted there too (`runs`, migrations/postgres/0020_task_runs.sql), not by pg-boss:
 *   a process whose configuration cannot run a task declines it (`TaskFailure.declined`), and a
 *   decline must hand the task back at once without using up a try. So every queue's own retry
 *   limit is practically unbounded (each decline or failure is a pg-boss retry); a run counts
 *   when it starts and is uncounted when it declines or is interrupted in its process; a
 *   failure that uses up the kind's `retryLimit`, or a run that finds the tries used up by runs
 *   whose process died, ends the task by completing the pg-boss job with `{ failed: message }`,
 *   which `get` reads as state `failed` (pg-boss's own failed state cannot be reached while
 *   retries remain).
 * - A declined task is due again at once. Processes poll at a fixed period: the one that
 *   declined it polls again a whole period later, so every other process polls before it, and
 *   one whose configuration can run it takes it (a delay, even a random one, would let the phases
 *   of the processes' polls decide, and could let the decliner win every time). A failure is
 *   tried again after a growing delay, which the run waits out before handing the task back.
 * - A task fails as unrunnable when it has been declined for `unrunnableTimeoutS` and every live
 *   process that runs its kind has declined it since (`declined_at`, `declined_by`, reset by a
 *   run that gets past its check): a process whose configuration can run it but is busy has not,
 *   and takes it later. Each process notes the kinds it runs in `gateway_task_workers`, refreshed
 *   every `presenceIntervalS` and deleted when it stops (a process that died counts as live for
 *   `presenceTtlS` more).
 * - `exclusive` holds a transaction-scoped advisory lock (`pg_advisory_xact_lock`) in a
 *   transaction kept open while the effect runs, on a connection of a small pool of its own
 *   (`lockConnections`), so the lock is released when the effect ends, and when the process dies
 *   (its connection closes, and the transaction with it); `tryExclusive` takes the same lock
 *   only if it is free (`pg_try_advisory_xact_lock`). Transaction-scoped rather than a session
 *   lock: a pooler in transaction mode (PgBouncer) pins a server connection to a client only for
 *   a transaction, so a session lock would stay on a server connection other clients then use.
 * - Nothing else of a session is used either (pg-boss's queries are unnamed, its locks
 *   transaction-scoped, LISTEN/NOTIFY off): the queue works through such a pooler.
 * - `claim` notes the time of a key's last claim in `gateway_task_claims`
 *   (migrations/postgres/0018_task_claims.sql), one upsert that only wins over an old enough row.
 */
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import type * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import * as Random from "effect/Random"
import * as Scope from "effect/Scope"
import * as Semaphore from "effect/Semaphore"
import { type Job, type JobWithMetadata, PgBoss, type Queue } from "pg-boss"
import { relationalUrlVariable } from "../../src/relational.ts"
import { ServiceUnavailable } from "../../src/errors.ts"
import { isUuid, uuidv7 } from "../../src/ids.ts"
import type { RunningTask, TaskFailure, TaskInfo, TaskKindOptions, Tasks, TaskState } from "../../src/tasks/service.ts"
import { makePgClient } from "../postgres/client.ts"
import { StartupError } from "../startup.ts"

export interface PgBossTasksOptions {
  /** pg-boss's schema (default `gateway_tasks`) */
  readonly schema?: string | undefined
  /** how often an idle worker asks for a task (default 2 s, at least 0.5) */
  readonly pollingIntervalS?: number | undefined
  /** how often tasks whose heartbeat stopped are looked for (default 5 s) */
  readonly superviseIntervalS?: number | undefined
  /** how long shutting down waits for running handlers before failing them, to be retried elsewhere (default 10 s) */
  readonly stopTimeoutS?: number | undefined
  /**
   * `exclusive` with locks of this process: an embedded database's clients share one session,
   * in which an advisory lock excludes nothing (and one process is all there is)
   */
  readonly localLocks?: boolean | undefined
  /**
   * how long a task may be declined (by processes whose configurations cannot run it) before it
   * fails saying so, once every live process of its kind has declined it
   * (`[gateway.tasks] unrunnable_timeout_s`; default 300 s)
   */
  readonly unrunnableTimeoutS?: number | undefined
  /** the most connections of pg-boss's pool (the task queue's share of `[postgres] connection_pool_size`; default 4) */
  readonly maxConnections?: number | undefined
  /** the most locks of `exclusive`/`tryExclusive` held (or waited for) at once, one connection each (default 2) */
  readonly lockConnections?: number | undefined
}

export const taskDefaults = { concurrency: 4, retryLimit: 3, heartbeatS: 30, minimumHeartbeatS: 10, unrunnableTimeoutS: 300 } as const

/**
 * The longest one run may take (pg-boss's maximum): abandoned runs are found by their heartbeat,
 * this only bounds a handler that hangs while its process lives.
 */
const expireInSeconds = 24 * 60 * 60
/** a retry is due at once (a failed run waits out its backoff itself, `failureBackoffMs`) */
const retryDelay = { retryDelay: 0, retryBackoff: false } as const
/** how long a failed run waits before its task is tried again: 1-2 s, 2-4 s, 4-8 s, ... at most 60 s */
const failureBackoffMs = (run: number) => Effect.map(Random.next, (draw) => Math.min(60_000, 1000 * 2 ** (run - 1) * (1 + draw)))
/** how often a process notes that it still runs its kinds, and for how long a note counts */
const presenceIntervalS = 10
const presenceTtlS = 30
/**
 * pg-boss's retry limit of every queue: a decline is a pg-boss retry and must not use up a try,
 * so pg-boss never fails a task for its retries; the adapter counts the tries (`runs`) itself
 */
const queueRetryLimit = 1_000_000
/** progress rows (and claims) older than this are deleted: pg-boss deletes ended tasks after 7 days */
const progressKeptDays = 14
const progressSweepInterval = Duration.hours(1)
/** the same pg-boss complaint is logged once a minute at most (it repeats while the database is down) */
const complaintIntervalMs = 60_000

const describe = (error: unknown): string => {
  if (error instanceof AggregateError && error.errors.length > 0) return describe(error.errors[0])
  if (error instanceof Error) {
    const text = error.message !== "" ? error.message : (error as { code?: string }).code ?? error.name
    return text.replace(/\s*[\r\n]+\s*/g, " ")
  }
  // pg-boss also emits plain objects (a connection cut off mid-query): their message, or their JSON, not "[object Object]"
  if (typeof error === "object" && error !== null) {
    const message = (error as { message?: unknown }).message
    if (typeof message === "string" && message !== "") return describe(new Error(message))
    try {
      return JSON.stringify(error).slice(0, 500)
    } catch {
      return String(error)
    }
  }
  return String(error)
}

const isAssertion = (error: unknown) => (error as { code?: string } | null)?.code === "ERR_ASSERTION"

/** a handler's failure as pg-boss stores it on the job: its message, without a stack */
class HandlerFailed extends Error {
  constructor(message: string) {
    super(message)
    this.name = "TaskFailure"
    this.stack = undefined
  }
}

const failureMessage = (cause: Cause.Cause<TaskFailure>): string => {
  const failure = Cause.findErrorOption(cause)
  if (Option.isSome(failure)) return failure.value.message
  if (Cause.hasInterruptsOnly(cause)) return "interrupted"
  return describe(Cause.squash(cause))
}

/** the reason of a handler's decline, or undefined when it did not decline */
const declineOf = (cause: Cause.Cause<TaskFailure>): string | undefined => {
  const failure = Cause.findErrorOption(cause)
  return Option.isSome(failure) && failure.value.declined === true ? failure.value.message : undefined
}

/** what a run that ends the task as failed answers pg-boss: its job completes with this output, which `toInfo` reads as failed */
const endedFailed = (message: string) => ({ failed: message })

/** the error of a task no process could run within `timeoutS` */
export const unrunnableMessage = (timeoutS: number, reason: string) =>
  `no gateway whose configuration can run this task took it within ${timeoutS} s: ${reason} on the gateway that last tried`

const states: Record<JobWithMetadata["state"], TaskState> = {
  created: "queued",
  retry: "queued",
  active: "running",
  completed: "completed",
  failed: "failed",
  cancelled: "cancelled"
}

const time = (date: Date | null | undefined) => date === null || date === undefined ? undefined : date.getTime()

const toInfo = (job: JobWithMetadata<object>, progress: Option.Option<unknown>): TaskInfo => {
  const output = (job.output ?? {}) as { result?: unknown; message?: unknown; failed?: unknown }
  // a job the adapter completed to end its task as failed (`endedFailed`)
  const endedByAdapter = job.state === "completed" && typeof output.failed === "string"
  const state = endedByAdapter ? "failed" : states[job.state]
  return {
    id: job.id,
    kind: job.name,
    state,
    payload: job.data,
    ...(Option.isSome(progress) && { progress: progress.value }),
    ...(state === "completed" && output.result !== undefined && { result: output.result }),
    ...(state === "failed" && {
      error: endedByAdapter ? output.failed as string : typeof output.message === "string" ? output.message : JSON.stringify(job.output)
    }),
    createdAt: job.createdOn.getTime(),
    startedAt: state === "queued" ? undefined : time(job.startedOn),
    completedAt: time(job.completedOn)
  }
}

/** a cron expression for "every `everyS` seconds": whole minutes (at least one), whole hours past 59 minutes, daily past 23 hours */
export const cronEvery = (everyS: number): string => {
  const minutes = Math.max(1, Math.round(everyS / 60))
  if (minutes < 60) return `*/${minutes} * * * *`
  const hours = Math.round(minutes / 60)
  return hours < 24 ? `0 */${hours} * * *` : "0 0 * * *"
}

export const makePgBossTasks = (
  url: string,
  options: PgBossTasksOptions = {}
): Effect.Effect<Tasks["Service"], StartupError, Scope.Scope> =>
  Effect.gen(function*() {
    if (!/^postgres(ql)?:\/\//i.test(url)) {
      return yield* Effect.fail(new StartupError({ message: `${relationalUrlVariable} must be a postgres:// URL` }))
    }
    const context: Context.Context<never> = yield* Effect.context<never>()
    const runFork = Effect.runForkWith(context)
    const runExit = Effect.runPromiseExitWith(context)
    const superviseS = options.superviseIntervalS ?? 5
    const pollingIntervalSeconds = Math.max(0.5, options.pollingIntervalS ?? 2)

    const boss = new PgBoss({
      connectionString: url,
      schema: options.schema ?? "gateway_tasks",
      application_name: "llm-gateway-tasks",
      max: Math.max(1, options.maxConnections ?? 4),
      connectionTimeoutMillis: 3000,
      // the supervisor's pass, and its per-queue monitor inside it, fail tasks whose heartbeat stopped
      superviseIntervalSeconds: superviseS,
      monitorIntervalSeconds: superviseS
    })
    // pg-boss throws `error` events nobody listens to; they repeat on every pass while the database is down
    const lastComplaint = new Map<string, number>()
    const complain = (what: string) => (error: unknown) => {
      const message = `background tasks: ${what}: ${describe(error)}`
      const now = Date.now()
      if (now - (lastComplaint.get(message) ?? -Infinity) < complaintIntervalMs) return
      lastComplaint.set(message, now)
      runFork(Effect.logWarning(message))
    }
    boss.on("error", complain("pg-boss"))
    boss.on("warning", (warning) => complain("pg-boss warning")(new Error(warning.message)))

    yield* Effect.acquireRelease(
      Effect.tryPromise({
        try: async () => {
          try {
            await boss.start()
          } catch (error) {
            await boss.stop({ graceful: false }).catch(() => {})
            throw error
          }
        },
        catch: (error) => new StartupError({ message: `${relationalUrlVariable}: background tasks could not start: ${describe(error)}` })
      }),
      () =>
        Effect.promise(() =>
          boss.stop({ graceful: true, timeout: Math.round((options.stopTimeoutS ?? 10) * 1000) }).catch(complain("stopping"))
        )
    )
    const db = boss.getDb()

    /** runs one pg-boss call: a database problem is a 503, a refused argument (an invalid kind name) a defect */
    const attempt = <A>(what: string, run: () => Promise<A>): Effect.Effect<A, ServiceUnavailable> =>
      Effect.tryPromise({ try: run, catch: (error) => error }).pipe(
        Effect.catch((error) =>
          isAssertion(error)
            ? Effect.die(error)
            : Effect.fail(new ServiceUnavailable({ message: `background tasks: ${what} failed: ${describe(error)}` }))
        )
      )

    const queueOptions = (kind: TaskKindOptions = {}) => ({
      retryLimit: queueRetryLimit,
      heartbeatSeconds: Math.max(taskDefaults.minimumHeartbeatS, Math.round(kind.heartbeatS ?? taskDefaults.heartbeatS)),
      expireInSeconds,
      ...retryDelay
    })
    const unrunnableTimeoutS = Math.max(1, options.unrunnableTimeoutS ?? taskDefaults.unrunnableTimeoutS)
    /** kinds whose queue this process created or found */
    const queues = new Set<string>()
    /** the handler of each kind registered in this process, with the tries its tasks get: the latest registration's */
    const handlers = new Map<string, {
      readonly handler: (task: RunningTask<unknown>) => Effect.Effect<unknown, TaskFailure>
      readonly retryLimit: number
    }>()
    const ensureQueue = async (kind: string) => {
      if (queues.has(kind)) return
      await boss.createQueue(kind, { policy: "stately", ...queueOptions() } satisfies Omit<Queue, "name">)
      queues.add(kind)
    }

    /** upserts a task's progress or checkpoint; a failure is logged, not failed (the task goes on) */
    const writeTaskColumn = (column: "progress" | "checkpoint") => (id: string, value: unknown): Effect.Effect<void> =>
      Effect.tryPromise(() =>
        db.executeSql(
          `INSERT INTO gateway_task_progress (task_id, ${column}, updated_at) VALUES ($1, $2::jsonb, now())
           ON CONFLICT (task_id) DO UPDATE SET ${column} = EXCLUDED.${column}, updated_at = EXCLUDED.updated_at`,
          [id, JSON.stringify(value ?? null)]
        )
      ).pipe(
        Effect.asVoid,
        Effect.catch((error) => Effect.logWarning(`background tasks: ${column} of ${id} not saved: ${describe(error)}`))
      )
    const writeProgress = writeTaskColumn("progress")
    const writeCheckpoint = writeTaskColumn("checkpoint")

    /** this process, as `gateway_task_workers` and `declined_by` name it */
    const workerId = uuidv7(yield* Clock.currentTimeMillis)

    /** notes that this process runs `kinds` (now, again) */
    const notePresence = (kinds: ReadonlyArray<string>) =>
      db.executeSql(
        `INSERT INTO gateway_task_workers (worker_id, kind, seen_at) SELECT $1, kind, now() FROM unnest($2::text[]) AS kind
         ON CONFLICT (worker_id, kind) DO UPDATE SET seen_at = EXCLUDED.seen_at`,
        [workerId, kinds]
      )

    /**
     * Counts a run of task `id` as it starts, and reads what it starts from: its number (this one
     * included), the checkpoint the last run saved, the last failure's message, and since when
     * and by which processes it was declined since a run last got past its check (cleared here;
     * `recordDecline` puts them back when this run declines too). Throws when the database fails:
     * the task is tried again.
     */
    const startRun = async (id: string) => {
      const { rows } = await db.executeSql(
        `WITH before AS (SELECT declined_at, declined_by FROM gateway_task_progress WHERE task_id = $1)
         INSERT INTO gateway_task_progress (task_id, runs, updated_at) VALUES ($1, 1, now())
         ON CONFLICT (task_id) DO UPDATE
           SET runs = gateway_task_progress.runs + 1, declined_at = NULL, declined_by = NULL, updated_at = now()
         RETURNING runs, checkpoint, last_error, (SELECT declined_at FROM before) AS declined_at, (SELECT declined_by FROM before) AS declined_by`,
        [id]
      )
      const row = rows[0] as {
        runs: number
        checkpoint: unknown
        last_error: string | null
        declined_at: Date | null
        declined_by: Array<string> | null
      }
      return {
        run: row.runs,
        checkpoint: row.checkpoint ?? undefined,
        lastError: row.last_error ?? undefined,
        declinedAt: row.declined_at,
        declinedBy: row.declined_by ?? []
      }
    }

    /**
     * A declined run: uncounted, the first decline's time kept (now, for the first), this
     * process added to those that declined it. Answers whether the task is unrunnable: declined
     * for `unrunnableTimeoutS` (by the database's clock, the one every process shares), and by
     * every live process of its kind.
     */
    const recordDecline = async (kind: string, id: string, declinedAt: Date | null, declinedBy: ReadonlyArray<string>): Promise<boolean> => {
      const { rows } = await db.executeSql(
        `UPDATE gateway_task_progress
         SET runs = GREATEST(runs - 1, 0), declined_at = COALESCE($2::timestamptz, now()),
           declined_by = ARRAY(SELECT DISTINCT unnest($3::text[] || $4::text)), updated_at = now()
         WHERE task_id = $1
         RETURNING declined_at <= now() - make_interval(secs => $5) AND NOT EXISTS (
           SELECT 1 FROM gateway_task_workers w
           WHERE w.kind = $6 AND w.seen_at > now() - make_interval(secs => $7) AND NOT (w.worker_id = ANY(declined_by))
         ) AS unrunnable`,
        [id, declinedAt, declinedBy, workerId, unrunnableTimeoutS, kind, presenceTtlS]
      )
      return rows[0]?.unrunnable === true
    }

    /** a run interrupted in its process (stopping, or the task cancelled or taken away) is not a try */
    const uncountRun = (id: string) =>
      db.executeSql("UPDATE gateway_task_progress SET runs = GREATEST(runs - 1, 0), updated_at = now() WHERE task_id = $1", [id])

    /** a failed run, to be tried again: its message, for a later run that finds the tries used up by a process that died */
    const recordFailure = (id: string, message: string) =>
      db.executeSql("UPDATE gateway_task_progress SET last_error = $2, updated_at = now() WHERE task_id = $1", [id, message])

    /** whether the run of `job` still holds it: active under the claim it was fetched with (a failed read counts as held) */
    const stillHeld = async (kind: string, job: Job<object>): Promise<boolean> => {
      if (job.signal.aborted) return false
      try {
        const current = await boss.getJobById<object>(kind, job.id)
        return current !== null && current.state === "active" && current.retryCount === job.retryCount
      } catch (error) {
        complain("reading a task's state")(error)
        return true
      }
    }

    /**
     * Runs one task of `kind` as pg-boss's work handler: what it answers completes the job, what
     * it throws is a pg-boss retry (see the header for how tries and declines are counted).
     */
    const runTask = async (kind: string, job: Job<object>): Promise<unknown> => {
      const { handler, retryLimit } = handlers.get(kind)!
      const start = await startRun(job.id)
      const tries = 1 + retryLimit
      if (start.run > tries) {
        // used up by runs whose process died: a failure on the last try ends the task itself
        return endedFailed(`tried ${start.run - 1} times; the process running the last try stopped before it ended${
          start.lastError === undefined ? "" : ` (an earlier try failed: ${start.lastError})`
        }`)
      }
      // once a check found the task over, later checks need not ask again
      let over = false
      const task: RunningTask<unknown> = {
        id: job.id,
        payload: job.data,
        progress: (value) => writeProgress(job.id, value),
        checkpoint: (state) => writeCheckpoint(job.id, state),
        resumeFrom: start.checkpoint,
        ensureRunning: Effect.flatMap(
          Effect.promise(async () => {
            over ||= !(await stillHeld(kind, job))
            return over
          }),
          (ended) => ended ? Effect.interrupt : Effect.void
        )
      }
      // the signal is aborted when the task was cancelled or taken away (heartbeat lost), or at shutdown
      const exit = await runExit(Effect.suspend(() => handler(task)), { signal: job.signal })
      if (Exit.isSuccess(exit)) return { result: exit.value }
      const declined = declineOf(exit.cause)
      if (declined !== undefined) {
        const unrunnable = await recordDecline(kind, job.id, start.declinedAt, start.declinedBy).catch((error) => {
          complain("recording a decline")(error)
          return false
        })
        if (unrunnable) return endedFailed(unrunnableMessage(unrunnableTimeoutS, declined))
        if (start.declinedAt === null) {
          runFork(Effect.logInfo(`background tasks: ${kind} task ${job.id} handed back for another gateway: ${declined}`))
        }
        throw new HandlerFailed(`declined: ${declined}`)
      }
      if (Cause.hasInterruptsOnly(exit.cause)) {
        await uncountRun(job.id).catch(complain("uncounting an interrupted run"))
        throw new HandlerFailed("interrupted")
      }
      const message = failureMessage(exit.cause)
      if (start.run >= tries) return endedFailed(message)
      await recordFailure(job.id, message).catch(complain("recording a failure"))
      // the backoff, waited out while the task is still this run's (a stop cuts it short)
      await runExit(Effect.flatMap(failureBackoffMs(start.run), (ms) => Effect.sleep(ms)), { signal: job.signal })
      throw new HandlerFailed(message)
    }

    const readProgress = async (id: string): Promise<Option.Option<unknown>> => {
      try {
        // SQL NULL: none reported (the row may hold only the count of runs); a reported null is JSON's null
        const { rows } = await db.executeSql("SELECT progress FROM gateway_task_progress WHERE task_id = $1 AND progress IS NOT NULL", [id])
        return rows.length === 0 ? Option.none() : Option.some(rows[0].progress)
      } catch (error) {
        complain("reading progress")(error)
        return Option.none()
      }
    }

    /** the task `id` of whichever kind it is: the kinds are few, each is asked by its primary key */
    const findJob = async (id: string): Promise<JobWithMetadata<object> | undefined> => {
      const all = await boss.getQueues()
      const found = await Promise.all(all.map((queue) => boss.getJobById<object>(queue.name, id)))
      return found.find((job) => job !== null) ?? undefined
    }

    yield* Effect.forkScoped(Effect.forever(Effect.sleep(progressSweepInterval).pipe(
      Effect.andThen(Effect.tryPromise(async () => {
        await db.executeSql(`DELETE FROM gateway_task_progress WHERE updated_at < now() - interval '${progressKeptDays} days'`)
        await db.executeSql(`DELETE FROM gateway_task_claims WHERE claimed_at < now() - interval '${progressKeptDays} days'`)
        await db.executeSql("DELETE FROM gateway_task_workers WHERE seen_at < now() - interval '1 day'")
      })),
      Effect.catch((error) => Effect.logWarning(`background tasks: old progress not deleted: ${describe(error)}`))
    )))

    // the kinds this process runs, noted again while it lives and forgotten when it stops (before pg-boss stops)
    yield* Effect.forkScoped(Effect.forever(Effect.sleep(Duration.seconds(presenceIntervalS)).pipe(
      // as `register` notes a kind: the database's own error goes to the log, not Effect's wrapper of it
      Effect.andThen(Effect.promise(() => notePresence([...handlers.keys()]).catch(complain("noting the kinds this process runs"))))
    )))
    yield* Effect.addFinalizer(() =>
      Effect.promise(() => db.executeSql("DELETE FROM gateway_task_workers WHERE worker_id = $1", [workerId]).catch(complain("forgetting this process's kinds")))
    )

    yield* Effect.logInfo(`background tasks: on pg-boss in schema ${options.schema ?? "gateway_tasks"} of the relational database`)

    // connects lazily: a process that never takes a lock opens none
    const locks = yield* makePgClient(url, { maxConnections: Math.max(1, options.lockConnections ?? 2), applicationName: "llm-gateway-tasks-lock" }).pipe(
      Effect.mapError((error) => new StartupError({ message: `${relationalUrlVariable}: background tasks: ${error.message}` }))
    )
    const lockFailed = (key: string) => (error: unknown) =>
      new ServiceUnavailable({ message: `background tasks: lock ${JSON.stringify(key)} failed: ${describe(error)}` })

    /**
     * `effect` run while a transaction of the lock pool holds the advisory lock of `key`, waiting
     * for it, or, with `wait` false, only if it was free at once (none otherwise). The transaction
     * ends with the effect, which releases the lock; interrupting the wait cancels the statement.
     * The effect's own outcome travels through the transaction as a value: only the lock's
     * statements fail it as unavailable.
     */
    const holding = <A, E, R>(key: string, wait: boolean, effect: Effect.Effect<A, E, R>): Effect.Effect<Option.Option<A>, E | ServiceUnavailable, R> => {
      const name = `gateway/exclusive:${key}`
      const taken = wait
        ? Effect.as(locks`SELECT pg_advisory_xact_lock(hashtextextended(${name}, 0))`, true)
        : Effect.map(locks<{ locked: boolean }>`SELECT pg_try_advisory_xact_lock(hashtextextended(${name}, 0)) AS locked`, ([row]) => row?.locked === true)
      return locks.withTransaction(
        Effect.flatMap(taken, (locked) => locked ? Effect.map(Effect.exit(effect), Option.some) : Effect.succeedNone)
      ).pipe(
        Effect.mapError(lockFailed(key)),
        Effect.flatMap((outcome) => Option.isNone(outcome) ? Effect.succeedNone : Effect.asSome(outcome.value))
      )
    }

    /** the keys this process is trying (`tryExclusive`) or holding that way */
    const trying = new Set<string>()

    /** the in-process lock of `key` (with `localLocks`), made on first use */
    const localLocks = new Map<string, Semaphore.Semaphore>()
    const localLock = (key: string) =>
      Effect.suspend(() => {
        const known = localLocks.get(key)
        if (known !== undefined) return Effect.succeed(known)
        return Effect.map(Semaphore.make(1), (made) => {
          const raced = localLocks.get(key)
          if (raced !== undefined) return raced
          localLocks.set(key, made)
          return made
        })
      })

    const service: Tasks["Service"] = {
      available: true,

      // Registering a kind again (a configuration reload builds its services anew) swaps the
      // handler that runs its next tasks: the process keeps one worker per kind.
      register: <Payload>(
        kind: string,
        handler: (task: RunningTask<Payload>) => Effect.Effect<unknown, TaskFailure>,
        kindOptions?: TaskKindOptions
      ) => {
        const known = handlers.has(kind)
        handlers.set(kind, {
          handler: handler as (task: RunningTask<unknown>) => Effect.Effect<unknown, TaskFailure>,
          retryLimit: Math.max(0, Math.round(kindOptions?.retryLimit ?? taskDefaults.retryLimit))
        })
        if (known) return Effect.void
        return attempt(`registering ${kind}`, async () => {
          const settings = queueOptions(kindOptions)
          await boss.createQueue(kind, { policy: "stately", ...settings })
          // a queue made by an earlier version or by `enqueue` gets this kind's settings (for the tasks queued from now on)
          await boss.updateQueue(kind, settings)
          queues.add(kind)
          // noted again every presenceIntervalS: a failure here only delays it
          await notePresence([kind]).catch(complain("noting the kinds this process runs"))
          await boss.work<object>(
            kind,
            { batchSize: 1, localConcurrency: Math.max(1, Math.round(kindOptions?.concurrency ?? taskDefaults.concurrency)), pollingIntervalSeconds },
            (jobs) => runTask(kind, jobs[0])
          )
        }).pipe(Effect.tapError(() => Effect.sync(() => handlers.delete(kind))))
      },

      enqueue: (kind, payload, enqueueOptions) =>
        Effect.flatMap(Clock.currentTimeMillis, (now) =>
          attempt(`enqueuing ${kind}`, async () => {
            await ensureQueue(kind)
            const id = uuidv7(now)
            const afterS = enqueueOptions?.afterS ?? 0
            const sent = await boss.send(kind, payload, {
              id,
              // stately: one waiting and one running per key; a task without a key is its own
              singletonKey: enqueueOptions?.key === undefined ? `id:${id}` : `key:${enqueueOptions.key}`,
              ...(afterS > 0 && { startAfter: afterS })
            })
            return sent ?? undefined
          })),

      schedule: (kind, everyS, payload) =>
        attempt(`scheduling ${kind}`, async () => {
          await ensureQueue(kind)
          // one scheduled task of the kind waits at a time, however long the last one takes
          await boss.schedule(kind, cronEvery(everyS), payload, { singletonKey: "schedule", tz: "UTC" })
        }),

      get: (id) =>
        isUuid(id)
          ? attempt("reading a task", async () => {
            const job = await findJob(id)
            return job === undefined ? undefined : toInfo(job, await readProgress(id))
          })
          : Effect.succeed(undefined),

      cancel: (id) =>
        isUuid(id)
          ? attempt("cancelling a task", async () => {
            const job = await findJob(id)
            if (job === undefined || !(job.state === "created" || job.state === "retry" || job.state === "active")) return false
            // pg-boss answers how many jobs it cancelled (only those not yet ended), though its type does not say
            const response = await boss.cancel(job.name, id) as { affected?: number }
            return (response.affected ?? 0) > 0
          })
          : Effect.succeed(false),

      exclusive: <A, E, R>(key: string, effect: Effect.Effect<A, E, R>) =>
        options.localLocks === true
          ? Effect.flatMap(localLock(key), (semaphore) => semaphore.withPermits(1)(effect))
          // with `wait`, the lock is always taken: the effect's outcome is there
          : Effect.map(holding(key, true, effect), Option.getOrThrow),

      tryExclusive: <A, E, R>(key: string, effect: Effect.Effect<A, E, R>) =>
        options.localLocks === true
          ? Effect.flatMap(localLock(key), (semaphore) => semaphore.withPermitsIfAvailable(1)(effect))
          : Effect.uninterruptibleMask((restore) =>
            Effect.suspend((): Effect.Effect<Option.Option<A>, E | ServiceUnavailable, R> => {
              // one try per key at a time in this process: a storm of tries costs one connection, not one each
              if (trying.has(key)) return Effect.succeedNone
              trying.add(key)
              return restore(holding(key, false, effect)).pipe(Effect.ensuring(Effect.sync(() => trying.delete(key))))
            })
          ),

      // one statement: a concurrent claim of the same key waits for the row, then finds it claimed
      claim: (key, everyS) =>
        attempt(`claiming ${JSON.stringify(key)}`, async () => {
          const { rows } = await db.executeSql(
            `INSERT INTO gateway_task_claims (key, claimed_at) VALUES ($1, now())
             ON CONFLICT (key) DO UPDATE SET claimed_at = EXCLUDED.claimed_at
             WHERE gateway_task_claims.claimed_at <= now() - make_interval(secs => $2)
             RETURNING key`,
            [key, Math.max(0, everyS)]
          )
          return rows.length === 1
        })
    }
    return service
  })
