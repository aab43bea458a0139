/**
 * Streamed POST /inference (`stream: true`) through the `openai` provider: the SSE events the
 * gateway sends, what the upstream receives, failures before and after the stream started,
 * and a client that hangs up.
 */
import * as http from "node:http"
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import { type FakeOpenAi, recordedStream, startFakeOpenAi, textStreamChunks } from "../support/fakeOpenAi.ts"
import { streamFixture } from "../support/providerFixtures.ts"
import { type RunningGateway, startGateway } from "../support/gateway.ts"

const config = (apiBase: string) => `
[models.m]
routing = ["a"]
[models.m.providers.a]
type = "openai"
model_name = "gpt-test"
api_base = "${apiBase}"
api_key_location = "env::TEST_KEY_A"

[tools.get_weather]
description = "Get the weather for a city"
parameters = "get_weather.json"

[functions.chat]
type = "chat"
tools = ["get_weather"]
[functions.chat.variants.v]
type = "chat_completion"
model = "m"
temperature = 0.3

[functions.extract]
type = "json"
output_schema = "output.json"
[functions.extract.variants.strict]
type = "chat_completion"
model = "m"
weight = 1
[functions.extract.variants.tool]
type = "chat_completion"
model = "m"
weight = 0
json_mode = "tool"
`

const files = {
  "get_weather.json": JSON.stringify({ type: "object", properties: { city: { type: "string" } }, required: ["city"] }),
  "output.json": JSON.stringify({ type: "object", properties: { answer: { type: "string" } }, required: ["answer"] })
}

const chunk = (delta: Record<string, unknown>, finishReason: string | null = null) => ({
  id: "c",
  object: "chat.completion.chunk",
  choices: [{ index: 0, delta, finish_reason: finishReason }]
})
const usageChunk = (prompt: number, completion: number) => ({
  id: "c",
  object: "chat.completion.chunk",
  choices: [],
  usage: { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion }
})

const input = { messages: [{ role: "user", content: "hi" }] }

/** the events between the first and the last: the content deltas */
const deltas = (events: Array<any>) => events.slice(0, -2).flatMap((event) => event.content)

