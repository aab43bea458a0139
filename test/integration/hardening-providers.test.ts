/**
 * Hardening (issue 10): what a provider answers is bounded, checked and timed out, and never
 * brings its credential back. A fake OpenAI upstream misbehaves for the first provider of a
 * model (`routed`: bad, then good) to show the fallback applies, and for the only provider of
 * another (`solo`) to show the error the client gets; after every test the gateway answers a
 * normal request, plain and streamed. Small limits keep the tests cheap.
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest"
import { freshDatabase, type TestDatabase } from "../support/databases.ts"
import { type FakeOpenAi, type Reply, startFakeOpenAi, textCompletion, textStreamChunks } from "../support/fakeOpenAi.ts"
import { type RunningGateway, startGateway } from "../support/gateway.ts"
import { observabilityToml, poll, waitForInference } from "../support/observability.ts"

const maxResponseBytes = 65_536
const maxLineBytes = 8192
const totalTimeoutMs = 1500
const secret = "tz-secret-value-987654"

const provider = (model: string, name: string, apiBase: string, key: string) => `
[models.${model}.providers.${name}]
type = "openai"
model_name = "gpt-${name}"
api_base = "${apiBase}"
api_key_location = "env::${key}"
`

const config = (apiBase: string) => `
[gateway]
max_provider_response_bytes = ${maxResponseBytes}
max_provider_stream_event_bytes = ${maxLineBytes}
global_outbound_http_timeout_ms = ${totalTimeoutMs}
${observabilityToml()}

[models.routed]
routing = ["bad", "good"]
${provider("routed", "bad", apiBase, "KEY_BAD")}
${provider("routed", "good", apiBase, "KEY_GOOD")}

[models.solo]
routing = ["only"]
${provider("solo", "only", apiBase, "KEY_BAD")}

[functions.routed]
type = "chat"
[functions.routed.variants.v]
type = "chat_completion"
model = "routed"

[functions.solo]
type = "chat"
[functions.solo.variants.v]
type = "chat_completion"
model = "solo"
`

const input = { messages: [{ role: "user", content: "hi" }] }
const chunk = (text: string) => ({ id: "c", object: "chat.completion.chunk", choices: [{ index: 0, delta: { content: text } }] })
const streamedText = (events: Array<any>) =>
  events.filter((event) => event !== "[DONE]").flatMap((event) => event.content ?? []).map((delta: any) => delta.text).join("")

describe("provider answers are bounded, checked and timed out", () => {
  let database: TestDatabase
  let fake: FakeOpenAi
  let gateway: RunningGateway

  beforeAll(async () => {
    ;[database, fake] = await Promise.all([freshDatabase("clickhouse"), startFakeOpenAi()])
    gateway = await startGateway({
      config: config(fake.apiBase),
      env: { GATEWAY_ANALYTICS_DB_URL: database.url, KEY_BAD: secret, KEY_GOOD: "key-good" }
    })
  })
  afterAll(async () => {
    await gateway?.stop()
    await fake?.close()
    await database?.drop()
  })
  beforeEach(() => fake.reset())
  afterEach(async () => {
    // whatever happened, the gateway answers the next requests normally
    fake.reset()
    const plain = await gateway.post("/inference", { function_name: "solo", input })
    expect(plain.status, JSON.stringify(plain.body)).toBe(200)
    expect(plain.body.content).toEqual([{ type: "text", text: "Hello from fake OpenAI" }])
    const streamed = await gateway.stream("/inference", { function_name: "solo", input, stream: true })
    expect(streamed.status).toBe(200)
    expect(streamedText(streamed.events)).toBe("Hello from fake")
    expect(streamed.events.at(-1)).toBe("[DONE]")
  })

  const models = () => fake.requests.map((request) => request.body.model)

  /** `reply` for the first provider of `routed`: the second answers; then for `solo`'s only one: the error it gives */
  const fallsBackThenFails = async (reply: Reply, stream: boolean): Promise<string> => {
    fake.script.push(reply)
    if (stream) {
      const routed = await gateway.stream("/inference", { function_name: "routed", input, stream: true })
      expect(routed.status, routed.raw).toBe(200)
      expect(streamedText(routed.events)).toBe("Hello from fake")
      expect(routed.events.at(-1)).toBe("[DONE]")
    } else {
      const routed = await gateway.post("/inference", { function_name: "routed", input })
      expect(routed.status, JSON.stringify(routed.body)).toBe(200)
      expect(routed.body.content).toEqual([{ type: "text", text: "Hello from fake OpenAI" }])
    }
    expect(models()).toEqual(["gpt-bad", "gpt-good"])
    fake.script.push(reply)
    const solo = await gateway.post("/inference", { function_name: "solo", input, stream })
    expect(solo.status, JSON.stringify(solo.body)).toBe(502)
    expect(solo.body.error).toContain("provider \"only\"")
    return solo.body.error
  }

  /** the connection of a reply that never ends on its own was closed by the gateway */
  const upstreamAborted = (before: number) => poll("the gateway to close the upstream connection", async () => fake.aborted() > before ? true : undefined)

  describe("size limits", () => {
    it("a plain answer larger than max_provider_response_bytes is refused: fallback, then a clear error", async () => {
      const huge: Reply = { kind: "json", body: textCompletion("x".repeat(maxResponseBytes * 2)) }
      const error = await fallsBackThenFails(huge, false)
      expect(error).toContain(`the response exceeds ${maxResponseBytes} bytes`)
    })

    it("an answer whose content-length passes the limit is refused at once, without waiting for its body", async () => {
      // the body stalls after a few bytes: only the announced length can fail it before the timeout
      const announced = (contentType: string): Reply => ({
        kind: "endless",
        contentType,
        declaredLength: maxResponseBytes + 1,
        head: "{",
        piece: "",
        pieceDelayMs: 60_000
      })
      const plain = await fallsBackThenFails(announced("application/json"), false)
      expect(plain).toContain(`the response exceeds ${maxResponseBytes} bytes`)
      fake.reset()
      const streamed = await fallsBackThenFails(announced("text/event-stream"), true)
      expect(streamed).toContain(`the streamed response exceeds ${maxResponseBytes} bytes`)
    })

    it("a plain answer without content-length stops being read once past the limit", async () => {
      const before = fake.aborted()
      const endless: Reply = { kind: "endless", contentType: "application/json", head: "{\"choices\":[{\"message\":{\"content\":\"", piece: "x".repeat(4096) }
      const error = await fallsBackThenFails(endless, false)
      expect(error).toContain(`the response exceeds ${maxResponseBytes} bytes`)
      // both endless answers were cut off by the gateway, not sent to their end (256 MiB)
      await poll("both upstream answers to be cut off", async () => fake.aborted() >= before + 2 ? true : undefined)
    })

    it("a stream line that never ends fails once past max_provider_stream_event_bytes, before the stream starts: fallback", async () => {
      const before = fake.aborted()
      const noNewline: Reply = { kind: "endless", contentType: "text/event-stream", head: "data: ", piece: "a".repeat(1024) }
      const error = await fallsBackThenFails(noNewline, true)
      expect(error).toContain(`a line of the streamed response exceeds ${maxLineBytes} bytes`)
      await upstreamAborted(before)
    })

    it("a stream of valid events that goes on forever fails once its total passes max_provider_response_bytes, and is not stored", async () => {
      const before = fake.aborted()
      fake.script.push({ kind: "endless", contentType: "text/event-stream", piece: `data: ${JSON.stringify(chunk("more "))}\n\n` })
      const { events, status } = await gateway.stream("/inference", { function_name: "solo", input, stream: true })
      expect(status).toBe(200)
      const last = events.at(-1)
      expect(last.error).toContain(`the streamed response exceeds ${maxResponseBytes} bytes`)
      expect(events).not.toContain("[DONE]")
      expect(streamedText(events)).toMatch(/^(more )+$/)
      await upstreamAborted(before)
      // a normal inference after it is stored; the failed one is not
      const normal = await gateway.post("/inference", { function_name: "solo", input })
      expect(normal.status).toBe(200)
      await waitForInference(gateway, normal.body.inference_id)
      const stored = await gateway.post("/v1/inferences/get_inferences", { ids: [events[0].inference_id] })
      expect(stored.body.inferences).toEqual([])
    })
  })

  describe("what counts as an answer", () => {
    it("a plain 200 whose body is not JSON is a provider failure", async () => {
      const error = await fallsBackThenFails({ kind: "text", status: 200, body: "<html>gateway error</html>", contentType: "text/html" }, false)
      expect(error).toContain("the provider answered with a body that is not JSON")
    })

    it("a streamed 200 that is an HTML page is a provider failure, and the fallback's answer is what is stored", async () => {
      fake.script.push({ kind: "text", status: 200, body: "<html>please log in</html>", contentType: "text/html; charset=utf-8" })
      const routed = await gateway.stream("/inference", { function_name: "routed", input, stream: true })
      expect(routed.status).toBe(200)
      expect(streamedText(routed.events)).toBe("Hello from fake")
      const stored = await waitForInference(gateway, routed.events[0].inference_id, { include_model_inferences: true })
      expect(stored.output).toEqual([{ type: "text", text: "Hello from fake" }])
      expect(stored.model_inferences.map((call: any) => call.model_provider_name)).toEqual(["good"])

      fake.reset()
      fake.script.push({ kind: "text", status: 200, body: "<html>please log in</html>", contentType: "text/html; charset=utf-8" })
      const solo = await gateway.post("/inference", { function_name: "solo", input, stream: true })
      expect(solo.status).toBe(502)
      expect(solo.body.error).toContain("HTTP 200 with content type \"text/html; charset=utf-8\" where an event stream (text/event-stream) was expected: <html>please log in</html>")
    })

    it("an event stream with parameters in its content type is accepted", async () => {
      fake.script.push({
        kind: "text",
        status: 200,
        contentType: "text/event-stream; charset=utf-8",
        body: textStreamChunks(["fine"]).map((event) => `data: ${JSON.stringify(event)}\n\n`).join("") + "data: [DONE]\n\n"
      })
      const { events, status } = await gateway.stream("/inference", { function_name: "solo", input, stream: true })
      expect(status).toBe(200)
      expect(streamedText(events)).toBe("fine")
      expect(events.at(-1)).toBe("[DONE]")
    })

    it("an event stream that ends without any event, or with [DONE] only, is a provider failure", async () => {
      const empty = await fallsBackThenFails({ kind: "stream", chunks: [], noDone: true }, true)
      expect(empty).toContain("the provider's event stream ended without any event")
      fake.reset()
      const doneOnly = await fallsBackThenFails({ kind: "stream", chunks: [] }, true)
      expect(doneOnly).toContain("the provider's event stream ended without any event")
    })

    it("an event stream of unparseable events is a provider failure", async () => {
      const error = await fallsBackThenFails({ kind: "stream", chunks: ["not json", "{still not"] }, true)
      expect(error).toContain("the provider streamed a chunk that is not JSON")
    })
  })

  describe("global_outbound_http_timeout_ms", () => {
    it("bounds a call to a stalled upstream: fallback, or 504 when it was the only provider", async () => {
      const before = fake.aborted()
      fake.script.push({ kind: "hang" })
      const routed = await gateway.post("/inference", { function_name: "routed", input })
      expect(routed.status, JSON.stringify(routed.body)).toBe(200)
      expect(models()).toEqual(["gpt-bad", "gpt-good"])
      fake.script.push({ kind: "hang" })
      const solo = await gateway.post("/inference", { function_name: "solo", input })
      expect(solo.status).toBe(504)
      expect(solo.body.error).toContain(`timed out after ${totalTimeoutMs} ms`)
      await poll("both stalled requests to be aborted", async () => fake.aborted() >= before + 2 ? true : undefined)
    })

    it("bounds a whole stream, however regularly its events come", async () => {
      const before = fake.aborted()
      fake.script.push({ kind: "endless", contentType: "text/event-stream", piece: `data: ${JSON.stringify(chunk("tick "))}\n\n`, pieceDelayMs: 100 })
      const { events, status } = await gateway.stream("/inference", { function_name: "solo", input, stream: true })
      expect(status).toBe(200)
      expect(streamedText(events)).toMatch(/^(tick )+$/)
      expect(events.at(-1).error).toContain(`timed out after ${totalTimeoutMs} ms`)
      await upstreamAborted(before)
    })
  })

  describe("credentials", () => {
    const echo = `Incorrect API key provided: Bearer ${secret}. You can find your API key at https://example.com; key=${secret}`

    it("an upstream error that echoes the API key reaches neither the client nor the log with it", async () => {
      const error = await fallsBackThenFails({ kind: "json", status: 401, body: { error: { message: echo } } }, false)
      expect(error).toContain("HTTP 401: Incorrect API key provided: Bearer [REDACTED]. You can find your API key at https://example.com; key=[REDACTED]")
      expect(error).not.toContain(secret)

      fake.reset()
      const streamed = await fallsBackThenFails({ kind: "text", status: 401, body: echo }, true)
      expect(streamed).toContain("HTTP 401: Incorrect API key provided: Bearer [REDACTED]")
      expect(streamed).not.toContain(secret)

      fake.reset()
      const inStream = await fallsBackThenFails({ kind: "stream", chunks: [{ error: { message: echo } }] }, true)
      expect(inStream).toContain("the provider streamed an error: Incorrect API key provided: Bearer [REDACTED]")
      expect(inStream).not.toContain(secret)

      // what is sent upstream is untouched
      expect(fake.requests[0].headers.authorization).toBe(`Bearer ${secret}`)
      expect(gateway.log()).not.toContain(secret)
    })
  })
})
