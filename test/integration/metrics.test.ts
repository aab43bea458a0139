/**
 * GET /metrics (issue 13, "Prometheus metrics"): after a few inferences against a fake OpenAI
 * upstream (plain, streamed, one whose first provider fails, one from the cache, one refused
 * by the rate limits), the scrape counts each by its labels, in Prometheus' text format; it is
 * open unless `[gateway.metrics] require_auth`; and `gateway-overhead-ms` is sent when
 * `[gateway] overhead_header` is on, not otherwise.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type ApiKey, createKey } from "../support/access.ts"
import { freshDatabase, type TestDatabase } from "../support/databases.ts"
import { type FakeOpenAi, openAiProviderToml, startFakeOpenAi, textCompletion } from "../support/fakeOpenAi.ts"
import { type RunningGateway, startGateway } from "../support/gateway.ts"
import { observabilityToml } from "../support/observability.ts"

const provider = (model: string, name: string, modelName: string, apiBase: string) => openAiProviderToml(model, name, modelName, apiBase, "none")

const config = (apiBase: string, extra: string) => `
${extra}
${observabilityToml()}

[models.pair]
routing = ["first", "second"]
${provider("pair", "first", "gpt-first", apiBase)}
${provider("pair", "second", "gpt-second", apiBase)}

[functions.assistant]
type = "chat"
[functions.assistant.variants.main]
type = "chat_completion"
model = "pair"

[[rate_limiting.rules]]
priority = 0
model_inferences_per_hour = 1
scope = [{ tag_key = "once", tag_value = "gateway::each" }]
`

/** the samples of a scrape: `name{labels} value` lines, by name and label text */
const samplesOf = (text: string): Map<string, number> => {
  const samples = new Map<string, number>()
  for (const line of text.split("\n")) {
    if (line === "" || line.startsWith("#")) continue
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{.*\})? (\S+)$/.exec(line)
    expect(match, `not a sample line: ${line}`).not.toBeNull()
    samples.set(`${match![1]}${match![2] ?? ""}`, Number(match![3]))
  }
  return samples
}

const input = (text: string) => ({ messages: [{ role: "user", content: text }] })

