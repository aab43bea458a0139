/**
 * The optimization routes: `POST /v1/optimization/dicl` decodes the body and queues the DICL
 * example task, `GET /v1/optimization/dicl/{task_id}` reads it; `POST /v1/optimization/gepa`
 * launches a GEPA task, `GET` and `DELETE /v1/optimization/gepa/{task_id}` read and cancel it.
 * All answer JSON. A task of another workspace than the caller's is an unknown task.
 */
import * as Effect from "effect/Effect"
import * as HttpRouter from "effect/http/HttpRouter"
import { LaunchGepaRequest } from "../../src/api/gepa.ts"
import { CreateDiclExamplesRequest } from "../../src/api/optimization.ts"
import { makeDecoder } from "../../src/decode.ts"
import { DiclService } from "../../src/dicl/service.ts"
import { GepaService } from "../../src/optimization/gepa/service.ts"
import { Configuration } from "../../src/services.ts"
import { jsonResponse, readJsonBody } from "./respond.ts"
import type { Caller } from "../../src/workspace.ts"

const decodeCreate = makeDecoder(CreateDiclExamplesRequest)

export const createDiclExamplesHandler = (caller: Caller) =>
  Effect.gen(function*() {
    const config = yield* Configuration
    const request = yield* readJsonBody(decodeCreate, config.gateway.maxRequestBodyBytes)
    const service = yield* DiclService
    return jsonResponse(JSON.stringify(yield* service.create(request, caller)))
  })

export const getDiclTaskHandler = (caller: Caller) =>
  Effect.gen(function*() {
    const params = yield* HttpRouter.params
    const service = yield* DiclService
    return jsonResponse(JSON.stringify(yield* service.get(caller, params.task_id ?? "")))
  })

const decodeLaunch = makeDecoder(LaunchGepaRequest)

export const launchGepaHandler = (caller: Caller) =>
  Effect.gen(function*() {
    const config = yield* Configuration
    const request = yield* readJsonBody(decodeLaunch, config.gateway.maxRequestBodyBytes)
    const service = yield* GepaService
    return jsonResponse(JSON.stringify(yield* service.launch(request, caller)))
  })

export const getGepaTaskHandler = (caller: Caller) =>
  Effect.gen(function*() {
    const params = yield* HttpRouter.params
    const service = yield* GepaService
    return jsonResponse(JSON.stringify(yield* service.get(caller, params.task_id ?? "")))
  })

export const cancelGepaTaskHandler = (caller: Caller) =>
  Effect.gen(function*() {
    const params = yield* HttpRouter.params
    const service = yield* GepaService
    return jsonResponse(JSON.stringify(yield* service.cancel(caller, params.task_id ?? "")))
  })
