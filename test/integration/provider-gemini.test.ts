/**
 * POST /inference through `google_ai_studio_gemini` and `gcp_vertex_gemini` against the fake
 * Gemini server (test/support/fakeGemini.ts): what the upstream receives (address, key or
 * access token, Gemini's body) and what the gateway answers (text, streams, parallel tool
 * calls, JSON, images, thought signatures sent back on their parts, extra_body/extra_headers,
 * provider_tools, errors), and Vertex's access token fetched once and reused.
 */
import * as crypto from "node:crypto"
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import { marker } from "../support/conformance.ts"
import { type FakeGemini, geminiAnswer, googleError, startFakeGemini } from "../support/fakeGemini.ts"
import { type RunningGateway, startGateway } from "../support/gateway.ts"

const weatherSchema = { type: "object", properties: { city: { type: "string" } }, required: ["city"], additionalProperties: false }
const outputSchema = { type: "object", properties: { answer: { type: "string" } }, required: ["answer"], additionalProperties: false }

const config = (fake: FakeGemini) => `
[models.studio]
routing = ["g"]
[models.studio.providers.g]
type = "google_ai_studio_gemini"
model_name = "gemini-2.5-flash"
api_base = "${fake.aiStudioBase}"
extra_body = [{ pointer = "/generationConfig/topK", value = 40 }]
extra_headers = [{ name = "x-from-provider", value = "g" }]

[models.vertex]
routing = ["v"]
[models.vertex.providers.v]
type = "gcp_vertex_gemini"
model_name = "projects/fake-project/locations/us-central1/publishers/google/models/gemini-2.5-pro"
api_base = "${fake.vertexBase}"

[models.vertex_wrong_key]
routing = ["w"]
[models.vertex_wrong_key.providers.w]
type = "gcp_vertex_gemini"
model_id = "gemini-2.5-pro"
project_id = "fake-project"
location = "europe-west4"
api_base = "${fake.vertexBase}"
credential_location = "path::wrong-service-account.json"

[tools.get_weather]
description = "Get the weather for a city"
parameters = "tools/get_weather.json"

[functions.weather]
type = "chat"
tools = ["get_weather"]
[functions.weather.variants.v]
type = "chat_completion"
model = "studio"

[functions.json]
type = "json"
output_schema = "output.json"
[functions.json.variants.strict]
type = "chat_completion"
model = "vertex"
json_mode = "strict"
weight = 1
[functions.json.variants.tool]
type = "chat_completion"
model = "studio"
json_mode = "tool"
weight = 0
`

const user = (text: string) => ({ role: "user", content: [{ type: "text", text }] })

/** a service account the fake's token endpoint does not know (another key) */
const strangerAccount = (fake: FakeGemini) => {
  const { privateKey } = crypto.generateKeyPairSync("rsa", { modulusLength: 2048 })
  return JSON.stringify({ ...JSON.parse(fake.serviceAccount), private_key: privateKey.export({ type: "pkcs8", format: "pem" }).toString() })
}

