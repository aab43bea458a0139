/**
 * Trace export (spec 6) end to end: the real gateway sends OTLP/HTTP JSON to a fake collector,
 * with the spans of each inference request, the extra headers, attributes and resource
 * attributes a request asks for, and nothing lost or blocked when the collector fails.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest"
import { uuidv7 } from "../../src/ids.ts"
import { sampleVariantOrder, seededRandom } from "../../src/inference/variantDraw.ts"
import { dummyHelloUsage } from "../../src/providers/dummy/index.ts"
import { type ExportedSpan, type FakeCollector, startFakeCollector } from "../support/fakeCollector.ts"
import { type RunningGateway, runGateway, startGateway, writeFiles } from "../support/gateway.ts"
import { poll } from "../support/observability.ts"

const functions = `
[functions.greet]
type = "chat"
[functions.greet.variants.only]
type = "chat_completion"
model = "dummy::hello"

[functions.broken]
type = "chat"
[functions.broken.variants.only]
type = "chat_completion"
model = "dummy::error"

# a variant whose model always fails, and one whose first provider does
[models.shaky]
routing = ["down", "up"]
[models.shaky.providers.down]
type = "dummy"
model_name = "error"
[models.shaky.providers.up]
type = "dummy"
model_name = "hello"

[functions.fallback]
type = "chat"
[functions.fallback.variants.failing]
type = "chat_completion"
model = "dummy::error"
weight = 1
[functions.fallback.variants.shaky]
type = "chat_completion"
model = "shaky"
weight = 1
`

const tracedConfig = `
[gateway.export.otlp.traces]
enabled = true
extra_headers = { "x-static" = "from-config", "x-tenant" = "from-config" }
${functions}`

const greeting = { function_name: "greet", input: { messages: [{ role: "user", content: "hi" }] } }

/** the spans of the trace holding `predicate`'s span, once the collector has them */
const traceOf = (collector: FakeCollector, what: string, predicate: (span: ExportedSpan) => boolean) =>
  poll(what, async () => {
    const spans = collector.spans()
    const found = spans.find(predicate)
    return found === undefined ? undefined : spans.filter((span) => span.traceId === found.traceId)
  })

const byName = (spans: ReadonlyArray<ExportedSpan>, name: string) => {
  const span = spans.find((candidate) => candidate.name === name)
  if (span === undefined) throw new Error(`no span named ${name} in ${JSON.stringify(spans.map((s) => s.name))}`)
  return span
}

const ofInference = (id: string) => (span: ExportedSpan) => span.attributes["gateway.inference_id"] === id

