/**
 * Trace export (spec 6) over OTLP/HTTP with JSON bodies, to the collector named by
 * OTEL_EXPORTER_OTLP_TRACES_ENDPOINT (used as is) or OTEL_EXPORTER_OTLP_ENDPOINT (plus
 * `/v1/traces`), when `[gateway.export.otlp.traces] enabled = true`.
 *
 * Finished requests wait in a bounded queue; a background fiber sends them every
 * `flushIntervalMs` (or as soon as `maxBatch` wait), one POST per set of extra headers and
 * resource attributes they share. Tracing is best effort: an export the collector fails or
 * refuses is dropped and counted, never retried, so a collector that is down costs neither
 * memory nor the inferences anything. On shutdown what is queued is sent once more. Exports go
 * through `HttpTransport`, the one outbound HTTP client.
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import type { GatewayConfig } from "../../src/config/types.ts"
import { randomHex } from "../../src/ids.ts"
import { HttpTransport } from "../../src/transport.ts"
import { type FinishedRequest, makeSpanEncoder, type TraceIds, Tracing } from "../../src/tracing/trace.ts"
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
  readonly sampleRatio: number
  readonly maxQueued: number
  readonly maxBatch: number
  readonly flushIntervalMs: number
  readonly timeoutMs: number
}

const randomIds: TraceIds = {
  traceId: () => randomHex(16),
  spanId: () => randomHex(8)
}

const disabled = Tracing.of({ enabled: false, sampleRatio: 0, submit: () => {}, stats: () => ({ exported: 0, dropped: 0 }) })

/** A request as queued: its spans already encoded (nothing of the request stays alive), and where they go. */
interface QueuedTrace {
  /** requests with the same key share an export */
  readonly key: string
  readonly headers: Readonly<Record<string, string>>
  readonly resource: Readonly<Record<string, string>>
  readonly spans: string
}

export const makeExporter = (options: ExporterOptions) =>
  Effect.gen(function*() {
    const transport = yield* HttpTransport
    const timeout = Duration.millis(options.timeoutMs)
    const queue: Array<QueuedTrace> = []
    let exported = 0
    let dropped = 0
    let failing = false
    const { nap, wake } = makeNap()
    const baseResource = { "service.name": options.serviceName }
    const { encodeSpans, exportBody } = makeSpanEncoder()

    const submit = (request: FinishedRequest): void => {
      if (queue.length >= options.maxQueued) {
        dropped++
        return
      }
      const { headers, resource } = request.extras
      const plain = Object.keys(headers).length === 0 && Object.keys(resource).length === 0
      queue.push(
        plain
          ? { key: "", headers: options.staticHeaders, resource: baseResource, spans: encodeSpans(request, randomIds) }
          : {
            key: JSON.stringify([headers, resource]),
            headers: { ...options.staticHeaders, ...headers },
            resource: { ...baseResource, ...resource },
            spans: encodeSpans(request, randomIds)
          }
      )
      if (queue.length === options.maxBatch) wake()
    }

    /** one POST of `traces`, which share their headers and resource, through the one outbound client */
    const send = (traces: ReadonlyArray<QueuedTrace>) =>
      transport.post({
        url: options.endpoint,
        headers: { ...traces[0].headers, "content-type": "application/json" },
        body: exportBody(traces[0].resource, traces.map((trace) => trace.spans))
      }).pipe(
        Effect.mapError((error) => error.message),
        Effect.timeoutOrElse({ duration: timeout, orElse: () => Effect.fail(`no answer within ${options.timeoutMs} ms`) }),
        Effect.flatMap((answer) =>
          answer.status >= 200 && answer.status < 300 ? Effect.void : Effect.fail(`the collector answered ${answer.status}`)
        ),
        Effect.matchEffect({
          onSuccess: () => {
            exported += traces.length
            const recovered = failing
            failing = false
            return recovered ? Effect.logInfo("trace export: the collector takes traces again") : Effect.void
          },
          onFailure: (message) => {
            dropped += traces.length
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
      const groups = new Map<string, Array<QueuedTrace>>()
      for (const trace of queue.splice(0, options.maxBatch)) {
        const group = groups.get(trace.key)
        if (group === undefined) groups.set(trace.key, [trace])
        else group.push(trace)
      }
      return Effect.forEach(groups.values(), send, { discard: true })
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

    return Tracing.of({ enabled: true, sampleRatio: options.sampleRatio, submit, stats: () => ({ exported, dropped }) })
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
        sampleRatio: settings.sampleRatio,
        maxQueued: 10_000,
        maxBatch: 512,
        // sent soon, so that encoded spans die young rather than burden the old generation
        flushIntervalMs: 100,
        timeoutMs: 5_000
      })
    })
  )
