/**
 * The OpenAI Responses surface (issue 37): `POST /openai/v1/responses`, so that an OpenAI SDK's
 * `responses.create` and `responses.stream` work with `baseURL = <gateway>/openai/v1`. Errors
 * are in OpenAI's shape (the group's error family), so its SDKs raise their own typed errors.
 * Stateless for now: `store: true` is answered `store: false` with a `gateway-warning` header.
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import { droppedBuiltinTools } from "../../src/inference/builtinTools.ts"
import { InferenceService } from "../../src/inference/service.ts"
import { Metrics } from "../../src/metrics/metrics.ts"
import { decodeCreateResponse } from "../../src/openaiResponses/decode.ts"
import { translateCreateResponse } from "../../src/openaiResponses/request.ts"
import { responseBody } from "../../src/openaiResponses/response.ts"
import { responsesStreamEncoder } from "../../src/openaiResponses/stream.ts"
import { Configuration } from "../../src/services.ts"
import { overheadSoFar, sseResponse, traceCompleted, withWarnings } from "./inference.ts"
import { jsonResponse, readJsonObject } from "./respond.ts"
import { withRequestTrace } from "./tracing.ts"

const responsesRoute = "/openai/v1/responses"

export const createResponseHandler = (apiKey: string | undefined) => withRequestTrace(responsesRoute, (trace) => Effect.gen(function*() {
  const started = performance.now()
  const config = yield* Configuration
  const inference = yield* InferenceService
  const metrics = yield* Metrics
  const json = yield* readJsonObject(config.gateway.maxRequestBodyBytes)
  const body = yield* Effect.fromResult(decodeCreateResponse(json))
  const translated = yield* Effect.fromResult(translateCreateResponse(body, {
    isModel: (name) => config.models.has(name),
    functionType: (name) => config.functions.get(name)?.type,
    builtinTools: config.gateway.unsupportedBuiltinTools
  }, json))
  const prepared = yield* inference.prepare(translated.request, apiKey, translated.extras)
  const completed = traceCompleted(trace, translated.stream)
  const createdAt = Math.floor((yield* Clock.currentTimeMillis) / 1000)
  const header = config.gateway.overheadHeader
  if (translated.stream) {
    const stream = yield* inference.stream(prepared, completed, (variant, _otherCalls, origin) =>
      responsesStreamEncoder(prepared, variant, translated, createdAt, origin.provider.type))
    const overhead = overheadSoFar(metrics, responsesRoute, header, started, stream.providerMs)
    return sseResponse(stream.events, yield* withWarnings(overhead, [translated.warning, droppedBuiltinTools(prepared, stream.origin)], "openai responses"))
  }
  const result = yield* inference.run(prepared, completed)
  const answer = JSON.stringify(responseBody(result, translated, createdAt))
  const overhead = overheadSoFar(metrics, responsesRoute, header, started, result.providerMs)
  return jsonResponse(answer, 200, yield* withWarnings(overhead, [translated.warning, droppedBuiltinTools(prepared, result.origin)], "openai responses"))
}))
