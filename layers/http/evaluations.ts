/**
 * The evaluation run routes: `POST /v1/evaluations/run` answers the run's progress as
 * Server-Sent Events (a request that cannot run gets its 4xx as JSON before any event), and
 * runs are read back with `GET /v1/evaluations/runs[/{run_id}]`. A run is forked away from
 * the request: a client that disconnects stops receiving events, not the run.
 */
import * as Cause from "effect/Cause"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as HttpRouter from "effect/http/HttpRouter"
import * as Queue from "effect/Queue"
import * as Stream from "effect/Stream"
import { EvaluationRunRequest, maxResultsListed } from "../../src/api/evaluations.ts"
import { makeDecoder } from "../../src/decode.ts"
import type { GatewayError } from "../../src/errors.ts"
import { resultJson, runJson } from "../../src/evaluations/json.ts"
import { EvaluationService, type RunListener } from "../../src/evaluations/service.ts"
import type { EvaluationRunRecord } from "../../src/evaluations/store.ts"
import { Configuration } from "../../src/services.ts"
import { sseResponse } from "./inference.ts"
import { integerParam, queryParams } from "./query.ts"
import { jsonResponse, readJsonBody } from "./respond.ts"
import type { Caller } from "../../src/workspace.ts"

const decodeRun = makeDecoder(EvaluationRunRequest)
const textEncoder = new TextEncoder()

const event = (type: string, data: Record<string, unknown>): Uint8Array =>
  textEncoder.encode(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`)

export const runEvaluationHandler = (caller: Caller) =>
  Effect.gen(function*() {
    const config = yield* Configuration
    const request = yield* readJsonBody(decodeRun, config.gateway.maxRequestBodyBytes)
    const service = yield* EvaluationService
    const events = yield* Queue.unbounded<Uint8Array, Cause.Done>()
    const started = yield* Deferred.make<EvaluationRunRecord, GatewayError>()
    // cleared when the client goes away: the run goes on, its events are no longer kept
    let listening = true
    const send = (bytes: Uint8Array) => {
      if (listening) Queue.offerUnsafe(events, bytes)
    }
    const listener: RunListener = {
      onStart: (run) => {
        send(event("start", { run_id: run.id, datapoint_count: run.datapointCount, variant_name: run.variantName }))
        Deferred.doneUnsafe(started, Effect.succeed(run))
      },
      onResult: (result) => send(event("result", resultJson(result)))
    }
    yield* service.run(request, caller, listener).pipe(
      Effect.matchCauseEffect({
        onSuccess: (run) => Effect.sync(() => send(event("summary", runJson(run)))),
        onFailure: (cause) =>
          Effect.flatMap(Deferred.failCause(started, cause), (failedBeforeStart) =>
            failedBeforeStart
              ? Effect.void
              : Effect.andThen(Effect.logError("an evaluation run failed", cause), Effect.sync(() => send(event("error", { error: "the run failed; see the gateway log" })))))
      }),
      Effect.ensuring(Queue.end(events)),
      Effect.forkDetach
    )
    yield* Deferred.await(started)
    return sseResponse(Stream.fromQueue(events).pipe(Stream.ensuring(Effect.sync(() => {
      listening = false
    }))))
  })

/** `limit` (default and at most `maxResultsListed`) and `offset` of the query string */
const pageOf = (query: URLSearchParams) =>
  Effect.all({
    limit: integerParam(query, "limit", maxResultsListed, 0, maxResultsListed),
    offset: integerParam(query, "offset", 0, 0, 1_000_000_000)
  })

export const listEvaluationRunsHandler = (caller: Caller) => Effect.gen(function*() {
  const query = yield* queryParams
  const page = yield* pageOf(query)
  const runs = yield* (yield* EvaluationService).listRuns(caller.workspace, { functionName: query.get("function_name") ?? undefined, ...page })
  return jsonResponse(JSON.stringify({ runs: runs.map(runJson) }))
})

export const getEvaluationRunHandler = (caller: Caller) => Effect.gen(function*() {
  const runId = (yield* HttpRouter.params).run_id ?? ""
  const page = yield* pageOf(yield* queryParams)
  const { results, run } = yield* (yield* EvaluationService).getRun(caller.workspace, runId, page)
  return jsonResponse(JSON.stringify({ run: runJson(run), results: results.map(resultJson) }))
})
