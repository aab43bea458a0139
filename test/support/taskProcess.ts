/**
 * A gateway process as far as durable tasks go, for test/integration/tasks-processes.test.ts:
 * runs the Tasks layer on the database `argv[2]`, registers the kind `sleep` (heartbeat 10 s)
 * whose handler records each run (task id, this process's pid, start, end) in the table
 * `task_runs` of that database and sleeps `payload.ms` in between, prints `ready`, and stays
 * alive until it is killed.
 *
 *   node test/support/taskProcess.ts postgres://.../gw_test_x
 */
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as Effect from "effect/Effect"
import { makePgClient } from "../../layers/postgres/client.ts"
import { TasksLive } from "../../layers/tasks/index.ts"
import { Tasks } from "../../src/tasks/service.ts"
import { quickTasks } from "./tasks.ts"

const url = process.argv[2]
if (url === undefined) throw new Error("usage: taskProcess.ts <postgres URL>")

const program = Effect.gen(function*() {
  const tasks = yield* Tasks
  const sql = yield* makePgClient(url)
  yield* tasks.register<{ ms: number }>("sleep", (task) =>
    Effect.gen(function*() {
      const [run] = yield* sql<{ id: number }>`INSERT INTO task_runs (task_id, pid, started_at)
        VALUES (${task.id}, ${process.pid}, clock_timestamp()) RETURNING id`
      yield* Effect.sleep(task.payload.ms)
      yield* sql`UPDATE task_runs SET ended_at = clock_timestamp() WHERE id = ${run.id}`
      return { pid: process.pid }
    }).pipe(Effect.orDie), { heartbeatS: 10, concurrency: 4 })
  console.log("ready")
  return yield* Effect.never
}).pipe(Effect.scoped, Effect.provide(TasksLive({ GATEWAY_RELATIONAL_DB_URL: url }, quickTasks)))

NodeRuntime.runMain(program)
