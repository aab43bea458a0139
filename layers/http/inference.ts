/** POST /inference (spec 4.1): decode, run through the InferenceService, answer as JSON or as events. */
import * as Effect from "effect/Effect"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import type * as Stream from "effect/Stream"
import { InferenceRequest } from "../../src/api/inference.ts"
import { checkClientTags } from "../../src/api/tags.ts"
import { makeDecoder } from "../../src/decode.ts"
import { InvalidRequest } from "../../src/errors.ts"
import type { CompletedInference } from "../../src/inference/run.ts"
import { InferenceService } from "../../src/inference/service.ts"
import { Configuration } from "../../src/services.ts"
import { headerProblem } from "../../src/tracing/trace.ts"
import { jsonResponse, readJsonBody } from "./respond.ts"
import { type RequestTrace, withRequestTrace } from "./tracing.ts"

const decodeInferenceRequest = makeDecoder(InferenceRequest)

export const sseHeaders = { "cache-control": "no-cache", "x-accel-buffering": "no" }

/** What to tell the request's trace, if it has one, once the inference is complete. */
export const traceCompleted = (
  trace: RequestTrace | undefined,
  stream: boolean,
  bodyHeaders?: Readonly<Record<string, string>>
): ((completed: CompletedInference) => void) | undefined =>
  trace === undefined ? undefined : (completed) => trace.succeeded(completed, stream, bodyHeaders)

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
  const config = yield* Configuration
  const inference = yield* InferenceService
  const body = yield* readJsonBody(decodeInferenceRequest, config.gateway.maxRequestBodyBytes)
  const reserved = checkClientTags(body.tags, "tags")
  if (reserved !== undefined) return yield* reserved
  const badHeader = checkTraceHeaders(body.otlp_traces_extra_headers)
  if (badHeader !== undefined) return yield* badHeader
  const prepared = yield* inference.prepare(body, apiKey)
  const stream = body.stream === true
  const completed = traceCompleted(trace, stream, body.otlp_traces_extra_headers)
  if (stream) return sseResponse((yield* inference.stream(prepared, completed)).events)
  const result = yield* inference.run(prepared, completed)
  return jsonResponse(JSON.stringify(result.body))
}))
