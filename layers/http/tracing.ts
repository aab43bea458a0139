/**
 * The trace of an inference request (spec 6), when `[gateway.export.otlp.traces]` is on and the
 * request is sampled (by its `traceparent`, or by `sample_ratio`): the handler reports how the
 * request ended, and the finished request is queued for export with the extras its
 * `gateway-otlp-traces-extra-*` headers ask for. Otherwise the handler runs as it is.
 */
import * as Effect from "effect/Effect"
import * as HttpServerRequest from "effect/http/HttpServerRequest"
import type { GatewayError } from "../../src/errors.ts"
import type { CompletedInference } from "../../src/inference/run.ts"
import { type FinishedRequest, parseTraceparent, traceExtrasOf, Tracing } from "../../src/tracing/trace.ts"

export interface RequestTrace {
  /** the request ended with an inference (a stream: with its last chunk) */
  readonly succeeded: (completed: CompletedInference, stream: boolean, bodyHeaders?: Readonly<Record<string, string>>) => void
}

export const withRequestTrace = <A, E extends GatewayError, R>(
  route: string,
  handler: (trace: RequestTrace | undefined) => Effect.Effect<A, E, R>
): Effect.Effect<A, E, R | Tracing | HttpServerRequest.HttpServerRequest> =>
  Effect.flatMap(Tracing, (tracing) => {
    if (!tracing.enabled) return handler(undefined)
    return Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => {
      // the caller's trace decides when it names one; a share of the others is traced
      const parent = parseTraceparent(request.headers.traceparent)
      const sampled = parent === undefined ? tracing.sampleRatio >= 1 || Math.random() < tracing.sampleRatio : parent.sampled
      if (!sampled) return handler(undefined)
      const startMs = Date.now()
      const finish = (
        status: number,
        outcome: { readonly error?: FinishedRequest["error"]; readonly completed?: CompletedInference; readonly stream?: boolean },
        bodyHeaders?: Readonly<Record<string, string>>
      ) => {
        const finished: FinishedRequest = {
          name: `POST ${route}`,
          route,
          startMs,
          endMs: Date.now(),
          status,
          error: outcome.error,
          stream: outcome.stream ?? false,
          completed: outcome.completed,
          extras: traceExtrasOf(request.headers, bodyHeaders),
          parent
        }
        // encoded once the answer is written (as stored rows are), off the response's latency
        setImmediate(() => tracing.submit(finished))
      }
      return handler({ succeeded: (completed, stream, bodyHeaders) => finish(200, { completed, stream }, bodyHeaders) }).pipe(
        Effect.tapError((error) => Effect.sync(() => finish(error.status, { error: { type: error._tag, message: error.message } })))
      )
    })
  })
