/** POST /inference (spec 4.1) */
import * as Effect from "effect/Effect"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import { InferenceRequest } from "../../src/api/inference.ts"
import { makeDecoder } from "../../src/decode.ts"
import { isGatewayError } from "../../src/errors.ts"
import { prepareInference } from "../../src/inference/prepare.ts"
import { runInference, streamInference } from "../../src/inference/run.ts"
import { Gateway } from "../../src/services.ts"
import { guarded, jsonResponse, readJsonBody } from "./respond.ts"

const decodeInferenceRequest = makeDecoder(InferenceRequest)

export const sseHeaders = { "cache-control": "no-cache", "x-accel-buffering": "no" }

export const inferenceHandler = guarded(Effect.gen(function*() {
  const gateway = yield* Gateway
  const request = yield* readJsonBody(decodeInferenceRequest, gateway.config.gateway.maxRequestBodyBytes)
  const prepared = prepareInference(request, gateway.config, gateway.models)
  if (isGatewayError(prepared)) return yield* prepared
  if (request.stream === true) {
    const stream = yield* streamInference(prepared)
    return HttpServerResponse.stream(stream.events, { contentType: "text/event-stream", headers: sseHeaders })
  }
  const result = yield* runInference(prepared)
  return jsonResponse(JSON.stringify(result.body))
}))
