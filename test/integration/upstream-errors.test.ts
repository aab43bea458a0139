/**
 * Upstream errors a user can act on (issue 12), through a running gateway and the fake OpenAI,
 * on /inference and the OpenAI route: once every provider failed, an upstream 400 is a 400 with
 * the provider's message; refused credentials a 502 saying so (never the key); 429s a 429 with
 * the largest Retry-After; upstream timeouts a 504; a 503 a 502.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import { type FakeOpenAi, type Reply, startFakeOpenAi } from "../support/fakeOpenAi.ts"
import { type RunningGateway, startGateway } from "../support/gateway.ts"

const config = (apiBase: string) => `
[models.two]
routing = ["a", "b"]
[models.two.providers.a]
type = "openai"
model_name = "gpt-a"
api_base = "${apiBase}"
api_key_location = "env::KEY_A"
timeouts = { non_streaming = { total_ms = 300 }, streaming = { ttft_ms = 300 } }
[models.two.providers.b]
type = "openai"
model_name = "gpt-b"
api_base = "${apiBase}"
api_key_location = "env::KEY_B"
timeouts = { non_streaming = { total_ms = 300 }, streaming = { ttft_ms = 300 } }

[functions.chat]
type = "chat"
[functions.chat.variants.v]
type = "chat_completion"
model = "two"
`

const input = { messages: [{ role: "user", content: "hi" }] }
const openAiRoute = "/openai/v1/chat/completions"
const openAiBody = { model: "gateway::function_name::chat", messages: [{ role: "user", content: "hi" }] }

const openAiError = (status: number, message: string, headers?: Record<string, string>): Reply => ({
  kind: "json",
  status,
  body: { error: { message, type: "invalid_request_error", param: null, code: null } },
  ...(headers === undefined ? {} : { headers })
})

describe("upstream errors after every fallback", () => {
  let fake: FakeOpenAi
  let gateway: RunningGateway

  beforeAll(async () => {
    fake = await startFakeOpenAi()
    gateway = await startGateway({ config: config(fake.apiBase), env: { KEY_A: "sk-secret-a-123456", KEY_B: "sk-secret-b-654321" } })
  })
  afterAll(async () => {
    await gateway?.stop()
    await fake?.close()
  })
  beforeEach(() => fake.reset())

  it("400 from every provider (the request's fault) -> 400 with each provider's message; not retried", async () => {
    fake.script.push(
      openAiError(400, "This model's maximum context length is 8192 tokens"),
      openAiError(422, "temperature: must be at most 2")
    )
    const response = await gateway.post("/inference", { function_name: "chat", input })
    expect(response.status, JSON.stringify(response.body)).toBe(400)
    expect(response.body.error).toContain(`provider "a": HTTP 400: This model's maximum context length is 8192 tokens`)
    expect(response.body.error).toContain(`provider "b": HTTP 422: temperature: must be at most 2`)
    expect(fake.requests).toHaveLength(2)

    fake.script.push(openAiError(400, "context too long"), openAiError(400, "context too long"))
    const openAi = await gateway.post(openAiRoute, openAiBody)
    expect(openAi.status).toBe(400)
    expect(openAi.body.error.type).toBe("invalid_request_error")
    expect(openAi.body.error.message).toContain("context too long")
  })

  it("401/403 -> 502 naming the provider and saying the credentials were refused, without the key", async () => {
    fake.script.push(
      openAiError(401, "Incorrect API key provided: sk-secret-a-123456."),
      openAiError(403, "key sk-secret-b-654321 may not use this model")
    )
    const response = await gateway.post("/inference", { function_name: "chat", input })
    expect(response.status).toBe(502)
    expect(response.body.error).toContain(`provider "a": credentials refused, HTTP 401: Incorrect API key provided: [REDACTED].`)
    expect(response.body.error).toContain(`provider "b": credentials refused, HTTP 403`)
    expect(response.body.error).not.toContain("sk-secret")

    fake.script.push(openAiError(401, "Incorrect API key provided: sk-secret-a-123456."), openAiError(401, "no"))
    const openAi = await gateway.post(openAiRoute, openAiBody)
    expect(openAi.status).toBe(502)
    expect(openAi.body.error).toMatchObject({ type: "server_error", code: "upstream_error" })
    expect(openAi.body.error.message).toContain("credentials refused")
    expect(openAi.body.error.message).not.toContain("sk-secret")
  })

  it("429 from both providers -> 429 with the largest Retry-After (seconds or an HTTP date), on both routes and streamed", async () => {
    const inTwentySeconds = new Date(Date.now() + 20_000).toUTCString()
    fake.script.push(openAiError(429, "slow down", { "retry-after": "7" }), openAiError(429, "quota", { "retry-after": inTwentySeconds }))
    const response = await gateway.post("/inference", { function_name: "chat", input })
    expect(response.status, JSON.stringify(response.body)).toBe(429)
    const retryAfter = Number(response.headers.get("retry-after"))
    expect(retryAfter).toBeGreaterThanOrEqual(18)
    expect(retryAfter).toBeLessThanOrEqual(20)
    expect(response.body.error).toContain(`provider "a": HTTP 429: slow down`)
    expect(response.body.error).toContain(`provider "b": HTTP 429: quota`)

    fake.script.push(openAiError(429, "slow down", { "retry-after": "3" }), openAiError(429, "quota", { "retry-after": "9" }))
    const openAi = await gateway.post(openAiRoute, openAiBody)
    expect(openAi.status).toBe(429)
    expect(openAi.headers.get("retry-after")).toBe("9")
    expect(openAi.body.error).toMatchObject({ type: "rate_limit_error", code: "rate_limit_exceeded" })

    fake.script.push(openAiError(429, "slow down", { "retry-after": "4" }), openAiError(429, "quota"))
    const streamed = await gateway.post("/inference", { function_name: "chat", input, stream: true })
    expect(streamed.status).toBe(429)
    expect(streamed.headers.get("retry-after")).toBe("4")
  })

  it("a 429 and a 503 -> 502: one upstream failed by its own fault", async () => {
    fake.script.push(openAiError(429, "slow down", { "retry-after": "5" }), openAiError(503, "overloaded"))
    const response = await gateway.post("/inference", { function_name: "chat", input })
    expect(response.status).toBe(502)
    expect(response.headers.get("retry-after")).toBeNull()
    expect(response.body.error).toContain("HTTP 503: overloaded")
  })

  it("503 -> 502 with the upstream's message", async () => {
    fake.script.push(openAiError(503, "overloaded"), openAiError(500, "internal"))
    const response = await gateway.post("/inference", { function_name: "chat", input })
    expect(response.status).toBe(502)
    expect(response.body.error).toContain(`provider "a": HTTP 503: overloaded`)
    expect(response.body.error).toContain(`provider "b": HTTP 500: internal`)
  })

  it("every upstream timing out -> 504, on both routes", async () => {
    const slow: Reply = { kind: "json", body: { never: "read" }, delayMs: 2_000 }
    fake.script.push(slow, slow)
    const response = await gateway.post("/inference", { function_name: "chat", input })
    expect(response.status).toBe(504)
    expect(response.body.error).toContain(`provider "a": timed out after 300 ms`)
    expect(response.body.error).toContain(`provider "b": timed out after 300 ms`)

    fake.script.push(slow, slow)
    const openAi = await gateway.post(openAiRoute, openAiBody)
    expect(openAi.status).toBe(504)
    expect(openAi.body.error).toMatchObject({ type: "timeout_error", code: "timeout" })
  })

  it("a timeout and a 400 -> 504: the request may be fine where the upstream answered in time", async () => {
    fake.script.push({ kind: "json", body: {}, delayMs: 2_000 }, openAiError(400, "bad parameter"))
    const response = await gateway.post("/inference", { function_name: "chat", input })
    expect(response.status).toBe(504)
    expect(response.body.error).toContain("bad parameter")
  })
})
