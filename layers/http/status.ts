/** GET /status and GET /health (spec 4.8) */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import { Observability } from "../../src/observability/store.ts"
import { Tracing } from "../../src/tracing/trace.ts"
import { jsonResponse } from "./respond.ts"

export const gatewayVersion = "0.1.0"

/** Running, with the write queue's counters when observability is on, and the trace exporter's when it is. */
export const statusHandler = Effect.map(Effect.all([Observability, Tracing]), ([{ store, stats }, tracing]) =>
  jsonResponse(JSON.stringify({
    status: "ok",
    version: gatewayVersion,
    ...(store === undefined ? {} : { observability: { backend: store.backend, ...stats() } }),
    ...(tracing.enabled ? { trace_export: tracing.stats() } : {})
  })))

const healthTimeout = Duration.seconds(2)

/** `{"gateway": "ok"}`, plus the database's state under its name; 503 when it does not answer. */
export const healthHandler = Effect.flatMap(Observability, ({ store }) => {
  if (store === undefined) return Effect.succeed(jsonResponse(JSON.stringify({ gateway: "ok" })))
  return store.ping.pipe(
    Effect.timeoutOrElse({ duration: healthTimeout, orElse: () => Effect.fail({ message: "no answer within 2 s" }) }),
    Effect.match({
      onSuccess: () => jsonResponse(JSON.stringify({ gateway: "ok", [store.backend]: "ok" })),
      onFailure: (error) =>
        jsonResponse(JSON.stringify({ gateway: "ok", [store.backend]: "error", error: `${store.backend}: ${error.message}` }), 503)
    })
  )
})
