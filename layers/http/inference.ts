/** POST /inference (spec 4.1) */
import * as Effect from "effect/Effect"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import { InferenceRequest } from "../../src/api/inference.ts"
import { makeDecoder } from "../../src/decode.ts"
import { isGatewayError } from "../../src/errors.ts"
import { prepareInference } from "../../src/inference/prepare.ts"
import { runInference, streamInference } from "../../src/inference/run.ts"
import { inferenceWriteUnit } from "../../src/observability/inferenceRows.ts"
import { Observability } from "../../src/observability/store.ts"
import { Gateway } from "../../src/services.ts"
import { guarded, jsonResponse, readJsonBody } from "./respond.ts"

const decodeInferenceRequest = makeDecoder(InferenceRequest)

export const sseHeaders = { "cache-control": "no-cache", "x-accel-buffering": "no" }

export const inferenceHandler = guarded(Effect.gen(function*() {
  const gateway = yield* Gateway
  const observability = yield* Observability
  const request = yield* readJsonBody(decodeInferenceRequest, gateway.config.gateway.maxRequestBodyBytes)
  const prepared = prepareInference(request, gateway.config, gateway.models)
  if (isGatewayError(prepared)) return yield* prepared
  const store = request.dryrun !== true && observability.store !== undefined
  if (request.stream === true) {
    const stream = yield* streamInference(prepared, (completed) => {
      if (store) observability.submit(inferenceWriteUnit(completed))
    })
    return HttpServerResponse.stream(stream.events, { contentType: "text/event-stream", headers: sseHeaders })
  }
  const result = yield* runInference(prepared)
  if (store) observability.submit(inferenceWriteUnit(result))
  return jsonResponse(JSON.stringify(result.body))
}))
