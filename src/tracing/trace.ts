/**
 * OpenTelemetry traces of inference requests (spec 6): what a finished request becomes as
 * spans, and the OTLP/HTTP JSON body that carries them. No I/O: the exporter in
 * `layers/tracing/` queues finished requests and sends these bodies.
 *
 * A request's trace: `POST <route>` (server span, the HTTP status) > `function_inference`
 * (function, variant, inference and episode ids) > `model_inference` (model, provider, tokens,
 * cached), with an event for each variant or provider that failed before another answered. A
 * request that failed has its server span only, with the error. Spans are built
 * when the request is over, from the timings the inference already keeps, so the hot path
 * pays nothing while tracing is off.
 */
import * as Context from "effect/Context"
import type { CompletedInference } from "../inference/run.ts"
import type { FailedAttempt } from "../inference/types.ts"

export const extraHeaderPrefix = "gateway-otlp-traces-extra-header-"
export const extraAttributePrefix = "gateway-otlp-traces-extra-attribute-"
export const extraResourcePrefix = "gateway-otlp-traces-extra-resource-"

/** What a request adds to its trace: export headers, span attributes, resource attributes. */
export interface TraceExtras {
  readonly headers: Readonly<Record<string, string>>
  readonly attributes: Readonly<Record<string, string>>
  readonly resource: Readonly<Record<string, string>>
}

/**
 * The extras of a request's headers (names in lower case, as Node gives them), then of its
 * `otlp_traces_extra_headers`, which win on equal names.
 */
export const traceExtrasOf = (
  requestHeaders: Readonly<Record<string, string | ReadonlyArray<string> | undefined>>,
  bodyHeaders: Readonly<Record<string, string>> = {}
): TraceExtras => {
  const headers: Record<string, string> = {}
  const attributes: Record<string, string> = {}
  const resource: Record<string, string> = {}
  for (const name in requestHeaders) {
    if (!name.startsWith("gateway-otlp-traces-extra-")) continue
    const value = requestHeaders[name]
    if (value === undefined) continue
    const text = typeof value === "string" ? value : value.join(", ")
    if (name.startsWith(extraHeaderPrefix)) headers[name.slice(extraHeaderPrefix.length)] = text
    else if (name.startsWith(extraAttributePrefix)) attributes[name.slice(extraAttributePrefix.length)] = text
    else if (name.startsWith(extraResourcePrefix)) resource[name.slice(extraResourcePrefix.length)] = text
  }
  return { headers: { ...headers, ...bodyHeaders }, attributes, resource }
}

/** The caller's span, from a W3C `traceparent` header: the gateway's spans join its trace. */
export interface ParentSpan {
  /** 32 hex digits */
  readonly traceId: string
  /** 16 hex digits */
  readonly spanId: string
  /** the caller records this trace: the gateway follows its decision */
  readonly sampled: boolean
}

const traceparentPattern = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/

/**
 * The parent a `traceparent` header names (W3C Trace Context), or undefined for a missing or
 * malformed one, which starts a new trace. Version `ff` and all-zero ids are invalid; a
 * version 00 header has exactly four fields, while later versions may append more.
 */
export const parseTraceparent = (header: string | undefined): ParentSpan | undefined => {
  if (header === undefined) return undefined
  const match = traceparentPattern.exec(header.trim())
  if (match === null) return undefined
  const [, version, traceId, spanId, flags, rest] = match
  if (version === "ff" || (version === "00" && rest !== undefined)) return undefined
  if (/^0+$/.test(traceId) || /^0+$/.test(spanId)) return undefined
  return { traceId, spanId, sampled: (parseInt(flags, 16) & 1) === 1 }
}

/** A request that is over: how it ended, and its inference when it produced one. */
export interface FinishedRequest {
  /** `POST /inference`, `POST /openai/v1/chat/completions` */
  readonly name: string
  readonly route: string
  readonly startMs: number
  readonly endMs: number
  readonly status: number
  /** why it failed: the error's kind and message */
  readonly error?: { readonly type: string; readonly message: string } | undefined
  readonly stream: boolean
  readonly completed?: CompletedInference | undefined
  readonly extras: TraceExtras
  /** the caller's span, whose trace the request's spans join */
  readonly parent?: ParentSpan | undefined
}

export type AttributeValue = string | number | boolean

