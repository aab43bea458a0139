/** POST /inference (spec 4.1) */
import * as Effect from "effect/Effect"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import { InferenceRequest } from "../../src/api/inference.ts"
import { checkClientTags, tagsWithApiKey } from "../../src/api/tags.ts"
import type * as Stream from "effect/Stream"
import { makeDecoder } from "../../src/decode.ts"
import { InvalidRequest, isGatewayError } from "../../src/errors.ts"
import { prepareInference } from "../../src/inference/prepare.ts"
import { type CompletedInference, runInference, streamInference } from "../../src/inference/run.ts"
import { inferenceWriteUnit } from "../../src/observability/inferenceRows.ts"
import { WriteQueue } from "../../src/observability/writeQueue.ts"
import { Gateway } from "../../src/services.ts"
import { headerProblem } from "../../src/tracing/trace.ts"
import { jsonResponse, readJsonBody } from "./respond.ts"
import { type RequestTrace, withRequestTrace } from "./tracing.ts"

const decodeInferenceRequest = makeDecoder(InferenceRequest)

export const sseHeaders = { "cache-control": "no-cache", "x-accel-buffering": "no" }

/**
 * What to do with a completed inference: queue it for storage, unless it is a dryrun or storage
 * is off. Queuing encodes the rows, so it waits until the answer has been written (the check
 * phase of this turn of the event loop, before any request that could target the inference is
 * read).
 */
const storeCompleted = (
  writeQueue: WriteQueue["Service"],
  request: InferenceRequest
): (completed: CompletedInference) => void =>
  request.dryrun === true || !writeQueue.enabled
    ? () => {}
    : (completed) => setImmediate(() => writeQueue.submit(inferenceWriteUnit(completed)))

/** What to do with a completed inference: store it (as above), and end the request's trace with it. */
export const onCompleted = (
  writeQueue: WriteQueue["Service"],
  request: InferenceRequest,
  trace: RequestTrace | undefined,
  bodyHeaders?: Readonly<Record<string, string>>
): (completed: CompletedInference) => void => {
  const store = storeCompleted(writeQueue, request)
  if (trace === undefined) return store
  const stream = request.stream === true
  return (completed) => {
    store(completed)
    trace.succeeded(completed, stream, bodyHeaders)
  }
}

/** `otlp_traces_extra_headers` must be sendable as HTTP headers */
const checkTraceHeaders = (headers: Readonly<Record<string, string>> | undefined): InvalidRequest | undefined => {
  for (const [name, value] of Object.entries(headers ?? {})) {
    const problem = headerProblem(name, value)
    if (problem !== undefined) return new InvalidRequest({ message: `otlp_traces_extra_headers: ${problem}` })
  }
  return undefined
}

export const sseResponse = (events: Stream.Stream<Uint8Array>) =>
  HttpServerResponse.stream(events, { contentType: "text/event-stream", headers: sseHeaders })

export const inferenceHandler = (apiKey: string | undefined) => withRequestTrace("/inference", (trace) => Effect.gen(function*() {
  const gateway = yield* Gateway
  const writeQueue = yield* WriteQueue
  const body = yield* readJsonBody(decodeInferenceRequest, gateway.config.gateway.maxRequestBodyBytes)
  const reserved = checkClientTags(body.tags, "tags")
  if (reserved !== undefined) return yield* reserved
  const badHeader = checkTraceHeaders(body.otlp_traces_extra_headers)
  if (badHeader !== undefined) return yield* badHeader
  const request = apiKey === undefined ? body : { ...body, tags: tagsWithApiKey(body.tags, apiKey) }
  const prepared = prepareInference(request, gateway.config, gateway.models, { limiter: gateway.limiter })
  if (isGatewayError(prepared)) return yield* prepared
  const completed = onCompleted(writeQueue, request, trace, body.otlp_traces_extra_headers)
  if (request.stream === true) return sseResponse((yield* streamInference(prepared, completed)).events)
  const result = yield* runInference(prepared)
  completed(result)
  return jsonResponse(JSON.stringify(result.body))
}))