describe("GET /metrics", () => {
  let database: TestDatabase
  let fake: FakeOpenAi
  let gateway: RunningGateway
  let text: string
  let samples: Map<string, number>
  let contentType: string | null

  beforeAll(async () => {
    ;[database, fake] = await Promise.all([freshDatabase("postgres"), startFakeOpenAi()])
    gateway = await startGateway({
      config: config(fake.apiBase, "[gateway]\noverhead_header = true"),
      env: { GATEWAY_ANALYTICS_DB_URL: database.url, GATEWAY_RELATIONAL_DB_URL: database.url }
    })
    // plain, answered by the first provider
    fake.fallback = (request) =>
      request.body?.stream === true
        ? fake.defaultFallback(request)
        : { kind: "json", body: { ...textCompletion("hi"), usage: { prompt_tokens: 11, completion_tokens: 5, total_tokens: 16 } } }
    expect((await gateway.post("/inference", { function_name: "assistant", input: input("plain") })).status).toBe(200)
    // streamed
    expect((await gateway.stream("/inference", { function_name: "assistant", input: input("streamed"), stream: true })).status).toBe(200)
    // the first provider fails, the second answers
    fake.script.push({ kind: "json", status: 500, body: { error: { message: "down" } } })
    expect((await gateway.post("/inference", { function_name: "assistant", input: input("fallback") })).status).toBe(200)
    // written to the cache, then read from it
    const cached = { function_name: "assistant", input: input("cache me"), cache_options: { enabled: "on" } }
    expect((await gateway.post("/inference", cached)).status).toBe(200)
    await new Promise((resolve) => setTimeout(resolve, 500))
    const hit = await gateway.post("/inference", cached)
    expect(hit.status).toBe(200)
    // one call an hour for this tag: the second is refused
    const once = { function_name: "assistant", input: input("once"), tags: { once: "me" } }
    expect((await gateway.post("/inference", once)).status).toBe(200)
    expect((await gateway.post("/inference", once)).status).toBe(429)

    const response = await fetch(`${gateway.url}/metrics`)
    expect(response.status).toBe(200)
    contentType = response.headers.get("content-type")
    text = await response.text()
    samples = samplesOf(text)
  }, 60_000)
  afterAll(async () => {
    await gateway?.stop()
    await fake?.close()
    await database?.drop()
  })

  it("is Prometheus' text format: a HELP and a TYPE line before each metric's samples", () => {
    expect(contentType).toBe("text/plain; version=0.0.4; charset=utf-8")
    const types = [...text.matchAll(/^# TYPE (\S+) (counter|gauge|histogram)$/gm)].map((match) => match[1])
    expect(types).toEqual(expect.arrayContaining([
      "gateway_http_requests_total",
      "gateway_http_request_duration_seconds",
      "gateway_inference_duration_seconds",
      "gateway_time_to_first_token_seconds",
      "gateway_overhead_seconds",
      "gateway_provider_errors_total",
      "gateway_provider_fallbacks_total",
      "gateway_variant_fallbacks_total",
      "gateway_input_tokens_total",
      "gateway_output_tokens_total",
      "gateway_cache_hits_total",
      "gateway_cache_misses_total",
      "gateway_rate_limited_total",
      "gateway_write_queue_units",
      "gateway_write_queue_written_total",
      "gateway_write_queue_dropped_total",
      "gateway_write_queue_rows"
    ]))
    for (const type of types) expect(text).toContain(`# HELP ${type} `)
  })

  it("counts requests by route and status", () => {
    expect(samples.get(`gateway_http_requests_total{route="/inference",status="200"}`)).toBe(6)
    expect(samples.get(`gateway_http_requests_total{route="/inference",status="429"}`)).toBe(1)
    expect(samples.get(`gateway_http_request_duration_seconds_count{route="/inference"}`)).toBe(7)
    expect(samples.get(`gateway_rate_limited_total{route="/inference"}`)).toBe(1)
  })

  it("times inferences by function, variant, model and provider, and the first token of streams", () => {
    const labels = `function="assistant",variant="main",model="pair",provider="first"`
    // plain, streamed, cache write, cache hit, the one call allowed; the fallback was answered by "second"
    expect(samples.get(`gateway_inference_duration_seconds_count{${labels}}`)).toBe(5)
    expect(samples.get(`gateway_inference_duration_seconds_count{function="assistant",variant="main",model="pair",provider="second"}`)).toBe(1)
    expect(samples.get(`gateway_inference_duration_seconds_bucket{${labels},le="+Inf"}`)).toBe(5)
    expect(samples.get(`gateway_time_to_first_token_seconds_count{${labels}}`)).toBe(1)
    expect(samples.get(`gateway_overhead_seconds_count{route="/inference"}`)).toBe(6)
  })

  it("counts provider failures and fallbacks, tokens, and cache hits and misses", () => {
    expect(samples.get(`gateway_provider_errors_total{model="pair",provider="first",kind="upstream"}`)).toBe(1)
    expect(samples.get(`gateway_provider_fallbacks_total{model="pair",provider="first"}`)).toBe(1)
    // 11 input tokens for each plain answer from the provider (4), 12 for the stream; none for the cache hit
    expect(samples.get(`gateway_input_tokens_total{model="pair"}`)).toBe(4 * 11 + 12)
    expect(samples.get(`gateway_output_tokens_total{model="pair"}`)).toBe(4 * 5 + 7)
    expect(samples.get(`gateway_cache_hits_total{model="pair"}`)).toBe(1)
    expect(samples.get(`gateway_cache_misses_total{model="pair"}`)).toBe(1)
  })

  it("reads the write queue's counters", () => {
    expect(samples.get("gateway_write_queue_written_total")).toBeGreaterThanOrEqual(1)
    expect(samples.get("gateway_write_queue_dropped_total")).toBe(0)
  })

  it("sends gateway-overhead-ms when overhead_header is on, plain and streamed, on both routes", async () => {
    const plain = await gateway.post("/inference", { function_name: "assistant", input: input("header") })
    const streamed = await gateway.stream("/inference", { function_name: "assistant", input: input("header"), stream: true })
    const openai = await gateway.post("/openai/v1/chat/completions", {
      model: "gateway::function_name::assistant",
      messages: [{ role: "user", content: "header" }]
    })
    const openaiStreamed = await gateway.stream("/openai/v1/chat/completions", {
      model: "gateway::function_name::assistant",
      messages: [{ role: "user", content: "header" }],
      stream: true
    })
    for (const answer of [plain, streamed, openai, openaiStreamed]) {
      expect(answer.status).toBe(200)
      const header = answer.headers.get("gateway-overhead-ms")
      expect(header).toMatch(/^\d+\.\d{3}$/)
      expect(Number(header)).toBeGreaterThanOrEqual(0)
      expect(Number(header)).toBeLessThan(10_000)
    }
  })
})

describe("GET /metrics with require_auth", () => {
  let database: TestDatabase
  let fake: FakeOpenAi
  let gateway: RunningGateway
  let key: ApiKey

  beforeAll(async () => {
    ;[database, fake] = await Promise.all([freshDatabase("postgres"), startFakeOpenAi()])
    key = await createKey(database.url)
    gateway = await startGateway({
      config: `[gateway.auth]\nenabled = true\n[gateway.metrics]\nrequire_auth = true\n${config(fake.apiBase, "")}`,
      env: { GATEWAY_RELATIONAL_DB_URL: database.url, GATEWAY_ANALYTICS_DB_URL: database.url }
    })
  }, 60_000)
  afterAll(async () => {
    await gateway?.stop()
    await fake?.close()
    await database?.drop()
  })

  it("answers 401 without a key and 200 with one", async () => {
    const without = await fetch(`${gateway.url}/metrics`)
    expect(without.status).toBe(401)
    const withKey = await fetch(`${gateway.url}/metrics`, { headers: { authorization: `Bearer ${key.key}` } })
    expect(withKey.status).toBe(200)
    expect(await withKey.text()).toContain(`gateway_http_requests_total{route="/metrics",status="401"} 1`)
  })

  it("leaves gateway-overhead-ms out when overhead_header is off", async () => {
    const answer = await gateway.post("/inference", { function_name: "assistant", input: input("no header") }, {
      authorization: `Bearer ${key.key}`
    })
    expect(answer.status).toBe(200)
    expect(answer.headers.get("gateway-overhead-ms")).toBeNull()
  })
})
