/**
 * The Responses API's own fields on `/openai/v1/responses` (issue 37): built-in tools and the
 * fields the gateway does not model (`user`, `include`, `reasoning.summary`...) reach providers
 * of the Responses API as sent, and no other provider (a dropped built-in tool is named in
 * `gateway-warning`); a thought another family made (Claude's) goes to the client wrapped with
 * its maker's type and, sent back, reaches its maker with its signature as it was made.
 */
import OpenAI from "openai"
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import { anthropicModelToml, type FakeAnthropic, message, startFakeAnthropic } from "../support/fakeAnthropic.ts"
import { type FakeOpenAi, openAiProviderToml, startFakeOpenAi } from "../support/fakeOpenAi.ts"
import { answer, messageItem, responseObject, responsesFakeKey, startFakeOpenAiResponses } from "../support/fakeOpenAiResponses.ts"
import type { WireServer } from "../support/fakeWireServer.ts"
import { type RunningGateway, startGateway } from "../support/gateway.ts"

const config = (responses: { apiBase: string }, openai: FakeOpenAi, anthropic: FakeAnthropic) => `
[models.gpt-responses]
routing = ["openai"]
[models.gpt-responses.providers.openai]
type = "openai"
api_type = "responses"
model_name = "gpt-5"
api_base = "${responses.apiBase}"
api_key_location = "env::TEST_RESPONSES_KEY"

[models.gpt-chat]
routing = ["openai"]
${openAiProviderToml("gpt-chat", "openai", "gpt-4o", openai.apiBase, "env::TEST_OPENAI_KEY")}
${anthropicModelToml("claude", "claude-sonnet-4-5", anthropic.apiBase, "env::TEST_ANTHROPIC_KEY")}
`

const webSearch = { type: "web_search" as const, search_context_size: "low" as const }
const request = (model: string) => ({
  model,
  input: "Search the weather",
  tools: [{ type: "function" as const, name: "get_weather", parameters: { type: "object", properties: {} }, strict: false }, webSearch],
  user: "user-42",
  include: ["reasoning.encrypted_content" as const],
  reasoning: { effort: "low" as const, summary: "auto" as const },
  prompt_cache_key: "conversation-7"
})

describe("the Responses API's own fields, built-in tools and foreign signatures", () => {
  let responses: WireServer & { readonly apiBase: string }
  let openai: FakeOpenAi
  let anthropic: FakeAnthropic
  let gateway: RunningGateway
  let client: OpenAI

  beforeAll(async () => {
    responses = await startFakeOpenAiResponses({ answerWith: (received) => answer(received, responseObject([messageItem("Hi from Responses")])) })
    openai = await startFakeOpenAi()
    anthropic = await startFakeAnthropic({ apiKey: "sk-ant-upstream" })
    gateway = await startGateway({
      config: config(responses, openai, anthropic),
      env: { TEST_RESPONSES_KEY: responsesFakeKey, TEST_OPENAI_KEY: "sk-openai", TEST_ANTHROPIC_KEY: "sk-ant-upstream" }
    })
    client = new OpenAI({ baseURL: `${gateway.url}/openai/v1`, apiKey: "unused", maxRetries: 0 })
  })
  afterAll(async () => {
    await gateway?.stop()
    await Promise.all([responses?.close(), openai?.close(), anthropic?.close()])
  })
  beforeEach(() => {
    responses.requests.length = 0
    openai.reset()
    anthropic.reset()
  })

  it("reach a Responses API provider as sent", async () => {
    const { data, response } = await client.responses.create(request("gpt-responses")).withResponse()
    expect(data.output_text).toBe("Hi from Responses")
    expect(response.headers.get("gateway-warning")).toBeNull()
    expect(responses.requests).toHaveLength(1)
    expect(responses.requests[0].body).toMatchObject({
      user: "user-42",
      include: ["reasoning.encrypted_content"],
      prompt_cache_key: "conversation-7",
      reasoning: { effort: "low", summary: "auto" },
      tools: [{ type: "function", name: "get_weather" }, webSearch]
    })
  })

  it("are left out for a Chat Completions provider; the dropped built-in tool is named in gateway-warning (streamed too)", async () => {
    const { data, response } = await client.responses.create(request("gpt-chat")).withResponse()
    expect(data.output_text).toBe("Hello from fake OpenAI")
    expect(response.headers.get("gateway-warning")).toBe(
      'built-in tools dropped: tools[1] ("web_search"): provider "openai" of model "gpt-chat" (type openai) cannot run them'
    )
    const sent = openai.requests[0].body
    for (const field of ["user", "include", "prompt_cache_key", "reasoning"]) expect(sent).not.toHaveProperty(field)
    expect(sent.tools.map((tool: any) => tool.function.name)).toEqual(["get_weather"])

    const streamed = await client.responses.create({ ...request("gpt-chat"), stream: true }).withResponse()
    expect(streamed.response.headers.get("gateway-warning")).toContain('tools[1] ("web_search")')
    const events: Array<string> = []
    for await (const event of streamed.data) events.push(event.type)
    expect(events.at(-1)).toBe("response.completed")
  })

  it("hand out Claude's signature wrapped, and take it back to Claude as it was made", async () => {
    anthropic.script.push({ kind: "message", body: message([{ type: "thinking", thinking: "Let me see.", signature: "EqQBCkYIAhgC" }, { type: "text", text: "Sunny." }]) })
    const first = await client.responses.create({ model: "claude", input: "Weather?", include: ["reasoning.encrypted_content"] })
    const reasoning = first.output.find((item) => item.type === "reasoning")
    expect(reasoning).toMatchObject({ summary: [{ type: "summary_text", text: "Let me see." }], encrypted_content: "gateway.v1.anthropic.EqQBCkYIAhgC" })

    await client.responses.create({ model: "claude", input: [{ role: "user", content: "Weather?" }, ...(first.output as Array<any>), { role: "user", content: "And tomorrow?" }] })
    expect(anthropic.requests[1].body.messages[1]).toEqual({
      role: "assistant",
      content: [{ type: "thinking", thinking: "Let me see.", signature: "EqQBCkYIAhgC" }, { type: "text", text: "Sunny." }]
    })

    // the same turn sent to a Responses provider: Claude's signature cannot go there, the summary can
    await client.responses.create({ model: "gpt-responses", input: [{ role: "user", content: "Weather?" }, ...(first.output as Array<any>), { role: "user", content: "And tomorrow?" }] })
    expect(JSON.stringify(responses.requests[0].body)).not.toContain("EqQBCkYIAhgC")
  })
})
