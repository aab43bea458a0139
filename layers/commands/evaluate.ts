/**
 * `gateway evaluate`: the configuration loaded, then the run (./evaluateRun.ts, whose services'
 * modules this command alone loads, as serving alone loads the server's). Exits with the run's code.
 */
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import type { EvaluationRunRequest } from "../../src/api/evaluations.ts"
import { logConfigWarnings } from "../configLoader.ts"
import { LoggingLive } from "../logging.ts"
import { commandEnv, configFromFlags, type SharedFlags } from "./configuration.ts"
import type { EvaluateFormat } from "./evaluateRun.ts"
import { ExitWith } from "./exit.ts"

export const evaluate = (flags: SharedFlags, request: EvaluationRunRequest, format: EvaluateFormat, workspace: string) =>
  Effect.gen(function*() {
    const { config, warnings } = yield* configFromFlags(flags)
    const { runEvaluate } = yield* Effect.promise(() => import("./evaluateRun.ts"))
    const code = yield* logConfigWarnings(warnings).pipe(
      Effect.andThen(Effect.scoped(Effect.flatMap(commandEnv, (env) => runEvaluate(config, env, request, format, workspace)))),
      Effect.catchTag("StartupError", (error) => Effect.as(Console.error(error.message), 1)),
      Effect.provide(LoggingLive(flags.logFormat))
    )
    if (code !== 0) return yield* Effect.die(new ExitWith(code))
  })
