/**
 * Anthropic's own fields on `/anthropic/v1/messages` (issue 37): what the gateway does not
 * model (`metadata`, `service_tier`, root fields it does not know, `anthropic-beta`, server
 * tools) reaches Anthropic-type providers as the client sent it, and no other provider; a
 * server tool on another provider is dropped with a `gateway-warning` header, or refused with
 * `[gateway] unsupported_builtin_tools = "refuse"` (a fallback of the Anthropic family then
 * answers).
 */
import Anthropic from "@anthropic-ai/sdk"
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import { type FakeAnthropic, startFakeAnthropic } from "../support/fakeAnthropic.ts"
import { type FakeOpenAi, openAiProviderToml, startFakeOpenAi } from "../support/fakeOpenAi.ts"
import { type RunningGateway, startGateway } from "../support/gateway.ts"

const config = (anthropic: FakeAnthropic, openai: FakeOpenAi, gateway: string) => `
${gateway}

[models.claude]
routing = ["anthropic"]
[models.claude.providers.anthropic]
type = "anthropic"
model_name = "claude-sonnet-4-5"
api_base = "${anthropic.apiBase}"
api_key_location = "env::TEST_ANTHROPIC_KEY"

[models.gpt]
routing = ["openai"]
${openAiProviderToml("gpt", "openai", "gpt-4o", openai.apiBase, "env::TEST_OPENAI_KEY")}

[models.gpt-then-claude]
routing = ["openai", "anthropic"]
${openAiProviderToml("gpt-then-claude", "openai", "gpt-4o", openai.apiBase, "env::TEST_OPENAI_KEY")}
[models.gpt-then-claude.providers.anthropic]
type = "anthropic"
model_name = "claude-sonnet-4-5"
api_base = "${anthropic.apiBase}"
api_key_location = "env::TEST_ANTHROPIC_KEY"
`

const weatherTool = {
  name: "get_weather",
  description: "The weather of a city",
  input_schema: { type: "object" as const, properties: { city: { type: "string" } }, required: ["city"] }
}
const webSearch = { type: "web_search_20250305" as const, name: "web_search" as const, max_uses: 2, allowed_domains: ["example.com"] }
const beta = "context-management-2025-06-27"

const eph = { type: "ephemeral" as const }

/** a request with every field the gateway passes on as sent */
const request = (model: string) => ({
  model,
  max_tokens: 100,
  system: [{ type: "text" as const, text: "You are terse.", cache_control: eph }],
  messages: [
    { role: "user" as const, content: [{ type: "text" as const, text: "Search the weather", cache_control: eph }] },
    { role: "assistant" as const, content: [{ type: "tool_use" as const, id: "toolu_1", name: "get_weather", input: { city: "Atlantis" } }] },
    { role: "user" as const, content: [{ type: "tool_result" as const, tool_use_id: "toolu_1", content: "no such city", is_error: true }] }
  ],
  tools: [{ ...weatherTool, cache_control: eph }, webSearch],
  metadata: { user_id: "user-42" },
  service_tier: "standard_only" as const,
  // a field of a newer API than the gateway knows
  context_management: { edits: [{ type: "clear_tool_uses_20250919" }] }
})

