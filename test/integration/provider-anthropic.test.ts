/**
 * The `anthropic` and `gcp_vertex_anthropic` providers through the running gateway, against a
 * fake Anthropic server (test/support/fakeAnthropic.ts): what the upstream receives for each
 * feature and what the caller gets back; Vertex's service-account tokens; and the fallback from
 * a failing `anthropic` provider to an `openai` one, whole and streamed.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import { type FakeAnthropic, message, startFakeAnthropic, textMessage } from "../support/fakeAnthropic.ts"
import { type FakeOpenAi, startFakeOpenAi } from "../support/fakeOpenAi.ts"
import { type RunningGateway, startGateway } from "../support/gateway.ts"

const config = (anthropic: FakeAnthropic, openAi: FakeOpenAi) => `
[models.claude]
routing = ["a"]
[models.claude.providers.a]
type = "anthropic"
model_name = "claude-sonnet-4-5"
api_base = "${anthropic.apiBase}"
api_key_location = "env::TEST_ANTHROPIC_KEY"

[models.vertex]
routing = ["v"]
[models.vertex.providers.v]
type = "gcp_vertex_anthropic"
model_id = "claude-sonnet-4-5@20250929"
location = "us-east5"
project_id = "fake-project"
api_base = "${anthropic.url}"
credential_location = "path::service-account.json"

# a provider of its own, so its token cache starts empty
[models.vertex_refresh]
routing = ["v"]
[models.vertex_refresh.providers.v]
type = "gcp_vertex_anthropic"
model_id = "claude-haiku-4-5"
location = "europe-west1"
project_id = "fake-project"
api_base = "${anthropic.url}"
credential_location = "path::service-account.json"

[models.fallback]
routing = ["claude", "gpt"]
[models.fallback.providers.claude]
type = "anthropic"
model_name = "claude-sonnet-4-5"
api_base = "${anthropic.apiBase}"
api_key_location = "env::TEST_ANTHROPIC_KEY"
[models.fallback.providers.gpt]
type = "openai"
model_name = "gpt-4o-mini"
api_base = "${openAi.apiBase}"
api_key_location = "env::TEST_OPENAI_KEY"

[tools.get_weather]
description = "Get the weather for a city"
parameters = "get_weather.json"

[functions.chat]
type = "chat"
system_schema = "system.json"
[functions.chat.variants.v]
type = "chat_completion"
model = "claude"
system_template = "system.minijinja"

[functions.weather]
type = "chat"
tools = ["get_weather"]
tool_choice = "required"
[functions.weather.variants.v]
type = "chat_completion"
model = "claude"

[functions.json]
type = "json"
output_schema = "output.json"
[functions.json.variants.strict]
type = "chat_completion"
model = "claude"
json_mode = "strict"
[functions.json.variants.on]
type = "chat_completion"
model = "claude"
json_mode = "on"
[functions.json.variants.tool]
type = "chat_completion"
model = "claude"
json_mode = "tool"

[functions.vertex_chat]
type = "chat"
[functions.vertex_chat.variants.v]
type = "chat_completion"
model = "vertex"

[functions.vertex_refresh]
type = "chat"
[functions.vertex_refresh.variants.v]
type = "chat_completion"
model = "vertex_refresh"

[functions.fallback]
type = "chat"
[functions.fallback.variants.v]
type = "chat_completion"
model = "fallback"
`

const outputSchema = { type: "object", properties: { answer: { type: "string" } }, required: ["answer"], additionalProperties: false }
const weatherParameters = { type: "object", properties: { city: { type: "string" } }, required: ["city"] }
const said = (text: string) => ({ messages: [{ role: "user", content: [{ type: "text", text }] }] })

describe("anthropic and gcp_vertex_anthropic through the gateway", () => {
  let anthropic: FakeAnthropic
  let openAi: FakeOpenAi
  let gateway: RunningGateway

  beforeAll(async () => {
    anthropic = await startFakeAnthropic({ apiKey: "sk-ant-test-key" })
    openAi = await startFakeOpenAi()
    gateway = await startGateway({
      config: config(anthropic, openAi),
      env: { TEST_ANTHROPIC_KEY: "sk-ant-test-key", TEST_OPENAI_KEY: "sk-openai-test" },
      files: {
        "service-account.json": anthropic.serviceAccount.json,
        "get_weather.json": JSON.stringify(weatherParameters),
        "output.json": JSON.stringify(outputSchema),
        "system.json": JSON.stringify({ type: "object", properties: { name: { type: "string" } }, required: ["name"] }),
        "system.minijinja": "You are {{ name }}."
      }
    })
  }, 60_000)
  afterAll(async () => {
    await gateway?.stop()
    await anthropic?.close()
    await openAi?.close()
  })
  beforeEach(() => {
    anthropic.reset()
    openAi.reset()
  })

  const chat = (input: unknown, extra: Record<string, unknown> = {}) =>
    gateway.post("/inference", { function_name: "chat", input, ...extra })
  const upstream = () => anthropic.requests.at(-1)!

  it("answers a plain call: Messages API with x-api-key and anthropic-version, system, merged user turns, max_tokens 4096 by default, top_k", async () => {
    anthropic.script.push({
      kind: "message",
      body: textMessage("Hi there", { input_tokens: 20, cache_creation_input_tokens: 5, cache_read_input_tokens: 100, output_tokens: 4 })
    })
    const { status, body } = await chat({
      system: { name: "Claude" },
      messages: [{ role: "user", content: "Hello" }, { role: "user", content: "Anyone?" }]
    }, { params: { chat_completion: { temperature: 0.3, top_k: 40 } } })
    expect(status, JSON.stringify(body)).toBe(200)
    expect(body.content).toEqual([{ type: "text", text: "Hi there" }])
    expect(body.finish_reason).toBe("stop")
    // input counts the cache reads and writes Anthropic leaves out of input_tokens
    expect(body.usage).toEqual({ input_tokens: 125, output_tokens: 4, cached_input_tokens: 100 })
    const request = upstream()
    expect(request.path).toBe("/v1/messages")
    expect(request.headers["x-api-key"]).toBe("sk-ant-test-key")
    expect(request.headers["anthropic-version"]).toBe("2023-06-01")
    expect(request.body).toEqual({
      model: "claude-sonnet-4-5",
      max_tokens: 4096,
      system: "You are Claude.",
      messages: [{ role: "user", content: [{ type: "text", text: "Hello" }, { type: "text", text: "Anyone?" }] }],
      temperature: 0.3,
      top_k: 40
    })
  })

  it("streams: text deltas, then usage and the finish reason; the upstream was asked for a stream", async () => {
    const { status, events, raw } = await gateway.stream("/inference", { function_name: "chat", input: { system: { name: "C" }, ...said("Hi") }, stream: true })
    expect(status, raw).toBe(200)
    expect(upstream().body.stream).toBe(true)
    expect(events.at(-1)).toBe("[DONE]")
    const deltas = events.slice(0, -1).flatMap((event) => event.content)
    expect(deltas.map((delta: any) => delta.text).join("")).toBe("Hello from fake Anthropic")
    expect(deltas.length).toBeGreaterThanOrEqual(2)
    const last = events.at(-2)
    expect(last.usage).toEqual({ input_tokens: 12, output_tokens: 7, cached_input_tokens: 0 })
    expect(last.finish_reason).toBe("stop")
  })

  it("offers tools with tool_choice any and parallel calls off, and returns parallel tool calls", async () => {
    anthropic.script.push({
      kind: "message",
      body: message([
        { type: "tool_use", id: "toolu_1", name: "get_weather", input: { city: "Paris" } },
        { type: "tool_use", id: "toolu_2", name: "get_weather", input: { city: "London" } }
      ])
    })
    const { status, body } = await gateway.post("/inference", {
      function_name: "weather",
      input: said("Paris and London?"),
      parallel_tool_calls: false
    })
    expect(status, JSON.stringify(body)).toBe(200)
    expect(body.content.map((block: any) => [block.id, block.name, block.arguments])).toEqual([
      ["toolu_1", "get_weather", { city: "Paris" }],
      ["toolu_2", "get_weather", { city: "London" }]
    ])
    expect(body.finish_reason).toBe("tool_call")
    expect(upstream().body.tools).toEqual([{ name: "get_weather", description: "Get the weather for a city", input_schema: weatherParameters }])
    expect(upstream().body.tool_choice).toEqual({ type: "any", disable_parallel_tool_use: true })
  })

  it("streams tool calls: name first, then the input in pieces, joined by id", async () => {
    anthropic.script.push({ kind: "message", body: message([{ type: "tool_use", id: "toolu_9", name: "get_weather", input: { city: "Rome" } }]) })
    const { status, events } = await gateway.stream("/inference", { function_name: "weather", input: said("Rome?"), stream: true })
    expect(status).toBe(200)
    const deltas = events.slice(0, -1).flatMap((event) => event.content).filter((delta: any) => delta.type === "tool_call")
    expect(new Set(deltas.map((delta: any) => delta.id))).toEqual(new Set(["toolu_9"]))
    expect(deltas.map((delta: any) => delta.raw_arguments).join("")).toBe("{\"city\":\"Rome\"}")
    expect(events.at(-2).finish_reason).toBe("tool_call")
  })

  it("json_mode strict sends the schema as output_config.format; on asks in the system prompt; tool forces respond", async () => {
    anthropic.script.push({ kind: "message", body: textMessage("{\"answer\":\"4\"}") })
    const strict = await gateway.post("/inference", { function_name: "json", variant_name: "strict", input: said("2+2?") })
    expect(strict.body.output).toEqual({ raw: "{\"answer\":\"4\"}", parsed: { answer: "4" } })
    expect(upstream().body.output_config).toEqual({ format: { type: "json_schema", schema: outputSchema } })

    anthropic.script.push({ kind: "message", body: textMessage("{\"answer\":\"5\"}") })
    const on = await gateway.post("/inference", { function_name: "json", variant_name: "on", input: said("2+3?") })
    expect(on.body.output.parsed).toEqual({ answer: "5" })
    expect(upstream().body.output_config).toBeUndefined()
    expect(upstream().body.system).toContain("Respond with a JSON object only")

    anthropic.script.push({ kind: "message", body: message([{ type: "tool_use", id: "t", name: "respond", input: { answer: "6" } }]) })
    const tool = await gateway.post("/inference", { function_name: "json", variant_name: "tool", input: said("3+3?") })
    expect(tool.body.output.parsed).toEqual({ answer: "6" })
    expect(upstream().body.tool_choice).toEqual({ type: "tool", name: "respond" })
    expect(upstream().body.tools[0]).toMatchObject({ name: "respond", input_schema: outputSchema })
  })

  it("sends an image as base64 and a PDF by URL", async () => {
    const { status } = await chat({
      system: { name: "C" },
      messages: [{
        role: "user",
        content: [
          { type: "text", text: "Look" },
          { type: "file", file_type: "base64", mime_type: "image/png", data: "iVBORw0KGgo=" },
          { type: "file", file_type: "url", url: "https://example.com/report.pdf", mime_type: "application/pdf" }
        ]
      }]
    })
    expect(status).toBe(200)
    expect(upstream().body.messages[0].content).toEqual([
      { type: "text", text: "Look" },
      { type: "image", source: { type: "base64", media_type: "image/png", data: "iVBORw0KGgo=" } },
      { type: "document", source: { type: "url", url: "https://example.com/report.pdf" } }
    ])
  })

  it("thinking: the budget enables it, the thought comes back with its signature (and redacted thinking as unknown), both go back upstream", async () => {
    anthropic.script.push({
      kind: "message",
      body: message([
        { type: "thinking", thinking: "Hmm.", signature: "sig-abc" },
        { type: "redacted_thinking", data: "redacted-xyz" },
        { type: "text", text: "42" }
      ])
    })
    const first = await chat({ system: { name: "C" }, ...said("Answer?") }, { params: { chat_completion: { thinking_budget_tokens: 1024 } } })
    expect(first.status, JSON.stringify(first.body)).toBe(200)
    expect(upstream().body.thinking).toEqual({ type: "enabled", budget_tokens: 1024 })
    expect(upstream().body.max_tokens).toBe(1024 + 4096)
    expect(first.body.content).toEqual([
      { type: "thought", text: "Hmm.", signature: "sig-abc", provider_type: "anthropic" },
      { type: "unknown", data: { type: "redacted_thinking", data: "redacted-xyz" }, model_provider_name: "gateway::model_name::claude::provider_name::a" },
      { type: "text", text: "42" }
    ])
    const second = await chat({
      system: { name: "C" },
      messages: [
        { role: "user", content: "Answer?" },
        { role: "assistant", content: first.body.content },
        { role: "user", content: "Sure?" }
      ]
    })
    expect(second.status, JSON.stringify(second.body)).toBe(200)
    expect(upstream().body.messages[1]).toEqual({
      role: "assistant",
      content: [
        { type: "thinking", thinking: "Hmm.", signature: "sig-abc" },
        { type: "redacted_thinking", data: "redacted-xyz" },
        { type: "text", text: "42" }
      ]
    })
  })

  it("streams a thought with its signature", async () => {
    anthropic.script.push({ kind: "message", body: message([{ type: "thinking", thinking: "Let me see.", signature: "sig-stream" }, { type: "text", text: "Yes" }]) })
    const { status, events } = await gateway.stream("/inference", { function_name: "chat", input: { system: { name: "C" }, ...said("?") }, stream: true })
    expect(status).toBe(200)
    const thoughts = events.slice(0, -1).flatMap((event) => event.content).filter((delta: any) => delta.type === "thought")
    expect(thoughts.map((delta: any) => delta.text).join("")).toBe("Let me see.")
    expect(thoughts.find((delta: any) => delta.signature !== undefined)?.signature).toBe("sig-stream")
  })

  it("applies the request's extra_body and extra_headers, and appends provider_tools; server tool blocks come back as unknown", async () => {
    anthropic.script.push({
      kind: "message",
      body: message([
        { type: "server_tool_use", id: "srvtoolu_1", name: "web_search", input: { query: "news" } },
        { type: "text", text: "Today's news." }
      ])
    })
    const { status, body } = await chat({ system: { name: "C" }, ...said("News?") }, {
      extra_body: [{ pointer: "/metadata", value: { user_id: "u-7" } }],
      extra_headers: [{ name: "anthropic-beta", value: "token-efficient-tools-2025-02-19" }],
      provider_tools: [{ tool: { type: "web_search_20250305", name: "web_search", max_uses: 2 } }]
    })
    expect(status, JSON.stringify(body)).toBe(200)
    expect(upstream().body.metadata).toEqual({ user_id: "u-7" })
    expect(upstream().headers["anthropic-beta"]).toBe("token-efficient-tools-2025-02-19")
    expect(upstream().body.tools).toEqual([{ type: "web_search_20250305", name: "web_search", max_uses: 2 }])
    expect(body.content[0]).toMatchObject({ type: "unknown", data: { type: "server_tool_use", name: "web_search" } })
    expect(body.content[1]).toEqual({ type: "text", text: "Today's news." })
  })

  it("fails with Anthropic's own error message; a stream's error event ends the stream with an error", async () => {
    anthropic.script.push({ kind: "error", status: 400, type: "invalid_request_error", message: "prompt is too long: 300000 tokens" })
    const failed = await chat({ system: { name: "C" }, ...said("x") })
    expect(failed.status).toBe(400)
    expect(failed.body.error).toContain("invalid_request_error: prompt is too long: 300000 tokens")

    anthropic.script.push({
      kind: "events",
      events: [
        { type: "message_start", message: { id: "m", type: "message", role: "assistant", content: [], model: "c", usage: { input_tokens: 1, output_tokens: 1 } } },
        { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } },
        { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "Partial" } },
        { type: "error", error: { type: "overloaded_error", message: "Overloaded" } }
      ]
    })
    const { events } = await gateway.stream("/inference", { function_name: "chat", input: { system: { name: "C" }, ...said("x") }, stream: true })
    expect(events.flatMap((event) => event.content ?? []).map((delta: any) => delta.text)).toEqual(["Partial"])
    expect(events.at(-1).error).toContain("overloaded_error: Overloaded")
  })

  it("does not echo a refused key", async () => {
    anthropic.script.push({ kind: "error", status: 401, type: "authentication_error", message: "invalid x-api-key sk-ant-test-key" })
    const refused = await chat({ system: { name: "C" }, ...said("x") })
    expect(refused.status).toBe(502)
    expect(refused.body.error).toContain("authentication_error")
    expect(refused.body.error).not.toContain("sk-ant-test-key")
  })

  describe("gcp_vertex_anthropic", () => {
    it("fetches a token with the service account's signed JWT, reuses it across calls, and calls rawPredict without model", async () => {
      for (const text of ["one", "two"]) {
        const { status, body } = await gateway.post("/inference", { function_name: "vertex_chat", input: said(text) })
        expect(status, JSON.stringify(body)).toBe(200)
        expect(body.content).toEqual([{ type: "text", text: "Hello from fake Anthropic" }])
      }
      expect(anthropic.tokenRequests).toHaveLength(1)
      expect(anthropic.tokenRequests[0].claims).toMatchObject({
        iss: anthropic.serviceAccount.clientEmail,
        aud: `${anthropic.url}/token`,
        scope: "https://www.googleapis.com/auth/cloud-platform"
      })
      const [first, second] = anthropic.requests
      expect(first.path).toBe("/v1/projects/fake-project/locations/us-east5/publishers/anthropic/models/claude-sonnet-4-5@20250929:rawPredict")
      expect(first.headers.authorization).toBe(second.headers.authorization)
      expect(first.body.anthropic_version).toBe("vertex-2023-10-16")
      expect(first.body.model).toBeUndefined()
      expect(first.headers["x-api-key"]).toBeUndefined()
    })

    it("streams through streamRawPredict, with the same token", async () => {
      const { status, events } = await gateway.stream("/inference", { function_name: "vertex_chat", input: said("s"), stream: true })
      expect(status).toBe(200)
      expect(events.slice(0, -1).flatMap((event) => event.content).map((delta: any) => delta.text).join("")).toBe("Hello from fake Anthropic")
      expect(anthropic.requests[0].path).toMatch(/:streamRawPredict$/)
      expect(anthropic.requests[0].headers.authorization).toMatch(/^Bearer ya29\.fake-token-\d+$/)
    })

    it("fetches a new token when the one it has expires within five minutes", async () => {
      // these tokens are already within the refresh margin: every call fetches a new one
      anthropic.tokenExpiresIn = 300
      const call = (text: string) => gateway.post("/inference", { function_name: "vertex_refresh", input: said(text) })
      expect((await call("a")).status).toBe(200)
      expect((await call("b")).status).toBe(200)
      expect(anthropic.tokenRequests).toHaveLength(2)
      const [first, second] = anthropic.requests.map((request) => request.headers.authorization)
      expect(first).not.toBe(second)
      expect(anthropic.requests[0].path).toMatch(/locations\/europe-west1\/publishers\/anthropic\/models\/claude-haiku-4-5:rawPredict$/)
      // a long-lived one is kept again
      anthropic.tokenExpiresIn = 3600
      await call("c")
      await call("d")
      expect(anthropic.tokenRequests).toHaveLength(3)
    })
  })

  describe("fallback from anthropic to openai", () => {
    it("answers from openai when anthropic fails", async () => {
      anthropic.script.push({ kind: "error", status: 500, type: "api_error", message: "Internal server error" })
      const { status, body } = await gateway.post("/inference", { function_name: "fallback", input: said("hi") })
      expect(status, JSON.stringify(body)).toBe(200)
      expect(body.content).toEqual([{ type: "text", text: "Hello from fake OpenAI" }])
      expect(anthropic.requests).toHaveLength(1)
      expect(openAi.requests).toHaveLength(1)
      expect(openAi.requests[0].body.messages).toEqual([{ role: "user", content: "hi" }])
    })

    it("streams from openai when anthropic fails before its stream starts", async () => {
      anthropic.script.push({ kind: "error", status: 529, type: "overloaded_error", message: "Overloaded" })
      const { status, events, raw } = await gateway.stream("/inference", { function_name: "fallback", input: said("hi"), stream: true })
      expect(status, raw).toBe(200)
      expect(events.slice(0, -1).flatMap((event) => event.content ?? []).map((delta: any) => delta.text).join("")).toBe("Hello from fake")
      expect(anthropic.requests[0].body.stream).toBe(true)
      expect(openAi.requests[0].body.stream).toBe(true)
    })
  })
})
