import { describe, expect, it } from "vitest"
import { headerProblem } from "../../src/httpHeaders.ts"
import { type FinishedRequest, makeSpanEncoder, parseTraceparent, spansOf, traceExtrasOf } from "../../src/tracing/trace.ts"

const { encodeSpans, exportBody } = makeSpanEncoder()

const failed = (status: number): FinishedRequest => ({
  name: "POST /inference",
  route: "/inference",
  startMs: 1_700_000_000_000,
  endMs: 1_700_000_000_012.5,
  status,
  error: { type: "SomeError", message: "went wrong" },
  stream: false,
  extras: { headers: {}, attributes: { ratio: "1" }, resource: {} }
})

describe("trace extras from a request", () => {
  it("sorts the gateway-otlp-traces-extra-* headers into export headers, span attributes and resource attributes", () => {
    expect(traceExtrasOf({
      "gateway-otlp-traces-extra-header-x-tenant": "acme",
      "gateway-otlp-traces-extra-attribute-team": "red",
      "gateway-otlp-traces-extra-resource-region": "eu",
      "gateway-otlp-traces-extra-other-thing": "ignored",
      "content-type": "application/json"
    })).toEqual({ headers: { "x-tenant": "acme" }, attributes: { team: "red" }, resource: { region: "eu" } })
  })

  it("lets otlp_traces_extra_headers of the body win over the headers", () => {
    expect(traceExtrasOf({ "gateway-otlp-traces-extra-header-x-tenant": "acme" }, { "x-tenant": "globex" }).headers).toEqual({ "x-tenant": "globex" })
  })

  it("says why a header cannot be sent", () => {
    expect(headerProblem("x-ok", "fine value")).toBeUndefined()
    expect(headerProblem("bad name", "x")).toContain("bad name")
    expect(headerProblem("", "x")).toBeDefined()
    expect(headerProblem("x-ok", "a\r\nInjected: yes")).toContain("line break")
  })
})

describe("spans and their OTLP body", () => {
  it("marks a server span as an error for a 5xx only, naming the error either way", () => {
    const [clientError] = spansOf(failed(404))
    expect(clientError.error).toBeUndefined()
    expect(clientError.attributes).toMatchObject({ "error.type": "SomeError", "gateway.error_message": "went wrong", "http.response.status_code": 404 })
    expect(spansOf(failed(502))[0].error).toBe("went wrong")
  })

  it("writes times in nanoseconds, whole numbers as intValue strings, strings as stringValue, and the status", () => {
    let next = 0
    const spans = encodeSpans(failed(500), { traceId: () => "a".repeat(32), spanId: () => String(++next).padStart(16, "0") })
    const body = JSON.parse(exportBody({ "service.name": "gateway" }, [spans]))
    const span = body.resourceSpans[0].scopeSpans[0].spans[0]
    expect(body.resourceSpans[0].resource.attributes).toEqual([{ key: "service.name", value: { stringValue: "gateway" } }])
    expect(span).toMatchObject({
      traceId: "a".repeat(32),
      spanId: "0000000000000001",
      startTimeUnixNano: "1700000000000000000",
      endTimeUnixNano: "1700000000012500000",
      status: { code: 2, message: "went wrong" }
    })
    expect(span.parentSpanId).toBeUndefined()
    expect(span.attributes).toContainEqual({ key: "http.response.status_code", value: { intValue: "500" } })
    expect(span.attributes).toContainEqual({ key: "ratio", value: { stringValue: "1" } })
  })
})

describe("traceparent (W3C Trace Context)", () => {
  const traceId = "4bf92f3577b34da6a3ce929d0e0e4736"
  const spanId = "00f067aa0ba902b7"

  it("names the caller's trace, span and sampling decision", () => {
    expect(parseTraceparent(`00-${traceId}-${spanId}-01`)).toEqual({ traceId, spanId, sampled: true })
    expect(parseTraceparent(`00-${traceId}-${spanId}-00`)).toEqual({ traceId, spanId, sampled: false })
    expect(parseTraceparent(`00-${traceId}-${spanId}-03`)?.sampled).toBe(true)
    // a later version may add fields
    expect(parseTraceparent(`01-${traceId}-${spanId}-01-extra`)).toEqual({ traceId, spanId, sampled: true })
  })

  it.each([
    ["missing", undefined],
    ["upper case", `00-${traceId.toUpperCase()}-${spanId}-01`],
    ["a zero trace id", `00-${"0".repeat(32)}-${spanId}-01`],
    ["a zero span id", `00-${traceId}-${"0".repeat(16)}-01`],
    ["version ff", `ff-${traceId}-${spanId}-01`],
    ["a version 00 with more fields", `00-${traceId}-${spanId}-01-extra`],
    ["a short trace id", `00-${traceId.slice(1)}-${spanId}-01`],
    ["garbage", "hello"]
  ])("ignores %s", (_, header) => {
    expect(parseTraceparent(header)).toBeUndefined()
  })

  it("puts the request's spans in the caller's trace, under the caller's span", () => {
    let next = 0
    const ids = { traceId: () => "f".repeat(32), spanId: () => String(++next).padStart(16, "0") }
    const spans = JSON.parse(`[${encodeSpans({ ...failed(500), parent: { traceId, spanId, sampled: true } }, ids)}]`)
    expect(spans[0]).toMatchObject({ traceId, parentSpanId: spanId })
  })
})
