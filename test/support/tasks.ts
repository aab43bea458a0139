/**
 * Fixtures of the durable task tests (test/integration/tasks-*.test.ts): a `Tasks` service on
 * pg-boss in a scope of its own, the migrations of its database, and polling until a task got
 * where it should.
 */
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Scope from "effect/Scope"
import { isEmbeddedServer } from "../../layers/embedded/pglite.ts"
import { makeRelationalStore } from "../../layers/postgres/relational.ts"
import { makePgBossTasks, type PgBossTasksOptions } from "../../layers/tasks/pgBoss.ts"
import type { Tasks, TaskInfo } from "../../src/tasks/service.ts"

export type TasksService = Tasks["Service"]

/** quick polling and supervision, so that the tests do not wait on pg-boss's defaults */
export const quickTasks: PgBossTasksOptions = { pollingIntervalS: 0.5, superviseIntervalS: 2, stopTimeoutS: 2 }

export interface OpenTasks {
  readonly tasks: TasksService
  readonly close: () => Promise<void>
}

/**
 * the tasks service on `url` (as one gateway process has it) until `close`; on an embedded
 * database with in-process locks for `exclusive`, as TasksLive gives it (its clients share one
 * session, in which advisory locks exclude nothing)
 */
export const openTasks = async (url: string, options: PgBossTasksOptions = quickTasks): Promise<OpenTasks> => {
  const scope = Effect.runSync(Scope.make())
  const settings = isEmbeddedServer(url) ? { ...options, localLocks: true } : options
  const exit = await Effect.runPromiseExit(Scope.provide(scope)(makePgBossTasks(url, settings)))
  if (Exit.isFailure(exit)) {
    await Effect.runPromise(Scope.close(scope, Exit.void))
    return Effect.runPromise(Effect.failCause(exit.cause))
  }
  return { tasks: exit.value, close: () => Effect.runPromise(Scope.close(scope, Exit.void)) }
}

/** applies the Postgres migrations (gateway_task_progress among them) to the database at `url` */
export const migrateDatabase = (url: string): Promise<unknown> =>
  Effect.runPromise(Effect.scoped(Effect.flatMap(makeRelationalStore(url), (store) => store.migrate)))

export const run = <A, E>(effect: Effect.Effect<A, E>): Promise<A> => Effect.runPromise(effect)

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** polls `read` until `done` holds for what it answers; fails after `timeoutMs` showing the last answer */
export const waitFor = async <A>(read: () => Promise<A>, done: (value: A) => boolean, timeoutMs = 15_000): Promise<A> => {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const value = await read()
    if (done(value)) return value
    if (Date.now() > deadline) throw new Error(`still not there after ${timeoutMs} ms: ${JSON.stringify(value)}`)
    await sleep(100)
  }
}

/** the task once it is in `state` */
export const untilState = (tasks: TasksService, id: string, state: TaskInfo["state"], timeoutMs?: number): Promise<TaskInfo> =>
  waitFor(() => run(tasks.get(id)), (info) => info?.state === state, timeoutMs) as Promise<TaskInfo>
