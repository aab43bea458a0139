/**
 * `gateway optimize export <task_id> --dir <folder> [--workspace <name>]`: the export (./optimizeExportRun.ts, loaded
 * by this command only) on the relational database. Exits with its code.
 */
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import { type LogFormat, LoggingLive } from "../logging.ts"
import { commandEnv } from "./configuration.ts"
import { ExitWith } from "./exit.ts"

export const optimizeExport = (taskId: string, dir: string, workspace: string, logFormat: LogFormat) =>
  Effect.gen(function*() {
    const { runOptimizeExport } = yield* Effect.promise(() => import("./optimizeExportRun.ts"))
    const code = yield* Effect.scoped(Effect.flatMap(commandEnv, (env) => runOptimizeExport(taskId, dir, workspace, env))).pipe(
      Effect.catchTag("StartupError", (error) => Effect.as(Console.error(error.message), 1)),
      Effect.provide(LoggingLive(logFormat))
    )
    if (code !== 0) return yield* Effect.die(new ExitWith(code))
  })