describe("Anthropic's own fields and server tools", () => {
  let anthropic: FakeAnthropic
  let openai: FakeOpenAi
  let gateway: RunningGateway
  let refusing: RunningGateway
  let client: Anthropic
  let refusingClient: Anthropic

  beforeAll(async () => {
    anthropic = await startFakeAnthropic({ apiKey: "sk-ant-upstream" })
    openai = await startFakeOpenAi()
    const env = { TEST_ANTHROPIC_KEY: "sk-ant-upstream", TEST_OPENAI_KEY: "sk-openai" }
    ;[gateway, refusing] = await Promise.all([
      startGateway({ config: config(anthropic, openai, ""), env }),
      startGateway({ config: config(anthropic, openai, `[gateway]\nunsupported_builtin_tools = "refuse"`), env })
    ])
    client = new Anthropic({ baseURL: `${gateway.url}/anthropic`, apiKey: "unused", maxRetries: 0 })
    refusingClient = new Anthropic({ baseURL: `${refusing.url}/anthropic`, apiKey: "unused", maxRetries: 0 })
  })
  afterAll(async () => {
    await Promise.all([gateway?.stop(), refusing?.stop()])
    await Promise.all([anthropic?.close(), openai?.close()])
  })
  beforeEach(() => {
    anthropic.reset()
    openai.reset()
  })

  it("reach an Anthropic provider as sent, with the anthropic-beta header", async () => {
    const { response } = await client.messages.create(request("claude") as any, { headers: { "anthropic-beta": beta } }).withResponse()
    expect(response.status).toBe(200)
    expect(response.headers.get("gateway-warning")).toBeNull()
    expect(anthropic.requests).toHaveLength(1)
    const sent = anthropic.requests[0]
    expect(sent.headers["anthropic-beta"]).toBe(beta)
    expect(sent.body).toMatchObject({
      metadata: { user_id: "user-42" },
      service_tier: "standard_only",
      context_management: { edits: [{ type: "clear_tool_uses_20250919" }] },
      // the custom tool as the gateway writes it, then the server tool exactly as sent
      tools: [{ name: "get_weather", description: "The weather of a city", input_schema: weatherTool.input_schema, cache_control: eph }, webSearch],
      system: [{ type: "text", text: "You are terse.", cache_control: eph }],
      messages: [
        { role: "user", content: [{ type: "text", text: "Search the weather", cache_control: eph }] },
        { role: "assistant", content: [{ type: "tool_use", id: "toolu_1", name: "get_weather", input: { city: "Atlantis" } }] },
        { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_1", content: "no such city", is_error: true }] }
      ]
    })
  })

  it("are left out for another provider; the dropped server tool is named in gateway-warning", async () => {
    const { data, response } = await client.messages.create(request("gpt") as any, { headers: { "anthropic-beta": beta } }).withResponse()
    expect(data.content).toEqual([{ type: "text", text: "Hello from fake OpenAI" }])
    expect(response.headers.get("gateway-warning")).toBe(
      'built-in tools dropped: tools[1] ("web_search"): provider "openai" of model "gpt" (type openai) cannot run them'
    )
    expect(openai.requests).toHaveLength(1)
    const sent = openai.requests[0]
    expect(sent.headers["anthropic-beta"]).toBeUndefined()
    for (const field of ["metadata", "service_tier", "context_management"]) expect(sent.body).not.toHaveProperty(field)
    // prompt-caching marks are Anthropic's: OpenAI caches by itself
    expect(JSON.stringify(sent.body)).not.toContain("cache_control")
    expect(sent.body.messages[0]).toEqual({ role: "system", content: "You are terse." })
    expect(sent.body.tools.map((tool: any) => tool.function.name)).toEqual(["get_weather"])
  })

  it("an overloaded Anthropic provider is Anthropic's 529 overloaded_error; another failure its 500 api_error", async () => {
    const ask = { model: "claude", max_tokens: 10, messages: [{ role: "user" as const, content: "hi" }] }
    anthropic.script.push({ kind: "error", status: 529, type: "overloaded_error", message: "Overloaded" })
    const overloaded = await client.messages.create(ask).catch((error) => error)
    expect(overloaded).toBeInstanceOf(Anthropic.APIError)
    expect(overloaded.status).toBe(529)
    expect(overloaded.error.error.type).toBe("overloaded_error")
    expect(overloaded.error.error.message).toContain("Overloaded")

    anthropic.script.push({ kind: "error", status: 500, type: "api_error", message: "Internal server error" })
    const failed = await client.messages.create(ask).catch((error) => error)
    expect(failed).toBeInstanceOf(Anthropic.InternalServerError)
    expect(failed.error.error.type).toBe("api_error")
  })

  it("with unsupported_builtin_tools = \"refuse\": a 400 naming the tool, unless a provider of the family answers", async () => {
    const refused = await refusingClient.messages.create(request("gpt") as any).catch((error) => error)
    expect(refused).toBeInstanceOf(Anthropic.BadRequestError)
    expect(refused.error.error.type).toBe("invalid_request_error")
    expect(refused.error.error.message).toContain('cannot run the built-in tool tools[1] ("web_search")')
    expect(openai.requests).toHaveLength(0)

    // the model's OpenAI provider cannot take the call, its Anthropic one can
    const { data, response } = await refusingClient.messages.create(request("gpt-then-claude") as any).withResponse()
    expect(data.content).toEqual([{ type: "text", text: "Hello from fake Anthropic" }])
    expect(response.headers.get("gateway-warning")).toBeNull()
    expect(openai.requests).toHaveLength(0)
    expect(anthropic.requests[0].body.tools[1]).toEqual(webSearch)
  })
})