describe("OTLP trace export", () => {
  let collector: FakeCollector
  let gateway: RunningGateway
  beforeAll(async () => {
    collector = await startFakeCollector()
    gateway = await startGateway({ config: tracedConfig, env: { OTEL_EXPORTER_OTLP_ENDPOINT: collector.url } })
  })
  afterAll(async () => {
    await gateway.stop()
    await collector.close()
  })
  afterEach(() => {
    collector.status = 200
  })

  it("exports an inference as POST /inference > function_inference > model_inference, with its ids, usage and times", async () => {
    const answer = await gateway.post("/inference", greeting)
    expect(answer.status).toBe(200)
    const spans = await traceOf(collector, "the inference's trace", ofInference(answer.body.inference_id))
    expect(spans.map((span) => span.name).sort()).toEqual(["POST /inference", "function_inference", "model_inference"])

    const server = byName(spans, "POST /inference")
    const fn = byName(spans, "function_inference")
    const model = byName(spans, "model_inference")
    expect(server.kind).toBe(2)
    expect(server.parentSpanId).toBeUndefined()
    expect(server.attributes).toMatchObject({ "http.request.method": "POST", "http.route": "/inference", "http.response.status_code": 200 })
    expect(server.status.code).toBeUndefined()
    expect(fn.parentSpanId).toBe(server.spanId)
    expect(fn.attributes).toMatchObject({
      "gateway.function_name": "greet",
      "gateway.variant_name": "only",
      "gateway.inference_id": answer.body.inference_id,
      "gateway.episode_id": answer.body.episode_id,
      "gateway.stream": false
    })
    expect(model.parentSpanId).toBe(fn.spanId)
    expect(model.kind).toBe(3)
    expect(model.attributes).toMatchObject({
      "gateway.model_name": "dummy::hello",
      "gateway.model_provider_name": "dummy",
      "gateway.cached": false,
      "gen_ai.provider.name": "dummy",
      "gen_ai.request.model": "hello",
      "gen_ai.usage.input_tokens": dummyHelloUsage.input_tokens,
      "gen_ai.usage.output_tokens": dummyHelloUsage.output_tokens,
      "gen_ai.response.finish_reasons": "stop"
    })
    // ids as OTLP wants them, and children within their parents
    expect(server.traceId).toMatch(/^[0-9a-f]{32}$/)
    for (const span of spans) expect(span.spanId).toMatch(/^[0-9a-f]{16}$/)
    expect(new Set(spans.map((span) => span.spanId)).size).toBe(3)
    const now = BigInt(Date.now()) * 1_000_000n
    expect(server.start).toBeGreaterThan(now - 60_000_000_000n)
    expect(server.start).toBeLessThanOrEqual(fn.start)
    expect(fn.start).toBeLessThanOrEqual(model.start)
    expect(model.end).toBeLessThanOrEqual(fn.end)
    expect(fn.end).toBeLessThanOrEqual(server.end)
    // the export itself
    const exported = collector.exports.find((received) => JSON.stringify(received.body).includes(answer.body.inference_id))!
    expect(exported.path).toBe("/v1/traces")
    expect(exported.headers["content-type"]).toBe("application/json")
    expect(server.resource["service.name"]).toBe("gateway")
    expect(exported.headers["x-static"]).toBe("from-config")
  })

  it("takes extra export headers, span attributes and resource attributes from the request; its headers win over the configuration's", async () => {
    const answer = await gateway.post("/inference", greeting, {
      "gateway-otlp-traces-extra-header-x-tenant": "acme",
      "gateway-otlp-traces-extra-attribute-team": "red",
      "gateway-otlp-traces-extra-resource-deployment.region": "eu-west"
    })
    expect(answer.status).toBe(200)
    const spans = await traceOf(collector, "the inference's trace", ofInference(answer.body.inference_id))
    for (const span of spans) {
      expect(span.attributes.team).toBe("red")
      expect(span.resource).toEqual({ "service.name": "gateway", "deployment.region": "eu-west" })
      expect(span.headers["x-tenant"]).toBe("acme")
      expect(span.headers["x-static"]).toBe("from-config")
    }

    // otlp_traces_extra_headers in the body: the same as the header prefix, and wins over it
    const viaBody = await gateway.post("/inference", { ...greeting, otlp_traces_extra_headers: { "x-tenant": "globex", "x-trace-source": "body" } }, {
      "gateway-otlp-traces-extra-header-x-tenant": "acme"
    })
    expect(viaBody.status).toBe(200)
    const [fromBody] = await traceOf(collector, "the second inference's trace", ofInference(viaBody.body.inference_id))
    expect(fromBody.headers["x-tenant"]).toBe("globex")
    expect(fromBody.headers["x-trace-source"]).toBe("body")
  })

  it("sends requests with different headers or resources in different exports", async () => {
    const before = collector.exports.length
    const [red, blue, plain] = await Promise.all([
      gateway.post("/inference", greeting, { "gateway-otlp-traces-extra-header-x-tenant": "red" }),
      gateway.post("/inference", greeting, { "gateway-otlp-traces-extra-resource-tier": "blue" }),
      gateway.post("/inference", greeting)
    ])
    const ids = [red, blue, plain].map((answer) => answer.body.inference_id as string)
    await poll("the three traces", async () =>
      ids.every((id) => collector.spans().some(ofInference(id))) ? true : undefined)
    const exportOf = (id: string) => collector.exports.slice(before).find((received) => JSON.stringify(received.body).includes(id))!
    expect(new Set(ids.map(exportOf)).size).toBe(3)
    expect(exportOf(ids[0]).headers["x-tenant"]).toBe("red")
    expect(exportOf(ids[1]).headers["x-tenant"]).toBe("from-config")
    expect(JSON.stringify(exportOf(ids[1]).body.resourceSpans[0].resource)).toContain("tier")
  })

  it("a failed request has its server span only: an error status for a 5xx, not for a client's 4xx", async () => {
    const unknown = await gateway.post("/inference", { ...greeting, function_name: "nope" }, { "gateway-otlp-traces-extra-attribute-case": "unknown" })
    expect(unknown.status).toBe(404)
    const [clientError] = await traceOf(collector, "the 404's trace", (span) => span.attributes.case === "unknown")
    expect(clientError.name).toBe("POST /inference")
    expect(collector.spans().filter((span) => span.traceId === clientError.traceId)).toHaveLength(1)
    expect(clientError.attributes["http.response.status_code"]).toBe(404)
    expect(clientError.attributes["error.type"]).toBe("NotFound")
    expect(clientError.attributes["gateway.error_message"]).toBe(unknown.body.error)
    expect(clientError.status.code).toBeUndefined()

    const failing = await gateway.post("/inference", { ...greeting, function_name: "broken" }, { "gateway-otlp-traces-extra-attribute-case": "broken" })
    expect(failing.status).toBeGreaterThanOrEqual(500)
    const [serverError] = await traceOf(collector, "the failure's trace", (span) => span.attributes.case === "broken")
    expect(serverError.attributes["http.response.status_code"]).toBe(failing.status)
    expect(serverError.status).toEqual({ code: 2, message: failing.body.error })
  })

  it("records the variants and providers that failed before one answered as events of its spans", async () => {
    // an episode whose draw tries the failing variant first (the draw is seeded by the episode)
    let episode = uuidv7(Date.now())
    while (sampleVariantOrder([{ name: "failing", weight: 1 }, { name: "shaky", weight: 1 }], seededRandom(`fallback:${episode}`))[0] !== "failing") {
      episode = uuidv7(Date.now())
    }
    const answer = await gateway.post("/inference", { ...greeting, function_name: "fallback", episode_id: episode })
    expect(answer.status).toBe(200)
    expect(answer.body.variant_name).toBe("shaky")
    const spans = await traceOf(collector, "the fallback's trace", ofInference(answer.body.inference_id))
    const fn = byName(spans, "function_inference")
    const model = byName(spans, "model_inference")
    expect(fn.events.map((event) => [event.name, event.attributes["gateway.variant_name"]])).toEqual([["variant_failed", "failing"]])
    expect(fn.events[0].attributes["exception.message"]).toContain("Error sending request to Dummy provider for model 'error'.")
    expect(model.attributes["gateway.model_provider_name"]).toBe("up")
    expect(model.events.map((event) => [event.name, event.attributes["gateway.model_provider_name"]])).toEqual([["provider_failed", "down"]])
    expect(model.events[0].time).toBeGreaterThanOrEqual(fn.start)
    expect(model.events[0].time).toBeLessThanOrEqual(fn.end)
    // an inference without failures has no events
    const plain = await gateway.post("/inference", greeting)
    const plainSpans = await traceOf(collector, "a plain trace", ofInference(plain.body.inference_id))
    for (const span of plainSpans) expect(span.events).toEqual([])
  })

  it("joins the caller's trace named by traceparent, and follows the caller's decision not to record it", async () => {
    const traceId = "4bf92f3577b34da6a3ce929d0e0e4736"
    const callerSpan = "00f067aa0ba902b7"
    const joined = await gateway.post("/inference", greeting, { traceparent: `00-${traceId}-${callerSpan}-01` })
    const spans = await traceOf(collector, "the joined trace", ofInference(joined.body.inference_id))
    expect(spans.every((span) => span.traceId === traceId)).toBe(true)
    expect(byName(spans, "POST /inference").parentSpanId).toBe(callerSpan)

    // not sampled by the caller: not exported (a later request shows the export went by)
    await gateway.post("/inference", greeting, {
      traceparent: `00-${"1".repeat(32)}-${callerSpan}-00`,
      "gateway-otlp-traces-extra-attribute-case": "unsampled"
    })
    const after = await gateway.post("/inference", greeting)
    await traceOf(collector, "the later request's trace", ofInference(after.body.inference_id))
    expect(collector.spans().filter((span) => span.attributes.case === "unsampled")).toEqual([])

    // a malformed traceparent starts a trace of the gateway's own
    const malformed = await gateway.post("/inference", greeting, { traceparent: `00-${"0".repeat(32)}-${callerSpan}-01` })
    const own = await traceOf(collector, "the new trace", ofInference(malformed.body.inference_id))
    expect(own[0].traceId).not.toBe("0".repeat(32))
    expect(byName(own, "POST /inference").parentSpanId).toBeUndefined()
  })

  it("traces a stream when it ends, with its time to first token", async () => {
    const streamed = await gateway.stream("/inference", { ...greeting, stream: true })
    expect(streamed.status).toBe(200)
    const id = streamed.events.find((event) => event.inference_id !== undefined).inference_id
    const spans = await traceOf(collector, "the stream's trace", ofInference(id))
    const fn = byName(spans, "function_inference")
    expect(fn.attributes["gateway.stream"]).toBe(true)
    expect(typeof fn.attributes["gateway.ttft_ms"]).toBe("number")
    expect(byName(spans, "model_inference").attributes["gen_ai.usage.output_tokens"]).toBe(dummyHelloUsage.output_tokens)
  })

  it("traces the OpenAI-compatible endpoint under its own route", async () => {
    const answer = await gateway.post("/openai/v1/chat/completions", {
      model: "gateway::function_name::greet",
      messages: [{ role: "user", content: "hi" }]
    }, { "gateway-otlp-traces-extra-header-x-tenant": "openai-client" })
    expect(answer.status).toBe(200)
    const spans = await traceOf(collector, "the chat completion's trace", ofInference(answer.body.id))
    const server = byName(spans, "POST /openai/v1/chat/completions")
    expect(server.attributes["http.route"]).toBe("/openai/v1/chat/completions")
    expect(server.headers["x-tenant"]).toBe("openai-client")
  })

  it("refuses otlp_traces_extra_headers that cannot be sent as headers", async () => {
    const badName = await gateway.post("/inference", { ...greeting, otlp_traces_extra_headers: { "bad name": "x" } })
    expect(badName.status).toBe(400)
    expect(badName.body.error).toContain("otlp_traces_extra_headers")
    expect(badName.body.error).toContain("bad name")
    const badValue = await gateway.post("/inference", { ...greeting, otlp_traces_extra_headers: { "x-ok": "line\nbreak" } })
    expect(badValue.status).toBe(400)
    expect(badValue.body.error).toContain("x-ok")
  })

  it("drops and counts what a failing collector refuses, keeps answering, and exports again once it recovers", async () => {
    const before = (await gateway.get("/status")).body.trace_export
    collector.status = 503
    for (let i = 0; i < 3; i++) expect((await gateway.post("/inference", greeting)).status).toBe(200)
    const failed = await poll("the drops counted", async () => {
      const stats = (await gateway.get("/status")).body.trace_export
      return stats.dropped >= before.dropped + 3 ? stats : undefined
    })
    expect(failed.exported).toBe(before.exported)
    expect(gateway.log()).toContain("trace export failed")
    expect(gateway.log()).toContain("503")

    collector.status = 200
    const answer = await gateway.post("/inference", greeting)
    await traceOf(collector, "a trace after the recovery", ofInference(answer.body.inference_id))
    await poll("the recovery logged", async () => (gateway.log().includes("takes traces again") ? true : undefined))
  })
})