describe("gemini providers through the gateway", () => {
  let fake: FakeGemini
  let gateway: RunningGateway
  beforeAll(async () => {
    fake = await startFakeGemini()
    gateway = await startGateway({
      config: config(fake),
      files: {
        "tools/get_weather.json": JSON.stringify(weatherSchema),
        "output.json": JSON.stringify(outputSchema),
        "service-account.json": fake.serviceAccount,
        "wrong-service-account.json": strangerAccount(fake)
      },
      env: { GOOGLE_AI_STUDIO_API_KEY: fake.apiKey, GCP_VERTEX_CREDENTIALS_PATH: "service-account.json" }
    })
  })
  afterAll(async () => {
    await gateway?.stop()
    await fake?.close()
  })
  beforeEach(() => fake.reset())

  it("AI Studio: the key in x-goog-api-key, the system instruction, the configured extra_body and extra_headers; text, usage and finish reason back", async () => {
    const { status, body } = await gateway.post("/inference", {
      model_name: "studio",
      input: { system: "Be brief.", messages: [user("Hello")] },
      params: { chat_completion: { temperature: 0.3, max_tokens: 50 } }
    })
    expect(status, JSON.stringify(body)).toBe(200)
    expect(body.content).toEqual([{ type: "text", text: "Hello from fake Gemini" }])
    expect(body.usage).toMatchObject({ input_tokens: 12, output_tokens: 7 })
    expect(body.finish_reason).toBe("stop")
    const [received] = fake.requests
    expect(received.path).toBe("/v1beta/models/gemini-2.5-flash:generateContent")
    expect(received.headers["x-goog-api-key"]).toBe(fake.apiKey)
    expect(received.headers["x-from-provider"]).toBe("g")
    expect(received.body).toEqual({
      systemInstruction: { parts: [{ text: "Be brief." }] },
      contents: [{ role: "user", parts: [{ text: "Hello" }] }],
      generationConfig: { temperature: 0.3, maxOutputTokens: 50, topK: 40 }
    })
  })

  it("streams from :streamGenerateContent?alt=sse, text in several deltas, usage at the end", async () => {
    const { status, events, raw } = await gateway.stream("/inference", { model_name: "studio", input: { messages: [user("Hello")] }, stream: true })
    expect(status, raw).toBe(200)
    expect(events.at(-1)).toBe("[DONE]")
    const chunks = events.slice(0, -1)
    const texts = chunks.flatMap((event) => event.content ?? []).filter((delta: any) => delta.type === "text")
    expect(texts.length).toBe(3)
    expect(texts.map((delta: any) => delta.text).join("")).toBe("Hello from fake Gemini")
    expect(chunks.at(-1).usage).toMatchObject({ input_tokens: 5, output_tokens: 3 })
    expect(fake.requests[0].path).toBe("/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse")
  })

  it("parallel tool calls (one without an id), sent back with the thought signature on its functionCall part and results by name", async () => {
    fake.script.push({
      kind: "json",
      body: geminiAnswer([
        { functionCall: { id: "call_a", name: "get_weather", args: { city: "Paris" } }, thoughtSignature: "sig-tools" },
        { functionCall: { name: "get_weather", args: { city: "London" } } }
      ])
    })
    const first = await gateway.post("/inference", { function_name: "weather", input: { messages: [user("Weather in Paris and London?")] } })
    expect(first.status, JSON.stringify(first.body)).toBe(200)
    expect(first.body.finish_reason).toBe("tool_call")
    const calls = first.body.content.filter((block: any) => block.type === "tool_call")
    expect(calls.map((call: any) => [call.id, call.name, call.arguments])).toEqual([
      ["call_a", "get_weather", { city: "Paris" }],
      ["gemini_call_0", "get_weather", { city: "London" }]
    ])
    expect(first.body.content[0]).toMatchObject({ type: "thought", signature: "sig-tools" })
    const declared = fake.requests[0].body.tools[0].functionDeclarations[0]
    // Gemini's schema subset: no additionalProperties
    expect(declared).toEqual({
      name: "get_weather",
      description: "Get the weather for a city",
      parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] }
    })
    expect(fake.requests[0].body.toolConfig).toEqual({ functionCallingConfig: { mode: "AUTO" } })

    const second = await gateway.post("/inference", {
      function_name: "weather",
      input: {
        messages: [
          user("Weather in Paris and London?"),
          { role: "assistant", content: first.body.content },
          {
            role: "user",
            content: calls.map((call: any) => ({ type: "tool_result", id: call.id, name: call.name, result: `{"sky":"clear in ${call.arguments.city}"}` }))
          }
        ]
      }
    })
    expect(second.status, JSON.stringify(second.body)).toBe(200)
    expect(fake.requests[1].body.contents.slice(1)).toEqual([
      {
        role: "model",
        parts: [
          { functionCall: { id: "call_a", name: "get_weather", args: { city: "Paris" } }, thoughtSignature: "sig-tools" },
          { functionCall: { name: "get_weather", args: { city: "London" } } }
        ]
      },
      {
        role: "user",
        parts: [
          { functionResponse: { id: "call_a", name: "get_weather", response: { sky: "clear in Paris" } } },
          { functionResponse: { name: "get_weather", response: { sky: "clear in London" } } }
        ]
      }
    ])
  })

  it("streamed parallel tool calls: each call whole in its event, the finish reason a tool call", async () => {
    fake.script.push({
      kind: "sse",
      events: [
        { candidates: [{ content: { role: "model", parts: [{ functionCall: { name: "get_weather", args: { city: "Paris" } } }] }, index: 0 }] },
        {
          candidates: [{ content: { role: "model", parts: [{ functionCall: { name: "get_weather", args: { city: "London" } } }] }, finishReason: "STOP", index: 0 }],
          usageMetadata: { promptTokenCount: 20, candidatesTokenCount: 10, totalTokenCount: 30 }
        }
      ]
    })
    const { status, events, raw } = await gateway.stream("/inference", { function_name: "weather", input: { messages: [user("Weather?")] }, stream: true })
    expect(status, raw).toBe(200)
    const calls = events.slice(0, -1).flatMap((event) => event.content ?? []).filter((delta: any) => delta.type === "tool_call")
    expect(calls.map((call: any) => [call.id, call.raw_name, call.raw_arguments])).toEqual([
      ["gemini_call_0", "get_weather", "{\"city\":\"Paris\"}"],
      ["gemini_call_1", "get_weather", "{\"city\":\"London\"}"]
    ])
    expect(events.at(-2).finish_reason).toBe("tool_call")
    expect(events.at(-2).usage).toMatchObject({ input_tokens: 20, output_tokens: 10 })
  })

  it("json_mode strict on Vertex: responseMimeType and responseSchema; json_mode tool: the respond tool forced", async () => {
    const strict = await gateway.post("/inference", { function_name: "json", variant_name: "strict", input: { messages: [user(marker("json_strict"))] } })
    expect(strict.status, JSON.stringify(strict.body)).toBe(200)
    expect(strict.body.output).toEqual({ raw: "{\"answer\":\"conformance\"}", parsed: { answer: "conformance" } })
    expect(fake.requests[0].api).toBe("vertex")
    expect(fake.requests[0].body.generationConfig).toEqual({
      responseMimeType: "application/json",
      responseSchema: { type: "object", properties: { answer: { type: "string" } }, required: ["answer"] }
    })
    const tool = await gateway.post("/inference", { function_name: "json", variant_name: "tool", input: { messages: [user(marker("json_tool"))] } })
    expect(tool.status, JSON.stringify(tool.body)).toBe(200)
    expect(tool.body.output.parsed).toEqual({ answer: "conformance" })
    expect(fake.requests[1].body.toolConfig).toEqual({ functionCallingConfig: { mode: "ANY", allowedFunctionNames: ["respond"] } })
  })

  it("an image as base64 goes as inlineData; an http URL is refused by AI Studio, naming the provider and the feature", async () => {
    const png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
    const image = await gateway.post("/inference", {
      model_name: "studio",
      input: { messages: [{ role: "user", content: [{ type: "text", text: marker("image") }, { type: "file", file_type: "base64", mime_type: "image/png", data: png }] }] }
    })
    expect(image.status, JSON.stringify(image.body)).toBe(200)
    expect(image.body.content).toEqual([{ type: "text", text: "image received" }])
    const byUrl = await gateway.post("/inference", {
      model_name: "studio",
      input: { messages: [{ role: "user", content: [{ type: "file", file_type: "url", url: "https://example.com/cat.png" }] }] }
    })
    expect(byUrl.status).toBe(400)
    expect(byUrl.body.error).toContain("the google_ai_studio_gemini provider takes files as base64 data or as a Gemini File API URI")
    expect(fake.requests).toHaveLength(1)
  })

  it("a thought with its signature comes back on its part in the next turn", async () => {
    const first = await gateway.post("/inference", { model_name: "studio", input: { messages: [user(marker("thought_round_trip"))] } })
    expect(first.status, JSON.stringify(first.body)).toBe(200)
    expect(first.body.content).toEqual([
      { type: "thought", text: "thinking", signature: "sig-conformance", provider_type: "google_ai_studio_gemini" },
      { type: "text", text: "first" }
    ])
    const second = await gateway.post("/inference", {
      model_name: "studio",
      input: { messages: [user(marker("thought_round_trip")), { role: "assistant", content: first.body.content }, user(marker("thought_round_trip_2"))] }
    })
    expect(second.status, JSON.stringify(second.body)).toBe(200)
    expect(second.body.content).toEqual([{ type: "text", text: "second" }])
    expect(fake.requests[1].body.contents[1]).toEqual({
      role: "model",
      parts: [{ text: "thinking", thought: true, thoughtSignature: "sig-conformance" }, { text: "first" }]
    })
  })

  it("the request's extra_body, extra_headers and provider_tools (appended to tools)", async () => {
    const { status, body } = await gateway.post("/inference", {
      function_name: "weather",
      input: { messages: [user("Search the web")] },
      extra_body: [{ pointer: "/safetySettings", value: [{ category: "HARM_CATEGORY_HARASSMENT", threshold: "BLOCK_NONE" }] }],
      extra_headers: [{ name: "x-request-header", value: "yes" }],
      provider_tools: [{ tool: { googleSearch: {} } }]
    })
    expect(status, JSON.stringify(body)).toBe(200)
    const [received] = fake.requests
    expect(received.headers["x-request-header"]).toBe("yes")
    expect(received.body.safetySettings).toEqual([{ category: "HARM_CATEGORY_HARASSMENT", threshold: "BLOCK_NONE" }])
    expect(received.body.tools.map((tool: any) => Object.keys(tool)[0])).toEqual(["functionDeclarations", "googleSearch"])
    expect(received.body.tools[1]).toEqual({ googleSearch: {} })
  })

  it("a Google API error: its status name and message reach the caller", async () => {
    fake.script.push(googleError(400, "INVALID_ARGUMENT", "The input token count exceeds the maximum number of tokens allowed."))
    const { status, body } = await gateway.post("/inference", { model_name: "studio", input: { messages: [user("Hello")] } })
    expect(status).toBe(400)
    expect(body.error).toContain("HTTP 400: INVALID_ARGUMENT: The input token count exceeds the maximum number of tokens allowed.")
  })

  it("Vertex: the access token is fetched once and reused (whole and streamed calls), the model from its resource name", async () => {
    for (let i = 0; i < 2; i++) {
      const { status, body } = await gateway.post("/inference", { model_name: "vertex", input: { messages: [user("Hello")] } })
      expect(status, JSON.stringify(body)).toBe(200)
      expect(body.content).toEqual([{ type: "text", text: "Hello from fake Gemini" }])
    }
    const streamed = await gateway.stream("/inference", { model_name: "vertex", input: { messages: [user("Hello")] }, stream: true })
    expect(streamed.status, streamed.raw).toBe(200)
    // one token for the gateway's whole life so far (the json test may have fetched it)
    expect(fake.tokensIssued()).toBe(1)
    expect(fake.requests.map((request) => request.path)).toEqual([
      "/v1/projects/fake-project/locations/us-central1/publishers/google/models/gemini-2.5-pro:generateContent",
      "/v1/projects/fake-project/locations/us-central1/publishers/google/models/gemini-2.5-pro:generateContent",
      "/v1/projects/fake-project/locations/us-central1/publishers/google/models/gemini-2.5-pro:streamGenerateContent?alt=sse"
    ])
    expect(new Set(fake.requests.map((request) => request.headers.authorization))).toEqual(new Set(["Bearer ya29.fake-1"]))
    expect(fake.requests.every((request) => request.headers["x-goog-api-key"] === undefined)).toBe(true)
  })

  it("Vertex: a service account the token endpoint refuses fails the call naming it, without a model call", async () => {
    const { status, body } = await gateway.post("/inference", { model_name: "vertex_wrong_key", input: { messages: [user("Hello")] } })
    expect(status).toBe(502)
    expect(body.error).toContain("refused the service account (credentials refused)")
    expect(body.error).not.toContain("PRIVATE KEY")
    expect(fake.requests).toHaveLength(0)
  })
})
