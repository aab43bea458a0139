/** POST /inference (spec 4.1) */
import * as Effect from "effect/Effect"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import { InferenceRequest } from "../../src/api/inference.ts"
import { checkClientTags, tagsWithApiKey } from "../../src/api/tags.ts"
import type * as Stream from "effect/Stream"
import { makeDecoder } from "../../src/decode.ts"
import { isGatewayError } from "../../src/errors.ts"
import { prepareInference } from "../../src/inference/prepare.ts"
import { type CompletedInference, runInference, streamInference } from "../../src/inference/run.ts"
import { inferenceWriteUnit } from "../../src/observability/inferenceRows.ts"
import { Observability } from "../../src/observability/store.ts"
import { Gateway } from "../../src/services.ts"
import { jsonResponse, readJsonBody } from "./respond.ts"

const decodeInferenceRequest = makeDecoder(InferenceRequest)

export const sseHeaders = { "cache-control": "no-cache", "x-accel-buffering": "no" }

/**
 * What to do with a completed inference: queue it for storage, unless it is a dryrun or storage
 * is off. Queuing encodes the rows, so it waits until the answer has been written (the check
 * phase of this turn of the event loop, before any request that could target the inference is
 * read).
 */
export const storeCompleted = (
  observability: Observability["Service"],
  request: InferenceRequest
): (completed: CompletedInference) => void =>
  request.dryrun === true || observability.store === undefined
    ? () => {}
    : (completed) => setImmediate(() => observability.submit(inferenceWriteUnit(completed)))

export const sseResponse = (events: Stream.Stream<Uint8Array>) =>
  HttpServerResponse.stream(events, { contentType: "text/event-stream", headers: sseHeaders })

export const inferenceHandler = (apiKey: string | undefined) => Effect.gen(function*() {
  const gateway = yield* Gateway
  const observability = yield* Observability
  const body = yield* readJsonBody(decodeInferenceRequest, gateway.config.gateway.maxRequestBodyBytes)
  const reserved = checkClientTags(body.tags, "tags")
  if (reserved !== undefined) return yield* reserved
  const request = apiKey === undefined ? body : { ...body, tags: tagsWithApiKey(body.tags, apiKey) }
  const prepared = prepareInference(request, gateway.config, gateway.models, { limiter: gateway.limiter })
  if (isGatewayError(prepared)) return yield* prepared
  const store = storeCompleted(observability, request)
  if (request.stream === true) return sseResponse((yield* streamInference(prepared, store)).events)
  const result = yield* runInference(prepared)
  store(result)
  return jsonResponse(JSON.stringify(result.body))
})
