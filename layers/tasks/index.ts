/**
 * The `Tasks` service as configured: on pg-boss in the relational database when
 * GATEWAY_RELATIONAL_DB_URL is set (layers/tasks/pgBoss.ts), unavailable otherwise (every
 * operation a 503 naming the variable).
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { relationalUrlVariable } from "../../src/auth/store.ts"
import { Tasks, tasksUnavailable } from "../../src/tasks/service.ts"
import type { StartupError } from "../startup.ts"

type Env = Readonly<Record<string, string | undefined>>

export const unavailableTasks = Tasks.of({
  available: false,
  register: () => Effect.fail(tasksUnavailable()),
  enqueue: () => Effect.fail(tasksUnavailable()),
  schedule: () => Effect.fail(tasksUnavailable()),
  get: () => Effect.fail(tasksUnavailable()),
  cancel: () => Effect.fail(tasksUnavailable()),
  exclusive: () => Effect.fail(tasksUnavailable())
})

export const TasksLive = (env: Env): Layer.Layer<Tasks, StartupError> => {
  const url = env[relationalUrlVariable]
  if (url === undefined || url === "") return Layer.succeed(Tasks, unavailableTasks)
  // PLACEHOLDER until layers/tasks/pgBoss.ts exists (issue 16, tasks work)
  return Layer.succeed(Tasks, unavailableTasks)
}
