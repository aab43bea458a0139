/**
 * `gateway evaluate`: an evaluation run from the command line, in this process, on the same
 * services as the server (the configured database, providers, cache and write queue, which is
 * flushed before the command exits). Progress goes to stderr, results to stdout. Exit codes:
 * 0 done, 1 a cutoff missed or the run could not finish, 2 a usage error.
 */
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import type { EvaluationRunRequest } from "../../src/api/evaluations.ts"
import type { GatewayConfig } from "../../src/config/types.ts"
import { resultJson, runJson } from "../../src/evaluations/json.ts"
import { missedCutoffs, progressBar, summaryTable } from "../../src/evaluations/report.ts"
import { EvaluationService } from "../../src/evaluations/service.ts"
import { GatewayServicesLive } from "../composition.ts"
import { evaluateFlagOf } from "./evaluateFlags.ts"
import { namingFlags } from "./flagNames.ts"
import { operatorCaller } from "../../src/workspace.ts"

export type EvaluateFormat = "pretty" | "jsonl"

export const evaluateExitCodes = { done: 0, cutoffMissed: 1, failed: 1, usage: 2 } as const

const isUsageError = (error: { readonly _tag: string }) => error._tag === "InvalidRequest" || error._tag === "NotFound"

export const runEvaluate = (
  config: GatewayConfig,
  env: Readonly<Record<string, string | undefined>>,
  request: EvaluationRunRequest,
  format: EvaluateFormat,
  /** the workspace the run acts in (`--workspace`, checked) */
  workspace: string
): Effect.Effect<number> => {
  const terminal = process.stderr.isTTY === true
  let total = 0
  let done = 0
  let errors = 0
  const showProgress = () => {
    if (terminal) process.stderr.write(`\r${progressBar(done, total, errors)}`)
    else process.stderr.write(`${done}/${total} datapoints, ${errors} errors\n`)
  }
  return Effect.gen(function*() {
    const service = yield* EvaluationService
    const run = yield* service.run(request, operatorCaller(workspace), {
      onStart: (run) => {
        total = run.datapointCount
        process.stderr.write(`evaluation run ${run.id}: ${run.datapointCount} datapoints, variant ${run.variantName}\n`)
        if (terminal) showProgress()
      },
      onResult: (result) => {
        done++
        if (result.error !== undefined || Object.keys(result.evaluatorErrors).length > 0) errors++
        if (format === "jsonl") process.stdout.write(`${JSON.stringify(resultJson(result))}\n`)
        showProgress()
      }
    })
    if (terminal) process.stderr.write("\n")
    if (format === "jsonl") process.stdout.write(`${JSON.stringify({ summary: runJson(run) })}\n`)
    else yield* Console.log(summaryTable(run))
    if (run.status === "failed") return evaluateExitCodes.failed
    const missed = missedCutoffs(run)
    if (missed.length > 0) {
      yield* Console.error(`cutoff missed: ${missed.join(", ")}`)
      return evaluateExitCodes.cutoffMissed
    }
    return evaluateExitCodes.done
  }).pipe(
    Effect.provide(GatewayServicesLive(config, env)),
    // a usage error names the request's fields: said as the flags that gave them
    Effect.catch((error: { readonly _tag: string; readonly message: string }) => {
      const usage = isUsageError(error)
      return Effect.as(
        Console.error(usage ? namingFlags(error.message, evaluateFlagOf) : error.message),
        usage ? evaluateExitCodes.usage : evaluateExitCodes.failed
      )
    }),
    Effect.scoped
  )
}
