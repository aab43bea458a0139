/**
 * The Anthropic Messages surface (issue 37, first slice: whole answers) driven by the official
 * `@anthropic-ai/sdk` with `baseURL: <gateway>/anthropic`: a configured model by its bare name
 * and by `gateway::model_name::`, a function (its variant pinned in `model`), a tool-use loop
 * onto a fake Anthropic server (what it receives behind the gateway), and the errors as the
 * SDK raises them. With authentication on, the key is taken from `x-api-key` (Claude Code) or
 * `Authorization: Bearer` (the current SDK).
 */
import Anthropic from "@anthropic-ai/sdk"
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import { createKey } from "../support/access.ts"
import { freshDatabase, type TestDatabase } from "../support/databases.ts"
import { anthropicModelToml, type FakeAnthropic, message, startFakeAnthropic, textMessage } from "../support/fakeAnthropic.ts"
import { type RunningGateway, startGateway } from "../support/gateway.ts"

const config = (anthropic: FakeAnthropic) => `
${anthropicModelToml("claude-sonnet-4-5", "claude-sonnet-4-5", anthropic.apiBase, "env::TEST_ANTHROPIC_KEY")}
[functions.assistant]
type = "chat"
[functions.assistant.variants.main]
type = "chat_completion"
model = "dummy::hello"
weight = 1
[functions.assistant.variants.echo]
type = "chat_completion"
model = "dummy::echo_request_messages"
weight = 0
`

const weatherTool = {
  name: "get_weather",
  description: "The weather of a city",
  input_schema: { type: "object" as const, properties: { city: { type: "string" } }, required: ["city"] }
}