export interface SpanRecord {
  readonly name: string
  /** OTLP SpanKind: 1 internal, 2 server, 3 client */
  readonly kind: 1 | 2 | 3
  /** index of the parent span in the trace's spans; undefined for the root */
  readonly parent?: number | undefined
  readonly startMs: number
  readonly endMs: number
  readonly attributes: Readonly<Record<string, AttributeValue | undefined>>
  /** the span's status is an error, with this message */
  readonly error?: string | undefined
  readonly events?: ReadonlyArray<SpanEvent>
}

/** Something that happened during a span: here, a variant or provider that failed before another answered. */
export interface SpanEvent {
  readonly name: string
  readonly atMs: number
  readonly attributes: Readonly<Record<string, AttributeValue>>
}

const failureEvents = (
  name: string,
  attribute: string,
  failures: ReadonlyArray<FailedAttempt<{ readonly message: string }>>
): Array<SpanEvent> =>
  failures.map((failed) => ({ name, atMs: failed.atMs, attributes: { [attribute]: failed.name, "exception.message": failed.failure.message } }))

/** The spans of a finished request, root first. */
export const spansOf = (request: FinishedRequest): Array<SpanRecord> => {
  // As OpenTelemetry's HTTP conventions have it, a server span is an error for a 5xx only (a
  // 4xx is the client's); either way `error.type` and the message say what went wrong.
  const root: SpanRecord = {
    name: request.name,
    kind: 2,
    startMs: request.startMs,
    endMs: request.endMs,
    attributes: {
      ...request.extras.attributes,
      "http.request.method": "POST",
      "http.route": request.route,
      "http.response.status_code": request.status,
      "error.type": request.error?.type,
      "gateway.error_message": request.error?.message
    },
    error: request.status >= 500 ? request.error?.message : undefined
  }
  const done = request.completed
  if (done === undefined) return [root]
  const { prepared, origin } = done
  const functionStart = prepared.startedAt
  const functionEnd = functionStart + done.processingTimeMs
  return [
    root,
    {
      name: "function_inference",
      kind: 1,
      parent: 0,
      startMs: functionStart,
      endMs: functionEnd,
      attributes: {
        ...request.extras.attributes,
        "gateway.function_name": prepared.functionName,
        "gateway.variant_name": done.variant.name,
        "gateway.inference_id": prepared.inferenceId,
        "gateway.episode_id": prepared.episodeId,
        "gateway.stream": request.stream,
        "gateway.processing_time_ms": done.processingTimeMs,
        "gateway.ttft_ms": done.ttftMs
      },
      events: failureEvents("variant_failed", "gateway.variant_name", done.failedVariants)
    },
    {
      name: "model_inference",
      kind: 3,
      parent: 1,
      // the model call ends the function's work (a stream's last chunk, or the answer)
      startMs: Math.max(functionStart, functionEnd - done.responseTimeMs),
      endMs: functionEnd,
      attributes: {
        ...request.extras.attributes,
        "gateway.model_name": origin.modelName,
        "gateway.model_provider_name": origin.providerName,
        "gateway.model_inference_id": origin.modelInferenceId,
        "gateway.cached": origin.cached,
        "gen_ai.provider.name": origin.provider.type,
        "gen_ai.request.model": origin.provider.modelName,
        "gen_ai.usage.input_tokens": done.usage.input_tokens,
        "gen_ai.usage.output_tokens": done.usage.output_tokens,
        "gen_ai.response.finish_reasons": done.finishReason
      },
      events: failureEvents("provider_failed", "gateway.model_provider_name", origin.failedProviders)
    }
  ]
}

// ---- OTLP/HTTP JSON (opentelemetry-proto's JSON mapping: ids in hex, times and 64-bit integers
// as decimal strings). Written as text rather than built as objects for JSON.stringify: a
// request's spans carry some thirty attributes, and the objects of that mapping cost more to
// build and collect than the text itself.

const quote = JSON.stringify

const attributeValue = (value: AttributeValue): string | undefined =>
  typeof value === "string"
    ? `{"stringValue":${quote(value)}}`
    : typeof value === "boolean"
    ? `{"boolValue":${value}}`
    : Number.isSafeInteger(value)
    ? `{"intValue":"${value}"}`
    : Number.isFinite(value)
    ? `{"doubleValue":${value}}`
    : undefined // JSON has no NaN nor infinities