describe("OTLP trace export, around the edges", () => {
  it("is off unless configured: no export, no counters", async () => {
    const collector = await startFakeCollector()
    const gateway = await startGateway({ config: functions, env: { OTEL_EXPORTER_OTLP_ENDPOINT: collector.url } })
    try {
      expect((await gateway.post("/inference", greeting)).status).toBe(200)
      expect((await gateway.get("/status")).body.trace_export).toBeUndefined()
      await new Promise((resolve) => setTimeout(resolve, 1_500))
      expect(collector.exports).toEqual([])
    } finally {
      await gateway.stop()
      await collector.close()
    }
  })

  it("traces the share of requests sample_ratio says, unless the caller's traceparent decides", async () => {
    const collector = await startFakeCollector()
    const gateway = await startGateway({
      config: tracedConfig.replace("enabled = true", "enabled = true\nsample_ratio = 0"),
      env: { OTEL_EXPORTER_OTLP_ENDPOINT: collector.url }
    })
    try {
      const unsampled = await gateway.post("/inference", greeting)
      expect(unsampled.status).toBe(200)
      const sampled = await gateway.post("/inference", greeting, { traceparent: `00-${"a".repeat(32)}-${"b".repeat(16)}-01` })
      await traceOf(collector, "the caller-sampled trace", ofInference(sampled.body.inference_id))
      expect(collector.spans().filter(ofInference(unsampled.body.inference_id))).toEqual([])
      expect((await gateway.get("/status")).body.trace_export).toEqual({ exported: 1, dropped: 0 })
    } finally {
      await gateway.stop()
      await collector.close()
    }
  })

  it("a collector that is not there costs the inferences nothing", async () => {
    const gone = await startFakeCollector()
    await gone.close()
    const gateway = await startGateway({ config: tracedConfig, env: { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${gone.url}/v1/traces` } })
    try {
      const answers = await Promise.all(Array.from({ length: 20 }, () => gateway.post("/inference", greeting)))
      expect(answers.map((answer) => answer.status)).toEqual(Array(20).fill(200))
      const stats = await poll("the drops counted", async () => {
        const counters = (await gateway.get("/status")).body.trace_export
        return counters.dropped === 20 ? counters : undefined
      })
      expect(stats.exported).toBe(0)
    } finally {
      await gateway.stop()
    }
  })

  it("sends what is queued when stopped", async () => {
    const collector = await startFakeCollector()
    const gateway = await startGateway({ config: tracedConfig, env: { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${collector.url}/v1/traces` } })
    try {
      const answer = await gateway.post("/inference", greeting)
      expect(await gateway.stop()).toBe(0)
      expect(collector.spans().some(ofInference(answer.body.inference_id))).toBe(true)
    } finally {
      await collector.close()
    }
  })

  it("will not start enabled without a collector address, or with one that is not an http(s) URL", async () => {
    const dir = writeFiles({ "config.toml": tracedConfig })
    const noEndpoint = await runGateway(["--config-file", `${dir}/config.toml`], {
      env: { OTEL_EXPORTER_OTLP_ENDPOINT: undefined, OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: undefined, GATEWAY_BIND_ADDRESS: "127.0.0.1:0" }
    })
    expect(noEndpoint.code).not.toBe(0)
    expect(noEndpoint.stderr + noEndpoint.stdout).toContain("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
    const notUrl = await runGateway(["--config-file", `${dir}/config.toml`], {
      env: { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "collector:4318", GATEWAY_BIND_ADDRESS: "127.0.0.1:0" }
    })
    expect(notUrl.code).not.toBe(0)
    expect(notUrl.stderr + notUrl.stdout).toContain('OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: expected an http(s) URL, got "collector:4318"')
  })

  it("refuses extra_headers in the configuration that cannot be sent", async () => {
    const dir = writeFiles({
      "config.toml": tracedConfig.replace(`"x-static" = "from-config"`, `"bad header" = "x"`)
    })
    const result = await runGateway(["--config-file", `${dir}/config.toml`], {
      env: { OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:1", GATEWAY_BIND_ADDRESS: "127.0.0.1:0" }
    })
    expect(result.code).not.toBe(0)
    expect(result.stderr + result.stdout).toContain("gateway.export.otlp.traces.extra_headers")
    expect(result.stderr + result.stdout).toContain("bad header")
  })
})
