/**
 * POST /inference through the `openai` provider with `api_type = "responses"` against a fake
 * Responses API: every conformance scenario, then the request as the API takes it (instructions,
 * input items, flat tools, allowed tools, text.format, reasoning, store, include), built-in
 * tools through `provider_tools` and their items as unknown blocks sent back, the reasoning
 * round trip streamed, incomplete answers and failures.
 */
import { describe, expect, it } from "vitest"
import { responsesRunningFake } from "../conformance/openaiResponses.ts"
import {
  answer,
  functionCallItem,
  messageItem,
  reasoningItem,
  responseObject,
  responsesError,
  responsesFakeKey,
  startFakeOpenAiResponses
} from "../support/fakeOpenAiResponses.ts"
import { sseReply } from "../support/fakeWireServer.ts"
import { scenarioTests } from "../support/scenarioGateway.ts"


const extraConfig = `
[tools.lookup]
description = "Look something up"
parameters = "get_weather.json"
strict = true

[functions.tuned]
type = "chat"
tools = ["get_weather", "lookup"]
[functions.tuned.variants.v]
type = "chat_completion"
model = "conformance"
temperature = 0.3
max_tokens = 64
reasoning_effort = "low"
verbosity = "low"
seed = 5

[functions.on]
type = "json"
output_schema = "answer.json"
[functions.on.variants.v]
type = "chat_completion"
model = "conformance"
json_mode = "on"
`

const user = (content: unknown) => ({ messages: [{ role: "user", content }] })

