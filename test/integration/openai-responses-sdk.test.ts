/**
 * The OpenAI Responses surface (issue 37, slices 6 and 7: whole and streamed, stateless)
 * driven by the official `openai` SDK with `baseURL: <gateway>/openai/v1`: `responses.create`
 * and `responses.stream(...).finalResponse()` onto the dummy provider and onto fake providers of
 * two families (OpenAI Chat Completions, Anthropic), a function-calling loop with
 * `function_call_output`, `text.format` onto a json function, the errors as the SDK raises
 * them (a stream failing after its start too), and the stored inference's `gateway::surface` tag.
 */
import OpenAI from "openai"
import { zodTextFormat } from "openai/helpers/zod"
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import { z } from "zod"
import { freshDatabase, type TestDatabase } from "../support/databases.ts"
import { anthropicModelToml, type FakeAnthropic, message, startFakeAnthropic } from "../support/fakeAnthropic.ts"
import { completion, type FakeOpenAi, openAiProviderToml, startFakeOpenAi, textStreamChunks, toolCallStreamChunks } from "../support/fakeOpenAi.ts"
import { type RunningGateway, startGateway } from "../support/gateway.ts"
import { observabilityToml, uuidV7Pattern, waitForInference } from "../support/observability.ts"

const config = (openai: FakeOpenAi, anthropic: FakeAnthropic) => `
${observabilityToml()}

[models.gpt-fake]
routing = ["openai"]
${openAiProviderToml("gpt-fake", "openai", "gpt-4o", openai.apiBase, "none")}
${anthropicModelToml("claude-fake", "claude-sonnet-4-5", anthropic.apiBase, "env::TEST_ANTHROPIC_KEY")}

[functions.assistant]
type = "chat"
[functions.assistant.variants.main]
type = "chat_completion"
model = "dummy::reasoner"

[functions.broken_stream]
type = "chat"
[functions.broken_stream.variants.main]
type = "chat_completion"
model = "dummy::fatal_stream_error"

[functions.extract]
type = "json"
[functions.extract.variants.main]
type = "chat_completion"
model = "dummy::json"
`

const dummyText = "Megumin gleefully chanted her spell, unleashing a thunderous explosion that lit up the sky and left a massive crater in its wake."

const weatherTool = {
  type: "function" as const,
  name: "get_weather",
  description: "The weather of a city",
  parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"], additionalProperties: false },
  strict: true
}

