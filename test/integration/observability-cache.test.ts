/**
 * Observability conformance, part 4 (spec 4.1 `cache_options`, issue 3 "Cache"), against
 * ClickHouse and Postgres alike. The upstream is a fake OpenAI server that counts requests,
 * so a cache hit is proven by the upstream not being called, with zero usage and the model
 * inference marked cached.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import { freshDatabase, type TestDatabase } from "../support/databases.ts"
import { completion, type FakeOpenAi, startFakeOpenAi } from "../support/fakeOpenAi.ts"
import { type RunningGateway, startGateway } from "../support/gateway.ts"
import { backends, observabilityToml, poll, queueStats, waitForInference } from "../support/observability.ts"

const files = {
  "tools/get_temperature.json": JSON.stringify({
    type: "object",
    properties: { location: { type: "string" } },
    required: ["location"],
    additionalProperties: false
  }),
  "schemas/answer.json": JSON.stringify({
    type: "object",
    properties: { answer: { type: "string" } },
    required: ["answer"],
    additionalProperties: false
  })
}

const config = (apiBase: string) => `
${observabilityToml()}

[tools.get_temperature]
description = "Get the current temperature of a place"
parameters = "tools/get_temperature.json"

[models.fake]
routing = ["openai"]
[models.fake.providers.openai]
type = "openai"
model_name = "gpt-fake"
api_base = "${apiBase}"
api_key_location = "env::FAKE_OPENAI_KEY"

[functions.assistant]
type = "chat"
tools = ["get_temperature"]
[functions.assistant.variants.openai]
type = "chat_completion"
model = "fake"

[functions.extract]
type = "json"
output_schema = "schemas/answer.json"
[functions.extract.variants.openai]
type = "chat_completion"
model = "fake"

[functions.weather]
type = "chat"
tools = ["get_temperature"]
[functions.weather.variants.bad_tool]
type = "chat_completion"
model = "dummy::bad_tool"
`

const zeroUsage = { input_tokens: 0, output_tokens: 0 }

describe.each(backends)("observability on %s: the cache", (backend) => {
  let database: TestDatabase
  let fake: FakeOpenAi
  let gateway: RunningGateway
  let counter = 0

  /** an input no other test uses, so that each test has cache keys of its own */
  const freshInput = () => ({ messages: [{ role: "user", content: `question ${backend} ${++counter} ${Date.now()}` }] })

  const infer = async (body: Record<string, unknown>) => {
    const response = await gateway.post("/inference", { function_name: "assistant", ...body })
    expect(response.status, JSON.stringify(response.body)).toBe(200)
    return response.body
  }

  /** waits until everything queued so far (rows and cache entries) is written */
  const drained = async (inferenceId: string) => {
    await waitForInference(gateway, inferenceId)
    await poll("the write queue to drain", async () => ((await queueStats(gateway)).queued === 0 ? true : undefined))
  }

  const storedCall = async (inferenceId: string) =>
    (await waitForInference(gateway, inferenceId, { include_model_inferences: true })).model_inferences[0]

  beforeAll(async () => {
    ;[database, fake] = await Promise.all([freshDatabase(backend), startFakeOpenAi()])
    gateway = await startGateway({
      config: config(fake.apiBase),
      files,
      env: { GATEWAY_ANALYTICS_DB_URL: database.url, FAKE_OPENAI_KEY: "sk-fake" }
    })
  })
  afterAll(async () => {
    await gateway?.stop()
    await fake?.close()
    await database?.drop()
  })
  beforeEach(() => fake.reset())

  it("by default (write_only) an answer is written to the cache but the cache is not read", async () => {
    const input = freshInput()
    const first = await infer({ input })
    expect(fake.requests).toHaveLength(1)
    await drained(first.inference_id)
    const second = await infer({ input })
    expect(fake.requests).toHaveLength(2)
    expect(second.usage).toEqual({ input_tokens: 12, output_tokens: 7 })
    expect((await storedCall(second.inference_id)).cached).toBe(false)
    // the entry the default wrote is there for a request that reads
    const third = await infer({ input, cache_options: { enabled: "on" } })
    expect(fake.requests).toHaveLength(2)
    expect(third.content).toEqual(first.content)
    expect(third.usage).toEqual(zeroUsage)
  })

  it("enabled on: an identical request is served from the cache, with zero usage, stored as cached", async () => {
    const input = freshInput()
    const upstreamBody = completion({ content: "A cached answer" }, { usage: { prompt_tokens: 20, completion_tokens: 4 } })
    fake.script.push({ kind: "json", body: upstreamBody })
    const first = await infer({ input, cache_options: { enabled: "on" } })
    expect(first.content).toEqual([{ type: "text", text: "A cached answer" }])
    expect(first.usage).toEqual({ input_tokens: 20, output_tokens: 4 })
    await drained(first.inference_id)

    const second = await infer({ input, cache_options: { enabled: "on" }, tags: { run: "second" } })
    expect(fake.requests).toHaveLength(1)
    expect(second.inference_id).not.toBe(first.inference_id)
    expect(second.content).toEqual(first.content)
    expect(second.usage).toEqual(zeroUsage)

    expect((await storedCall(first.inference_id)).cached).toBe(false)
    const stored = await waitForInference(gateway, second.inference_id, { include_model_inferences: true })
    expect(stored.output).toEqual([{ type: "text", text: "A cached answer" }])
    expect(stored.tags).toEqual({ run: "second" })
    expect(stored.model_inferences).toHaveLength(1)
    expect(stored.model_inferences[0]).toMatchObject({
      cached: true,
      input_tokens: 0,
      output_tokens: 0,
      model_name: "fake",
      model_provider_name: "openai"
    })
    expect(stored.model_inferences[0].raw_response).toBe(JSON.stringify(upstreamBody))

    // a different request (other parameters) is not served the entry
    await infer({ input, cache_options: { enabled: "on" }, params: { chat_completion: { temperature: 0.9 } } })
    expect(fake.requests).toHaveLength(2)
  })

  it("read_only reads the cache but does not write it", async () => {
    const input = freshInput()
    const miss = await infer({ input, cache_options: { enabled: "read_only" } })
    expect(fake.requests).toHaveLength(1)
    await drained(miss.inference_id)
    // read_only wrote nothing: "on" misses too, and writes
    const written = await infer({ input, cache_options: { enabled: "on" } })
    expect(fake.requests).toHaveLength(2)
    await drained(written.inference_id)
    const hit = await infer({ input, cache_options: { enabled: "read_only" } })
    expect(fake.requests).toHaveLength(2)
    expect(hit.usage).toEqual(zeroUsage)
    expect((await storedCall(hit.inference_id)).cached).toBe(true)
  })

  it("off neither reads nor writes the cache", async () => {
    const input = freshInput()
    const first = await infer({ input, cache_options: { enabled: "off" } })
    await drained(first.inference_id)
    const written = await infer({ input, cache_options: { enabled: "on" } })
    expect(fake.requests).toHaveLength(2)
    expect(written.usage).toEqual({ input_tokens: 12, output_tokens: 7 })
    await drained(written.inference_id)
    const off = await infer({ input, cache_options: { enabled: "off" } })
    expect(fake.requests).toHaveLength(3)
    expect(off.usage).toEqual({ input_tokens: 12, output_tokens: 7 })
    expect((await storedCall(off.inference_id)).cached).toBe(false)
  })

  it("max_age_s: an entry older than the limit is not served; a younger one is", async () => {
    const input = freshInput()
    const first = await infer({ input, cache_options: { enabled: "write_only" } })
    await drained(first.inference_id)
    const young = await infer({ input, cache_options: { enabled: "read_only", max_age_s: 60 } })
    expect(fake.requests).toHaveLength(1)
    expect(young.usage).toEqual(zeroUsage)
    const unlimited = await infer({ input, cache_options: { enabled: "read_only", max_age_s: null } })
    expect(fake.requests).toHaveLength(1)
    expect(unlimited.usage).toEqual(zeroUsage)
    // let the entry grow older than a second
    await new Promise((resolve) => setTimeout(resolve, 1_300))
    const old = await infer({ input, cache_options: { enabled: "read_only", max_age_s: 1 } })
    expect(fake.requests).toHaveLength(2)
    expect(old.usage).toEqual({ input_tokens: 12, output_tokens: 7 })
    expect((await storedCall(old.inference_id)).cached).toBe(false)
    // a bad max_age_s is refused
    const negative = await gateway.post("/inference", { function_name: "assistant", input, cache_options: { enabled: "on", max_age_s: -1 } })
    expect(negative.status).toBe(400)
    const badMode = await gateway.post("/inference", { function_name: "assistant", input, cache_options: { enabled: "sometimes" } })
    expect(badMode.status).toBe(400)
  })

  it("a streamed request served from the cache is replayed as a stream, cut as the provider's stream was", async () => {
    const input = freshInput()
    const first = await gateway.stream("/inference", { function_name: "assistant", input, stream: true, cache_options: { enabled: "on" } })
    expect(first.status).toBe(200)
    expect(fake.requests).toHaveLength(1)
    /** each event's text deltas: the chunking */
    const pieces = (events: Array<any>) =>
      events.filter((event) => event !== "[DONE]" && event.content.length > 0).map((event) => event.content.map((delta: any) => delta.text).join(""))
    const text = (events: Array<any>) => pieces(events).join("")
    expect(text(first.events)).toBe("Hello from fake")
    expect(pieces(first.events).length).toBeGreaterThan(1)
    await drained(first.events[0].inference_id)

    const replay = await gateway.stream("/inference", { function_name: "assistant", input, stream: true, cache_options: { enabled: "on" } })
    expect(replay.status).toBe(200)
    expect(replay.headers.get("content-type")).toContain("text/event-stream")
    expect(fake.requests).toHaveLength(1)
    expect(replay.events.at(-1)).toBe("[DONE]")
    expect(pieces(replay.events)).toEqual(pieces(first.events))
    const final = replay.events.at(-2)
    expect(final.usage).toEqual(zeroUsage)
    const id = replay.events[0].inference_id
    expect(id).not.toBe(first.events[0].inference_id)
    expect(replay.events.filter((event) => event !== "[DONE]").every((event) => event.inference_id === id)).toBe(true)

    const stored = await waitForInference(gateway, id, { include_model_inferences: true })
    expect(stored.output).toEqual([{ type: "text", text: "Hello from fake" }])
    expect(stored.model_inferences[0]).toMatchObject({ cached: true, input_tokens: 0, output_tokens: 0 })
  })

  it("a dryrun never writes the cache, whatever cache_options say", async () => {
    const input = freshInput()
    const dry = await infer({ input, dryrun: true, cache_options: { enabled: "on" } })
    const dryWrite = await infer({ input, dryrun: true, cache_options: { enabled: "write_only" } })
    const dryStream = await gateway.stream("/inference", { function_name: "assistant", input, stream: true, dryrun: true, cache_options: { enabled: "on" } })
    expect(dryStream.status).toBe(200)
    expect(fake.requests).toHaveLength(3)
    expect(dry.usage).toEqual({ input_tokens: 12, output_tokens: 7 })
    expect(dryWrite.usage).toEqual({ input_tokens: 12, output_tokens: 7 })
    // flush something later, so that anything the dryruns queued is written
    const later = await infer({ input: freshInput() })
    await drained(later.inference_id)
    const after = await infer({ input, cache_options: { enabled: "on" } })
    expect(fake.requests).toHaveLength(5)
    expect(after.usage).toEqual({ input_tokens: 12, output_tokens: 7 })
  })

  it("invalid outputs are not cached: a tool call whose arguments do not fit, json that does not fit the schema", async () => {
    // a tool call with arguments that do not fit the tool's parameters
    const toolInput = freshInput()
    fake.script.push({
      kind: "json",
      body: completion({
        content: null,
        tool_calls: [{ id: "call_1", type: "function", function: { name: "get_temperature", arguments: "{\"location\":5}" } }]
      }, { finishReason: "tool_calls" })
    })
    const badTool = await infer({ input: toolInput, cache_options: { enabled: "on" } })
    expect(badTool.content[0]).toMatchObject({ type: "tool_call", raw_name: "get_temperature", arguments: null })
    // an unknown tool name
    const nameInput = freshInput()
    fake.script.push({
      kind: "json",
      body: completion({
        content: null,
        tool_calls: [{ id: "call_2", type: "function", function: { name: "launch_rocket", arguments: "{}" } }]
      }, { finishReason: "tool_calls" })
    })
    const badName = await infer({ input: nameInput, cache_options: { enabled: "on" } })
    expect(badName.content[0]).toMatchObject({ type: "tool_call", raw_name: "launch_rocket", name: null })
    // json that parses but does not fit the output schema, and json that does not parse
    const jsonInput = freshInput()
    fake.script.push({ kind: "json", body: completion({ content: "{\"answer\":5}" }) })
    const badJson = await infer({ function_name: "extract", input: jsonInput, cache_options: { enabled: "on" } })
    expect(badJson.output).toEqual({ raw: "{\"answer\":5}", parsed: null })
    const brokenInput = freshInput()
    fake.script.push({ kind: "json", body: completion({ content: "{\"answer\":" }) })
    const broken = await infer({ function_name: "extract", input: brokenInput, cache_options: { enabled: "on" } })
    expect(broken.output.parsed).toBeNull()
    // the dummy's bad tool call, too
    const dummyInput = freshInput()
    const dummyFirst = await infer({ function_name: "weather", input: dummyInput, cache_options: { enabled: "on" } })
    expect(dummyFirst.content[0].arguments).toBeNull()
    expect(fake.requests).toHaveLength(4)
    await drained(dummyFirst.inference_id)

    // asked again, each goes to the provider: nothing was cached
    for (const input of [toolInput, nameInput]) {
      const again = await infer({ input, cache_options: { enabled: "on" } })
      expect(again.usage).toEqual({ input_tokens: 12, output_tokens: 7 })
      expect((await storedCall(again.inference_id)).cached).toBe(false)
    }
    for (const input of [jsonInput, brokenInput]) {
      fake.script.push({ kind: "json", body: completion({ content: "{\"answer\":\"ok\"}" }) })
      const again = await infer({ function_name: "extract", input, cache_options: { enabled: "on" } })
      expect(again.output.parsed).toEqual({ answer: "ok" })
      expect(again.usage).toEqual({ input_tokens: 12, output_tokens: 7 })
    }
    expect(fake.requests).toHaveLength(8)
    const dummyAgain = await infer({ function_name: "weather", input: dummyInput, cache_options: { enabled: "on" } })
    expect(dummyAgain.usage).toEqual({ input_tokens: 10, output_tokens: 1 })
    expect((await storedCall(dummyAgain.inference_id)).cached).toBe(false)

    // a valid json answer is cached, so the second extract above is now a hit
    await drained(dummyAgain.inference_id)
    const hit = await infer({ function_name: "extract", input: jsonInput, cache_options: { enabled: "on" } })
    expect(fake.requests).toHaveLength(8)
    expect(hit.output.parsed).toEqual({ answer: "ok" })
    expect(hit.usage).toEqual(zeroUsage)
  })
})