describe("the official @anthropic-ai/sdk as a client", () => {
  let anthropic: FakeAnthropic
  let gateway: RunningGateway
  let client: Anthropic

  beforeAll(async () => {
    anthropic = await startFakeAnthropic({ apiKey: "sk-ant-upstream" })
    gateway = await startGateway({ config: config(anthropic), env: { TEST_ANTHROPIC_KEY: "sk-ant-upstream" } })
    client = new Anthropic({ baseURL: `${gateway.url}/anthropic`, apiKey: "unused-without-auth", maxRetries: 0 })
  })
  afterAll(async () => {
    await gateway?.stop()
    await anthropic?.close()
  })
  beforeEach(() => {
    anthropic.requests.length = 0
    anthropic.script.length = 0
  })

  it("answers a configured model called by its bare name, as Anthropic's message, and sends the upstream Anthropic's request", async () => {
    anthropic.script.push({
      kind: "message",
      body: textMessage("Hi there", { input_tokens: 20, cache_creation_input_tokens: 0, cache_read_input_tokens: 100, output_tokens: 4 })
    })
    // the SDK's current API version has no sampling parameters; an older version's are honoured when sent
    const withSampling = { temperature: 0.2, top_k: 40, stop_sequences: ["END"] } as {}
    const answer = await client.messages.create({
      model: "claude-sonnet-4-5",
      max_tokens: 300,
      system: "You are terse.",
      ...withSampling,
      messages: [{ role: "user", content: "Hello" }]
    })
    expect(answer).toMatchObject({
      type: "message",
      role: "assistant",
      model: "claude-sonnet-4-5",
      content: [{ type: "text", text: "Hi there" }],
      stop_reason: "end_turn",
      stop_sequence: null,
      // Anthropic's convention: input without the cache's reads
      usage: { input_tokens: 20, cache_read_input_tokens: 100, cache_creation_input_tokens: 0, output_tokens: 4 }
    })
    expect(answer.id).toMatch(/^[0-9a-f-]{36}$/)
    expect(anthropic.requests).toHaveLength(1)
    expect(anthropic.requests[0].body).toEqual({
      model: "claude-sonnet-4-5",
      max_tokens: 300,
      system: "You are terse.",
      messages: [{ role: "user", content: [{ type: "text", text: "Hello" }] }],
      temperature: 0.2,
      top_k: 40,
      stop_sequences: ["END"]
    })
  })

  it("runs a function, its variant pinned in model; gateway:: fields ride in the body; the inference is stored as any other", async () => {
    const answer = await client.messages.create({
      model: "gateway::function_name::assistant::variant_name::echo",
      max_tokens: 100,
      messages: [{ role: "user", content: [{ type: "text", text: "ping" }] }],
      // @ts-expect-error the gateway's own field, sent as it is
      "gateway::tags": { user: "alice" }
    })
    expect(answer.model).toBe("gateway::function_name::assistant::variant_name::echo")
    expect((answer as any).gateway_variant_name).toBe("echo")
    expect((answer as any).gateway_episode_id).toMatch(/^[0-9a-f-]{36}$/)
    expect(answer.content).toHaveLength(1)
    // the echo model answers with the messages it received
    expect(answer.content[0].type === "text" && JSON.parse(answer.content[0].text)).toMatchObject({
      messages: [{ role: "user", content: [{ type: "text", text: "ping" }] }]
    })
  })

  it("runs a tool-use loop: tool_use comes back with its parsed input, tool_result goes upstream with its id", async () => {
    anthropic.script.push({
      kind: "message",
      body: message([{ type: "text", text: "Let me look." }, { type: "tool_use", id: "toolu_01", name: "get_weather", input: { city: "Paris" } }])
    })
    const first = await client.messages.create({
      model: "gateway::model_name::claude-sonnet-4-5",
      max_tokens: 200,
      tools: [weatherTool],
      tool_choice: { type: "auto", disable_parallel_tool_use: true },
      messages: [{ role: "user", content: "Weather in Paris?" }]
    })
    expect(first.stop_reason).toBe("tool_use")
    expect(first.content).toEqual([
      { type: "text", text: "Let me look." },
      { type: "tool_use", id: "toolu_01", name: "get_weather", input: { city: "Paris" } }
    ])
    expect(anthropic.requests[0].body).toMatchObject({
      tools: [{ name: "get_weather", description: "The weather of a city", input_schema: weatherTool.input_schema }],
      tool_choice: { type: "auto", disable_parallel_tool_use: true }
    })

    anthropic.script.push({ kind: "message", body: textMessage("Sunny in Paris.") })
    const second = await client.messages.create({
      model: "gateway::model_name::claude-sonnet-4-5",
      max_tokens: 200,
      tools: [weatherTool],
      messages: [
        { role: "user", content: "Weather in Paris?" },
        { role: "assistant", content: first.content },
        { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_01", content: "sunny, 21°C" }] }
      ]
    })
    expect(second.content).toEqual([{ type: "text", text: "Sunny in Paris." }])
    const sent = anthropic.requests[1].body
    expect(sent.messages[1]).toEqual({
      role: "assistant",
      content: [{ type: "text", text: "Let me look." }, { type: "tool_use", id: "toolu_01", name: "get_weather", input: { city: "Paris" } }]
    })
    expect(sent.messages[2].content[0]).toMatchObject({ type: "tool_result", tool_use_id: "toolu_01", content: "sunny, 21°C" })
  })

  it("lists the models and functions it answers to, page by page, and one by its id", async () => {
    const ids: Array<string> = []
    // the SDK follows the pages itself (after_id = the last id of each)
    for await (const model of client.models.list({ limit: 1 })) ids.push(model.id)
    // the configuration's own, then the built-in functions (GEPA's, `gateway::function_name::gateway::...`), as /openai/v1/models lists them
    expect(ids.slice(0, 3)).toEqual(["claude-sonnet-4-5", "gateway::model_name::claude-sonnet-4-5", "gateway::function_name::assistant"])
    expect(ids.slice(3).every((id) => id.startsWith("gateway::function_name::gateway::"))).toBe(true)
    expect(new Set(ids).size).toBe(ids.length)
    expect(await client.models.retrieve("claude-sonnet-4-5")).toMatchObject({ type: "model", id: "claude-sonnet-4-5" })
    const missing = await client.models.retrieve("claude-unknown").catch((error: unknown) => error)
    expect(missing).toBeInstanceOf(Anthropic.NotFoundError)
  })

  it("raises the SDK's own errors: an unknown model (404), a missing max_tokens (400), a stream not served yet (400)", async () => {
    const unknown = await client.messages.create({ model: "claude-unknown", max_tokens: 10, messages: [{ role: "user", content: "x" }] })
      .catch((error: unknown) => error)
    expect(unknown).toBeInstanceOf(Anthropic.NotFoundError)
    expect((unknown as InstanceType<typeof Anthropic.NotFoundError>).error).toMatchObject({ type: "error", error: { type: "not_found_error" } })
    expect((unknown as Error).message).toContain("claude-unknown")

    const noMax = await client.messages.create({ model: "claude-sonnet-4-5", messages: [{ role: "user", content: "x" }] } as any)
      .catch((error: unknown) => error)
    expect(noMax).toBeInstanceOf(Anthropic.BadRequestError)
    expect((noMax as Error).message).toContain("max_tokens")

    const streamed = await client.messages.create({ model: "claude-sonnet-4-5", max_tokens: 10, stream: true, messages: [{ role: "user", content: "x" }] })
      .catch((error: unknown) => error)
    expect(streamed).toBeInstanceOf(Anthropic.BadRequestError)
    expect((streamed as Error).message).toContain("stream")
    expect(anthropic.requests).toHaveLength(0)
  })
})

describe("the Anthropic surface with authentication on", () => {
  let database: TestDatabase
  let gateway: RunningGateway

  beforeAll(async () => {
    database = await freshDatabase("postgres")
    gateway = await startGateway({
      config: `[gateway.auth]\nenabled = true\n${config({ apiBase: "http://127.0.0.1:9/v1", url: "http://127.0.0.1:9" } as FakeAnthropic)}`,
      env: { GATEWAY_RELATIONAL_DB_URL: database.url, TEST_ANTHROPIC_KEY: "unused" }
    })
  })
  afterAll(async () => {
    await gateway?.stop()
    await database?.drop()
  })

  it("takes the key in x-api-key (what Claude Code sends) or as a bearer token (what the current SDK sends); refuses a wrong one as the SDK expects", async () => {
    const key = await createKey(database.url)
    const body = { model: "gateway::function_name::assistant", max_tokens: 10, messages: [{ role: "user", content: "hi" }] }
    const post = (headers: Record<string, string>) =>
      fetch(`${gateway.url}/anthropic/v1/messages`, {
        method: "POST",
        headers: { "content-type": "application/json", "anthropic-version": "2023-06-01", ...headers },
        body: JSON.stringify(body)
      })
    const byHeader = await post({ "x-api-key": key.key })
    expect(byHeader.status).toBe(200)
    expect(((await byHeader.json()) as any).content[0].type).toBe("text")
    const wrongHeader = await post({ "x-api-key": "sk-gw-wrong-key" })
    expect(wrongHeader.status).toBe(401)
    expect(await wrongHeader.json()).toMatchObject({ type: "error", error: { type: "authentication_error" } })

    const ask = (client: Anthropic) => client.messages.create({ ...body, messages: [{ role: "user", content: "hi" }] })
    const bySdk = await ask(new Anthropic({ baseURL: `${gateway.url}/anthropic`, apiKey: key.key, maxRetries: 0 }))
    expect(bySdk.content[0].type).toBe("text")
    const refused = await ask(new Anthropic({ baseURL: `${gateway.url}/anthropic`, apiKey: "sk-gw-wrong-key", maxRetries: 0 })).catch((error: unknown) => error)
    expect(refused).toBeInstanceOf(Anthropic.AuthenticationError)
    expect((refused as InstanceType<typeof Anthropic.AuthenticationError>).error).toMatchObject({ type: "error", error: { type: "authentication_error" } })
    // x-api-key counts on the Anthropic surface only
    const elsewhere = await fetch(`${gateway.url}/inference`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-api-key": key.key },
      body: JSON.stringify({ function_name: "assistant", input: { messages: [{ role: "user", content: "hi" }] } })
    })
    expect(elsewhere.status).toBe(401)
  })
})
