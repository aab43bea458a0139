/**
 * Observability conformance, part 1 (issue 3, "What is stored"), against ClickHouse and
 * Postgres alike: what a chat, a json and a streamed inference store, their model
 * inferences (raw request and response as the upstream saw them), fallbacks, and that a
 * dryrun stores nothing. Everything is read back over HTTP with get_inferences.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import { freshDatabase, type TestDatabase } from "../support/databases.ts"
import { completion, type FakeOpenAi, openAiProviderToml, startFakeOpenAi, textStreamChunks } from "../support/fakeOpenAi.ts"
import { type RunningGateway, startGateway } from "../support/gateway.ts"
import {
  backends,
  getInferences,
  listInferences,
  observabilityToml,
  uuidV7Pattern,
  waitForInference,
  waitForInferences
} from "../support/observability.ts"

const temperatureSchema = {
  type: "object",
  properties: { location: { type: "string" }, units: { type: "string", enum: ["celsius", "fahrenheit"] } },
  required: ["location"],
  additionalProperties: false
}

const files = {
  "tools/get_temperature.json": JSON.stringify(temperatureSchema),
  "schemas/answer.json": JSON.stringify({ type: "object", properties: { answer: { type: "string" } }, required: ["answer"] })
}

const openAiProvider = (model: string, name: string, modelName: string, apiBase: string) =>
  openAiProviderToml(model, name, modelName, apiBase, "env::FAKE_OPENAI_KEY")

const config = (apiBase: string) => `
${observabilityToml()}

[tools.get_temperature]
description = "Get the current temperature of a place"
parameters = "tools/get_temperature.json"
strict = true

[models.fake]
routing = ["openai"]
${openAiProvider("fake", "openai", "gpt-fake", apiBase)}

[models.routed]
routing = ["first", "second"]
${openAiProvider("routed", "first", "gpt-first", apiBase)}
${openAiProvider("routed", "second", "gpt-second", apiBase)}

[functions.assistant]
type = "chat"
tools = ["get_temperature"]
[functions.assistant.variants.openai]
type = "chat_completion"
model = "fake"
temperature = 0.5

[functions.extract]
type = "json"
output_schema = "schemas/answer.json"
[functions.extract.variants.dummy]
type = "chat_completion"
model = "dummy::json"

[functions.broken]
type = "chat"
[functions.broken.variants.error]
type = "chat_completion"
model = "dummy::error"

[functions.broken_stream]
type = "chat"
[functions.broken_stream.variants.stream_error]
type = "chat_completion"
model = "dummy::stream_error"

[functions.resilient]
type = "chat"
[functions.resilient.variants.routed]
type = "chat_completion"
model = "routed"
`

describe.each(backends)("observability on %s: what an inference stores", (backend) => {
  let database: TestDatabase
  let fake: FakeOpenAi
  let gateway: RunningGateway

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

  it("a chat inference: function, variant, episode, input as received, output, tags, params, tools, and its model inference", async () => {
    const upstreamBody = completion({
      content: "Let me check.",
      tool_calls: [{ id: "call_1", type: "function", function: { name: "get_temperature", arguments: "{\"location\":\"Paris\"}" } }]
    }, { finishReason: "tool_calls", usage: { prompt_tokens: 31, completion_tokens: 9 } })
    fake.script.push({ kind: "json", body: upstreamBody })
    const input = {
      system: "You are terse.",
      messages: [
        { role: "user", content: "What is the temperature in Paris?" },
        { role: "assistant", content: [{ type: "text", text: "In celsius?" }] },
        { role: "user", content: [{ type: "text", text: "Yes, celsius." }] }
      ]
    }
    const additionalTool = {
      name: "get_time",
      description: "The local time of a place",
      parameters: { type: "object", properties: { place: { type: "string" } }, required: ["place"] },
      strict: false
    }
    const before = Date.now()
    const response = await gateway.post("/inference", {
      function_name: "assistant",
      input,
      tags: { user: "u-1", experiment: "storage" },
      params: { chat_completion: { max_tokens: 50, seed: 7 } },
      additional_tools: [additionalTool],
      tool_choice: "auto",
      parallel_tool_calls: false
    })
    expect(response.status, JSON.stringify(response.body)).toBe(200)
    expect(response.body.inference_id).toMatch(uuidV7Pattern)
    expect(fake.requests).toHaveLength(1)

    const stored = await waitForInference(gateway, response.body.inference_id, { include_model_inferences: true })
    expect(stored).toMatchObject({
      type: "chat",
      inference_id: response.body.inference_id,
      episode_id: response.body.episode_id,
      function_name: "assistant",
      variant_name: "openai",
      input,
      output: response.body.content,
      tags: { user: "u-1", experiment: "storage" }
    })
    expect(stored.output).toEqual([
      { type: "text", text: "Let me check." },
      {
        type: "tool_call",
        id: "call_1",
        name: "get_temperature",
        arguments: { location: "Paris" },
        raw_name: "get_temperature",
        raw_arguments: "{\"location\":\"Paris\"}"
      }
    ])
    expect(stored.inference_params.chat_completion).toMatchObject({ temperature: 0.5, max_tokens: 50, seed: 7 })
    expect(stored.tool_params).toMatchObject({ tool_choice: "auto", parallel_tool_calls: false })
    expect(stored.tool_params.tools_available).toEqual([
      { name: "get_temperature", description: "Get the current temperature of a place", parameters: temperatureSchema, strict: true },
      additionalTool
    ])
    expect(stored).not.toHaveProperty("output_schema")
    expect(typeof stored.processing_time_ms).toBe("number")
    expect(stored.processing_time_ms).toBeGreaterThanOrEqual(0)
    expect(stored.processing_time_ms).toBeLessThan(10_000)
    expect(stored.ttft_ms).toBeNull()
    const timestamp = Date.parse(stored.timestamp)
    expect(timestamp).toBeGreaterThanOrEqual(before - 1000)
    expect(timestamp).toBeLessThanOrEqual(Date.now())

    // one model inference: the call the upstream received, and its answer, byte for byte
    expect(stored.model_inferences).toHaveLength(1)
    const [call] = stored.model_inferences
    expect(call).toMatchObject({
      model_name: "fake",
      model_provider_name: "openai",
      input_tokens: 31,
      output_tokens: 9,
      finish_reason: "tool_call",
      cached: false,
      system: "You are terse."
    })
    expect(call.model_inference_id).toMatch(uuidV7Pattern)
    expect(JSON.parse(call.raw_request)).toEqual(fake.requests[0].body)
    expect(fake.requests[0].body.model).toBe("gpt-fake")
    expect(call.raw_response).toBe(JSON.stringify(upstreamBody))
    expect(typeof call.response_time_ms).toBe("number")
    expect(call.response_time_ms).toBeGreaterThanOrEqual(0)
    expect(call.response_time_ms).toBeLessThanOrEqual(stored.processing_time_ms + 1)
  })

  it("a json inference with an output_schema override: the schema it was checked against, the raw and parsed output", async () => {
    const override = {
      type: "object",
      properties: { answer: { type: "string", maxLength: 10 } },
      required: ["answer"],
      additionalProperties: false
    }
    const input = { messages: [{ role: "user", content: [{ type: "text", text: "Say hello as JSON" }] }] }
    const response = await gateway.post("/inference", {
      function_name: "extract",
      input,
      output_schema: override,
      tags: { kind: "json" },
      params: { chat_completion: { temperature: 0.25, json_mode: "strict" } }
    })
    expect(response.status, JSON.stringify(response.body)).toBe(200)
    expect(response.body.output).toEqual({ raw: "{\"answer\":\"Hello\"}", parsed: { answer: "Hello" } })

    const stored = await waitForInference(gateway, response.body.inference_id, { include_model_inferences: true })
    expect(stored).toMatchObject({
      type: "json",
      inference_id: response.body.inference_id,
      episode_id: response.body.episode_id,
      function_name: "extract",
      variant_name: "dummy",
      input,
      output: { raw: "{\"answer\":\"Hello\"}", parsed: { answer: "Hello" } },
      output_schema: override,
      tags: { kind: "json" },
      ttft_ms: null
    })
    expect(stored.inference_params.chat_completion).toMatchObject({ temperature: 0.25, json_mode: "strict" })
    expect(stored).not.toHaveProperty("tool_params")
    expect(stored.processing_time_ms).toBeGreaterThanOrEqual(0)
    expect(stored.model_inferences).toHaveLength(1)
    expect(stored.model_inferences[0]).toMatchObject({
      model_name: "dummy::json",
      input_tokens: 10,
      output_tokens: 1,
      finish_reason: "stop",
      cached: false,
      output: [{ type: "text", text: "{\"answer\":\"Hello\"}" }]
    })
    expect(JSON.parse(stored.model_inferences[0].raw_request)).toMatchObject({ model: "json", json_mode: "strict" })
  })

  it("a streamed inference is stored when it finishes: the concatenated output, a ttft_ms, the raw chunks", async () => {
    const chunks = textStreamChunks(["Streamed", " answer", " here"], { prompt_tokens: 5, completion_tokens: 3 })
    fake.script.push({ kind: "stream", chunks, chunkDelayMs: 30 })
    const { status, events } = await gateway.stream("/inference", {
      function_name: "assistant",
      input: { messages: [{ role: "user", content: "stream please" }] },
      stream: true,
      tags: { mode: "stream" }
    })
    expect(status).toBe(200)
    expect(events.at(-1)).toBe("[DONE]")
    const id = events[0].inference_id
    expect(id).toMatch(uuidV7Pattern)

    const stored = await waitForInference(gateway, id, { include_model_inferences: true })
    expect(stored).toMatchObject({
      type: "chat",
      episode_id: events[0].episode_id,
      function_name: "assistant",
      variant_name: "openai",
      input: { messages: [{ role: "user", content: "stream please" }] },
      output: [{ type: "text", text: "Streamed answer here" }],
      tags: { mode: "stream" }
    })
    expect(typeof stored.ttft_ms).toBe("number")
    expect(stored.ttft_ms).toBeGreaterThanOrEqual(0)
    // the stream took at least 4 chunk delays after its first chunk
    expect(stored.processing_time_ms).toBeGreaterThanOrEqual(stored.ttft_ms + 100)
    const [call] = stored.model_inferences
    expect(call).toMatchObject({
      model_name: "fake",
      model_provider_name: "openai",
      input_tokens: 5,
      output_tokens: 3,
      finish_reason: "stop",
      cached: false,
      output: [{ type: "text", text: "Streamed answer here" }]
    })
    expect(typeof call.ttft_ms).toBe("number")
    expect(JSON.parse(call.raw_request)).toEqual(fake.requests[0].body)
    expect(fake.requests[0].body.stream).toBe(true)
    // the raw response holds the upstream's chunks, one per line
    expect(call.raw_response.split("\n").map((line: string) => JSON.parse(line))).toEqual(chunks)
  })

  it("a variant that fell back to its second provider stores the provider that answered", async () => {
    fake.script.push({ kind: "json", status: 503, body: { error: { message: "first is down" } } })
    const response = await gateway.post("/inference", {
      function_name: "resilient",
      input: { messages: [{ role: "user", content: "hello" }] }
    })
    expect(response.status, JSON.stringify(response.body)).toBe(200)
    expect(fake.requests.map((request) => request.body.model)).toEqual(["gpt-first", "gpt-second"])

    const stored = await waitForInference(gateway, response.body.inference_id, { include_model_inferences: true })
    expect(stored.output).toEqual([{ type: "text", text: "Hello from fake OpenAI" }])
    expect(stored.model_inferences).toHaveLength(1)
    expect(stored.model_inferences[0]).toMatchObject({ model_name: "routed", model_provider_name: "second", cached: false })
    expect(JSON.parse(stored.model_inferences[0].raw_request)).toEqual(fake.requests[1].body)
  })

  it("a dryrun inference stores nothing, streamed or not; nor does a failed one", async () => {
    const input = { messages: [{ role: "user", content: "dry" }] }
    const dry = await gateway.post("/inference", { function_name: "assistant", input, dryrun: true, tags: { dry: "yes" } })
    expect(dry.status).toBe(200)
    const dryStream = await gateway.stream("/inference", { function_name: "assistant", input, dryrun: true, stream: true })
    expect(dryStream.status).toBe(200)
    expect(dryStream.events.at(-1)).toBe("[DONE]")
    const dryJson = await gateway.post("/inference", { function_name: "extract", input, dryrun: true })
    expect(dryJson.status).toBe(200)
    // providers are still called
    expect(fake.requests).toHaveLength(2)

    // writes are in order: once a later inference is stored, the dryruns would have been too
    const later = await gateway.post("/inference", { function_name: "assistant", input })
    expect(later.status).toBe(200)
    await waitForInference(gateway, later.body.inference_id)

    // failed inferences store nothing either: a provider error, a stream that breaks
    const failed = await gateway.post("/inference", { function_name: "broken", input })
    expect(failed.status).toBeGreaterThanOrEqual(500)
    const broken = await gateway.stream("/inference", { function_name: "broken_stream", input, stream: true })
    expect(broken.status).toBe(200)
    expect(broken.events.at(-1)).toHaveProperty("error")
    const brokenId = broken.events[0].inference_id
    expect(brokenId).toMatch(uuidV7Pattern)
    const last = await gateway.post("/inference", { function_name: "extract", input })
    await waitForInference(gateway, last.body.inference_id)
    expect(await getInferences(gateway, [brokenId])).toEqual([])
    expect(await listInferences(gateway, { function_name: "broken" })).toEqual([])
    expect(await listInferences(gateway, { function_name: "broken_stream" })).toEqual([])

    const dryIds = [dry.body.inference_id, dryStream.events[0].inference_id, dryJson.body.inference_id]
    expect(await getInferences(gateway, dryIds, { include_model_inferences: true })).toEqual([])
    expect(await listInferences(gateway, { episode_id: dry.body.episode_id })).toEqual([])
    expect(await listInferences(gateway, { filters: { type: "tag", key: "dry", value: "yes" } })).toEqual([])
  })

  it("several inferences of one episode are each stored once, with their own model inference", async () => {
    const first = await gateway.post("/inference", { function_name: "assistant", input: { messages: [{ role: "user", content: "one" }] } })
    const episode = first.body.episode_id
    const rest = await Promise.all([1, 2, 3].map((n) =>
      gateway.post("/inference", { function_name: "assistant", episode_id: episode, input: { messages: [{ role: "user", content: `n${n}` }] } })
    ))
    const ids = [first, ...rest].map((response) => {
      expect(response.status).toBe(200)
      return response.body.inference_id as string
    })
    const stored = await waitForInferences(gateway, ids, { include_model_inferences: true })
    expect(stored.map((inference) => inference.inference_id)).toEqual(ids)
    for (const inference of stored) {
      expect(inference.episode_id).toBe(episode)
      expect(inference.model_inferences).toHaveLength(1)
      expect(inference.model_inferences[0].cached).toBe(false)
    }
    const listed = await listInferences(gateway, { episode_id: episode })
    expect(listed.map((inference) => inference.inference_id).sort()).toEqual([...ids].sort())
  })
})
