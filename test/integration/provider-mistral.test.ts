/**
 * POST /inference through the `mistral` provider against a fake Mistral server: every
 * conformance scenario, then what is Mistral's own (tool_choice "any", random_seed, tool call
 * ids of nine characters, thinking chunks, its error bodies, the short-hand).
 */
import { describe, expect, it } from "vitest"
import { jsonReply } from "../support/fakeWireServer.ts"
import { mistralFakeKey, startFakeMistral } from "../support/fakeMistral.ts"
import { startGateway } from "../support/gateway.ts"
import { scenarioTests } from "../support/scenarioGateway.ts"
import { mistralRunningFake } from "../conformance/mistral.ts"

describe("mistral through the gateway", () => {
  // the gateway and the fake, started around the tests; a test per conformance scenario first
  const running = scenarioTests("mistral", startFakeMistral, mistralRunningFake, {
    extraConfig: () => `
[functions.tuned]
type = "chat"
tools = ["get_weather"]
tool_choice = "required"
parallel_tool_calls = false
[functions.tuned.variants.v]
type = "chat_completion"
model = "conformance"
seed = 7
max_tokens = 50
temperature = 0.2
`
  })

  it("sends the Bearer key to /v1/chat/completions, the seed as random_seed, required as \"any\", no stream_options", async () => {
    const response = await running.gateway.post("/inference", { function_name: "tuned", input: { messages: [{ role: "user", content: "hi" }] } })
    expect(response.status, JSON.stringify(response.body)).toBe(200)
    const upstream = running.fake.requests[0]
    expect(upstream.path).toBe("/v1/chat/completions")
    expect(upstream.headers.authorization).toBe(`Bearer ${mistralFakeKey}`)
    expect(upstream.body).toMatchObject({ model: "magistral-medium-latest", random_seed: 7, max_tokens: 50, temperature: 0.2, tool_choice: "any", parallel_tool_calls: false })
    expect(upstream.body.seed).toBeUndefined()
    const streamed = await running.gateway.stream("/inference", { function_name: "plain", input: { messages: [{ role: "user", content: "hi" }] }, stream: true })
    expect(streamed.status).toBe(200)
    expect(running.fake.requests[1].body.stream).toBe(true)
    expect(running.fake.requests[1].body.stream_options).toBeUndefined()
  })

  it("sends another provider's tool call ids as nine letters and digits, the call and its result alike", async () => {
    const response = await running.gateway.post("/inference", {
      function_name: "weather",
      input: {
        messages: [
          { role: "user", content: "weather?" },
          { role: "assistant", content: [{ type: "tool_call", id: "toolu_01ABC-xyz", name: "get_weather", arguments: { city: "Paris" } }] },
          { role: "user", content: [{ type: "tool_result", id: "toolu_01ABC-xyz", name: "get_weather", result: "sunny" }] }
        ]
      }
    })
    expect(response.status, JSON.stringify(response.body)).toBe(200)
    const messages = running.fake.requests[0].body.messages
    const id = messages[1].tool_calls[0].id
    expect(id).toMatch(/^[a-zA-Z0-9]{9}$/)
    expect(messages[2]).toEqual({ role: "tool", tool_call_id: id, name: "get_weather", content: "sunny" })
  })

  it("streams Magistral's thinking as thoughts", async () => {
    const streamed = await running.gateway.stream("/inference", {
      function_name: "plain",
      input: { messages: [{ role: "user", content: "conformance:thought_round_trip" }] },
      stream: true
    })
    expect(streamed.status).toBe(200)
    const deltas = streamed.events.filter((event) => event !== "[DONE]").flatMap((event) => event.content ?? [])
    expect(deltas.filter((delta: any) => delta.type === "thought").map((delta: any) => delta.text).join("")).toBe("thinking")
    expect(deltas.filter((delta: any) => delta.type === "text").map((delta: any) => delta.text).join("")).toBe("first")
  })

  it("shows Mistral's error message ({\"object\": \"error\"}) and its validation details", async () => {
    running.fake.script.push(jsonReply({ detail: [{ type: "missing", loc: ["body", "messages"], msg: "Field required" }] }, 422))
    const response = await running.gateway.post("/inference", { function_name: "plain", input: { messages: [{ role: "user", content: "hi" }] } })
    expect(response.status).toBe(400)
    expect(JSON.stringify(response.body)).toContain("body.messages: Field required")
  })

  it("refuses a wrong key with Mistral's message, never echoing the key", async () => {
    const gateway = await startGateway({
      config: `
[models.m]
routing = ["p"]
[models.m.providers.p]
type = "mistral"
model_name = "mistral-small-latest"
api_base = "${running.fake.apiBase}"
[functions.f]
type = "chat"
[functions.f.variants.v]
type = "chat_completion"
model = "m"
`,
      env: { MISTRAL_API_KEY: "wrong-mistral-key" }
    })
    try {
      const response = await gateway.post("/inference", { function_name: "f", input: { messages: [{ role: "user", content: "hi" }] } })
      expect(response.status).toBe(502)
      expect(JSON.stringify(response.body)).toContain("Unauthorized")
      expect(JSON.stringify(response.body)).not.toContain("wrong-mistral-key")
    } finally {
      await gateway.stop()
    }
  })
})
