/**
 * The `Tasks` service as configured: on pg-boss in the relational database when
 * GATEWAY_RELATIONAL_DB_URL is set (layers/tasks/pgBoss.ts), unavailable otherwise (every
 * operation a 503 naming the variable).
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { relationalUrlVariable } from "../../src/relational.ts"
import { isEmbeddedServer } from "../embedded/pglite.ts"
import { Tasks, tasksUnavailable } from "../../src/tasks/service.ts"
import type { StartupError } from "../startup.ts"
import type { PgBossTasksOptions } from "./pgBoss.ts"

type Env = Readonly<Record<string, string | undefined>>

export const unavailableTasks = Tasks.of({
  available: false,
  register: () => Effect.fail(tasksUnavailable()),
  enqueue: () => Effect.fail(tasksUnavailable()),
  schedule: () => Effect.fail(tasksUnavailable()),
  get: () => Effect.fail(tasksUnavailable()),
  cancel: () => Effect.fail(tasksUnavailable()),
  exclusive: () => Effect.fail(tasksUnavailable()),
  tryExclusive: () => Effect.fail(tasksUnavailable()),
  claim: () => Effect.fail(tasksUnavailable())
})

/** pg-boss is loaded only when the relational database is configured */
export const TasksLive = (env: Env, options?: PgBossTasksOptions): Layer.Layer<Tasks, StartupError> => {
  const url = env[relationalUrlVariable]
  if (url === undefined || url === "") return Layer.succeed(Tasks, unavailableTasks)
  return Layer.effect(
    Tasks,
    Effect.promise(() => import("./pgBoss.ts")).pipe(
      Effect.flatMap((module) => module.makePgBossTasks(url, isEmbeddedServer(url) ? { ...options, localLocks: true } : options))
    )
  )
}