describe("the official openai SDK's Responses API as a client", () => {
  let openai: FakeOpenAi
  let anthropic: FakeAnthropic
  let database: TestDatabase
  let gateway: RunningGateway
  let client: OpenAI

  beforeAll(async () => {
    openai = await startFakeOpenAi()
    anthropic = await startFakeAnthropic({ apiKey: "sk-ant-upstream" })
    database = await freshDatabase("postgres")
    gateway = await startGateway({
      config: config(openai, anthropic),
      env: { TEST_ANTHROPIC_KEY: "sk-ant-upstream", GATEWAY_ANALYTICS_DB_URL: database.url }
    })
    client = new OpenAI({ baseURL: `${gateway.url}/openai/v1`, apiKey: "unused-without-auth", maxRetries: 0 })
  })
  afterAll(async () => {
    await gateway?.stop()
    await database?.drop()
    await openai?.close()
    await anthropic?.close()
  })
  beforeEach(() => {
    openai.reset()
    anthropic.requests.length = 0
    anthropic.script.length = 0
  })

  it("answers a function on the dummy provider as a response: a reasoning item, then the message; stored tagged with its surface", async () => {
    const response = await client.responses.create({
      model: "gateway::function_name::assistant",
      input: "Tell me a story.",
      metadata: { team: "stories" }
    })
    expect(response).toMatchObject({
      object: "response",
      status: "completed",
      model: "gateway::function_name::assistant",
      output_text: dummyText,
      store: true,
      metadata: { team: "stories" },
      usage: { input_tokens: 10, output_tokens: 2, total_tokens: 12, input_tokens_details: { cached_tokens: 0 }, output_tokens_details: { reasoning_tokens: 0 } }
    })
    expect(response.id).toMatch(uuidV7Pattern)
    const stem = response.id.replaceAll("-", "")
    expect(response.output.map((item) => [item.type, item.id])).toEqual([["reasoning", `rs_${stem}_0`], ["message", `msg_${stem}_1`]])
    expect((response as any).gateway_episode_id).toMatch(uuidV7Pattern)
    expect((response as any).gateway_variant_name).toBe("main")

    const stored = await waitForInference(gateway, response.id)
    expect(stored.tags).toMatchObject({ "gateway::surface": "openai_responses", team: "stories" })
    expect(stored.episode_id).toBe((response as any).gateway_episode_id)
  })

  it("streams a function on the dummy provider: events numbered from 0, and finalResponse() with the items streamed", async () => {
    const stream = client.responses.stream({ model: "gateway::function_name::assistant", input: "Tell me a story." })
    const events: Array<{ type: string; sequence_number: number }> = []
    stream.on("event", (event) => events.push(event))
    const final = await stream.finalResponse()
    expect(events.map((event) => event.sequence_number)).toEqual(events.map((_, i) => i))
    expect(events[0].type).toBe("response.created")
    expect(events[events.length - 1].type).toBe("response.completed")
    expect(final.status).toBe("completed")
    expect(final.output.map((item) => item.type)).toEqual(["reasoning", "message"])
    expect(final.output_text).toMatch(/^Wally, the golden retriever/)
    const added = events.filter((event) => event.type === "response.output_item.added").map((event: any) => event.item.id)
    expect(added).toEqual(final.output.map((item) => item.id))
    const stored = await waitForInference(gateway, final.id)
    expect(stored.tags["gateway::surface"]).toBe("openai_responses")
  })

  it("answers a configured model by its bare name through an OpenAI Chat Completions provider, whole and streamed", async () => {
    openai.script.push({ kind: "json", body: completion({ content: "Hi from upstream" }, { usage: { prompt_tokens: 21, completion_tokens: 4 } }) })
    const response = await client.responses.create({
      model: "gpt-fake",
      instructions: "You are terse.",
      input: [
        { role: "developer", content: "Answer in English." },
        { role: "user", content: [{ type: "input_text", text: "Hello" }, { type: "input_image", image_url: "https://example.com/cat.png", detail: "low" }] }
      ],
      temperature: 0.2,
      max_output_tokens: 50
    })
    expect(response).toMatchObject({ model: "gpt-fake", output_text: "Hi from upstream", usage: { input_tokens: 21, output_tokens: 4, total_tokens: 25 } })
    expect(openai.requests[0].body).toMatchObject({
      model: "gpt-4o",
      temperature: 0.2,
      max_completion_tokens: 50,
      messages: [
        { role: "system", content: "You are terse.\n\nAnswer in English." },
        { role: "user", content: [{ type: "text", text: "Hello" }, { type: "image_url", image_url: { url: "https://example.com/cat.png", detail: "low" } }] }
      ]
    })

    openai.script.push({ kind: "stream", chunks: textStreamChunks(["Hello", " from", " fake"]) })
    const final = await client.responses.stream({ model: "gpt-fake", input: "Hi" }).finalResponse()
    expect(final).toMatchObject({ status: "completed", model: "gpt-fake", output_text: "Hello from fake", usage: { input_tokens: 12, output_tokens: 7 } })
    expect(openai.requests[1].body.stream).toBe(true)
  })

  it("answers through an Anthropic provider: its thinking as a reasoning item, whose signature (wrapped with its maker's type) include asks for; whole and streamed", async () => {
    const answer = message([{ type: "thinking", thinking: "Let me think.", signature: "sig-anthropic" }, { type: "text", text: "Forty-two." }])
    anthropic.script.push({ kind: "message", body: answer })
    const response = await client.responses.create({
      model: "gateway::model_name::claude-fake",
      input: "The answer?",
      max_output_tokens: 1000,
      include: ["reasoning.encrypted_content"]
    })
    const stem = response.id.replaceAll("-", "")
    expect(response.output).toEqual([
      { id: `rs_${stem}_0`, type: "reasoning", summary: [{ type: "summary_text", text: "Let me think." }], encrypted_content: "gateway.v1.anthropic.sig-anthropic" },
      {
        id: `msg_${stem}_1`,
        type: "message",
        role: "assistant",
        status: "completed",
        content: [{ type: "output_text", text: "Forty-two.", annotations: [], logprobs: [] }]
      }
    ])
    expect(anthropic.requests[0].body).toMatchObject({ model: "claude-sonnet-4-5", max_tokens: 1000, messages: [{ role: "user" }] })

    anthropic.script.push({ kind: "message", body: answer })
    const final = await client.responses.stream({ model: "claude-fake", input: "The answer?", max_output_tokens: 1000 }).finalResponse()
    expect(final.output.map((item) => item.type)).toEqual(["reasoning", "message"])
    expect(final.output[0]).not.toHaveProperty("encrypted_content")
    expect(final.output_text).toBe("Forty-two.")
    expect(anthropic.requests[1].body.stream).toBe(true)
  })

  it("runs a function-calling loop: the calls come back as function_call items, their outputs go upstream as tool results", async () => {
    openai.script.push({
      kind: "json",
      body: completion({
        content: null,
        tool_calls: [
          { id: "call_paris", type: "function", function: { name: "get_weather", arguments: '{"city":"Paris"}' } },
          { id: "call_rome", type: "function", function: { name: "get_weather", arguments: '{"city":"Rome"}' } }
        ]
      }, { finishReason: "tool_calls" })
    })
    const input: Array<OpenAI.Responses.ResponseInputItem> = [{ role: "user", content: "Weather in Paris and Rome?" }]
    const first = await client.responses.create({ model: "gpt-fake", input, tools: [weatherTool], tool_choice: "auto" })
    const calls = first.output.filter((item) => item.type === "function_call")
    expect(calls.map((call) => [call.call_id, call.name, call.arguments])).toEqual([
      ["call_paris", "get_weather", '{"city":"Paris"}'],
      ["call_rome", "get_weather", '{"city":"Rome"}']
    ])
    expect(openai.requests[0].body.tools).toEqual([{ type: "function", function: { name: "get_weather", description: "The weather of a city", parameters: weatherTool.parameters, strict: true } }])

    openai.script.push({ kind: "stream", chunks: textStreamChunks(["Sunny in Paris, ", "rain in Rome."]) })
    input.push(...first.output as Array<OpenAI.Responses.ResponseInputItem>)
    for (const call of calls) input.push({ type: "function_call_output", call_id: call.call_id, output: call.call_id === "call_paris" ? "sunny" : "rain" })
    const second = await client.responses.stream({ model: "gpt-fake", input, tools: [weatherTool] }).finalResponse()
    expect(second.output_text).toBe("Sunny in Paris, rain in Rome.")
    expect(openai.requests[1].body.messages).toMatchObject([
      { role: "user", content: "Weather in Paris and Rome?" },
      {
        role: "assistant",
        tool_calls: [
          { id: "call_paris", type: "function", function: { name: "get_weather", arguments: '{"city":"Paris"}' } },
          { id: "call_rome", type: "function", function: { name: "get_weather", arguments: '{"city":"Rome"}' } }
        ]
      },
      { role: "tool", tool_call_id: "call_paris", content: "sunny" },
      { role: "tool", tool_call_id: "call_rome", content: "rain" }
    ])
  })

  it("streams parallel tool calls as function_call items with their arguments whole", async () => {
    openai.script.push({
      kind: "stream",
      chunks: toolCallStreamChunks([
        { id: "call_1", function: { name: "get_weather", arguments: '{"city":"Paris"}' } },
        { id: "call_2", function: { name: "get_weather", arguments: '{"city":"Rome"}' } }
      ])
    })
    const stream = client.responses.stream({ model: "gpt-fake", input: "Weather in Paris and Rome?", tools: [weatherTool] })
    const done: Array<string> = []
    stream.on("response.function_call_arguments.done", (event) => done.push(event.arguments))
    const final = await stream.finalResponse()
    expect(done).toEqual(['{"city":"Paris"}', '{"city":"Rome"}'])
    expect(final.output).toMatchObject([
      { type: "function_call", call_id: "call_1", name: "get_weather", arguments: '{"city":"Paris"}', status: "completed" },
      { type: "function_call", call_id: "call_2", name: "get_weather", arguments: '{"city":"Rome"}', status: "completed" }
    ])
  })

  it("answers text.format json_schema on a json function with its JSON, which the SDK parses", async () => {
    const format = zodTextFormat(z.object({ answer: z.string() }), "answer")
    const parsed = await client.responses.parse({ model: "gateway::function_name::extract", input: "Say hello.", text: { format } })
    expect(parsed.output_text).toBe('{"answer":"Hello"}')
    expect(parsed.output_parsed).toEqual({ answer: "Hello" })
    // the dummy streams another JSON than it answers whole
    const person = zodTextFormat(z.object({ name: z.string(), age: z.number() }), "person")
    const streamed = await client.responses.stream({ model: "gateway::function_name::extract", input: "Who?", text: { format: person } }).finalResponse()
    expect(streamed.output_parsed).toEqual({ name: "John", age: 30 })
    expect(streamed.output.map((item) => item.type)).toEqual(["message"])
  })

  it("raises the SDK's own errors: an unknown model (404), a field it cannot serve (400 naming it)", async () => {
    const unknown = await client.responses.create({ model: "gpt-unknown", input: "x" }).catch((error: unknown) => error)
    expect(unknown).toBeInstanceOf(OpenAI.NotFoundError)
    expect((unknown as Error).message).toContain("gpt-unknown")
    expect((unknown as InstanceType<typeof OpenAI.NotFoundError>).type).toBe("not_found_error")

    const previous = await client.responses.create({ model: "gpt-fake", input: "x", previous_response_id: "resp_1" }).catch((error: unknown) => error)
    expect(previous).toBeInstanceOf(OpenAI.BadRequestError)
    expect((previous as Error).message).toContain("previous_response_id")

    const streamed = await client.responses.stream({ model: "gpt-fake", input: "x", max_output_tokens: 0 }).finalResponse().catch((error: unknown) => error)
    expect(streamed).toBeInstanceOf(OpenAI.BadRequestError)
    expect((streamed as Error).message).toContain("max_output_tokens")
    expect(openai.requests).toHaveLength(0)
  })

  it("ends a stream that fails after its start with an error event, which the SDK raises", async () => {
    const stream = client.responses.stream({ model: "gateway::function_name::broken_stream", input: "x" })
    const deltas: Array<string> = []
    stream.on("response.output_text.delta", (event) => deltas.push(event.delta))
    const failed = await stream.finalResponse().catch((error: unknown) => error)
    expect(failed).toBeInstanceOf(OpenAI.APIError)
    expect((failed as Error).message).toContain("Dummy fatal error")
    expect(deltas.length).toBeGreaterThan(0)
  })

  it("stores by default with an analytics database, whole and streamed, without a warning (test/integration/openai-responses-store.test.ts reads them back)", async () => {
    const { data, response } = await client.responses.create({ model: "gateway::function_name::assistant", input: "x", store: true }).withResponse()
    expect((data as any).store).toBe(true)
    expect(response.headers.get("gateway-warning")).toBeNull()
    const streamed = await client.responses.create({ model: "gateway::function_name::assistant", input: "x", stream: true }).withResponse()
    expect(streamed.response.headers.get("gateway-warning")).toBeNull()
    for await (const _ of streamed.data) {
      // read to the end
    }
    expect((await client.responses.create({ model: "gateway::function_name::assistant", input: "x", store: false }) as any).store).toBe(false)
  })

  it("is in the API's document", async () => {
    const spec = await gateway.get("/openapi.json")
    expect(Object.keys(spec.body.paths["/openai/v1/responses"])).toEqual(["post"])
  })
})
