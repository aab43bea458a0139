/**
 * Fallbacks through the `openai` provider: providers in routing order, variants by sampled
 * order (seeded by the episode), retries, and timeouts (total and time to first token).
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import { v7 as uuidv7 } from "uuid"
import { type FakeOpenAi, type Reply, startFakeOpenAi, textCompletion, textStreamChunks } from "../support/fakeOpenAi.ts"
import { type RunningGateway, startGateway } from "../support/gateway.ts"

const provider = (model: string, name: string, modelName: string, apiBase: string, key: string, extra = "") => `
[models.${model}.providers.${name}]
type = "openai"
model_name = "${modelName}"
api_base = "${apiBase}"
api_key_location = "env::${key}"
${extra}`

const config = (apiBase: string) => `
[models.two]
routing = ["a", "b"]
${provider("two", "a", "gpt-a", apiBase, "TEST_KEY_A")}
${provider("two", "b", "gpt-b", apiBase, "TEST_KEY_B")}

[models.va]
routing = ["only"]
${provider("va", "only", "gpt-va", apiBase, "TEST_KEY_A")}

[models.vb]
routing = ["only"]
${provider("vb", "only", "gpt-vb", apiBase, "TEST_KEY_B")}

[models.single]
routing = ["only"]
${provider("single", "only", "gpt-single", apiBase, "TEST_KEY_A")}

[models.timed]
routing = ["slow", "fast"]
${provider("timed", "slow", "gpt-slow", apiBase, "TEST_KEY_A", "timeouts = { non_streaming = { total_ms = 200 }, streaming = { ttft_ms = 200 } }")}
${provider("timed", "fast", "gpt-fast", apiBase, "TEST_KEY_B", "timeouts = { non_streaming = { total_ms = 200 }, streaming = { ttft_ms = 200 } }")}

[functions.routed]
type = "chat"
[functions.routed.variants.v]
type = "chat_completion"
model = "two"

[functions.split]
type = "chat"
[functions.split.variants.a]
type = "chat_completion"
model = "va"
[functions.split.variants.b]
type = "chat_completion"
model = "vb"

[functions.retried]
type = "chat"
[functions.retried.variants.v]
type = "chat_completion"
model = "single"
retries = { num_retries = 2, max_delay_s = 0.1 }

[models.stream_bounded]
routing = ["only"]
${provider("stream_bounded", "only", "gpt-bounded", apiBase, "TEST_KEY_A", "timeouts = { streaming = { total_ms = 300 } }")}

[functions.stream_bounded]
type = "chat"
[functions.stream_bounded.variants.v]
type = "chat_completion"
model = "stream_bounded"

[functions.variant_stream_bounded]
type = "chat"
[functions.variant_stream_bounded.variants.v]
type = "chat_completion"
model = "single"
timeouts = { streaming = { total_ms = 300 } }

[functions.timed]
type = "chat"
[functions.timed.variants.v]
type = "chat_completion"
model = "timed"

[functions.variant_timeout]
type = "chat"
[functions.variant_timeout.variants.v]
type = "chat_completion"
model = "single"
timeouts = { non_streaming = { total_ms = 200 } }
`

const input = { messages: [{ role: "user", content: "hi" }] }
const failure = (status: number, message: string): Reply => ({ kind: "json", status, body: { error: { message } } })
const slow = (ms: number): Reply => ({ kind: "json", delayMs: ms, body: textCompletion("too late") })

describe("fallbacks, retries and timeouts on the openai provider", () => {
  let fake: FakeOpenAi
  let gateway: RunningGateway

  beforeAll(async () => {
    fake = await startFakeOpenAi()
    gateway = await startGateway({ config: config(fake.apiBase), env: { TEST_KEY_A: "key-a", TEST_KEY_B: "key-b" } })
  })
  afterAll(async () => {
    await gateway?.stop()
    await fake?.close()
  })
  beforeEach(() => fake.reset())

  const models = () => fake.requests.map((request) => request.body.model)

  describe("providers", () => {
    it("falls back to the next provider in routing order; both received the request", async () => {
      fake.script.push(failure(500, "a is down"))
      const response = await gateway.post("/inference", { function_name: "routed", input })
      expect(response.status, JSON.stringify(response.body)).toBe(200)
      expect(response.body.content).toEqual([{ type: "text", text: "Hello from fake OpenAI" }])
      expect(models()).toEqual(["gpt-a", "gpt-b"])
      expect(fake.requests.map((request) => request.headers.authorization)).toEqual(["Bearer key-a", "Bearer key-b"])
      expect(fake.requests[1].body.messages).toEqual(fake.requests[0].body.messages)
    })

    it("does not call the second provider when the first answers", async () => {
      const response = await gateway.post("/inference", { function_name: "routed", input })
      expect(response.status).toBe(200)
      expect(models()).toEqual(["gpt-a"])
    })

    it("answers 502 (a 5xx is an upstream's fault, whatever the others said) listing each provider's error, in routing order, when every provider fails", async () => {
      fake.script.push(failure(500, "a is down"), failure(429, "b is rate limited"))
      const response = await gateway.post("/inference", { function_name: "routed", input })
      expect(response.status).toBe(502)
      expect(Object.keys(response.body)).toEqual(["error"])
      const message: string = response.body.error
      expect(message).toContain("every provider of model \"two\" failed")
      expect(message).toContain("provider \"a\": HTTP 500: a is down")
      expect(message).toContain("provider \"b\": HTTP 429: b is rate limited")
      expect(message.indexOf("provider \"a\"")).toBeLessThan(message.indexOf("provider \"b\""))
      expect(models()).toEqual(["gpt-a", "gpt-b"])
    })

    it("falls back to the next provider for a streamed inference that fails before its first chunk", async () => {
      fake.script.push(failure(502, "a is down"))
      const { status, events } = await gateway.stream("/inference", { function_name: "routed", input, stream: true })
      expect(status).toBe(200)
      expect(events.at(-1)).toBe("[DONE]")
      expect(events.slice(0, -2).flatMap((event) => event.content).map((delta: any) => delta.text).join("")).toBe("Hello from fake")
      expect(models()).toEqual(["gpt-a", "gpt-b"])
      expect(fake.requests.every((request) => request.body.stream === true)).toBe(true)
    })
  })

  describe("variants", () => {
    /** an episode whose sampled order starts with `first`: found by asking the gateway */
    const episodeStartingWith = async (first: string): Promise<string> => {
      for (let i = 0; i < 40; i++) {
        const episodeId = uuidv7()
        const response = await gateway.post("/inference", { function_name: "split", input, episode_id: episodeId })
        expect(response.status).toBe(200)
        if (response.body.variant_name === first) return episodeId
      }
      throw new Error(`no episode started with variant ${first}`)
    }

    it("samples the same variant for every inference of an episode", async () => {
      const episodeId = uuidv7()
      const names = new Set<string>()
      for (let i = 0; i < 5; i++) {
        const response = await gateway.post("/inference", { function_name: "split", input, episode_id: episodeId })
        expect(response.status).toBe(200)
        names.add(response.body.variant_name)
      }
      expect(names.size).toBe(1)
    })

    it("falls back to the other variant when the first one sampled fails", async () => {
      const episodeId = await episodeStartingWith("a")
      fake.requests.length = 0
      fake.fallback = (request) => request.body.model === "gpt-va" ? failure(500, "va is down") : fake.defaultFallback(request)
      const response = await gateway.post("/inference", { function_name: "split", input, episode_id: episodeId })
      expect(response.status, JSON.stringify(response.body)).toBe(200)
      expect(response.body.variant_name).toBe("b")
      expect(response.body.episode_id).toBe(episodeId)
      expect(models()).toEqual(["gpt-va", "gpt-vb"])
    })

    it("does not try another variant when the first one sampled answers", async () => {
      const episodeId = await episodeStartingWith("b")
      fake.requests.length = 0
      fake.fallback = (request) => request.body.model === "gpt-va" ? failure(500, "va is down") : fake.defaultFallback(request)
      const response = await gateway.post("/inference", { function_name: "split", input, episode_id: episodeId })
      expect(response.status).toBe(200)
      expect(response.body.variant_name).toBe("b")
      expect(models()).toEqual(["gpt-vb"])
    })

    it("answers 502 listing each variant's error when every variant fails", async () => {
      const episodeId = await episodeStartingWith("a")
      fake.requests.length = 0
      fake.fallback = (request) => failure(500, `${request.body.model} is down`)
      const response = await gateway.post("/inference", { function_name: "split", input, episode_id: episodeId })
      expect(response.status).toBe(502)
      expect(Object.keys(response.body)).toEqual(["error"])
      expect(response.body.error).toMatch(
        /^every variant failed: variant "a": .*HTTP 500: gpt-va is down.*; variant "b": .*HTTP 500: gpt-vb is down/
      )
      expect(models()).toEqual(["gpt-va", "gpt-vb"])
    })

    it("passes one variant's own error through (502) when only that variant was tried", async () => {
      fake.fallback = (request) => failure(500, `${request.body.model} is down`)
      const response = await gateway.post("/inference", { function_name: "split", variant_name: "a", input })
      expect(response.status).toBe(502)
      expect(response.body.error).toContain("every provider of model \"va\" failed")
      expect(response.body.error).toContain("gpt-va is down")
      expect(response.body.error).not.toContain("every variant failed")
      expect(models()).toEqual(["gpt-va"])
    })
  })

  describe("retries", () => {
    it("calls the upstream again until it answers, within num_retries", async () => {
      fake.script.push(failure(500, "flaky 1"), failure(503, "flaky 2"))
      const started = Date.now()
      const response = await gateway.post("/inference", { function_name: "retried", input })
      expect(response.status, JSON.stringify(response.body)).toBe(200)
      expect(models()).toEqual(["gpt-single", "gpt-single", "gpt-single"])
      // max_delay_s = 0.1 bounds each pause
      expect(Date.now() - started).toBeLessThan(1_000)
    })

    it("gives up after num_retries + 1 attempts with the last error", async () => {
      fake.fallback = () => failure(500, "always down")
      const response = await gateway.post("/inference", { function_name: "retried", input })
      expect(response.status).toBe(502)
      expect(response.body.error).toContain("always down")
      expect(fake.requests).toHaveLength(3)
    })

    it("does not retry a variant without retries", async () => {
      fake.fallback = (request) => failure(500, `${request.body.model} is down`)
      const response = await gateway.post("/inference", { function_name: "split", variant_name: "b", input })
      expect(response.status).toBe(502)
      expect(fake.requests).toHaveLength(1)
    })
  })

  describe("timeouts", () => {
    it("falls back to the next provider when one exceeds its non_streaming total_ms, and abandons the slow call", async () => {
      const abortedBefore = fake.aborted()
      fake.script.push(slow(2_000))
      const started = Date.now()
      const response = await gateway.post("/inference", { function_name: "timed", input })
      expect(response.status, JSON.stringify(response.body)).toBe(200)
      expect(response.body.content).toEqual([{ type: "text", text: "Hello from fake OpenAI" }])
      expect(Date.now() - started).toBeLessThan(1_500)
      expect(models()).toEqual(["gpt-slow", "gpt-fast"])
      const deadline = Date.now() + 2_000
      while (fake.aborted() === abortedBefore && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20))
      expect(fake.aborted()).toBe(abortedBefore + 1)
    })

    it("answers 504 when every provider times out", async () => {
      fake.script.push(slow(2_000), slow(2_000))
      const started = Date.now()
      const response = await gateway.post("/inference", { function_name: "timed", input })
      expect(response.status).toBe(504)
      expect(response.body.error).toContain("provider \"slow\": timed out after 200 ms")
      expect(response.body.error).toContain("provider \"fast\": timed out after 200 ms")
      expect(Date.now() - started).toBeLessThan(1_500)
      expect(models()).toEqual(["gpt-slow", "gpt-fast"])
    })

    it("answers 502 when one provider timed out and another failed otherwise", async () => {
      fake.script.push(slow(2_000), failure(500, "fast is down"))
      const response = await gateway.post("/inference", { function_name: "timed", input })
      expect(response.status).toBe(502)
      expect(response.body.error).toContain("timed out after 200 ms")
      expect(response.body.error).toContain("fast is down")
    })

    it("falls back to the next provider when the first streams no chunk within ttft_ms, and abandons the slow call", async () => {
      const abortedBefore = fake.aborted()
      fake.script.push({ kind: "stream", delayMs: 2_000, chunks: textStreamChunks(["late"]) })
      const started = Date.now()
      const { status, events } = await gateway.stream("/inference", { function_name: "timed", input, stream: true })
      expect(status).toBe(200)
      expect(events.slice(0, -2).flatMap((event) => event.content).map((delta: any) => delta.text).join("")).toBe("Hello from fake")
      expect(Date.now() - started).toBeLessThan(1_500)
      expect(models()).toEqual(["gpt-slow", "gpt-fast"])
      const deadline = Date.now() + 2_000
      while (fake.aborted() === abortedBefore && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20))
      expect(fake.aborted()).toBe(abortedBefore + 1)
    })

    it("answers 504 when no provider streams a first chunk within ttft_ms (headers sent or not)", async () => {
      fake.script.push(
        { kind: "stream", delayMs: 2_000, chunks: textStreamChunks(["late"]) },
        // the status line and headers come at once, the first chunk never does
        { kind: "stream", hangAfter: 0, chunks: textStreamChunks(["never"]) }
      )
      const started = Date.now()
      const response = await gateway.post("/inference", { function_name: "timed", input, stream: true })
      expect(response.status).toBe(504)
      expect(response.body.error).toContain("timed out after 200 ms")
      expect(Date.now() - started).toBeLessThan(1_500)
      expect(models()).toEqual(["gpt-slow", "gpt-fast"])
    })

    it("does not apply ttft_ms once the stream has started", async () => {
      fake.script.push({ kind: "stream", chunkDelayMs: 60, chunks: textStreamChunks(["a", "b", "c"]) })
      const { status, events } = await gateway.stream("/inference", { function_name: "timed", input, stream: true })
      expect(status).toBe(200)
      expect(events.at(-1)).toBe("[DONE]")
      expect(events.slice(0, -2).flatMap((event) => event.content).map((delta: any) => delta.text).join("")).toBe("abc")
      expect(models()).toEqual(["gpt-slow"])
    })

    it("ends a stream that outlasts the provider's streaming total_ms with an error event, and abandons the upstream", async () => {
      const abortedBefore = fake.aborted()
      fake.script.push({ kind: "stream", chunkDelayMs: 150, chunks: textStreamChunks(["a", "b", "c", "d", "e", "f"]) })
      const started = Date.now()
      const { status, events } = await gateway.stream("/inference", { function_name: "stream_bounded", input, stream: true })
      expect(status).toBe(200)
      expect(Date.now() - started).toBeLessThan(800)
      const last = events.at(-1)
      expect(last.error).toContain("stream timed out after 300 ms")
      const text = events.slice(0, -1).flatMap((event) => event.content ?? []).map((delta: any) => delta.text).join("")
      expect(text.length).toBeGreaterThan(0)
      expect(text.length).toBeLessThan(6)
      const deadline = Date.now() + 2_000
      while (fake.aborted() === abortedBefore && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20))
      expect(fake.aborted()).toBe(abortedBefore + 1)
    })

    it("lets a stream within streaming total_ms finish", async () => {
      fake.script.push({ kind: "stream", chunkDelayMs: 20, chunks: textStreamChunks(["a", "b", "c"]) })
      const { events } = await gateway.stream("/inference", { function_name: "stream_bounded", input, stream: true })
      expect(events.at(-1)).toBe("[DONE]")
      expect(events.slice(0, -2).flatMap((event) => event.content).map((delta: any) => delta.text).join("")).toBe("abc")
    })

    it("applies a variant's streaming total_ms", async () => {
      fake.script.push({ kind: "stream", chunkDelayMs: 150, chunks: textStreamChunks(["a", "b", "c", "d", "e", "f"]) })
      const { events } = await gateway.stream("/inference", { function_name: "variant_stream_bounded", input, stream: true })
      expect(events.at(-1).error).toContain(`variant "v" stream timed out after 300 ms`)
    })

    it("answers 408 when a variant exceeds its own timeout", async () => {
      fake.script.push(slow(2_000))
      const response = await gateway.post("/inference", { function_name: "variant_timeout", input })
      expect(response.status).toBe(408)
      expect(response.body.error).toContain("timed out after 200 ms")
      expect(fake.requests).toHaveLength(1)
    })
  })
})
