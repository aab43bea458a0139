/**
 * `gateway optimize export <task_id> --dir <folder> [--workspace <name>]`: the variants a completed GEPA task found,
 * written as configuration a user adds as it is (`gateway.toml` with the variants' tables, and
 * a file per template), read from the task on the relational database. Exit codes: 0 written,
 * 1 the task cannot be exported (unknown, not completed, no database). `--workspace` names the
 * workspace the task was launched in (`default` when not given): another workspace's task is unknown.
 */
import * as fs from "node:fs/promises"
import * as path from "node:path"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import { gepaTaskExport } from "../../src/optimization/gepa/service.ts"
import { Tasks, tasksUnavailable } from "../../src/tasks/service.ts"
import { TasksLive } from "../tasks/index.ts"
import { workspaceNameProblem } from "../../src/workspace.ts"

type Env = Readonly<Record<string, string | undefined>>

export const runOptimizeExport = (taskId: string, dir: string, workspace: string, env: Env): Effect.Effect<number> =>
  Effect.gen(function*() {
    const problem = workspaceNameProblem(workspace, "--workspace")
    if (problem !== undefined) return yield* Effect.fail({ message: problem })
    const tasks = yield* Tasks
    if (!tasks.available) return yield* Effect.fail(tasksUnavailable("exporting a GEPA task"))
    const { files, variantCount } = yield* gepaTaskExport(workspace, taskId, yield* tasks.get(taskId))
    for (const file of files) {
      const target = path.join(dir, file.path)
      yield* Effect.promise(() => fs.mkdir(path.dirname(target), { recursive: true }).then(() => fs.writeFile(target, file.content)))
      yield* Console.log(target)
    }
    if (variantCount === 0) yield* Console.error("the task found no new variant on the frontier: the configuration file lists none")
    return 0
  }).pipe(
    Effect.provide(TasksLive(env)),
    Effect.catch((error: { readonly message: string }) => Effect.as(Console.error(error.message), 1)),
    Effect.scoped
  )
