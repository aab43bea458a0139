/**
 * POST /inference through the `openai` provider against a fake OpenAI-compatible upstream:
 * what the upstream receives (path, credentials, model, messages, parameters, tools,
 * response formats, files, extra_body/extra_headers, provider tools) and what the gateway
 * answers (content, tool calls, json output, usage, finish reason, original response).
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import { completion, type FakeOpenAi, recordedAnswer, startFakeOpenAi, textCompletion } from "../support/fakeOpenAi.ts"
import { responseFixture } from "../support/providerFixtures.ts"
import { type RunningGateway, startGateway } from "../support/gateway.ts"

const weatherSchema = {
  type: "object",
  properties: { city: { type: "string" } },
  required: ["city"],
  additionalProperties: false
}
const lookupSchema = { type: "object", properties: { query: { type: "string" } }, required: ["query"] }
const outputSchema = {
  type: "object",
  properties: { answer: { type: "string" } },
  required: ["answer"]
}

const files = {
  "schemas/system.json": JSON.stringify({
    type: "object",
    properties: { assistant_name: { type: "string" } },
    required: ["assistant_name"],
    additionalProperties: false
  }),
  "schemas/user.json": JSON.stringify({
    type: "object",
    properties: { topic: { type: "string" } },
    required: ["topic"],
    additionalProperties: false
  }),
  "schemas/greeting.json": JSON.stringify({ type: "object", properties: { name: { type: "string" } }, required: ["name"] }),
  "templates/system.minijinja": "You are {{ assistant_name }}.",
  "templates/user.minijinja": "Tell me about {{ topic }}.",
  "templates/greeting.minijinja": "Greetings, {{ name }}!",
  "tools/get_weather.json": JSON.stringify(weatherSchema),
  "tools/lookup.json": JSON.stringify(lookupSchema),
  "output.json": JSON.stringify(outputSchema)
}

const config = (apiBase: string) => `
[models.m]
routing = ["a"]
[models.m.providers.a]
type = "openai"
model_name = "gpt-test"
api_base = "${apiBase}"
api_key_location = "env::TEST_KEY_A"

[models.dyn]
routing = ["d"]
[models.dyn.providers.d]
type = "openai"
model_name = "gpt-dyn"
api_base = "${apiBase}"
api_key_location = "dynamic::customer_key"

[models.edits]
routing = ["p1", "p2"]
[models.edits.providers.p1]
type = "openai"
model_name = "gpt-p1"
api_base = "${apiBase}"
api_key_location = "env::TEST_KEY_A"
extra_body = [{ pointer = "/from_provider", value = "p1" }, { pointer = "/stop/-", value = "P1STOP" }]
extra_headers = [{ name = "x-from-provider", value = "p1" }]
[models.edits.providers.p2]
type = "openai"
model_name = "gpt-p2"
api_base = "${apiBase}"
api_key_location = "env::TEST_KEY_B"
extra_body = [{ pointer = "/from_provider", value = "p2" }]

[tools.get_weather]
description = "Get the weather for a city"
parameters = "tools/get_weather.json"
strict = true

[tools.lookup]
description = "Look something up"
parameters = "tools/lookup.json"

[functions.basic]
type = "chat"
[functions.basic.variants.v]
type = "chat_completion"
model = "m"

[functions.tuned]
type = "chat"
[functions.tuned.variants.v]
type = "chat_completion"
model = "m"
temperature = 0.5
max_tokens = 100
seed = 42
top_p = 0.9
presence_penalty = 0.1
frequency_penalty = 0.2
stop_sequences = ["END"]
reasoning_effort = "low"
service_tier = "flex"
verbosity = "low"

[functions.templated]
type = "chat"
schemas.system.path = "schemas/system.json"
schemas.user.path = "schemas/user.json"
schemas.greeting.path = "schemas/greeting.json"
[functions.templated.variants.v]
type = "chat_completion"
model = "m"
templates.system.path = "templates/system.minijinja"
templates.user.path = "templates/user.minijinja"
templates.greeting.path = "templates/greeting.minijinja"

[functions.tooled]
type = "chat"
tools = ["get_weather"]
parallel_tool_calls = true
[functions.tooled.variants.v]
type = "chat_completion"
model = "m"

[functions.extract]
type = "json"
output_schema = "output.json"
[functions.extract.variants.strict]
type = "chat_completion"
model = "m"
weight = 1
[functions.extract.variants.off]
type = "chat_completion"
model = "m"
weight = 0
json_mode = "off"
[functions.extract.variants.on]
type = "chat_completion"
model = "m"
weight = 0
json_mode = "on"
[functions.extract.variants.tool]
type = "chat_completion"
model = "m"
weight = 0
json_mode = "tool"

[functions.edited]
type = "chat"
[functions.edited.variants.first]
type = "chat_completion"
model = "edits"
weight = 1
temperature = 0.7
stop_sequences = ["S"]
extra_body = [{ pointer = "/from_variant", value = "first" }, { pointer = "/temperature", delete = true }]
extra_headers = [{ name = "x-from-variant", value = "first" }]
[functions.edited.variants.second]
type = "chat_completion"
model = "m"
weight = 0
extra_body = [{ pointer = "/from_variant", value = "second" }]

[functions.dynamic]
type = "chat"
[functions.dynamic.variants.v]
type = "chat_completion"
model = "dyn"
`

const user = (content: unknown) => ({ messages: [{ role: "user", content }] })
const failure = (status: number, message: string) => ({ kind: "json" as const, status, body: { error: { message } } })

describe("POST /inference with the openai provider: the upstream request and the response", () => {
  let fake: FakeOpenAi
  let gateway: RunningGateway

  beforeAll(async () => {
    fake = await startFakeOpenAi()
    gateway = await startGateway({
      config: config(fake.apiBase),
      files,
      env: { TEST_KEY_A: "key-a", TEST_KEY_B: "key-b" }
    })
  })
  afterAll(async () => {
    await gateway?.stop()
    await fake?.close()
  })
  beforeEach(() => fake.reset())

  /** POSTs an inference that must succeed, and returns its body and the one request the upstream got */
  const infer = async (body: Record<string, unknown>) => {
    const response = await gateway.post("/inference", body)
    expect(response.status, JSON.stringify(response.body)).toBe(200)
    expect(fake.requests).toHaveLength(1)
    return { body: response.body, upstream: fake.requests[0] }
  }

  describe("the upstream request", () => {
    it("posts to /v1/chat/completions with the key from the environment, the model name and the messages", async () => {
      const { upstream } = await infer({
        function_name: "basic",
        input: {
          system: "Be brief.",
          messages: [
            { role: "user", content: "hi" },
            { role: "assistant", content: "hello" },
            { role: "user", content: [{ type: "text", text: "one" }, { type: "text", text: "two" }] }
          ]
        }
      })
      expect(upstream.method).toBe("POST")
      expect(upstream.path).toBe("/v1/chat/completions")
      expect(upstream.headers.authorization).toBe("Bearer key-a")
      expect(upstream.headers["content-type"]).toBe("application/json")
      // nothing else: no parameter the caller did not ask for
      expect(upstream.body).toEqual({
        model: "gpt-test",
        messages: [
          { role: "system", content: "Be brief." },
          { role: "user", content: "hi" },
          { role: "assistant", content: "hello" },
          { role: "user", content: [{ type: "text", text: "one" }, { type: "text", text: "two" }] }
        ]
      })
    })

    it("calls a configured model directly with model_name (gateway::default)", async () => {
      const { body, upstream } = await infer({ model_name: "m", input: user("hi") })
      expect(body.variant_name).toBe("m")
      expect(upstream.body.model).toBe("gpt-test")
      expect(upstream.body.messages).toEqual([{ role: "user", content: "hi" }])
    })

    it("sends the API key given in credentials for a dynamic:: location", async () => {
      const { upstream } = await infer({ function_name: "dynamic", input: user("hi"), credentials: { customer_key: "sk-customer" } })
      expect(upstream.headers.authorization).toBe("Bearer sk-customer")
      expect(upstream.body.model).toBe("gpt-dyn")
    })

    it("answers 400 naming credentials.<name> when a dynamic credential is missing, without calling the upstream", async () => {
      const response = await gateway.post("/inference", { function_name: "dynamic", input: user("hi"), credentials: { other: "x" } })
      expect(response.status).toBe(400)
      expect(response.body.error).toContain("credentials.customer_key")
      expect(fake.requests).toHaveLength(0)
      const streamed = await gateway.post("/inference", { function_name: "dynamic", input: user("hi"), stream: true })
      expect(streamed.status).toBe(400)
      expect(streamed.body.error).toContain("credentials.customer_key")
      expect(fake.requests).toHaveLength(0)
    })

    it("sends every parameter of the variant under its OpenAI name", async () => {
      const { upstream } = await infer({ function_name: "tuned", input: user("hi") })
      expect(upstream.body).toEqual({
        model: "gpt-test",
        messages: [{ role: "user", content: "hi" }],
        temperature: 0.5,
        max_completion_tokens: 100,
        seed: 42,
        top_p: 0.9,
        presence_penalty: 0.1,
        frequency_penalty: 0.2,
        stop: ["END"],
        reasoning_effort: "low",
        service_tier: "flex",
        verbosity: "low"
      })
    })

    it("lets params.chat_completion of the request override the variant's parameters", async () => {
      const { upstream } = await infer({
        function_name: "tuned",
        input: user("hi"),
        params: {
          chat_completion: {
            temperature: 0.1,
            max_tokens: 7,
            seed: 1,
            stop_sequences: ["STOP", "HALT"],
            reasoning_effort: "high",
            verbosity: "high"
          }
        }
      })
      expect(upstream.body).toMatchObject({
        temperature: 0.1,
        max_completion_tokens: 7,
        seed: 1,
        stop: ["STOP", "HALT"],
        reasoning_effort: "high",
        verbosity: "high",
        // not overridden: the variant's
        top_p: 0.9,
        presence_penalty: 0.1,
        frequency_penalty: 0.2,
        service_tier: "flex"
      })
      expect(upstream.body).not.toHaveProperty("max_tokens")
    })

    it("renders system, user and named templates with their schemas; raw_text is not rendered", async () => {
      const { upstream } = await infer({
        function_name: "templated",
        input: {
          system: { assistant_name: "Ada" },
          messages: [
            { role: "user", content: [{ type: "text", arguments: { topic: "owls" } }] },
            { role: "assistant", content: "Owls are birds." },
            {
              role: "user",
              content: [
                { type: "template", name: "greeting", arguments: { name: "Bob" } },
                { type: "raw_text", value: "{{ not rendered }}" }
              ]
            }
          ]
        }
      })
      expect(upstream.body.messages).toEqual([
        { role: "system", content: "You are Ada." },
        { role: "user", content: "Tell me about owls." },
        { role: "assistant", content: "Owls are birds." },
        { role: "user", content: [{ type: "text", text: "Greetings, Bob!" }, { type: "text", text: "{{ not rendered }}" }] }
      ])
    })

    it("refuses template arguments that do not fit the schema, and text for a role with a schema (400, upstream not called)", async () => {
      const wrongSystem = await gateway.post("/inference", {
        function_name: "templated",
        input: { system: { name: "Ada" }, messages: [{ role: "user", content: [{ type: "text", arguments: { topic: "owls" } }] }] }
      })
      expect(wrongSystem.status).toBe(400)
      expect(wrongSystem.body.error).toContain("input.system")
      const textForSchema = await gateway.post("/inference", {
        function_name: "templated",
        input: { system: { assistant_name: "Ada" }, messages: [{ role: "user", content: "plain text" }] }
      })
      expect(textForSchema.status).toBe(400)
      expect(textForSchema.body.error).toContain("input.messages[0].content")
      expect(fake.requests).toHaveLength(0)
    })

    it("sends the function's configured tools with tool_choice and parallel_tool_calls", async () => {
      const { upstream } = await infer({ function_name: "tooled", input: user("weather?") })
      expect(upstream.body.tools).toEqual([{
        type: "function",
        function: { name: "get_weather", description: "Get the weather for a city", parameters: weatherSchema, strict: true }
      }])
      expect(upstream.body.tool_choice).toBe("auto")
      expect(upstream.body.parallel_tool_calls).toBe(true)
    })

    it("adds additional_tools after the configured ones", async () => {
      const calc = { type: "object", properties: { expression: { type: "string" } } }
      const { upstream } = await infer({
        function_name: "tooled",
        input: user("2+2?"),
        additional_tools: [{ name: "calc", description: "Evaluate", parameters: calc }]
      })
      expect(upstream.body.tools.map((tool: any) => tool.function.name)).toEqual(["get_weather", "calc"])
      expect(upstream.body.tools[1]).toEqual({
        type: "function",
        function: { name: "calc", description: "Evaluate", parameters: calc }
      })
    })

    it.each([
      ["none", "none"],
      ["auto", "auto"],
      ["required", "required"],
      [{ specific: "get_weather" }, { type: "function", function: { name: "get_weather" } }]
    ])("sends tool_choice %j as %j, and the request's parallel_tool_calls", async (choice, sent) => {
      const { upstream } = await infer({
        function_name: "tooled",
        input: user("weather?"),
        tool_choice: choice,
        parallel_tool_calls: false
      })
      expect(upstream.body.tool_choice).toEqual(sent)
      expect(upstream.body.parallel_tool_calls).toBe(false)
      expect(upstream.body.tools).toHaveLength(1)
    })

    it("refuses a specific tool_choice that names no available tool", async () => {
      const response = await gateway.post("/inference", {
        function_name: "tooled",
        input: user("weather?"),
        tool_choice: { specific: "launch_rockets" }
      })
      expect(response.status).toBe(400)
      expect(response.body.error).toContain("tool_choice")
      expect(fake.requests).toHaveLength(0)
    })

    it("sends allowed_tools as OpenAI's allowed_tools tool_choice with every tool offered", async () => {
      const { upstream } = await infer({
        function_name: "tooled",
        input: user("look it up"),
        allowed_tools: ["lookup"],
        tool_choice: "required"
      })
      expect(upstream.body.tools.map((tool: any) => tool.function.name)).toEqual(["get_weather", "lookup"])
      expect(upstream.body.tool_choice).toEqual({
        type: "allowed_tools",
        allowed_tools: { mode: "required", tools: [{ type: "function", function: { name: "lookup" } }] }
      })
    })

    it("uses response_format json_schema with the output schema for json_mode strict (the default with a schema)", async () => {
      fake.fallback = () => ({ kind: "json", body: textCompletion("{\"answer\":\"42\"}") })
      const { body, upstream } = await infer({ function_name: "extract", input: user("answer?") })
      expect(body.variant_name).toBe("strict")
      expect(upstream.body.response_format).toEqual({
        type: "json_schema",
        json_schema: { name: "response", strict: true, schema: outputSchema }
      })
      expect(upstream.body).not.toHaveProperty("tools")
      expect(body.output).toEqual({ raw: "{\"answer\":\"42\"}", parsed: { answer: "42" } })
    })

    it("uses response_format json_object for json_mode on, and nothing for json_mode off", async () => {
      const on = await infer({ function_name: "extract", variant_name: "on", input: user("answer?") })
      expect(on.upstream.body.response_format).toEqual({ type: "json_object" })
      fake.requests.length = 0
      const off = await infer({ function_name: "extract", variant_name: "off", input: user("answer?") })
      expect(off.upstream.body).not.toHaveProperty("response_format")
      expect(off.upstream.body).not.toHaveProperty("tools")
    })

    it("turns the output schema into a forced `respond` tool for json_mode tool, and its arguments into the output", async () => {
      fake.fallback = () => ({
        kind: "json",
        body: completion(
          {
            content: null,
            tool_calls: [{ id: "call_1", type: "function", function: { name: "respond", arguments: "{\"answer\":\"yes\"}" } }]
          },
          { finishReason: "tool_calls" }
        )
      })
      const { body, upstream } = await infer({ function_name: "extract", variant_name: "tool", input: user("answer?") })
      expect(upstream.body.tools).toEqual([{
        type: "function",
        function: { name: "respond", description: expect.any(String), parameters: outputSchema }
      }])
      expect(upstream.body.tool_choice).toEqual({ type: "function", function: { name: "respond" } })
      expect(upstream.body).not.toHaveProperty("response_format")
      expect(body.output).toEqual({ raw: "{\"answer\":\"yes\"}", parsed: { answer: "yes" } })
    })

    it("sends the request's output_schema instead of the function's, and validates against it", async () => {
      const override = { type: "object", properties: { score: { type: "number" } }, required: ["score"] }
      fake.fallback = () => ({ kind: "json", body: textCompletion("{\"score\":3}") })
      const { body, upstream } = await infer({ function_name: "extract", input: user("score?"), output_schema: override })
      expect(upstream.body.response_format.json_schema.schema).toEqual(override)
      // fits the override, not the function's schema
      expect(body.output).toEqual({ raw: "{\"score\":3}", parsed: { score: 3 } })
    })

    it("lets params.chat_completion.json_mode override the variant's json_mode", async () => {
      const { upstream } = await infer({
        function_name: "extract",
        input: user("answer?"),
        params: { chat_completion: { json_mode: "on" } }
      })
      expect(upstream.body.response_format).toEqual({ type: "json_object" })
    })

    it("sends images by URL and as base64 data URLs (with detail), and other files as base64 file parts", async () => {
      const { upstream } = await infer({
        function_name: "basic",
        input: user([
          { type: "text", text: "What is in these?" },
          { type: "file", file_type: "url", url: "https://example.com/cat.png" },
          { type: "file", file_type: "url", url: "https://example.com/dog.jpg", mime_type: "image/jpeg", detail: "low" },
          { type: "file", file_type: "base64", data: "iVBORw0KGgo=", mime_type: "image/png", detail: "high" },
          { type: "file", file_type: "base64", data: "JVBERi0xLjQ=", mime_type: "application/pdf" }
        ])
      })
      expect(upstream.body.messages).toEqual([{
        role: "user",
        content: [
          { type: "text", text: "What is in these?" },
          { type: "image_url", image_url: { url: "https://example.com/cat.png" } },
          { type: "image_url", image_url: { url: "https://example.com/dog.jpg", detail: "low" } },
          { type: "image_url", image_url: { url: "data:image/png;base64,iVBORw0KGgo=", detail: "high" } },
          { type: "file", file: { file_data: "data:application/pdf;base64,JVBERi0xLjQ=", filename: "input.pdf" } }
        ]
      }])
    })

    it("sends tool calls and tool results of the input as assistant tool_calls and tool messages", async () => {
      const { upstream } = await infer({
        function_name: "tooled",
        input: {
          messages: [
            { role: "user", content: "Weather in Paris and Oslo?" },
            {
              role: "assistant",
              content: [
                { type: "text", text: "Let me check." },
                { type: "tool_call", id: "call_1", name: "get_weather", arguments: { city: "Paris" } },
                // a tool_call block sent back as the gateway returned it: the raw values are what the model said
                {
                  type: "tool_call",
                  id: "call_2",
                  name: "get_weather",
                  arguments: { city: "Oslo" },
                  raw_name: "get_weather",
                  raw_arguments: "{\"city\": \"Oslo\"}"
                }
              ]
            },
            {
              role: "user",
              content: [
                { type: "tool_result", id: "call_1", name: "get_weather", result: "sunny" },
                { type: "tool_result", id: "call_2", name: "get_weather", result: "snow" }
              ]
            }
          ]
        }
      })
      expect(upstream.body.messages).toEqual([
        { role: "user", content: "Weather in Paris and Oslo?" },
        {
          role: "assistant",
          content: "Let me check.",
          tool_calls: [
            { id: "call_1", type: "function", function: { name: "get_weather", arguments: "{\"city\":\"Paris\"}" } },
            { id: "call_2", type: "function", function: { name: "get_weather", arguments: "{\"city\": \"Oslo\"}" } }
          ]
        },
        { role: "tool", tool_call_id: "call_1", content: "sunny" },
        { role: "tool", tool_call_id: "call_2", content: "snow" }
      ])
    })

    it("sends unknown blocks as they are, to every provider or only to the one model_provider_name names", async () => {
      fake.script.push(failure(500, "p1 is down"))
      const response = await gateway.post("/inference", {
        function_name: "edited",
        input: user([
          { type: "text", text: "hi" },
          { type: "unknown", data: { type: "for_all", x: 1 } },
          { type: "unknown", data: { type: "for_p2" }, model_provider_name: "gateway::model_name::edits::provider_name::p2" },
          { type: "thought", text: "not sent back" }
        ])
      })
      expect(response.status, JSON.stringify(response.body)).toBe(200)
      const [p1, p2] = fake.requests
      expect(p1.body.messages).toEqual([{ role: "user", content: [{ type: "text", text: "hi" }, { type: "for_all", x: 1 }] }])
      expect(p2.body.messages).toEqual([{
        role: "user",
        content: [{ type: "text", text: "hi" }, { type: "for_all", x: 1 }, { type: "for_p2" }]
      }])
    })

    it("applies extra_body and extra_headers from the provider's and the variant's configuration", async () => {
      fake.script.push(failure(500, "p1 is down"))
      const response = await gateway.post("/inference", { function_name: "edited", input: user("hi") })
      expect(response.status, JSON.stringify(response.body)).toBe(200)
      expect(fake.requests).toHaveLength(2)
      const [p1, p2] = fake.requests
      expect(p1.body.model).toBe("gpt-p1")
      expect(p1.body.from_provider).toBe("p1")
      expect(p1.body.stop).toEqual(["S", "P1STOP"])
      expect(p1.body.from_variant).toBe("first")
      expect(p1.body).not.toHaveProperty("temperature")
      expect(p1.headers["x-from-provider"]).toBe("p1")
      expect(p1.headers["x-from-variant"]).toBe("first")
      expect(p2.body.model).toBe("gpt-p2")
      expect(p2.headers.authorization).toBe("Bearer key-b")
      expect(p2.body.from_provider).toBe("p2")
      expect(p2.body.stop).toEqual(["S"])
      expect(p2.body.from_variant).toBe("first")
      expect(p2.body).not.toHaveProperty("temperature")
      expect(p2.headers["x-from-provider"]).toBeUndefined()
      expect(p2.headers["x-from-variant"]).toBe("first")
    })

    it("applies the request's extra_body after the configuration's, scoped by variant, model, and model + provider", async () => {
      fake.script.push(failure(500, "p1 is down"))
      const response = await gateway.post("/inference", {
        function_name: "edited",
        input: user("hi"),
        extra_body: [
          { pointer: "/everywhere", value: { nested: [1] } },
          { pointer: "/for_first", value: true, variant_name: "first" },
          { pointer: "/for_second", value: true, variant_name: "second" },
          { pointer: "/for_edits", value: true, model_name: "edits" },
          { pointer: "/for_m", value: true, model_name: "m" },
          { pointer: "/from_provider", value: "request", model_name: "edits", provider_name: "p1" },
          { pointer: "/from_variant", delete: true, model_name: "edits", provider_name: "p2" },
          { pointer: "/stop/-", value: "REQ" },
          { pointer: "/deep/er/field", value: 1 }
        ]
      })
      expect(response.status, JSON.stringify(response.body)).toBe(200)
      const [p1, p2] = fake.requests
      expect(p1.body).toMatchObject({
        everywhere: { nested: [1] },
        for_first: true,
        for_edits: true,
        from_provider: "request",
        from_variant: "first",
        stop: ["S", "P1STOP", "REQ"],
        deep: { er: { field: 1 } }
      })
      expect(p1.body).not.toHaveProperty("for_second")
      expect(p1.body).not.toHaveProperty("for_m")
      expect(p2.body).toMatchObject({
        everywhere: { nested: [1] },
        for_first: true,
        for_edits: true,
        from_provider: "p2",
        stop: ["S", "REQ"]
      })
      expect(p2.body).not.toHaveProperty("from_variant")
      expect(p2.body).not.toHaveProperty("for_second")
    })

    it("edits values shared with the configuration (tool schemas, stop sequences) for one request only", async () => {
      const edited = await infer({
        function_name: "tooled",
        input: user("hi"),
        params: { chat_completion: { stop_sequences: ["A"] } },
        extra_body: [
          { pointer: "/tools/0/function/parameters/properties/injected", value: { type: "string" } },
          { pointer: "/tools/0/function/strict", delete: true },
          { pointer: "/stop/-", value: "B" }
        ]
      })
      expect(edited.upstream.body.tools[0].function.parameters.properties.injected).toEqual({ type: "string" })
      expect(edited.upstream.body.tools[0].function).not.toHaveProperty("strict")
      expect(edited.upstream.body.stop).toEqual(["A", "B"])
      fake.requests.length = 0
      const next = await infer({ function_name: "tooled", input: user("hi"), params: { chat_completion: { stop_sequences: ["A"] } } })
      expect(next.upstream.body.tools[0].function).toEqual({
        name: "get_weather",
        description: "Get the weather for a city",
        parameters: weatherSchema,
        strict: true
      })
      expect(next.upstream.body.stop).toEqual(["A"])
    })

    it("refuses an extra_body pointer that does not start with / (400 naming the entry, upstream not called)", async () => {
      const response = await gateway.post("/inference", {
        function_name: "basic",
        input: user("hi"),
        extra_body: [{ pointer: "/fine", value: 1 }, { pointer: "temperature", value: 1 }]
      })
      expect(response.status).toBe(400)
      expect(response.body.error).toContain("extra_body[1].pointer")
      expect(fake.requests).toHaveLength(0)
    })

    it("applies the request's extra_headers after the configuration's, scoped the same way", async () => {
      fake.script.push(failure(500, "p1 is down"))
      const response = await gateway.post("/inference", {
        function_name: "edited",
        input: user("hi"),
        extra_headers: [
          { name: "x-everywhere", value: "yes" },
          { name: "X-From-Provider", value: "request", model_name: "edits", provider_name: "p1" },
          { name: "x-from-variant", delete: true, model_name: "edits", provider_name: "p2" },
          { name: "x-for-second", value: "no", variant_name: "second" },
          { name: "x-for-first", value: "yes", variant_name: "first" },
          { name: "x-for-m", value: "no", model_name: "m" }
        ]
      })
      expect(response.status, JSON.stringify(response.body)).toBe(200)
      const [p1, p2] = fake.requests
      expect(p1.headers["x-everywhere"]).toBe("yes")
      expect(p1.headers["x-from-provider"]).toBe("request")
      expect(p1.headers["x-from-variant"]).toBe("first")
      expect(p1.headers["x-for-first"]).toBe("yes")
      expect(p1.headers["x-for-second"]).toBeUndefined()
      expect(p1.headers["x-for-m"]).toBeUndefined()
      expect(p2.headers["x-everywhere"]).toBe("yes")
      expect(p2.headers["x-from-provider"]).toBeUndefined()
      expect(p2.headers["x-from-variant"]).toBeUndefined()
      expect(p2.headers["x-for-first"]).toBe("yes")
      expect(p2.headers.authorization).toBe("Bearer key-b")
    })

    it("applies the second variant's configured edits when it is pinned, and scopes request edits to it", async () => {
      const { upstream } = await infer({
        function_name: "edited",
        variant_name: "second",
        input: user("hi"),
        extra_body: [
          { pointer: "/for_first", value: true, variant_name: "first" },
          { pointer: "/for_second", value: true, variant_name: "second" }
        ]
      })
      expect(upstream.body.model).toBe("gpt-test")
      expect(upstream.body.from_variant).toBe("second")
      expect(upstream.body.for_second).toBe(true)
      expect(upstream.body).not.toHaveProperty("for_first")
      expect(upstream.body).not.toHaveProperty("from_provider")
    })

    it("passes provider_tools through to the providers their scope names", async () => {
      fake.script.push(failure(500, "p1 is down"))
      const providerTools = [
        { tool: { type: "web_search" } },
        { scope: { model_name: "edits", model_provider_name: "p2" }, tool: { type: "code_interpreter" } },
        { scope: { model_name: "m" }, tool: { type: "for_m_only" } }
      ]
      const response = await gateway.post("/inference", { function_name: "edited", input: user("hi"), provider_tools: providerTools })
      expect(response.status, JSON.stringify(response.body)).toBe(200)
      const [p1, p2] = fake.requests
      expect(p1.body.tools).toEqual([{ type: "web_search" }])
      expect(p2.body.tools).toEqual([{ type: "web_search" }, { type: "code_interpreter" }])
      expect(p1.body).not.toHaveProperty("tool_choice")

      fake.requests.length = 0
      const { upstream } = await infer({ function_name: "tooled", input: user("hi"), provider_tools: providerTools })
      expect(upstream.body.tools.map((tool: any) => tool.type === "function" ? tool.function.name : tool.type)).toEqual([
        "get_weather",
        "web_search",
        "for_m_only"
      ])
    })
  })

  describe("the gateway's response", () => {
    it("answers a chat function with the upstream's text, usage and finish reason", async () => {
      fake.fallback = () => ({
        kind: "json",
        body: completion({ content: "Bonjour" }, { usage: { prompt_tokens: 123, completion_tokens: 45 } })
      })
      const { body } = await infer({ function_name: "basic", input: user("hi") })
      expect(body).toEqual({
        inference_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
        episode_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
        variant_name: "v",
        content: [{ type: "text", text: "Bonjour" }],
        usage: { input_tokens: 123, output_tokens: 45 },
        finish_reason: "stop"
      })
    })

    it("answers with a recorded OpenAI answer as the openai codec's fixture reads it", async () => {
      const { parsed } = responseFixture("openai", "text")
      fake.fallback = () => recordedAnswer("text")
      const { body } = await infer({ function_name: "basic", input: user("hi") })
      expect(body).toMatchObject({ content: parsed!.output, usage: parsed!.usage, finish_reason: parsed!.finishReason })
      expect(body.content).toEqual([{ type: "text", text: "Hello! How can I help you today?" }])
    })

    it("keeps the episode_id it is given", async () => {
      const first = await infer({ function_name: "basic", input: user("hi") })
      fake.requests.length = 0
      const second = await infer({ function_name: "basic", input: user("again"), episode_id: first.body.episode_id })
      expect(second.body.episode_id).toBe(first.body.episode_id)
      expect(second.body.inference_id).not.toBe(first.body.inference_id)
    })

    it("returns reasoning_content as a thought block before the text, and finish_reason length", async () => {
      fake.fallback = () => ({
        kind: "json",
        body: completion({ content: "Partial answ", reasoning_content: "Let me think." }, { finishReason: "length" })
      })
      const { body } = await infer({ function_name: "basic", input: user("hi") })
      expect(body.content).toEqual([{ type: "thought", text: "Let me think.", provider_type: "openai" }, { type: "text", text: "Partial answ" }])
      expect(body.finish_reason).toBe("length")
    })

    it("validates tool calls: name and arguments null when invalid, raw_name and raw_arguments kept", async () => {
      fake.fallback = () => ({
        kind: "json",
        body: completion(
          {
            content: null,
            tool_calls: [
              { id: "call_ok", type: "function", function: { name: "get_weather", arguments: "{\"city\":\"Oslo\"}" } },
              { id: "call_not_json", type: "function", function: { name: "get_weather", arguments: "{\"city\":" } },
              { id: "call_schema", type: "function", function: { name: "get_weather", arguments: "{\"city\":3}" } },
              { id: "call_unknown", type: "function", function: { name: "launch_rockets", arguments: "{}" } }
            ]
          },
          { finishReason: "tool_calls" }
        )
      })
      const { body } = await infer({ function_name: "tooled", input: user("weather?") })
      expect(body.content).toEqual([
        {
          type: "tool_call",
          id: "call_ok",
          name: "get_weather",
          arguments: { city: "Oslo" },
          raw_name: "get_weather",
          raw_arguments: "{\"city\":\"Oslo\"}"
        },
        {
          type: "tool_call",
          id: "call_not_json",
          name: "get_weather",
          arguments: null,
          raw_name: "get_weather",
          raw_arguments: "{\"city\":"
        },
        {
          type: "tool_call",
          id: "call_schema",
          name: "get_weather",
          arguments: null,
          raw_name: "get_weather",
          raw_arguments: "{\"city\":3}"
        },
        { type: "tool_call", id: "call_unknown", name: null, arguments: null, raw_name: "launch_rockets", raw_arguments: "{}" }
      ])
      expect(body.finish_reason).toBe("tool_call")
    })

    it("treats a call of a tool outside allowed_tools as invalid", async () => {
      fake.fallback = () => ({
        kind: "json",
        body: completion({
          content: null,
          tool_calls: [
            { id: "c1", type: "function", function: { name: "get_weather", arguments: "{\"city\":\"Oslo\"}" } },
            { id: "c2", type: "function", function: { name: "lookup", arguments: "{\"query\":\"owls\"}" } }
          ]
        })
      })
      const { body } = await infer({ function_name: "tooled", input: user("hi"), allowed_tools: ["lookup"] })
      expect(body.content[0]).toMatchObject({ id: "c1", name: null, arguments: null, raw_name: "get_weather" })
      expect(body.content[1]).toMatchObject({ id: "c2", name: "lookup", arguments: { query: "owls" } })
    })

    it("answers a json function with raw and parsed output; parsed is null for invalid JSON or a schema mismatch", async () => {
      const cases: ReadonlyArray<readonly [string, unknown]> = [
        ["{\"answer\":\"42\"}", { answer: "42" }],
        ["{\"answer\":", null],
        ["{\"answer\":42}", null],
        ["not json at all", null]
      ]
      for (const [raw, parsed] of cases) {
        fake.requests.length = 0
        fake.fallback = () => ({ kind: "json", body: textCompletion(raw) })
        const { body } = await infer({ function_name: "extract", input: user("answer?") })
        expect(body.output).toEqual({ raw, parsed })
        expect(body).not.toHaveProperty("content")
        expect(body.usage).toEqual({ input_tokens: 12, output_tokens: 7 })
      }
    })

    it("adds the upstream's body text as original_response when include_original_response is true", async () => {
      const upstreamBody = completion({ content: "Hi there" }, { usage: { prompt_tokens: 3, completion_tokens: 2 } })
      fake.fallback = () => ({ kind: "json", body: upstreamBody })
      const { body } = await infer({ function_name: "basic", input: user("hi"), include_original_response: true })
      expect(body.original_response).toBe(JSON.stringify(upstreamBody))
      fake.requests.length = 0
      const without = await infer({ function_name: "basic", input: user("hi") })
      expect(without.body).not.toHaveProperty("original_response")
    })
  })
})
