/**
 * A fake OpenTelemetry collector: takes OTLP/HTTP JSON exports (`POST /v1/traces`) and keeps
 * them, with their headers, for the tests to look into. `status` sets what it answers.
 */
import * as http from "node:http"
import type { AddressInfo } from "node:net"

export interface ReceivedExport {
  readonly path: string
  readonly headers: http.IncomingHttpHeaders
  readonly body: any
}

/** A span as exported, with its attributes as a plain object and the export it came in. */
export interface ExportedSpan {
  readonly traceId: string
  readonly spanId: string
  readonly parentSpanId?: string
  readonly name: string
  readonly kind: number
  readonly start: bigint
  readonly end: bigint
  readonly attributes: Record<string, string | number | boolean>
  readonly status: { readonly code?: number; readonly message?: string }
  readonly events: Array<{ readonly name: string; readonly time: bigint; readonly attributes: Record<string, string | number | boolean> }>
  readonly resource: Record<string, string | number | boolean>
  readonly headers: http.IncomingHttpHeaders
}

export interface FakeCollector {
  /** the base URL, for OTEL_EXPORTER_OTLP_ENDPOINT */
  readonly url: string
  readonly exports: Array<ReceivedExport>
  status: number
  readonly spans: () => Array<ExportedSpan>
  readonly close: () => Promise<void>
}

const attributesOf = (list: ReadonlyArray<{ key: string; value: Record<string, unknown> }> = []) =>
  Object.fromEntries(list.map(({ key, value }) => {
    const [type, raw] = Object.entries(value)[0]
    return [key, type === "intValue" ? Number(raw) : raw as string | number | boolean]
  }))

export const startFakeCollector = async (): Promise<FakeCollector> => {
  const exports: Array<ReceivedExport> = []
  const server = http.createServer((request, response) => {
    let text = ""
    request.setEncoding("utf8")
    request.on("data", (data) => (text += data))
    request.on("end", () => {
      if (collector.status === 200) exports.push({ path: request.url ?? "", headers: request.headers, body: JSON.parse(text) })
      response.writeHead(collector.status, { "content-type": "application/json" })
      response.end("{}")
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const collector: FakeCollector = {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    exports,
    status: 200,
    spans: () =>
      exports.flatMap((received) =>
        received.body.resourceSpans.flatMap((resourceSpans: any) =>
          resourceSpans.scopeSpans.flatMap((scopeSpans: any) =>
            scopeSpans.spans.map((span: any): ExportedSpan => ({
              traceId: span.traceId,
              spanId: span.spanId,
              parentSpanId: span.parentSpanId,
              name: span.name,
              kind: span.kind,
              start: BigInt(span.startTimeUnixNano),
              end: BigInt(span.endTimeUnixNano),
              attributes: attributesOf(span.attributes),
              status: span.status,
              events: (span.events ?? []).map((event: any) => ({
                name: event.name,
                time: BigInt(event.timeUnixNano),
                attributes: attributesOf(event.attributes)
              })),
              resource: attributesOf(resourceSpans.resource.attributes),
              headers: received.headers
            }))
          )
        )
      ),
    close: () => new Promise((resolve) => server.close(() => resolve()))
  }
  return collector
}