describe("POST /inference with stream: true on the openai provider", () => {
  let fake: FakeOpenAi
  let gateway: RunningGateway

  beforeAll(async () => {
    fake = await startFakeOpenAi()
    gateway = await startGateway({ config: config(fake.apiBase), files, env: { TEST_KEY_A: "key-a" } })
  })
  afterAll(async () => {
    await gateway?.stop()
    await fake?.close()
  })
  beforeEach(() => fake.reset())

  it("streams text deltas with the ids in every event, then usage and finish_reason, then [DONE]", async () => {
    fake.script.push({ kind: "stream", chunks: textStreamChunks(["Hel", "lo", "!"], { prompt_tokens: 21, completion_tokens: 3 }) })
    const { status, events, raw, headers } = await gateway.stream("/inference", { function_name: "chat", input, stream: true })
    expect(status).toBe(200)
    expect(headers.get("content-type")).toContain("text/event-stream")
    expect(raw.endsWith("data: [DONE]\n\n")).toBe(true)
    expect(events.at(-1)).toBe("[DONE]")
    const body = events.slice(0, -1)
    expect(body.length).toBe(4)
    const { inference_id, episode_id } = body[0]
    expect(inference_id).toMatch(/^[0-9a-f-]{36}$/)
    expect(episode_id).toMatch(/^[0-9a-f-]{36}$/)
    for (const event of body) {
      expect(event).toMatchObject({ inference_id, episode_id, variant_name: "v" })
    }
    expect(body.slice(0, 3).map((event) => event.content)).toEqual([
      [{ type: "text", id: "0", text: "Hel" }],
      [{ type: "text", id: "0", text: "lo" }],
      [{ type: "text", id: "0", text: "!" }]
    ])
    expect(body[3]).toEqual({
      inference_id,
      episode_id,
      variant_name: "v",
      content: [],
      usage: { input_tokens: 21, output_tokens: 3 },
      finish_reason: "stop"
    })
  })

  it("asks the upstream for a stream with usage, with the same request otherwise", async () => {
    const { status } = await gateway.stream("/inference", { function_name: "chat", input, stream: true })
    expect(status).toBe(200)
    expect(fake.requests).toHaveLength(1)
    const upstream = fake.requests[0]
    expect(upstream.path).toBe("/v1/chat/completions")
    expect(upstream.headers.authorization).toBe("Bearer key-a")
    expect(upstream.body).toMatchObject({
      model: "gpt-test",
      messages: [{ role: "user", content: "hi" }],
      temperature: 0.3,
      stream: true,
      stream_options: { include_usage: true }
    })
    expect(upstream.body.tools).toHaveLength(1)
  })

  it("keeps the episode_id it is given in every event", async () => {
    const first = await gateway.stream("/inference", { function_name: "chat", input, stream: true })
    const episodeId = first.events[0].episode_id
    const second = await gateway.stream("/inference", { function_name: "chat", input, stream: true, episode_id: episodeId })
    expect(second.status).toBe(200)
    for (const event of second.events.slice(0, -1)) expect(event.episode_id).toBe(episodeId)
    expect(second.events[0].inference_id).not.toBe(first.events[0].inference_id)
  })

  it("streams tool call deltas with the call's id, raw_name and raw_arguments, and finish_reason tool_call", async () => {
    fake.script.push({
      kind: "stream",
      chunks: [
        chunk({ role: "assistant", content: null, tool_calls: [{ index: 0, id: "call_1", type: "function", function: { name: "get_weather", arguments: "" } }] }),
        chunk({ tool_calls: [{ index: 0, function: { arguments: "{\"city\":" } }] }),
        chunk({ tool_calls: [{ index: 0, function: { arguments: "\"Paris\"}" } }] }),
        chunk({ tool_calls: [{ index: 1, id: "call_2", type: "function", function: { name: "get_weather", arguments: "{}" } }] }),
        chunk({}, "tool_calls"),
        usageChunk(30, 12)
      ]
    })
    const { status, events } = await gateway.stream("/inference", { function_name: "chat", input, stream: true })
    expect(status).toBe(200)
    expect(deltas(events)).toEqual([
      { type: "tool_call", id: "call_1", raw_name: "get_weather", raw_arguments: "" },
      { type: "tool_call", id: "call_1", raw_name: "", raw_arguments: "{\"city\":" },
      { type: "tool_call", id: "call_1", raw_name: "", raw_arguments: "\"Paris\"}" },
      { type: "tool_call", id: "call_2", raw_name: "get_weather", raw_arguments: "{}" }
    ])
    expect(events.at(-2)).toMatchObject({ content: [], usage: { input_tokens: 30, output_tokens: 12 }, finish_reason: "tool_call" })
  })

  it("streams a recorded OpenAI transcript, cut anywhere by the network, as the openai codec's fixture reads it", async () => {
    const fixture = streamFixture("openai", "tool-calls")
    fake.script.push(recordedStream("tool-calls", 5))
    const { status, events } = await gateway.stream("/inference", { function_name: "chat", input, stream: true })
    expect(status).toBe(200)
    expect(deltas(events)).toEqual(fixture.chunks.flatMap((chunk) => chunk.content))
    expect(deltas(events).map((delta: any) => delta.id)).toEqual(["call_A", "call_A", "call_A", "call_B", "call_B"])
    expect(events.at(-2)).toMatchObject({ usage: { input_tokens: 80, output_tokens: 40 }, finish_reason: "tool_call" })
    expect(events.at(-1)).toBe("[DONE]")
  })

  it("streams reasoning_content as thought deltas", async () => {
    fake.script.push({
      kind: "stream",
      chunks: [
        chunk({ role: "assistant", reasoning_content: "Think" }),
        chunk({ reasoning_content: "ing..." }),
        chunk({ content: "Answer" }),
        chunk({}, "length"),
        usageChunk(5, 6)
      ]
    })
    const { events } = await gateway.stream("/inference", { function_name: "chat", input, stream: true })
    expect(deltas(events)).toEqual([
      { type: "thought", id: "0", text: "Think" },
      { type: "thought", id: "0", text: "ing..." },
      { type: "text", id: "0", text: "Answer" }
    ])
    expect(events.at(-2)).toMatchObject({ usage: { input_tokens: 5, output_tokens: 6 }, finish_reason: "length" })
    expect(events.at(-1)).toBe("[DONE]")
  })

  it("streams a json function's text as raw deltas, with usage at the end", async () => {
    fake.script.push({ kind: "stream", chunks: textStreamChunks(["{\"answer\":", "\"42\"}"], { prompt_tokens: 9, completion_tokens: 4 }) })
    const { status, events } = await gateway.stream("/inference", { function_name: "extract", input, stream: true })
    expect(status).toBe(200)
    expect(fake.requests[0].body.response_format).toMatchObject({ type: "json_schema" })
    expect(events.slice(0, -2).map((event) => event.raw)).toEqual(["{\"answer\":", "\"42\"}"])
    for (const event of events.slice(0, -1)) {
      expect(event).toMatchObject({ variant_name: "strict" })
      expect(event).not.toHaveProperty("content")
    }
    expect(events.at(-2)).toMatchObject({ raw: "", usage: { input_tokens: 9, output_tokens: 4 }, finish_reason: "stop" })
    expect(events.at(-1)).toBe("[DONE]")
  })

  it("streams the respond tool's argument deltas as raw for json_mode tool", async () => {
    fake.script.push({
      kind: "stream",
      chunks: [
        chunk({ tool_calls: [{ index: 0, id: "call_r", type: "function", function: { name: "respond", arguments: "{\"ans" } }] }),
        chunk({ tool_calls: [{ index: 0, function: { arguments: "wer\":\"7\"}" } }] }),
        chunk({}, "tool_calls"),
        usageChunk(1, 2)
      ]
    })
    const { events } = await gateway.stream("/inference", { function_name: "extract", variant_name: "tool", input, stream: true })
    expect(fake.requests[0].body.tool_choice).toEqual({ type: "function", function: { name: "respond" } })
    expect(events.slice(0, -2).map((event) => event.raw).join("")).toBe("{\"answer\":\"7\"}")
  })

  it("answers an upstream error before the first chunk with an ordinary HTTP error", async () => {
    fake.script.push({ kind: "json", status: 503, body: { error: { message: "overloaded, try later" } } })
    const response = await gateway.post("/inference", { function_name: "chat", input, stream: true })
    expect(response.status).toBe(502)
    expect(response.headers.get("content-type")).toContain("application/json")
    expect(Object.keys(response.body)).toEqual(["error"])
    expect(response.body.error).toContain("HTTP 503: overloaded, try later")
    expect(response.body.error).toContain("provider \"a\"")
  })

  it("refuses include_original_response for a streamed inference (400, upstream not called)", async () => {
    const response = await gateway.post("/inference", { function_name: "chat", input, stream: true, include_original_response: true })
    expect(response.status).toBe(400)
    expect(response.body.error).toContain("include_original_response")
    expect(fake.requests).toHaveLength(0)
  })

  it("ends with an error event when the upstream sends a chunk that is not JSON after the stream started", async () => {
    fake.script.push({ kind: "stream", chunkDelayMs: 30, chunks: [chunk({ content: "Hello" }), "{this is not json", chunk({ content: "never" })] })
    const { status, events } = await gateway.stream("/inference", { function_name: "chat", input, stream: true })
    expect(status).toBe(200)
    expect(events[0].content).toEqual([{ type: "text", id: "0", text: "Hello" }])
    expect(events).toHaveLength(2)
    expect(Object.keys(events[1])).toEqual(["error"])
    expect(events[1].error).toMatch(/not JSON/)
  })

  it("ends with an error event when the upstream connection dies mid-stream", async () => {
    fake.script.push({ kind: "stream", chunkDelayMs: 30, destroyAfter: 2, chunks: textStreamChunks(["one", "two", "three"]) })
    const { status, events } = await gateway.stream("/inference", { function_name: "chat", input, stream: true })
    expect(status).toBe(200)
    expect(events[0].content).toEqual([{ type: "text", id: "0", text: "one" }])
    expect(events.at(-1)).not.toBe("[DONE]")
    expect(typeof events.at(-1).error).toBe("string")
    expect(events.at(-1).error.length).toBeGreaterThan(0)
  })

  it("ends with an error event when the upstream streams an error object", async () => {
    fake.script.push({ kind: "stream", chunkDelayMs: 30, chunks: [chunk({ content: "Hi" }), { error: { message: "model crashed" } }] })
    const { events } = await gateway.stream("/inference", { function_name: "chat", input, stream: true })
    expect(events.at(-1)).toEqual({ error: expect.stringContaining("model crashed") })
  })

  it("cancels the upstream call when the client disconnects mid-stream", async () => {
    fake.script.push({ kind: "stream", chunkDelayMs: 10, hangAfter: 2, chunks: textStreamChunks(["one", "two", "three"]) })
    const abortedBefore = fake.aborted()
    const firstEvent = await new Promise<string>((resolve, reject) => {
      const request = http.request(`${gateway.url}/inference`, { method: "POST", headers: { "content-type": "application/json" }, agent: false }, (response) => {
        let text = ""
        response.setEncoding("utf8")
        response.on("data", (data: string) => {
          text += data
          if (text.includes("\n\n")) {
            resolve(text)
            request.destroy()
          }
        })
        response.on("error", () => {})
      })
      request.on("error", (error) => {
        if (!request.destroyed) reject(error)
      })
      request.end(JSON.stringify({ function_name: "chat", input, stream: true }))
    })
    expect(firstEvent.startsWith("data: ")).toBe(true)
    expect(fake.requests).toHaveLength(1)
    const deadline = Date.now() + 3_000
    while (fake.aborted() === abortedBefore && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20))
    expect(fake.aborted()).toBe(abortedBefore + 1)
    // the gateway is still healthy afterwards
    const after = await gateway.stream("/inference", { function_name: "chat", input, stream: true })
    expect(after.events.at(-1)).toBe("[DONE]")
  })

  it("ends normally when the upstream closes the stream without [DONE]", async () => {
    fake.script.push({ kind: "stream", noDone: true, chunks: textStreamChunks(["Hi"]) })
    const { status, events } = await gateway.stream("/inference", { function_name: "chat", input, stream: true })
    expect(status).toBe(200)
    expect(deltas(events)).toEqual([{ type: "text", id: "0", text: "Hi" }])
    expect(events.at(-2)).toMatchObject({ usage: { input_tokens: 12, output_tokens: 7 }, finish_reason: "stop" })
    expect(events.at(-1)).toBe("[DONE]")
  })
})
