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
import { inferenceResponseBody } from "../../src/native/response.ts"
import { inferenceStreamEncoder } from "../../src/native/stream.ts"
import { Metrics, type MetricsRecorder } from "../../src/metrics/metrics.ts"
import { Configuration } from "../../src/services.ts"
import { headerProblem } from "../../src/httpHeaders.ts"
import { jsonResponse, readJsonBody } from "./respond.ts"
import { type RequestTrace, withRequestTrace } from "./tracing.ts"
import type { Caller } from "../../src/workspace.ts"

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

export const sseResponse = (events: Stream.Stream<Uint8Array>, headers?: Readonly<Record<string, string>>) =>
  HttpServerResponse.stream(events, { contentType: "text/event-stream", headers: headers === undefined ? sseHeaders : { ...sseHeaders, ...headers } })

/**
 * An answer's headers: the overhead header (when on) and, when there are warnings (what the
 * caller should know though it did not stop the request), `gateway-warning`; each warning is
 * logged too, under `surface`.
 */
export const withWarnings = (
  headers: Readonly<Record<string, string>> | undefined,
  warnings: ReadonlyArray<string | undefined>,
  surface: string
): Effect.Effect<Readonly<Record<string, string>> | undefined> => {
  const said = warnings.filter((warning): warning is string => warning !== undefined)
  if (said.length === 0) return Effect.succeed(headers)
  return Effect.as(
    Effect.forEach(said, (warning) => Effect.logWarning(`${surface}: ${warning}`), { discard: true }),
    { ...headers, "gateway-warning": said.join("; ") }
  )
}

/**
 * The time the gateway added to this request so far: since its handler started (`started`,
 * from `performance.now()`), less the time the inference spent waiting on providers
 * (`providerMs`, from its result or its stream: a stream's until each provider's first chunk).
 * Recorded for `/metrics`; given back as the `gateway-overhead-ms` header when
 * `[gateway] overhead_header` is on.
 */
export const overheadSoFar = (
  metrics: MetricsRecorder,
  route: string,
  header: boolean,
  started: number,
  providerMs: number
): Readonly<Record<string, string>> | undefined => {
  const ms = Math.max(0, performance.now() - started - providerMs)
  metrics.overhead(route, ms / 1000)
  return header ? { "gateway-overhead-ms": ms.toFixed(3) } : undefined
}

export const inferenceHandler = (caller: Caller) => withRequestTrace("/inference", (trace) => Effect.gen(function*() {
  const started = performance.now()
  const config = yield* Configuration
  const inference = yield* InferenceService
  const metrics = yield* Metrics
  const body = yield* readJsonBody(decodeInferenceRequest, config.gateway.maxRequestBodyBytes)
  const reserved = checkClientTags(body.tags, "tags")
  if (reserved !== undefined) return yield* reserved
  const badHeader = checkTraceHeaders(body.otlp_traces_extra_headers)
  if (badHeader !== undefined) return yield* badHeader
  const prepared = yield* inference.prepare(body, caller)
  const stream = body.stream === true
  const completed = traceCompleted(trace, stream, body.otlp_traces_extra_headers)
  const header = config.gateway.overheadHeader
  if (stream) {
    const streamed = yield* inference.stream(prepared, completed, (variant) => inferenceStreamEncoder(prepared, variant))
    return sseResponse(streamed.events, overheadSoFar(metrics, "/inference", header, started, streamed.providerMs))
  }
  const result = yield* inference.run(prepared, completed)
  const answer = JSON.stringify(inferenceResponseBody(result))
  return jsonResponse(answer, 200, overheadSoFar(metrics, "/inference", header, started, result.providerMs))
}))
