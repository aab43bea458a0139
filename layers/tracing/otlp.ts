/**
 * Trace export (spec 6) over OTLP/HTTP with JSON bodies, to the collector named by
 * OTEL_EXPORTER_OTLP_TRACES_ENDPOINT (used as is) or OTEL_EXPORTER_OTLP_ENDPOINT (plus
 * `/v1/traces`), when `[gateway.export.otlp.traces] enabled = true`.
 *
 * Finished requests wait in a bounded queue; a background fiber sends them every
 * `flushIntervalMs` (or as soon as `maxBatch` wait), one POST per set of extra headers and
 * resource attributes they share. Tracing is best effort: an export the collector fails or
 * refuses is dropped and counted, never retried, so a collector that is down costs neither
 * memory nor the inferences anything. On shutdown what is queued is sent once more.
 */
import { randomBytes } from "node:crypto"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import type { GatewayConfig } from "../../src/config/types.ts"
import { exportBody, type FinishedRequest, type TraceIds, Tracing } from "../../src/tracing/trace.ts"
import { makeNap } from "../nap.ts"
import { StartupError } from "../startup.ts"

type Env = Readonly<Record<string, string | undefined>>

export const tracesEndpointVariable = "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"
export const endpointVariable = "OTEL_EXPORTER_OTLP_ENDPOINT"

/** Where traces go, per the OpenTelemetry variables; a problem to report otherwise. */
export const tracesEndpoint = (env: Env): string | StartupError => {
  const traces = env[tracesEndpointVariable]
  const base = env[endpointVariable]
  const [variable, url] = traces !== undefined && traces !== ""
    ? [tracesEndpointVariable, traces]
    : base !== undefined && base !== ""
    ? [endpointVariable, `${base.replace(/\/+$/, "")}/v1/traces`]
    : [undefined, undefined]
  if (variable === undefined) {
    return new StartupError({
      message: `[gateway.export.otlp.traces] is enabled: set ${tracesEndpointVariable} (or ${endpointVariable}) to the collector's OTLP/HTTP address`
    })
  }
  if (!URL.canParse(url) || !/^https?:$/.test(new URL(url).protocol)) {
    return new StartupError({ message: `${variable}: expected an http(s) URL, got "${url}"` })
  }
  return url
}

export interface ExporterOptions {
  readonly endpoint: string
  readonly staticHeaders: Readonly<Record<string, string>>
  readonly serviceName: string
  readonly maxQueued: number
  readonly maxBatch: number
  readonly flushIntervalMs: number
  readonly timeoutMs: number
}

const randomIds: TraceIds = {
  traceId: () => randomBytes(16).toString("hex"),
  spanId: () => randomBytes(8).toString("hex")
}

const disabled = Tracing.of({ enabled: false, submit: () => {}, stats: () => ({ exported: 0, dropped: 0 }) })

export const makeExporter = (options: ExporterOptions) =>
  Effect.gen(function*() {
    const queue: Array<FinishedRequest> = []
    let exported = 0
    let dropped = 0
    let failing = false
    const { nap, wake } = makeNap()

    const submit = (request: FinishedRequest): void => {
      if (queue.length >= options.maxQueued) {
        dropped++
        return
      }
      queue.push(request)
      if (queue.length === options.maxBatch) wake()
    }

    /** one POST: `requests` share their headers and resource */
    const send = (headers: Record<string, string>, resource: Record<string, string>, requests: ReadonlyArray<FinishedRequest>) =>
      Effect.tryPromise({
        try: async (signal) => {
          const response = await fetch(options.endpoint, {
            method: "POST",
            headers: { ...headers, "content-type": "application/json" },
            body: exportBody(resource, requests, randomIds),
            signal: AbortSignal.any([signal, AbortSignal.timeout(options.timeoutMs)])
          })
          await response.arrayBuffer()
          if (!response.ok) throw new Error(`the collector answered ${response.status}`)
        },
        catch: (error) => (error instanceof Error ? error.message : String(error))
      }).pipe(
        Effect.matchEffect({
          onSuccess: () => {
            exported += requests.length
            const recovered = failing
            failing = false
            return recovered ? Effect.logInfo("trace export: the collector takes traces again") : Effect.void
          },
          onFailure: (message) => {
            dropped += requests.length
            const first = !failing
            failing = true
            return first
              ? Effect.logWarning(`trace export failed, dropping traces until the collector answers: ${message}`)
              : Effect.void
          }
        })
      )

    /** sends what is queued, one POST per group of requests with the same headers and resource */
    const flush = Effect.suspend(() => {
      const requests = queue.splice(0, options.maxBatch)
      const groups = new Map<string, { headers: Record<string, string>; resource: Record<string, string>; requests: Array<FinishedRequest> }>()
      for (const request of requests) {
        const headers = { ...options.staticHeaders, ...request.extras.headers }
        const resource = { "service.name": options.serviceName, ...request.extras.resource }
        const key = JSON.stringify([headers, resource])
        const group = groups.get(key)
        if (group === undefined) groups.set(key, { headers, resource, requests: [request] })
        else group.requests.push(request)
      }
      return Effect.forEach(groups.values(), (group) => send(group.headers, group.resource, group.requests), { discard: true })
    })

    const loop = Effect.forever(Effect.suspend(() =>
      Effect.andThen(queue.length < options.maxBatch ? nap(options.flushIntervalMs) : Effect.void, flush)
    ))
    const flusher = yield* Effect.forkScoped(loop)

    yield* Effect.addFinalizer(() =>
      Effect.gen(function*() {
        yield* Fiber.interrupt(flusher)
        yield* Effect.timeoutOption(
          Effect.gen(function*() {
            while (queue.length > 0) yield* flush
          }),
          Duration.millis(options.timeoutMs)
        )
      })
    )

    return Tracing.of({ enabled: true, submit, stats: () => ({ exported, dropped }) })
  })

export const TracingLive = (config: GatewayConfig, env: Env) =>
  Layer.effect(
    Tracing,
    Effect.gen(function*() {
      const settings = config.gateway.traceExport
      if (!settings.enabled) return disabled
      const endpoint = tracesEndpoint(env)
      if (endpoint instanceof StartupError) return yield* endpoint
      yield* Effect.logInfo(`trace export: sending OTLP traces to ${endpoint}`)
      return yield* makeExporter({
        endpoint,
        staticHeaders: settings.extraHeaders,
        serviceName: env.OTEL_SERVICE_NAME || "gateway",
        maxQueued: 10_000,
        maxBatch: 512,
        flushIntervalMs: 1_000,
        timeoutMs: 5_000
      })
    })
  )