describe("openai with api_type = \"responses\" through the gateway", () => {
  // the gateway and the fake, started around the tests; a test per conformance scenario first
  const running = scenarioTests("openai", startFakeOpenAiResponses, responsesRunningFake, { extraConfig: () => extraConfig })

  it("posts to /v1/responses: Bearer key, instructions, input items, flat tools, parameters, reasoning, store false", async () => {
    const response = await running.gateway.post("/inference", {
      function_name: "tuned",
      input: {
        system: "Be brief.",
        messages: [
          { role: "user", content: "weather?" },
          { role: "assistant", content: [{ type: "text", text: "Let me look." }, { type: "tool_call", id: "call_9", name: "get_weather", arguments: { city: "Rome" } }] },
          { role: "user", content: [{ type: "tool_result", id: "call_9", name: "get_weather", result: "sunny" }, { type: "text", text: "thanks" }] }
        ]
      },
      allowed_tools: ["lookup"],
      tool_choice: "required",
      parallel_tool_calls: false
    })
    expect(response.status, JSON.stringify(response.body)).toBe(200)
    const upstream = running.fake.requests[0]
    expect(upstream.path).toBe("/v1/responses")
    expect(upstream.headers.authorization).toBe(`Bearer ${responsesFakeKey}`)
    expect(upstream.body).toEqual({
      model: "gpt-5-mini",
      instructions: "Be brief.",
      input: [
        { role: "user", content: [{ type: "input_text", text: "weather?" }] },
        { role: "assistant", content: "Let me look." },
        { type: "function_call", call_id: "call_9", name: "get_weather", arguments: "{\"city\":\"Rome\"}" },
        { type: "function_call_output", call_id: "call_9", output: "sunny" },
        { role: "user", content: [{ type: "input_text", text: "thanks" }] }
      ],
      temperature: 0.3,
      max_output_tokens: 64,
      tools: [
        {
          type: "function",
          name: "get_weather",
          description: "Get the weather for a city",
          parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"], additionalProperties: false },
          strict: false
        },
        {
          type: "function",
          name: "lookup",
          description: "Look something up",
          parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"], additionalProperties: false },
          strict: true
        }
      ],
      tool_choice: { type: "allowed_tools", mode: "required", tools: [{ type: "function", name: "lookup" }] },
      parallel_tool_calls: false,
      text: { verbosity: "low" },
      reasoning: { effort: "low", summary: "auto" },
      include: ["reasoning.encrypted_content"],
      store: false
    })
  })

  it("asks for a JSON object with json_mode on (text.format json_object), and a specific tool by name", async () => {
    running.fake.handler = (request) => answer(request, responseObject([messageItem("{\"answer\":\"x\"}")]))
    const json = await running.gateway.post("/inference", { function_name: "on", input: user("json please") })
    expect(json.status, JSON.stringify(json.body)).toBe(200)
    expect(json.body.output.parsed).toEqual({ answer: "x" })
    expect(running.fake.requests[0].body.text).toEqual({ format: { type: "json_object" } })
    const specific = await running.gateway.post("/inference", { function_name: "weather", input: user("hi"), tool_choice: { specific: "get_weather" } })
    expect(specific.status, JSON.stringify(specific.body)).toBe(200)
    expect(running.fake.requests[1].body.tool_choice).toEqual({ type: "function", name: "get_weather" })
  })

  it("offers built-in tools from provider_tools; their items come back as unknown blocks of this provider, and go back as they were", async () => {
    const searchCall = { type: "web_search_call", id: "ws_1", status: "completed", action: { type: "search", query: "weather" } }
    running.fake.handler = (request) => answer(request, responseObject([searchCall, messageItem("It is sunny.")]))
    const first = await running.gateway.post("/inference", {
      function_name: "plain",
      input: user("search the weather"),
      provider_tools: [{ tool: { type: "web_search" } }]
    })
    expect(first.status, JSON.stringify(first.body)).toBe(200)
    expect(running.fake.requests[0].body.tools).toEqual([{ type: "web_search" }])
    expect(first.body.content).toEqual([
      { type: "unknown", data: searchCall, model_provider_name: "gateway::model_name::conformance::provider_name::p" },
      { type: "text", text: "It is sunny." }
    ])
    const second = await running.gateway.post("/inference", {
      function_name: "plain",
      input: { messages: [{ role: "user", content: "search the weather" }, { role: "assistant", content: first.body.content }, { role: "user", content: "and tomorrow?" }] }
    })
    expect(second.status, JSON.stringify(second.body)).toBe(200)
    expect(running.fake.requests[1].body.input).toEqual([
      { role: "user", content: [{ type: "input_text", text: "search the weather" }] },
      searchCall,
      { role: "assistant", content: "It is sunny." },
      { role: "user", content: [{ type: "input_text", text: "and tomorrow?" }] }
    ])
  })

  it("streams reasoning summaries as thoughts signed with the item's encrypted content, which goes back in the next turn", async () => {
    running.fake.handler = (request) =>
      answer(request, responseObject([reasoningItem("rs_7", "Considering.", "gAAAAB-enc-7"), functionCallItem("call_5", "get_weather", "{\"city\":\"Oslo\"}")]))
    const streamed = await running.gateway.stream("/inference", { function_name: "weather", input: user("weather in Oslo"), stream: true })
    expect(streamed.status, streamed.raw).toBe(200)
    const deltas = streamed.events.filter((event) => event !== "[DONE]").flatMap((event) => event.content ?? [])
    const thoughts = deltas.filter((delta: any) => delta.type === "thought")
    expect(thoughts.map((delta: any) => delta.text).join("")).toBe("Considering.")
    const signature = thoughts.find((delta: any) => delta.signature !== undefined)?.signature
    // the encrypted content itself, as TensorZero stores it
    expect(signature).toBe("gAAAAB-enc-7")
    const calls = deltas.filter((delta: any) => delta.type === "tool_call")
    expect(calls[0]).toMatchObject({ id: "call_5", raw_name: "get_weather" })
    expect(calls.map((delta: any) => delta.raw_arguments).join("")).toBe("{\"city\":\"Oslo\"}")
    expect(streamed.events.at(-2)?.finish_reason).toBe("tool_call")
    running.fake.handler = (request) => answer(request, responseObject([messageItem("Cold.")]))
    const next = await running.gateway.post("/inference", {
      function_name: "weather",
      input: {
        messages: [
          { role: "user", content: "weather in Oslo" },
          {
            role: "assistant",
            content: [
              { type: "thought", text: "Considering.", signature },
              { type: "tool_call", id: "call_5", name: "get_weather", arguments: { city: "Oslo" } }
            ]
          },
          { role: "user", content: [{ type: "tool_result", id: "call_5", name: "get_weather", result: "-3C" }] }
        ]
      }
    })
    expect(next.status, JSON.stringify(next.body)).toBe(200)
    // with store false the encrypted content is the whole item: no id goes back
    expect(running.fake.requests[1].body.input[1]).toEqual({
      type: "reasoning",
      summary: [{ type: "summary_text", text: "Considering." }],
      encrypted_content: "gAAAAB-enc-7"
    })
  })

  it("reads an incomplete answer as finish reason length, and cached input tokens", async () => {
    running.fake.handler = (request) => answer(request, responseObject([messageItem("Once upon")], { input: 20, output: 64, cached: 8 }, "incomplete", "max_output_tokens"))
    const response = await running.gateway.post("/inference", { function_name: "plain", input: user("a story") })
    expect(response.status, JSON.stringify(response.body)).toBe(200)
    expect(response.body.finish_reason).toBe("length")
    expect(response.body.usage).toMatchObject({ input_tokens: 20, output_tokens: 64 })
  })

  it("fails with the API's message: an error status, and a response.failed event mid-stream", async () => {
    running.fake.script.push(responsesError(400, "Invalid value for 'input[0].content'.", "invalid_value"))
    const refused = await running.gateway.post("/inference", { function_name: "plain", input: user("hi") })
    expect(refused.status).toBe(400)
    expect(JSON.stringify(refused.body)).toContain("Invalid value for 'input[0].content'.")
    running.fake.script.push(sseReply(
      `event: response.created\ndata: ${JSON.stringify({ type: "response.created", sequence_number: 0, response: { id: "r", status: "in_progress", output: [] } })}\n\n` +
        `event: response.output_text.delta\ndata: ${JSON.stringify({ type: "response.output_text.delta", sequence_number: 1, output_index: 0, content_index: 0, item_id: "m", delta: "Hel" })}\n\n` +
        `event: response.failed\ndata: ${JSON.stringify({ type: "response.failed", sequence_number: 2, response: { id: "r", status: "failed", error: { code: "server_error", message: "The model crashed." } } })}\n\n`
    ))
    const streamed = await running.gateway.stream("/inference", { function_name: "plain", input: user("hi"), stream: true })
    expect(streamed.raw).toContain("Hel")
    expect(streamed.raw).toContain("The model crashed.")
  })
})
