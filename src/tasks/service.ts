/**
 * Durable background tasks: long work that survives a restart of the gateway and runs exactly
 * once when several gateway processes (or workers) share the relational database. Capabilities
 * (batch polling, later DICL example creation and prompt optimization) use this service only;
 * the job queue behind it (pg-boss on GATEWAY_RELATIONAL_DB_URL, layers/tasks/) is never
 * touched directly. Without a relational database every operation fails with the 503 naming
 * the variable (spec 1 item 7).
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import type * as Option from "effect/Option"
import { relationalUrlVariable } from "../relational.ts"
import { ServiceUnavailable } from "../errors.ts"
import { observabilityDisabled } from "../analytics/stores.ts"

export type TaskState = "queued" | "running" | "completed" | "failed" | "cancelled"

/** A task as `Tasks.get` reads it. */
export interface TaskInfo {
  readonly id: string
  readonly kind: string
  readonly state: TaskState
  readonly payload: unknown
  /** the last value the handler reported with `progress`, when it did */
  readonly progress?: unknown
  /** what the handler succeeded with (state `completed`) */
  readonly result?: unknown
  /** why it failed (state `failed`) */
  readonly error?: string | undefined
  /** epoch milliseconds */
  readonly createdAt: number
  readonly startedAt?: number | undefined
  readonly completedAt?: number | undefined
}

/** One run of a task, as its handler sees it. */
export interface RunningTask<Payload> {
  readonly id: string
  readonly payload: Payload
  /** records how far the task got (any JSON value), readable with `Tasks.get` while it runs */
  readonly progress: (value: unknown) => Effect.Effect<void>
  /**
   * Saves the state to resume from (any JSON value) should this run not finish: a run after a
   * crash gets the last one saved as `resumeFrom`. Not saved (the database failing) is logged,
   * not failed: a later run then resumes from an earlier state.
   */
  readonly checkpoint: (state: unknown) => Effect.Effect<void>
  /** the state the last run of this task saved, undefined on its first run */
  readonly resumeFrom: unknown
  /**
   * Asks the database whether this run still holds the task: succeeds while it does, and
   * interrupts the fiber that asks once the task was cancelled (through any process) or taken
   * from this run. A handler calls it before each piece of work it must not start for a task
   * that is over (a model call), rather than waiting for the heartbeat to notice.
   */
  readonly ensureRunning: Effect.Effect<void>
}

/**
 * A handler's failure: the task is tried again up to its kind's `retryLimit`, then `failed`
 * with this message. A `declined` failure says instead that this process's configuration
 * cannot run the task (its function, variant or model is not configured here), `message`
 * saying why: the task goes back to the queue at once for another process, without using up a
 * try, and fails only once it has been declined for the configured bound
 * (`[gateway.tasks] unrunnable_timeout_s`) by every live process that runs its kind. A handler
 * declines before it does any work.
 */
export interface TaskFailure {
  readonly message: string
  readonly declined?: boolean | undefined
}

/** the failure of a handler whose configuration cannot run the task: `reason` says what is missing here */
export const declineTask = (reason: string): TaskFailure => ({ message: reason, declined: true })

export interface TaskKindOptions {
  /** how many tasks of this kind one process runs at once (default 4) */
  readonly concurrency?: number | undefined
  /**
   * tries after a failure or after the process running it died (default 3); a decline, or a
   * run interrupted by its process shutting down, is not one
   */
  readonly retryLimit?: number | undefined
  /**
   * Seconds without a heartbeat after which a running task counts as abandoned (its process
   * died) and is run again by another process (default 30, at least 10). The service sends the
   * heartbeats while the handler runs.
   */
  readonly heartbeatS?: number | undefined
}

export interface EnqueueOptions {
  /**
   * At most one task of the kind with this key waits in the queue at a time, and at most one
   * runs: enqueuing again while one waits does nothing (`enqueue` answers undefined).
   */
  readonly key?: string | undefined
  /** seconds before it may start (default 0) */
  readonly afterS?: number | undefined
}

export class Tasks extends Context.Service<Tasks, {
  /** false when there is no relational database: every operation below fails with `tasksUnavailable()` */
  readonly available: boolean
  /**
   * Runs the tasks of `kind` in this process from now on. The handler's Effect needs nothing
   * from its context (the registering layer provides its services); a failure or a defect is
   * retried as `options` say. A task of a kind no process registered waits.
   */
  readonly register: <Payload>(
    kind: string,
    handler: (task: RunningTask<Payload>) => Effect.Effect<unknown, TaskFailure>,
    options?: TaskKindOptions
  ) => Effect.Effect<void, ServiceUnavailable>
  /** queues a task of `kind` (the payload a JSON object); its id, or undefined when `options.key` found one already waiting */
  readonly enqueue: (kind: string, payload: object, options?: EnqueueOptions) => Effect.Effect<string | undefined, ServiceUnavailable>
  /** queues a task of `kind` every `everyS` seconds (a cron schedule under the hood: whole minutes, at least one) for as long as any process runs */
  readonly schedule: (kind: string, everyS: number, payload: object) => Effect.Effect<void, ServiceUnavailable>
  readonly get: (id: string) => Effect.Effect<TaskInfo | undefined, ServiceUnavailable>
  /** cancels a queued or running task (a running handler is interrupted at its next `ensureRunning` or heartbeat); false when it had ended or is unknown */
  readonly cancel: (id: string) => Effect.Effect<boolean, ServiceUnavailable>
  /**
   * Runs `effect` while holding the lock named `key`, shared by every process on the
   * relational database (a Postgres advisory lock: released when the effect ends or its
   * process dies), waiting for it when another holds it.
   */
  readonly exclusive: <A, E, R>(key: string, effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E | ServiceUnavailable, R>
  /**
   * `exclusive` without the wait: runs `effect` when the lock named `key` is free at once, its
   * result in `Option.some`; `Option.none()` without running it while another holds the lock
   * (or, in this process, tries it: concurrent tries of one key cost one attempt).
   */
  readonly tryExclusive: <A, E, R>(key: string, effect: Effect.Effect<A, E, R>) => Effect.Effect<Option.Option<A>, E | ServiceUnavailable, R>
  /**
   * Whether the work named `key` may run now, at most once per `everyS` seconds across every
   * process on the relational database: true (and the time noted) when its last claim is at
   * least `everyS` seconds old or there is none, false otherwise. Of claims at the same
   * moment, one wins.
   */
  readonly claim: (key: string, everyS: number) => Effect.Effect<boolean, ServiceUnavailable>
}>()("gateway/Tasks") {}

/** The 503 of an operation that needs tasks while no relational database is configured. */
export const tasksUnavailable = (what = "background tasks") =>
  new ServiceUnavailable({ message: `${what} need ${relationalUrlVariable} (a postgres:// URL): set it to enable them` })

/**
 * The analytics stores of a capability that runs durable tasks (`what`, named in the 503; they
 * are all absent, or none, as observability is off or on), or the 503 naming the database that
 * is missing: the analytics one first, then the relational one.
 */
export const storesWithTasks = <S>(
  stores: S | undefined,
  tasks: Tasks["Service"],
  what: string
): Effect.Effect<S, ServiceUnavailable> =>
  stores === undefined ? Effect.fail(observabilityDisabled()) : !tasks.available ? Effect.fail(tasksUnavailable(what)) : Effect.succeed(stores)