const unixNano = (ms: number) => `"${Math.round(ms * 1000)}000"`

export interface TraceIds {
  /** 32 hex digits */
  readonly traceId: () => string
  /** 16 hex digits */
  readonly spanId: () => string
}

/** How an exporter writes spans as OTLP JSON. */
export interface SpanEncoder {
  /** The spans of a finished request as JSON text (comma-separated span objects), with fresh ids. */
  readonly encodeSpans: (request: FinishedRequest, ids: TraceIds) => string
  /** One export: the encoded spans of requests that share their resource, as an OTLP `ExportTraceServiceRequest`. */
  readonly exportBody: (resource: Readonly<Record<string, string>>, encodedSpans: ReadonlyArray<string>) => string
}

/**
 * A `SpanEncoder`, which remembers the JSON of the attribute names it met: the same few dozen
 * come back in every span, so each exporter makes one and keeps it.
 */
export const makeSpanEncoder = (): SpanEncoder => {
  const keyPrefixes = new Map<string, string>()
  const keyPrefix = (key: string): string => {
    let prefix = keyPrefixes.get(key)
    if (prefix === undefined) {
      prefix = `{"key":${quote(key)},"value":`
      // names from request headers could be anything: remember only a bounded number
      if (keyPrefixes.size < 1000) keyPrefixes.set(key, prefix)
    }
    return prefix
  }

  const attributesJson = (attributes: Readonly<Record<string, AttributeValue | undefined>>): string => {
    let text = ""
    for (const key in attributes) {
      const value = attributes[key]
      const encoded = value === undefined ? undefined : attributeValue(value)
      if (encoded !== undefined) text += `${text === "" ? "" : ","}${keyPrefix(key)}${encoded}}`
    }
    return `[${text}]`
  }

  const spanJson = (span: SpanRecord, traceId: string, spanId: string, parentSpanId: string | undefined): string =>
    `{"traceId":"${traceId}","spanId":"${spanId}",${parentSpanId === undefined ? "" : `"parentSpanId":"${parentSpanId}",`}` +
    `"name":${quote(span.name)},"kind":${span.kind},` +
    `"startTimeUnixNano":${unixNano(span.startMs)},"endTimeUnixNano":${unixNano(span.endMs)},` +
    `"attributes":${attributesJson(span.attributes)},` +
    (span.events === undefined || span.events.length === 0 ? "" : `"events":[${
      span.events.map((event) =>
        `{"timeUnixNano":${unixNano(event.atMs)},"name":${quote(event.name)},"attributes":${attributesJson(event.attributes)}}`
      ).join(",")
    }],`) +
    // STATUS_CODE_ERROR with the message; unset otherwise
    `"status":${span.error === undefined ? "{}" : `{"code":2,"message":${quote(span.error)}}`}}`

  return {
    encodeSpans: (request, ids) => {
      const traceId = request.parent?.traceId ?? ids.traceId()
      const spans = spansOf(request)
      const spanIds = spans.map(() => ids.spanId())
      return spans.map((span, index) =>
        spanJson(span, traceId, spanIds[index], span.parent === undefined ? request.parent?.spanId : spanIds[span.parent])
      ).join(",")
    },
    exportBody: (resource, encodedSpans) =>
      `{"resourceSpans":[{"resource":{"attributes":${attributesJson(resource)}},` +
      `"scopeSpans":[{"scope":{"name":"gateway"},"spans":[${encodedSpans.join(",")}]}]}]}`
  }
}

export interface TraceExportStats {
  /** requests whose spans the collector accepted */
  readonly exported: number
  /** requests dropped: the queue was full, or the collector failed or refused them */
  readonly dropped: number
}

/**
 * Trace export as the HTTP handlers see it. `enabled` is false when
 * `[gateway.export.otlp.traces]` is off: handlers then build nothing.
 */
export class Tracing extends Context.Service<Tracing, {
  readonly enabled: boolean
  /** the share of requests without a caller's decision that are traced */
  readonly sampleRatio: number
  /** encodes a finished request's spans and queues them; never waits, never fails */
  readonly submit: (request: FinishedRequest) => void
  readonly stats: () => TraceExportStats
}>()("gateway/Tracing") {}
