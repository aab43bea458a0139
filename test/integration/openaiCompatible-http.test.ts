/**
 * The OpenAI-compatible endpoint (spec 4.2, issue 4) over plain HTTP, against the real CLI:
 * the `model` forms, messages of every role and content part, every OpenAI parameter, every
 * `gateway::` field, the `chat.completion` body, OpenAI's streaming shape, OpenAI's error shape
 * on every error of `/openai/v1/*`, and `GET /openai/v1/models`. What the upstream receives is
 * checked on the fake OpenAI server; the dummy models cover the rest.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it, onTestFinished } from "vitest"
import { freshDatabase, type TestDatabase } from "../support/databases.ts"
import { dummyConfig, dummyConfigFiles } from "../support/dummyConfig.ts"
import { completion, type FakeOpenAi, startFakeOpenAi, textCompletion, textStreamChunks } from "../support/fakeOpenAi.ts"
import { type RunningGateway, startGateway } from "../support/gateway.ts"
import { getInferences, observabilityToml, poll, uuidV7Pattern, waitForInference } from "../support/observability.ts"

const route = "/openai/v1/chat/completions"
const dummyText = "Hello from the dummy provider. This answer is always the same."
/** TensorZero's dummy models' whole text, streamed text and thought (`reasoning` is on dummy::reasoner) */
const tensorZeroText = "Megumin gleefully chanted her spell, unleashing a thunderous explosion that lit up the sky and left a massive crater in its wake."
const dummyToolArguments = "{\"location\":\"Brooklyn\",\"units\":\"celsius\"}"

const lookupSchema = { type: "object", properties: { query: { type: "string" } }, required: ["query"] }
const cityAnswerSchema = {
  type: "object",
  properties: { city: { type: "string" } },
  required: ["city"],
  additionalProperties: false
}

/** functions and models on the fake upstream, next to the dummy configuration's */
const upstreamConfig = (apiBase: string) => `
[gateway]
max_request_body_bytes = 300000

[models.up]
routing = ["a"]
[models.up.providers.a]
type = "openai"
model_name = "gpt-up"
api_base = "${apiBase}"
api_key_location = "none"

[models.up_keyed]
routing = ["k"]
[models.up_keyed.providers.k]
type = "openai"
model_name = "gpt-keyed"
api_base = "${apiBase}"
api_key_location = "dynamic::customer_key"

[tools.lookup]
description = "Look something up"
parameters = "tools/lookup.json"

[functions.up_chat]
type = "chat"
[functions.up_chat.variants.main]
type = "chat_completion"
model = "up"
weight = 1
[functions.up_chat.variants.tuned]
type = "chat_completion"
model = "up"
weight = 0
temperature = 0.9
max_tokens = 64

[functions.up_tools]
type = "chat"
tools = ["lookup"]
[functions.up_tools.variants.v]
type = "chat_completion"
model = "up"

[functions.up_best_of]
type = "chat"
[functions.up_best_of.variants.a]
type = "chat_completion"
model = "up"
weight = 0
[functions.up_best_of.variants.b]
type = "chat_completion"
model = "up"
weight = 0
[functions.up_best_of.variants.bon]
type = "experimental_best_of_n_sampling"
candidates = ["a", "b"]
weight = 1
evaluator = { model = "up" }

[functions.up_templated]
type = "chat"
schemas.system.path = "schemas/system.json"
schemas.user.path = "schemas/user.json"
[functions.up_templated.variants.v]
type = "chat_completion"
model = "up"
templates.system.path = "templates/system.minijinja"
templates.user.path = "templates/user.minijinja"
templates.greeting.path = "templates/greeting.minijinja"

[functions.up_json]
type = "json"
output_schema = "schemas/answer.json"
[functions.up_json.variants.v]
type = "chat_completion"
model = "up"

[functions.up_json_free]
type = "json"
[functions.up_json_free.variants.v]
type = "chat_completion"
model = "up"

[functions.up_keyed]
type = "chat"
[functions.up_keyed.variants.v]
type = "chat_completion"
model = "up_keyed"

[functions.fallback]
type = "chat"
[functions.fallback.variants.broken]
type = "chat_completion"
model = "dummy::error"
[functions.fallback.variants.backup]
type = "chat_completion"
model = "dummy::hello"

[functions.all_fail]
type = "chat"
[functions.all_fail.variants.a]
type = "chat_completion"
model = "dummy::error"
[functions.all_fail.variants.b]
type = "chat_completion"
model = "dummy::error"
`

const files = { ...dummyConfigFiles, "tools/lookup.json": JSON.stringify(lookupSchema) }

const user = (content: unknown) => ({ role: "user", content })
const hi = [user("hi")]

/** checks OpenAI's error body and returns its message */
const expectOpenAiError = (response: { status: number; body: any }, status: number, type?: string): string => {
  expect(response.status, JSON.stringify(response.body)).toBe(status)
  expect(Object.keys(response.body)).toEqual(["error"])
  expect(Object.keys(response.body.error).sort()).toEqual(["code", "message", "param", "type"])
  expect(typeof response.body.error.message).toBe("string")
  expect(response.body.error.message.length).toBeGreaterThan(0)
  if (type !== undefined) expect(response.body.error.type).toBe(type)
  return response.body.error.message
}

const chunkOf = (delta: Record<string, unknown>, finishReason: string | null = null) => ({
  id: "c",
  object: "chat.completion.chunk",
  choices: [{ index: 0, delta, finish_reason: finishReason }]
})
const usageChunk = { id: "c", object: "chat.completion.chunk", choices: [], usage: { prompt_tokens: 3, completion_tokens: 4, total_tokens: 7 } }

describe("POST /openai/v1/chat/completions", () => {
  let fake: FakeOpenAi
  let gateway: RunningGateway
  const defaultFallback = (): FakeOpenAi["fallback"] => (request) =>
    request.body?.stream === true
      ? { kind: "stream", chunks: [chunkOf({ role: "assistant", content: "" }), chunkOf({ content: "Hi" }), chunkOf({}, "stop"), usageChunk] }
      : { kind: "json", body: textCompletion("Hello from fake OpenAI") }

  const chat = async (body: Record<string, unknown>, headers?: Record<string, string>) => {
    const response = await gateway.post(route, body, headers)
    return response
  }
  const ok = async (body: Record<string, unknown>, headers?: Record<string, string>) => {
    const response = await chat(body, headers)
    expect(response.status, JSON.stringify(response.body)).toBe(200)
    return response.body
  }
  /** the body the upstream received last */
  const upstream = () => {
    expect(fake.requests.length).toBeGreaterThan(0)
    return fake.requests[fake.requests.length - 1].body
  }
  /** what the dummy `echo` model received */
  const echoed = async (messages: ReadonlyArray<unknown>, extra: Record<string, unknown> = {}) => {
    const body = await ok({ model: "gateway::model_name::dummy::echo_request_messages", messages, ...extra })
    return JSON.parse(body.choices[0].message.content)
  }

  beforeAll(async () => {
    fake = await startFakeOpenAi()
    gateway = await startGateway({ config: dummyConfig + upstreamConfig(fake.apiBase), files })
  })
  afterAll(async () => {
    await gateway?.stop()
    await fake?.close()
  })
  beforeEach(() => {
    fake.reset()
    fake.fallback = defaultFallback()
  })

  describe("model", () => {
    it("gateway::function_name::<function> runs the function and answers a chat.completion", async () => {
      const before = Math.floor(Date.now() / 1000)
      const response = await chat({ model: "gateway::function_name::up_chat", messages: hi })
      expect(response.status).toBe(200)
      expect(response.headers.get("content-type")).toContain("application/json")
      const body = response.body
      expect(body.id).toMatch(uuidV7Pattern)
      expect(body.episode_id).toMatch(uuidV7Pattern)
      expect(body.id).not.toBe(body.episode_id)
      expect(body.object).toBe("chat.completion")
      expect(body.model).toBe("gateway::function_name::up_chat::variant_name::main")
      expect(Number.isInteger(body.created)).toBe(true)
      expect(body.created).toBeGreaterThanOrEqual(before)
      expect(body.created).toBeLessThanOrEqual(Math.ceil(Date.now() / 1000))
      expect(typeof body.system_fingerprint).toBe("string")
      expect(body.choices).toHaveLength(1)
      expect(body.choices[0].index).toBe(0)
      expect(body.choices[0].finish_reason).toBe("stop")
      expect(body.choices[0].message).toEqual({ role: "assistant", content: "Hello from fake OpenAI" })
      expect(body.usage).toEqual({ prompt_tokens: 12, completion_tokens: 7, total_tokens: 19, gateway_cost: null })
      expect(body).not.toHaveProperty("gateway_raw_response")
      expect(fake.requests).toHaveLength(1)
      expect(fake.requests[0].path).toBe("/v1/chat/completions")
      expect(upstream()).toEqual({ model: "gpt-up", messages: [{ role: "user", content: "hi" }] })
    })

    it("the answer's model names the variant that answered: the pinned one, or the next after one failed", async () => {
      const pinned = await ok({ model: "gateway::function_name::up_chat", messages: hi, "gateway::variant_name": "tuned" })
      expect(pinned.model).toBe("gateway::function_name::up_chat::variant_name::tuned")
      // the name an answer gives is one a request may send back: it pins the same variant
      const again = await ok({ model: pinned.model, messages: hi })
      expect(again.model).toBe("gateway::function_name::up_chat::variant_name::tuned")
      const fallback = await ok({ model: "gateway::function_name::fallback", messages: hi })
      expect(fallback.model).toBe("gateway::function_name::fallback::variant_name::backup")
      expect(fallback.choices[0].message.content).toBe(dummyText)
      const streamed = await gateway.stream(route, { model: "gateway::function_name::fallback", messages: hi, stream: true })
      expect(streamed.status).toBe(200)
      const chunks = streamed.events.slice(0, -1)
      expect(chunks.length).toBeGreaterThan(1)
      for (const chunk of chunks) expect(chunk.model).toBe("gateway::function_name::fallback::variant_name::backup")
    })

    it("gateway::model_name::<model> calls a configured model directly", async () => {
      const body = await ok({ model: "gateway::model_name::up", messages: hi })
      expect(body.model).toBe("gateway::model_name::up")
      expect(body.choices[0].message.content).toBe("Hello from fake OpenAI")
      expect(upstream().model).toBe("gpt-up")
    })

    it("gateway::model_name::<provider_type>::<model> calls a short-hand model", async () => {
      const body = await ok({ model: "gateway::model_name::dummy::json", messages: hi })
      expect(body.model).toBe("gateway::model_name::dummy::json")
      expect(body.choices[0].message.content).toBe("{\"answer\":\"Hello\"}")
      expect(fake.requests).toHaveLength(0)
    })

    it("any other model is a 400 in OpenAI's error shape, naming the accepted forms", async () => {
      for (const model of ["gpt-4o-mini", "gateway::up_chat", "function_name::up_chat", ""]) {
        const message = expectOpenAiError(await chat({ model, messages: hi }), 400, "invalid_request_error")
        expect(message).toContain("gateway::function_name::")
        expect(message).toMatch(/^model: the `model` field must start with/)
      }
      expect(expectOpenAiError(await chat({ messages: hi }), 400)).toBe("model: missing field `model`")
      expect(fake.requests).toHaveLength(0)
    })

    it("a prefix with an empty name is a 400 saying the name cannot be empty, not a 404 for the name \"\"", async () => {
      expect(expectOpenAiError(await chat({ model: "gateway::function_name::", messages: hi }), 400, "invalid_request_error"))
        .toBe("model: the function_name after `gateway::function_name::` cannot be empty")
      expect(expectOpenAiError(await chat({ model: "gateway::model_name::", messages: hi }), 400, "invalid_request_error"))
        .toBe("model: the model_name after `gateway::model_name::` cannot be empty")
      expect(fake.requests).toHaveLength(0)
    })

    it("an unknown function, model or variant is a 404 in OpenAI's error shape", async () => {
      // the field, and TensorZero's words
      expect(expectOpenAiError(await chat({ model: "gateway::function_name::nope", messages: hi }), 404, "not_found_error"))
        .toBe("model: Unknown function: nope")
      // a name that could forge a log line is quoted
      expect(expectOpenAiError(await chat({ model: "gateway::function_name::no\npe", messages: hi }), 404, "not_found_error"))
        .toBe("model: Unknown function: \"no\\npe\"")
      expect(expectOpenAiError(await chat({ model: "gateway::model_name::nope", messages: hi }), 404, "not_found_error"))
        .toContain("nope")
      const variant = await chat({ model: "gateway::function_name::up_chat", messages: hi, "gateway::variant_name": "nope" })
      expect(expectOpenAiError(variant, 404, "not_found_error")).toContain("nope")
    })
  })

  describe("errors on /openai/v1/* are all in OpenAI's shape", () => {
    it("malformed JSON, a body that is not an object, and wrong field types are 400s", async () => {
      expectOpenAiError(await gateway.post(route, "{not json"), 400, "invalid_request_error")
      expectOpenAiError(await gateway.post(route, "[1, 2]"), 400)
      expectOpenAiError(await gateway.post(route, ""), 400)
      expect(expectOpenAiError(await chat({ model: "gateway::function_name::up_chat", messages: "hi" }), 400)).toContain("messages")
      const badRole = await chat({ model: "gateway::function_name::up_chat", messages: [{ role: "robot", content: "x" }] })
      expect(expectOpenAiError(badRole, 400)).toContain("messages[0]")
      const badTemperature = await chat({ model: "gateway::function_name::up_chat", messages: hi, temperature: "hot" })
      expect(expectOpenAiError(badTemperature, 400)).toContain("temperature")
    })

    it("unknown routes are 404s and known paths with another method 405s", async () => {
      expectOpenAiError(await gateway.get("/openai/v1/nope"), 404, "not_found_error")
      expectOpenAiError(await gateway.post("/openai/v1/responses", { model: "x", input: "y" }), 404, "not_found_error")
      expectOpenAiError(await gateway.post("/openai/v1/embeddings", { model: "gateway::embedding_model_name::x", input: "y" }), 404, "not_found_error")
      expectOpenAiError(await gateway.get(route), 405)
      expectOpenAiError(await gateway.post("/openai/v1/models", {}), 405)
      // elsewhere the gateway's own shape stays
      const plain = await gateway.get("/nope")
      expect(plain.status).toBe(404)
      expect(typeof plain.body.error).toBe("string")
    })

    it("a body over the size limit is a 413", async () => {
      const big = "x".repeat(400_000)
      expectOpenAiError(await chat({ model: "gateway::function_name::up_chat", messages: [user(big)] }), 413)
    })

    it("failed providers and failed variants are a 502, a variant's timeout a 408, a missing credential a 400", async () => {
      expect(expectOpenAiError(await chat({ model: "gateway::function_name::failing", messages: hi }), 502, "server_error"))
        .toContain("Error sending request to Dummy provider for model 'error'.")
      expectOpenAiError(await chat({ model: "gateway::function_name::all_fail", messages: hi }), 502, "server_error")
      expectOpenAiError(await chat({ model: "gateway::function_name::slow_variant_timeout", messages: hi }), 408, "timeout_error")
      fake.script.push({ kind: "json", status: 503, body: { error: { message: "overloaded" } } })
      expect(expectOpenAiError(await chat({ model: "gateway::function_name::up_chat", messages: hi }), 502)).toContain("overloaded")
      expect(expectOpenAiError(await chat({ model: "gateway::function_name::up_keyed", messages: hi }), 400))
        .toContain("customer_key")
    })

    it("a failure before a stream starts is an ordinary error response", async () => {
      const response = await gateway.stream(route, { model: "gateway::function_name::failing", messages: hi, stream: true })
      expect(response.status).toBe(502)
      expect(JSON.parse(response.raw).error.message).toContain("Error sending request to Dummy provider for model 'error'.")
    })
  })

  describe("messages", () => {
    it("several system (and developer) messages are joined in order into one system prompt", async () => {
      await ok({
        model: "gateway::function_name::up_chat",
        messages: [
          { role: "system", content: "First." },
          { role: "user", content: "hi", name: "bob" },
          { role: "system", content: [{ type: "text", text: "Second." }, { type: "gateway::raw_text", value: "Third." }] },
          { role: "developer", content: "Fourth." }
        ]
      })
      expect(upstream().messages).toEqual([
        { role: "system", content: "First.\nSecond.\nThird.\nFourth." },
        { role: "user", content: "hi" }
      ])
    })

    it("gateway::arguments in system and user parts render the templates, validated by the schemas", async () => {
      await ok({
        model: "gateway::function_name::up_templated",
        messages: [
          { role: "system", content: [{ type: "text", "gateway::arguments": { assistant_name: "Ada" } }] },
          user([
            { type: "text", "gateway::arguments": { city: "Paris", days: 3 } },
            { type: "gateway::template", name: "greeting", arguments: { who: "Bob" } },
            { type: "gateway::raw_text", value: "Raw {{ not a template }}" }
          ])
        ]
      })
      expect(upstream().messages).toEqual([
        { role: "system", content: "You are Ada, a weather assistant." },
        {
          role: "user",
          content: [
            { type: "text", text: "What is the weather in Paris for the next 3 days?" },
            { type: "text", text: "Greetings, Bob!" },
            { type: "text", text: "Raw {{ not a template }}" }
          ]
        }
      ])
    })

    it("a gateway::template part in a system message carries the system template's arguments, validated by its schema", async () => {
      const system = (part: Record<string, unknown>) => ({ role: "system", content: [part] })
      await ok({
        model: "gateway::function_name::up_templated",
        messages: [
          system({ type: "gateway::template", name: "system", arguments: { assistant_name: "Ada" } }),
          user([{ type: "text", "gateway::arguments": { city: "Oslo", days: 2 } }])
        ]
      })
      expect(upstream().messages[0]).toEqual({ role: "system", content: "You are Ada, a weather assistant." })
      const misfit = await chat({
        model: "gateway::function_name::up_templated",
        messages: [system({ type: "gateway::template", name: "system", arguments: { assistant_name: 7 } })]
      })
      expect(expectOpenAiError(misfit, 400)).toContain("system")
      const otherTemplate = await chat({
        model: "gateway::function_name::up_templated",
        messages: [system({ type: "gateway::template", name: "greeting", arguments: { who: "Bob" } })]
      })
      expect(expectOpenAiError(otherTemplate, 400)).toBe('messages[0].content[0].name: a system message renders the "system" template, not "greeting"')
    })

    it("gateway::arguments in an assistant part renders the assistant template", async () => {
      const body = await ok({
        model: "gateway::function_name::templated",
        messages: [
          { role: "system", content: [{ type: "text", "gateway::arguments": { assistant_name: "Ada" } }] },
          user([{ type: "text", "gateway::arguments": { city: "Lima", days: 1 } }]),
          { role: "assistant", content: [{ type: "text", "gateway::arguments": { note: "sunny" } }] },
          user([{ type: "gateway::raw_text", value: "And tomorrow?" }])
        ]
      })
      expect(JSON.parse(body.choices[0].message.content)).toEqual({
        system: "You are Ada, a weather assistant.",
        messages: [
          { role: "user", content: [{ type: "text", text: "What is the weather in Lima for the next 1 days?" }] },
          { role: "assistant", content: [{ type: "text", text: "Noted: sunny" }] },
          { role: "user", content: [{ type: "text", text: "And tomorrow?" }] }
        ]
      })
    })

    it("arguments that do not fit a schema, and plain text for a role with a schema, are 400s naming the field", async () => {
      const system = [{ role: "system", content: [{ type: "text", "gateway::arguments": { assistant_name: "Ada" } }] }]
      const badArguments = await chat({
        model: "gateway::function_name::up_templated",
        messages: [...system, user([{ type: "text", "gateway::arguments": { city: 7, days: 3 } }])]
      })
      // TensorZero's words beside the field, which its clients' tests match on
      expect(expectOpenAiError(badArguments, 400)).toMatch(/messages\[0\]\.content\[0\].*JSON Schema validation failed/)
      const text = await chat({ model: "gateway::function_name::up_templated", messages: [...system, user("plain")] })
      expect(expectOpenAiError(text, 400)).toMatch(/user schema.*JSON Schema validation failed/)
      const textSystem = await chat({ model: "gateway::function_name::up_templated", messages: [{ role: "system", content: "plain" }] })
      expect(expectOpenAiError(textSystem, 400)).toMatch(/system.*JSON Schema validation failed/)
      const imageSystem = await chat({
        model: "gateway::function_name::up_chat",
        messages: [{ role: "system", content: [{ type: "image_url", image_url: { url: "https://example.com/a.png" } }] }, user("x")]
      })
      expect(expectOpenAiError(imageSystem, 400)).toBe(
        "messages[0].content[0]: System message must contain only text or template content blocks (text, gateway::raw_text and gateway::template parts), not image_url"
      )
      const both = await chat({
        model: "gateway::function_name::up_templated",
        messages: [...system, { role: "system", content: "and text" }, user("x")]
      })
      expectOpenAiError(both, 400)
      const neither = await chat({ model: "gateway::function_name::up_chat", messages: [user([{ type: "text" }])] })
      expect(expectOpenAiError(neither, 400)).toContain("messages[0].content[0]")
      const noToolCallId = await chat({ model: "gateway::function_name::up_chat", messages: [user("x"), { role: "tool", content: "r" }] })
      expect(expectOpenAiError(noToolCallId, 400)).toContain("messages[1]")
      const noContent = await chat({ model: "gateway::function_name::up_chat", messages: [{ role: "user" }] })
      expect(expectOpenAiError(noContent, 400)).toContain("messages[0]")
      expect(fake.requests).toHaveLength(0)
    })

    it("assistant tool_calls and tool messages reach the upstream as tool calls and role tool results", async () => {
      await ok({
        model: "gateway::function_name::up_tools",
        messages: [
          user("Weather in Paris and Rome?"),
          {
            role: "assistant",
            content: null,
            tool_calls: [
              { id: "call_1", type: "function", function: { name: "lookup", arguments: "{\"query\":\"Paris\"}" } },
              { id: "call_2", type: "function", function: { name: "lookup", arguments: "{\"query\": \"Rome\"}" } }
            ]
          },
          { role: "tool", tool_call_id: "call_1", content: "sunny" },
          { role: "tool", tool_call_id: "call_2", content: [{ type: "text", text: "rain" }, { type: "text", text: "y" }] },
          user("Thanks")
        ]
      })
      expect(upstream().messages).toEqual([
        { role: "user", content: "Weather in Paris and Rome?" },
        {
          role: "assistant",
          content: null,
          tool_calls: [
            { id: "call_1", type: "function", function: { name: "lookup", arguments: "{\"query\":\"Paris\"}" } },
            { id: "call_2", type: "function", function: { name: "lookup", arguments: "{\"query\": \"Rome\"}" } }
          ]
        },
        { role: "tool", tool_call_id: "call_1", content: "sunny" },
        { role: "tool", tool_call_id: "call_2", content: "rainy" },
        { role: "user", content: "Thanks" }
      ])
    })

    it("gateway_extra_content goes back at its insert_index, or first without one", async () => {
      const assistant = {
        role: "assistant",
        content: "Answer",
        tool_calls: [{ id: "c1", type: "function", function: { name: "f", arguments: "{\"a\":1}" } }],
        gateway_extra_content: [
          { type: "unknown", data: { kind: "opaque" }, insert_index: 2 },
          { type: "thought", text: "Thinking", signature: "sig", insert_index: 0 }
        ]
      }
      const placed = await echoed([user("hi"), assistant])
      expect(placed.messages[1]).toEqual({
        role: "assistant",
        content: [
          { type: "thought", text: "Thinking", signature: "sig" },
          { type: "text", text: "Answer" },
          { type: "unknown", data: { kind: "opaque" } },
          { type: "tool_call", id: "c1", name: "f", arguments: "{\"a\":1}" }
        ]
      })
      const prepended = await echoed([user("hi"), { role: "assistant", content: "Answer", gateway_extra_content: [{ type: "thought", text: "T" }] }])
      expect(prepended.messages[1].content).toEqual([{ type: "thought", text: "T" }, { type: "text", text: "Answer" }])
    })

    it("a reasoning answer sent back as it came returns its thought to the same place", async () => {
      const first = await ok({ model: "gateway::function_name::reasoning", messages: hi })
      const message = first.choices[0].message
      expect(message.gateway_extra_content).toEqual([
        { type: "thought", insert_index: 0, text: "hmmm" }
      ])
      const back = await echoed([user("hi"), message, user("again")])
      expect(back.messages[1].content).toEqual([
        { type: "thought", text: "hmmm" },
        { type: "text", text: tensorZeroText }
      ])
    })

    it("unknown extra content reaches the upstream as a content part, only for the provider it names", async () => {
      const part = { type: "text", text: "from an unknown block" }
      const send = (scope: Record<string, string>) =>
        ok({
          model: "gateway::function_name::up_chat",
          messages: [user("hi"), {
            role: "assistant",
            content: "Answer",
            gateway_extra_content: [{ type: "unknown", data: part, insert_index: 1, ...scope }, { type: "thought", text: "dropped", insert_index: 0 }]
          }]
        })
      // the thought (index 0) is not sent to OpenAI; the unknown block keeps its place before the text
      await send({})
      expect(upstream().messages[1]).toEqual({ role: "assistant", content: [part, { type: "text", text: "Answer" }] })
      await send({ model_name: "up", provider_name: "a" })
      expect(upstream().messages[1]).toEqual({ role: "assistant", content: [part, { type: "text", text: "Answer" }] })
      await send({ model_name: "up", provider_name: "other" })
      expect(upstream().messages[1]).toEqual({ role: "assistant", content: "Answer" })
    })

    it("image_url parts (remote URL and data URL, with detail), input_audio and file parts reach the upstream", async () => {
      const png = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]).toString("base64")
      const wav = Buffer.from("RIFF\u0000\u0000\u0000\u0000WAVEfmt ", "latin1").toString("base64")
      const pdf = Buffer.from("%PDF-1.4").toString("base64")
      await ok({
        model: "gateway::function_name::up_chat",
        messages: [user([
          { type: "text", text: "Look" },
          { type: "image_url", image_url: { url: "https://example.com/cat.png", detail: "low" } },
          { type: "image_url", image_url: { url: `data:image/png;base64,${png}` } },
          { type: "image_url", image_url: { url: `data:image/png;base64,${png}`, detail: "high" } },
          { type: "input_audio", input_audio: { data: wav, format: "wav" } },
          { type: "file", file: { file_data: `data:application/pdf;base64,${pdf}`, filename: "a.pdf" } }
        ])]
      })
      const content = upstream().messages[0].content
      expect(content.slice(0, 5)).toEqual([
        { type: "text", text: "Look" },
        { type: "image_url", image_url: { url: "https://example.com/cat.png", detail: "low" } },
        { type: "image_url", image_url: { url: `data:image/png;base64,${png}` } },
        { type: "image_url", image_url: { url: `data:image/png;base64,${png}`, detail: "high" } },
        { type: "input_audio", input_audio: { data: wav, format: "wav" } }
      ])
      expect(content[5].type).toBe("file")
      expect(content[5].file.file_data).toBe(`data:application/pdf;base64,${pdf}`)
    })

    it("input_audio whose bytes say another format than declared only logs a warning", async () => {
      const wav = Buffer.from("RIFF\u0000\u0000\u0000\u0000WAVEfmt ", "latin1").toString("base64")
      await ok({ model: "gateway::function_name::up_chat", messages: [user([{ type: "input_audio", input_audio: { data: wav, format: "mp3" } }])] })
      expect(upstream().messages[0].content).toEqual([{ type: "input_audio", input_audio: { data: wav, format: "mp3" } }])
      await poll("the warning in the log", async () => (/looks like wav, not "mp3"/.test(gateway.log()) ? true : undefined))
    })

    it("an unknown content part type is a 400 naming the part", async () => {
      const response = await chat({ model: "gateway::function_name::up_chat", messages: [user([{ type: "video", url: "x" }])] })
      expect(expectOpenAiError(response, 400)).toContain("messages[0]")
    })
  })

  describe("parameters", () => {
    it("sampling parameters reach the upstream; the smaller of max_tokens and max_completion_tokens wins", async () => {
      await ok({
        model: "gateway::function_name::up_chat",
        messages: hi,
        temperature: 0.25,
        top_p: 0.5,
        frequency_penalty: 0.125,
        presence_penalty: -0.5,
        seed: 1234,
        max_tokens: 100,
        max_completion_tokens: 40,
        stop: ["END", "STOP"]
      })
      const body = upstream()
      expect(body).toMatchObject({
        temperature: 0.25,
        top_p: 0.5,
        frequency_penalty: 0.125,
        presence_penalty: -0.5,
        seed: 1234,
        max_completion_tokens: 40,
        stop: ["END", "STOP"]
      })
      await ok({ model: "gateway::function_name::up_chat", messages: hi, max_tokens: 30, max_completion_tokens: 90 })
      expect(upstream().max_completion_tokens).toBe(30)
      await ok({ model: "gateway::function_name::up_chat", messages: hi, max_completion_tokens: 77 })
      expect(upstream().max_completion_tokens).toBe(77)
      await ok({ model: "gateway::function_name::up_chat", messages: hi, max_tokens: 66 })
      expect(upstream().max_completion_tokens).toBe(66)
    })

    it("stop as a string, and stop_sequences", async () => {
      await ok({ model: "gateway::function_name::up_chat", messages: hi, stop: "END" })
      expect(upstream().stop).toEqual(["END"])
      await ok({ model: "gateway::function_name::up_chat", messages: hi, stop_sequences: ["A", "B"] })
      expect(upstream().stop).toEqual(["A", "B"])
    })

    it("null parameters are ignored, and top-level parameters override the variant's", async () => {
      await ok({ model: "gateway::function_name::up_chat", messages: hi, temperature: null, seed: null, stop: null, tools: null })
      expect(upstream()).toEqual({ model: "gpt-up", messages: [{ role: "user", content: "hi" }] })
      await ok({ model: "gateway::function_name::up_chat", messages: hi, "gateway::variant_name": "tuned" })
      expect(upstream()).toMatchObject({ temperature: 0.9, max_completion_tokens: 64 })
      await ok({ model: "gateway::function_name::up_chat", messages: hi, "gateway::variant_name": "tuned", temperature: 0.1 })
      expect(upstream()).toMatchObject({ temperature: 0.1, max_completion_tokens: 64 })
    })

    it("gateway::params wins over top-level fields and over response_format", async () => {
      await ok({
        model: "gateway::function_name::up_chat",
        messages: hi,
        temperature: 0.1,
        max_tokens: 10,
        "gateway::params": { chat_completion: { temperature: 0.7, max_tokens: 20, reasoning_effort: "low" } }
      })
      expect(upstream()).toMatchObject({ temperature: 0.7, max_completion_tokens: 20, reasoning_effort: "low" })
      await ok({
        model: "gateway::function_name::up_chat",
        messages: hi,
        response_format: { type: "json_object" },
        "gateway::params": { chat_completion: { json_mode: "off" } }
      })
      expect(upstream()).not.toHaveProperty("response_format")
      fake.script.push({ kind: "json", body: textCompletion("{\"answer\":\"x\"}") })
      await ok({
        model: "gateway::function_name::up_json",
        messages: hi,
        response_format: { type: "json_schema", json_schema: { name: "city", schema: cityAnswerSchema } },
        "gateway::params": { chat_completion: { json_mode: "on" } }
      })
      expect(upstream().response_format).toEqual({ type: "json_object" })
    })

    it("response_format text asks nothing; json_object and json_schema reach the upstream on a chat function", async () => {
      await ok({ model: "gateway::function_name::up_chat", messages: hi, response_format: { type: "text" } })
      expect(upstream()).not.toHaveProperty("response_format")
      await ok({ model: "gateway::function_name::up_chat", messages: hi, response_format: { type: "json_object" } })
      expect(upstream().response_format).toEqual({ type: "json_object" })
      const body = await ok({
        model: "gateway::function_name::up_chat",
        messages: hi,
        response_format: { type: "json_schema", json_schema: { name: "city", schema: cityAnswerSchema, strict: true } }
      })
      expect(upstream().response_format).toEqual({
        type: "json_schema",
        json_schema: { name: "response", strict: true, schema: cityAnswerSchema }
      })
      // a chat function's answer is not checked against it
      expect(body.choices[0].message.content).toBe("Hello from fake OpenAI")
    })

    it("response_format json_schema sets a json function's output schema, and the content is the raw JSON text", async () => {
      fake.script.push({ kind: "json", body: textCompletion("{\"city\": \"Paris\"}") })
      const body = await ok({
        model: "gateway::function_name::up_json_free",
        messages: hi,
        response_format: { type: "json_schema", json_schema: { name: "city", schema: cityAnswerSchema } }
      })
      expect(upstream().response_format).toEqual({
        type: "json_schema",
        json_schema: { name: "response", strict: true, schema: cityAnswerSchema }
      })
      expect(body.choices[0].message).toEqual({ role: "assistant", content: "{\"city\": \"Paris\"}" })
      // the request's schema replaces the function's own
      fake.script.push({ kind: "json", body: textCompletion("{\"city\": \"Rome\"}") })
      await ok({
        model: "gateway::function_name::up_json",
        messages: hi,
        response_format: { type: "json_schema", json_schema: { name: "city", schema: cityAnswerSchema } }
      })
      expect(upstream().response_format.json_schema.schema).toEqual(cityAnswerSchema)
      // output that is not JSON or does not fit still answers, as the raw text
      fake.script.push({ kind: "json", body: textCompletion("not JSON at all") })
      const invalid = await ok({
        model: "gateway::function_name::up_json",
        messages: hi,
        response_format: { type: "json_schema", json_schema: { name: "city", schema: cityAnswerSchema } }
      })
      expect(invalid.choices[0].message.content).toBe("not JSON at all")
      // without response_format the function's schema applies
      fake.script.push({ kind: "json", body: textCompletion("{\"answer\": \"yes\"}") })
      await ok({ model: "gateway::function_name::up_json", messages: hi })
      expect(upstream().response_format.json_schema.schema).toEqual(JSON.parse(dummyConfigFiles["schemas/answer.json"]))
    })

    it("an invalid response_format is a 400", async () => {
      const response = await chat({ model: "gateway::function_name::up_chat", messages: hi, response_format: { type: "xml" } })
      expect(expectOpenAiError(response, 400)).toContain("response_format")
    })

    it("function tools and custom tools (text and grammar formats) reach the upstream", async () => {
      const grammar = { type: "grammar", grammar: { syntax: "lark", definition: "start: \"yes\" | \"no\"" } }
      await ok({
        model: "gateway::function_name::up_chat",
        messages: hi,
        tools: [
          {
            type: "function",
            function: { name: "get_time", description: "The time", parameters: { type: "object", properties: { tz: { type: "string" } } }, strict: true }
          },
          { type: "function", function: { name: "no_params" } },
          { type: "custom", custom: { name: "free_text", description: "Anything", format: { type: "text" } } },
          { type: "custom", custom: { name: "yes_no", format: grammar } },
          { type: "custom", custom: { name: "regexp", format: { type: "grammar", grammar: { syntax: "regex", definition: "\\d+" } } } }
        ],
        parallel_tool_calls: false
      })
      const body = upstream()
      expect(body.tools).toEqual([
        {
          type: "function",
          function: { name: "get_time", description: "The time", parameters: { type: "object", properties: { tz: { type: "string" } } }, strict: true }
        },
        { type: "function", function: { name: "no_params", description: "", parameters: { type: "object", properties: {} } } },
        { type: "custom", custom: { name: "free_text", description: "Anything", format: { type: "text" } } },
        { type: "custom", custom: { name: "yes_no", format: grammar } },
        { type: "custom", custom: { name: "regexp", format: { type: "grammar", grammar: { syntax: "regex", definition: "\\d+" } } } }
      ])
      expect(body.tool_choice).toBe("auto")
      expect(body.parallel_tool_calls).toBe(false)
    })

    it("request tools add to the function's configured tools", async () => {
      await ok({
        model: "gateway::function_name::up_tools",
        messages: hi,
        tools: [{ type: "function", function: { name: "extra", parameters: { type: "object" } } }],
        parallel_tool_calls: true
      })
      expect(upstream().tools.map((tool: any) => tool.function.name)).toEqual(["lookup", "extra"])
      expect(upstream().parallel_tool_calls).toBe(true)
      const duplicate = await chat({
        model: "gateway::function_name::up_tools",
        messages: hi,
        tools: [{ type: "function", function: { name: "lookup", parameters: { type: "object" } } }]
      })
      expectOpenAiError(duplicate, 400)
    })

    it("tool_choice in all its forms", async () => {
      const tools = [
        { type: "function", function: { name: "a", parameters: { type: "object" } } },
        { type: "function", function: { name: "b", parameters: { type: "object" } } },
        { type: "custom", custom: { name: "c" } }
      ]
      const choose = async (tool_choice: unknown) => {
        await ok({ model: "gateway::function_name::up_chat", messages: hi, tools, tool_choice })
        return upstream().tool_choice
      }
      expect(await choose("none")).toBe("none")
      expect(await choose("auto")).toBe("auto")
      expect(await choose("required")).toBe("required")
      expect(await choose({ type: "function", function: { name: "b" } })).toEqual({ type: "function", function: { name: "b" } })
      expect(await choose({ type: "custom", custom: { name: "c" } })).toEqual({ type: "custom", custom: { name: "c" } })
      expect(await choose({
        type: "allowed_tools",
        allowed_tools: { mode: "required", tools: [{ type: "function", function: { name: "a" } }, { type: "custom", custom: { name: "c" } }] }
      })).toEqual({
        type: "allowed_tools",
        allowed_tools: { mode: "required", tools: [{ type: "function", function: { name: "a" } }, { type: "custom", custom: { name: "c" } }] }
      })
      // every tool is still offered with allowed_tools
      expect(upstream().tools).toHaveLength(3)
      expect(await choose({ type: "allowed_tools", allowed_tools: { mode: "auto", tools: [{ type: "function", function: { name: "b" } }] } }))
        .toEqual({ type: "allowed_tools", allowed_tools: { mode: "auto", tools: [{ type: "function", function: { name: "b" } }] } })
      const unknown = await chat({ model: "gateway::function_name::up_chat", messages: hi, tools, tool_choice: { type: "function", function: { name: "zzz" } } })
      expect(expectOpenAiError(unknown, 400)).toContain("zzz")
      const noTools = await chat({ model: "gateway::function_name::up_chat", messages: hi, tool_choice: "required" })
      expect(expectOpenAiError(noTools, 400)).toContain("tool_choice")
    })

    it("the dummy tool model calls the forced tool", async () => {
      const body = await ok({
        model: "gateway::model_name::dummy::offered_tool",
        messages: hi,
        tools: [
          { type: "function", function: { name: "a", parameters: { type: "object" } } },
          { type: "function", function: { name: "b", parameters: { type: "object" } } }
        ],
        tool_choice: { type: "function", function: { name: "b" } }
      })
      expect(body.choices[0].message.tool_calls[0].function).toEqual({ name: "b", arguments: dummyToolArguments })
    })

    it("tools on a json function are a 400", async () => {
      const response = await chat({
        model: "gateway::function_name::up_json",
        messages: hi,
        tools: [{ type: "function", function: { name: "a", parameters: { type: "object" } } }]
      })
      expect(expectOpenAiError(response, 400)).toContain("json functions")
    })

    it("n: only 1 choice; anything else is a clear 400", async () => {
      await ok({ model: "gateway::function_name::up_chat", messages: hi, n: 1 })
      const response = await chat({ model: "gateway::function_name::up_chat", messages: hi, n: 2 })
      expect(expectOpenAiError(response, 400, "invalid_request_error")).toMatch(/\bn\b.*1/)
      expect(fake.requests).toHaveLength(1)
    })
  })

  describe("gateway:: fields", () => {
    it("variant_name pins a variant that would never be sampled", async () => {
      await ok({ model: "gateway::function_name::up_chat", messages: hi })
      expect(upstream()).not.toHaveProperty("temperature")
      await ok({ model: "gateway::function_name::up_chat", messages: hi, "gateway::variant_name": "tuned" })
      expect(upstream().temperature).toBe(0.9)
    })

    it("episode_id continues an episode; an id the gateway did not issue is a 400", async () => {
      const first = await ok({ model: "gateway::function_name::chat", messages: hi })
      const second = await ok({ model: "gateway::function_name::chat", messages: hi, "gateway::episode_id": first.episode_id })
      expect(second.episode_id).toBe(first.episode_id)
      expect(second.id).not.toBe(first.id)
      const bad = await chat({ model: "gateway::function_name::chat", messages: hi, "gateway::episode_id": "not-an-id" })
      expect(expectOpenAiError(bad, 400)).toContain("episode_id")
    })

    it("unknown root fields are ignored, or a 400 listing them with deny_unknown_fields", async () => {
      const body = { model: "gateway::function_name::up_chat", messages: hi, frobnicate: 1, "gateway::tagz": {}, user: "u-1" }
      await ok(body)
      expect(upstream()).not.toHaveProperty("frobnicate")
      await poll("the warning about ignored fields", async () => (/ignoring unknown fields.*frobnicate/.test(gateway.log()) ? true : undefined))
      const count = fake.requests.length
      const denied = await chat({ ...body, "gateway::deny_unknown_fields": true })
      const message = expectOpenAiError(denied, 400, "invalid_request_error")
      expect(message).toContain("frobnicate")
      expect(message).toContain("gateway::tagz")
      expect(message).toContain("user")
      expect(fake.requests).toHaveLength(count)
      // known fields, gateway::extra_body included, pass
      await ok({
        model: "gateway::function_name::up_chat",
        messages: hi,
        "gateway::deny_unknown_fields": true,
        "gateway::extra_body": [{ pointer: "/anything", value: 1 }]
      })
      expect(upstream().anything).toBe(1)
      await ok({ model: "gateway::function_name::up_chat", messages: hi, "gateway::deny_unknown_fields": false, frobnicate: 1 })
    })

    it("credentials supply a dynamic:: API key", async () => {
      await ok({ model: "gateway::function_name::up_keyed", messages: hi, "gateway::credentials": { customer_key: "sk-customer" } })
      expect(fake.requests[0].headers.authorization).toBe("Bearer sk-customer")
      expect(upstream().model).toBe("gpt-keyed")
    })

    it("extra_body and extra_headers edit the upstream request", async () => {
      await ok({
        model: "gateway::function_name::up_chat",
        messages: hi,
        temperature: 0.3,
        "gateway::extra_body": [
          { pointer: "/logprobs", value: true },
          { pointer: "/temperature", delete: true },
          { pointer: "/metadata/team", value: "red", model_name: "up", provider_name: "a" },
          { pointer: "/never", value: 1, variant_name: "tuned" }
        ],
        "gateway::extra_headers": [{ name: "x-team", value: "red" }, { name: "x-never", value: "1", model_name: "other" }]
      })
      const received = fake.requests[0]
      expect(received.body.logprobs).toBe(true)
      expect(received.body).not.toHaveProperty("temperature")
      expect(received.body.metadata).toEqual({ team: "red" })
      expect(received.body).not.toHaveProperty("never")
      expect(received.headers["x-team"]).toBe("red")
      expect(received.headers).not.toHaveProperty("x-never")
      const bad = await chat({ model: "gateway::function_name::up_chat", messages: hi, "gateway::extra_body": [{ pointer: "no-slash", value: 1 }] })
      expect(expectOpenAiError(bad, 400)).toContain("pointer")
    })

    it("include_raw_response adds gateway_raw_response with the upstream's body and its API", async () => {
      const body = await ok({ model: "gateway::function_name::up_chat", messages: hi, "gateway::include_raw_response": true })
      expect(body.gateway_raw_response).toHaveLength(1)
      const raw = body.gateway_raw_response[0]
      expect(raw.model_inference_id).toMatch(uuidV7Pattern)
      expect(raw).toMatchObject({ provider_type: "openai", api_type: "chat_completions" })
      expect(JSON.parse(raw.data)).toEqual(textCompletion("Hello from fake OpenAI"))
    })

    it("include_raw_usage adds gateway_raw_usage with the upstream's usage, beside usage as TensorZero puts it", async () => {
      const body = await ok({ model: "gateway::function_name::up_chat", messages: hi, "gateway::include_raw_usage": true })
      expect(body.usage).toEqual({ prompt_tokens: 12, completion_tokens: 7, total_tokens: 19, gateway_cost: null })
      expect(body.gateway_raw_usage).toHaveLength(1)
      const raw = body.gateway_raw_usage[0]
      expect(raw.model_inference_id).toMatch(uuidV7Pattern)
      expect(raw).toMatchObject({ provider_type: "openai", api_type: "chat_completions", data: { prompt_tokens: 12, completion_tokens: 7, total_tokens: 19 } })
      expect(body).not.toHaveProperty("gateway_raw_response")
    })

    it("provider_tools reach the providers their scope names", async () => {
      const search = { type: "web_search", search_context_size: "low" }
      await ok({ model: "gateway::function_name::up_chat", messages: hi, "gateway::provider_tools": [{ tool: search }] })
      expect(upstream().tools).toEqual([search])
      await ok({
        model: "gateway::function_name::up_chat",
        messages: hi,
        "gateway::provider_tools": [{ scope: { model_name: "up", provider_name: "a" }, tool: search }]
      })
      expect(upstream().tools).toEqual([search])
      await ok({
        model: "gateway::function_name::up_chat",
        messages: hi,
        "gateway::provider_tools": [{ scope: { model_name: "other" }, tool: search }, { scope: { model_name: "up", provider_name: "b" }, tool: search }]
      })
      expect(upstream()).not.toHaveProperty("tools")
    })

    it("gateway-otlp-traces-extra-* request headers are accepted", async () => {
      await ok({ model: "gateway::function_name::up_chat", messages: hi }, {
        "gateway-otlp-traces-extra-header-x-tenant": "acme",
        "gateway-otlp-traces-extra-attribute-team": "red",
        "gateway-otlp-traces-extra-resource-region": "eu"
      })
      // they are for trace export, not for the provider
      expect(Object.keys(fake.requests[0].headers).filter((name) => name.startsWith("gateway-"))).toEqual([])
    })

    it("malformed gateway:: fields are 400s naming them", async () => {
      for (const [field, value] of [
        ["gateway::tags", { n: 1 }],
        ["gateway::dryrun", "yes"],
        ["gateway::cache_options", { enabled: "sometimes" }],
        ["gateway::params", { chat_completion: { temperature: "hot" } }]
      ] as const) {
        const response = await chat({ model: "gateway::function_name::up_chat", messages: hi, [field]: value })
        expect(expectOpenAiError(response, 400)).toContain(field)
      }
    })
  })

  describe("answers", () => {
    it("tool calls come back with JSON-string arguments and finish_reason tool_calls", async () => {
      const body = await ok({ model: "gateway::function_name::weather", messages: hi })
      expect(body.choices[0].finish_reason).toBe("tool_calls")
      expect(body.choices[0].message).toEqual({
        role: "assistant",
        content: null,
        tool_calls: [{ id: "0", type: "function", function: { name: "get_temperature", arguments: dummyToolArguments } }]
      })
      expect(JSON.parse(body.choices[0].message.tool_calls[0].function.arguments)).toEqual({ location: "Brooklyn", units: "celsius" })
    })

    it("the upstream's text, tool calls (function and custom), reasoning and finish reasons come through", async () => {
      fake.script.push({
        kind: "json",
        body: completion({
          content: "Let me check.",
          reasoning_content: "Thinking it over",
          tool_calls: [
            { id: "call_a", type: "function", function: { name: "lookup", arguments: "{\"query\":\"x\"}" } },
            { id: "call_b", type: "custom", custom: { name: "free_text", input: "raw input" } }
          ]
        }, { finishReason: "tool_calls" })
      })
      const body = await ok({
        model: "gateway::function_name::up_tools",
        messages: hi,
        tools: [{ type: "custom", custom: { name: "free_text" } }]
      })
      expect(body.choices[0].finish_reason).toBe("tool_calls")
      expect(body.choices[0].message).toEqual({
        role: "assistant",
        content: "Let me check.",
        tool_calls: [
          { id: "call_a", type: "function", function: { name: "lookup", arguments: "{\"query\":\"x\"}" } },
          { id: "call_b", type: "custom", custom: { name: "free_text", input: "raw input" } }
        ],
        gateway_extra_content: [{ type: "thought", insert_index: 0, text: "Thinking it over" }]
      })
      for (const [upstreamReason, reason] of [["length", "length"], ["content_filter", "content_filter"], ["stop", "stop"]]) {
        fake.script.push({ kind: "json", body: completion({ content: "cut" }, { finishReason: upstreamReason }) })
        expect((await ok({ model: "gateway::function_name::up_chat", messages: hi })).choices[0].finish_reason).toBe(reason)
      }
    })

    it("a tool call with an invalid name or arguments still comes back as generated", async () => {
      const body = await ok({ model: "gateway::function_name::weather", messages: hi, "gateway::variant_name": "invalid_tool_arguments" })
      expect(body.choices[0].message.tool_calls[0].function).toEqual({ name: "get_temperature", arguments: "Not valid 'JSON'" })
    })

    it("json functions answer the raw JSON text as content", async () => {
      const body = await ok({ model: "gateway::function_name::extract", messages: hi })
      expect(body.choices[0].message).toEqual({ role: "assistant", content: "{\"answer\":\"Hello\"}" })
      expect(body.choices[0].finish_reason).toBe("stop")
      // json_mode tool: the tool call's arguments are the content
      const tool = await ok({ model: "gateway::function_name::extract", messages: hi, "gateway::variant_name": "as_tool" })
      expect(tool.choices[0].message).toEqual({ role: "assistant", content: "{\"answer\":\"Hello\"}" })
    })

    it("json_mode tool with a json_schema response_format on a chat function forces a tool built from the schema and answers its arguments as text, whole or streamed", async () => {
      const request = {
        model: "gateway::function_name::up_tools",
        messages: hi,
        response_format: { type: "json_schema", json_schema: { name: "city", schema: cityAnswerSchema, strict: true } },
        "gateway::params": { chat_completion: { json_mode: "tool" } }
      }
      const args = "{\"city\":\"Oslo\"}"
      fake.script.push({
        kind: "json",
        body: completion({ content: null, tool_calls: [{ id: "call_r", type: "function", function: { name: "respond", arguments: args } }] }, { finishReason: "tool_calls" })
      })
      const body = await ok(request)
      expect(body.choices[0].message).toEqual({ role: "assistant", content: args })
      // no tool call is answered: the answer is text
      expect(body.choices[0].finish_reason).toBe("stop")
      // the function's own tools give way to the respond tool, forced, with the schema as its parameters
      expect(upstream().tools).toEqual([{ type: "function", function: expect.objectContaining({ name: "respond", parameters: cityAnswerSchema }) }])
      expect(upstream().tool_choice).toEqual({ type: "function", function: { name: "respond" } })
      expect(upstream()).not.toHaveProperty("response_format")

      fake.script.push({
        kind: "stream",
        chunks: [
          chunkOf({ role: "assistant", content: null }),
          chunkOf({ tool_calls: [{ index: 0, id: "call_r", type: "function", function: { name: "respond", arguments: "" } }] }),
          chunkOf({ tool_calls: [{ index: 0, function: { arguments: "{\"city\":" } }] }),
          chunkOf({ tool_calls: [{ index: 0, function: { arguments: "\"Oslo\"}" } }] }),
          chunkOf({}, "tool_calls"),
          usageChunk
        ]
      })
      const { events } = await gateway.stream(route, { ...request, stream: true })
      const chunks = events.slice(0, -1)
      expect(events.at(-1)).toBe("[DONE]")
      expect(chunks.some((chunk: any) => chunk.choices[0].delta.tool_calls !== undefined)).toBe(false)
      expect(chunks.map((chunk: any) => chunk.choices[0].delta.content ?? "").join("")).toBe(args)
      expect(chunks.at(-1).choices[0].finish_reason).toBe("stop")
    })
  })

  describe("streaming", () => {
    const stream = (body: Record<string, unknown>) => gateway.stream(route, { stream: true, ...body })
    const choiceChunks = (events: ReadonlyArray<any>) => events.filter((event) => event !== "[DONE]" && event.choices?.length > 0)

    it("streams chat.completion.chunk events as OpenAI does: role first, finish_reason last, then [DONE]", async () => {
      const response = await stream({ model: "gateway::function_name::chat", messages: hi })
      expect(response.status).toBe(200)
      expect(response.headers.get("content-type")).toContain("text/event-stream")
      const { events } = response
      expect(events.at(-1)).toBe("[DONE]")
      expect(response.raw.endsWith("data: [DONE]\n\n")).toBe(true)
      const chunks = events.slice(0, -1)
      expect(chunks.length).toBeGreaterThan(3)
      const id = chunks[0].id
      expect(id).toMatch(uuidV7Pattern)
      for (const chunk of chunks) {
        expect(chunk).toMatchObject({ id, object: "chat.completion.chunk", model: "gateway::function_name::chat::variant_name::text", created: chunks[0].created })
        expect(chunk.episode_id).toBe(chunks[0].episode_id)
        expect(chunk.choices).toHaveLength(1)
        expect(chunk.choices[0].index).toBe(0)
        // OpenAI's "object or null": every chunk carries usage, null without include_usage
        expect(chunk.usage).toBeNull()
      }
      expect(chunks[0].choices[0].delta.role).toBe("assistant")
      expect(chunks.slice(1).every((chunk: any) => !("role" in chunk.choices[0].delta))).toBe(true)
      expect(chunks.slice(0, -1).every((chunk: any) => chunk.choices[0].finish_reason === null)).toBe(true)
      expect(chunks.at(-1).choices[0]).toEqual({ index: 0, delta: {}, finish_reason: "stop", logprobs: null })
      expect(chunks.map((chunk: any) => chunk.choices[0].delta.content ?? "").join("")).toBe(dummyText)
    })

    it("with include_usage the last chunk carries the finish reason and the usage; no chunk has empty choices", async () => {
      const withUsage = await stream({ model: "gateway::function_name::chat", messages: hi, stream_options: { include_usage: true } })
      const events = withUsage.events
      expect(events.at(-1)).toBe("[DONE]")
      const last = events.at(-2)
      expect(last.choices).toEqual([{ index: 0, delta: {}, finish_reason: "stop", logprobs: null }])
      expect(last.usage).toEqual({ prompt_tokens: 10, completion_tokens: 10, total_tokens: 20, gateway_cost: null })
      expect(last.id).toBe(events[0].id)
      expect(events.slice(0, -2).every((event: any) => event.usage === null && event.choices.length === 1)).toBe(true)
      const without = await stream({ model: "gateway::function_name::chat", messages: hi, stream_options: { include_usage: false } })
      expect(without.events.at(-2).choices[0].finish_reason).toBe("stop")
      expect(without.events.slice(0, -1).every((event: any) => event.usage === null)).toBe(true)
    })

    it("tool calls stream with index, id and function.name first, then argument fragments", async () => {
      const { events } = await stream({ model: "gateway::function_name::weather", messages: hi })
      const chunks = choiceChunks(events)
      const calls = chunks.flatMap((chunk: any) => chunk.choices[0].delta.tool_calls ?? [])
      expect(calls.length).toBeGreaterThan(1)
      expect(calls[0]).toMatchObject({ index: 0, id: "0", type: "function", function: { name: "get_temperature" } })
      for (const later of calls.slice(1)) {
        expect(later.index).toBe(0)
        // every delta says its type; the id and the name come once
        expect(later.type).toBe("function")
        expect(later).not.toHaveProperty("id")
        expect(later.function).not.toHaveProperty("name")
      }
      expect(calls.map((call: any) => call.function.arguments).join("")).toBe(dummyToolArguments)
      expect(chunks[0].choices[0].delta.role).toBe("assistant")
      expect(chunks.at(-1).choices[0].finish_reason).toBe("tool_calls")
      expect(events.at(-1)).toBe("[DONE]")
    })

    it("several tool calls from the upstream stream with their own index", async () => {
      fake.script.push({
        kind: "stream",
        chunks: [
          chunkOf({ role: "assistant", content: null }),
          chunkOf({ tool_calls: [{ index: 0, id: "call_a", type: "function", function: { name: "lookup", arguments: "" } }] }),
          chunkOf({ tool_calls: [{ index: 0, function: { arguments: "{\"query\":" } }] }),
          chunkOf({ tool_calls: [{ index: 0, function: { arguments: "\"a\"}" } }] }),
          chunkOf({ tool_calls: [{ index: 1, id: "call_b", type: "function", function: { name: "lookup", arguments: "{\"query\"" } }] }),
          chunkOf({ tool_calls: [{ index: 1, function: { arguments: ":\"b\"}" } }] }),
          chunkOf({}, "tool_calls"),
          usageChunk
        ]
      })
      const { events } = await stream({ model: "gateway::function_name::up_tools", messages: hi })
      const calls = choiceChunks(events).flatMap((chunk: any) => chunk.choices[0].delta.tool_calls ?? [])
      const firsts = calls.filter((call: any) => call.id !== undefined)
      expect(firsts).toEqual([
        { index: 0, id: "call_a", type: "function", function: { name: "lookup", arguments: "" } },
        { index: 1, id: "call_b", type: "function", function: { name: "lookup", arguments: "{\"query\"" } }
      ])
      const argumentsOf = (index: number) => calls.filter((call: any) => call.index === index).map((call: any) => call.function.arguments).join("")
      expect(argumentsOf(0)).toBe("{\"query\":\"a\"}")
      expect(argumentsOf(1)).toBe("{\"query\":\"b\"}")
      expect(choiceChunks(events).at(-1).choices[0].finish_reason).toBe("tool_calls")
      expect(upstream().stream).toBe(true)
    })

    it("a custom tool call streams its input in custom.input", async () => {
      fake.script.push({
        kind: "stream",
        chunks: [
          chunkOf({ tool_calls: [{ index: 0, id: "call_c", type: "custom", custom: { name: "free_text", input: "part one" } }] }),
          chunkOf({ tool_calls: [{ index: 0, custom: { input: ", part two" } }] }),
          chunkOf({}, "tool_calls")
        ]
      })
      const { events } = await stream({ model: "gateway::function_name::up_chat", messages: hi, tools: [{ type: "custom", custom: { name: "free_text" } }] })
      const calls = choiceChunks(events).flatMap((chunk: any) => chunk.choices[0].delta.tool_calls ?? [])
      expect(calls).toEqual([
        { index: 0, id: "call_c", type: "custom", custom: { name: "free_text", input: "part one" } },
        { index: 0, type: "custom", custom: { input: ", part two" } }
      ])
    })

    it("json functions stream the raw JSON text as content; the last chunk's delta is content \"\", not {}", async () => {
      const { events } = await stream({ model: "gateway::function_name::extract", messages: hi })
      const chunks = choiceChunks(events)
      // what dummy::json streams, as TensorZero's
      expect(chunks.map((chunk: any) => chunk.choices[0].delta.content ?? "").join("")).toBe("{\"name\":\"John\",\"age\":30}")
      expect(chunks.at(-1).choices[0]).toEqual({ index: 0, delta: { content: "" }, finish_reason: "stop", logprobs: null })
      expect(chunks.every((chunk: any) => typeof chunk.choices[0].delta.content === "string")).toBe(true)
    })

    it("thoughts stream in gateway_extra_content with their insert_index, which puts them back in place for the next turn", async () => {
      fake.script.push({
        kind: "stream",
        chunks: [
          chunkOf({ role: "assistant", content: "" }),
          chunkOf({ reasoning_content: "Thinking" }),
          chunkOf({ reasoning_content: " it over" }),
          chunkOf({ content: "Let me " }),
          chunkOf({ content: "look." }),
          chunkOf({ tool_calls: [{ index: 0, id: "call_a", type: "function", function: { name: "lookup", arguments: "{\"query\":\"x\"}" } }] }),
          chunkOf({}, "tool_calls"),
          usageChunk
        ]
      })
      const { events } = await stream({ model: "gateway::function_name::up_tools", messages: hi })
      const chunks = choiceChunks(events)
      const thought = chunks.flatMap((chunk: any) => chunk.choices[0].delta.gateway_extra_content ?? [])
      expect(thought).toEqual([
        { type: "thought", insert_index: 0, text: "Thinking" },
        { type: "thought", insert_index: 0, text: " it over" }
      ])
      // the same place as the whole answer's gateway_extra_content says
      fake.script.push({
        kind: "json",
        body: completion({
          content: "Let me look.",
          reasoning_content: "Thinking it over",
          tool_calls: [{ id: "call_a", type: "function", function: { name: "lookup", arguments: "{\"query\":\"x\"}" } }]
        }, { finishReason: "tool_calls" })
      })
      const whole = await ok({ model: "gateway::function_name::up_tools", messages: hi })
      expect(whole.choices[0].message.gateway_extra_content).toEqual([{ type: "thought", insert_index: 0, text: "Thinking it over" }])
      // the client's assistant turn, rebuilt from the chunks, goes back with the thought in its place
      const toolCalls = chunks.flatMap((chunk: any) => chunk.choices[0].delta.tool_calls ?? [])
      const placed = await echoed([user("hi"), {
        role: "assistant",
        content: chunks.map((chunk: any) => chunk.choices[0].delta.content ?? "").join(""),
        tool_calls: [{
          id: toolCalls[0].id,
          type: toolCalls[0].type,
          function: { name: toolCalls[0].function.name, arguments: toolCalls.map((call: any) => call.function.arguments).join("") }
        }],
        gateway_extra_content: [{ type: "thought", insert_index: thought[0].insert_index, text: thought.map((block: any) => block.text).join("") }]
      }])
      expect(placed.messages[1].content).toEqual([
        { type: "thought", text: "Thinking it over" },
        { type: "text", text: "Let me look." },
        { type: "tool_call", id: "call_a", name: "lookup", arguments: "{\"query\":\"x\"}" }
      ])
    })

    it("include_raw_usage turns usage on: the last chunk carries it, and gateway_raw_usage beside it", async () => {
      const { events } = await stream({ model: "gateway::function_name::up_chat", messages: hi, "gateway::include_raw_usage": true })
      expect(upstream()).toMatchObject({ stream: true })
      expect(choiceChunks(events).map((chunk: any) => chunk.choices[0].delta.content ?? "").join("")).toBe("Hi")
      expect(events.at(-1)).toBe("[DONE]")
      const last = events.at(-2)
      expect(last.choices[0].finish_reason).toBe("stop")
      expect(last.usage).toEqual({ prompt_tokens: 3, completion_tokens: 4, total_tokens: 7, gateway_cost: null })
      expect(last.gateway_raw_usage).toHaveLength(1)
      expect(last.gateway_raw_usage[0].model_inference_id).toMatch(uuidV7Pattern)
      expect(last.gateway_raw_usage[0]).toMatchObject({
        provider_type: "openai",
        api_type: "chat_completions",
        data: { prompt_tokens: 3, completion_tokens: 4, total_tokens: 7 }
      })
      expect(events.slice(0, -2).every((event: any) => event.usage === null && !("gateway_raw_usage" in event))).toBe(true)
      // raw usage rides on the usage: include_usage false cannot have it
      const off = await chat({
        model: "gateway::function_name::up_chat",
        messages: hi,
        stream: true,
        stream_options: { include_usage: false },
        "gateway::include_raw_usage": true
      })
      expect(expectOpenAiError(off, 400)).toContain("stream_options.include_usage")
    })

    it("include_raw_response: each chunk carries the upstream's own text of it in gateway_raw_chunk", async () => {
      const upstreamChunks = [chunkOf({ role: "assistant", content: "" }), chunkOf({ content: "Hel" }), chunkOf({ content: "lo" }), chunkOf({}, "stop"), usageChunk]
      fake.script.push({ kind: "stream", chunks: upstreamChunks })
      const { events } = await stream({
        model: "gateway::function_name::up_chat",
        messages: hi,
        stream_options: { include_usage: true },
        "gateway::include_raw_response": true
      })
      const raw = events.filter((event: any) => event !== "[DONE]" && event.gateway_raw_chunk !== undefined)
      expect(raw.map((event: any) => JSON.parse(event.gateway_raw_chunk))).toEqual(upstreamChunks)
      expect(raw.map((event: any) => event.choices[0].delta.content ?? "").join("")).toBe("Hello")
      // one model call: no earlier calls' raw responses
      expect(events.some((event: any) => event !== "[DONE]" && "gateway_raw_response" in event)).toBe(false)
      expect(events.at(-2).usage).toMatchObject({ prompt_tokens: 3, completion_tokens: 4 })
      // without it, no chunk carries it
      const plain = await stream({ model: "gateway::function_name::up_chat", messages: hi })
      expect(plain.events.some((event: any) => event !== "[DONE]" && "gateway_raw_chunk" in event)).toBe(false)
    })

    it("include_raw_response: the first chunk carries the raw responses of the model calls made before the stream (best-of-n's)", async () => {
      const { events } = await stream({ model: "gateway::function_name::up_best_of", messages: hi, "gateway::include_raw_response": true })
      const chunks = events.filter((event: any) => event !== "[DONE]")
      const earlier = chunks[0].gateway_raw_response
      // the candidates and the evaluator: every upstream call but the chosen candidate's, which is the answer streamed
      expect(fake.requests).toHaveLength(3)
      expect(earlier).toHaveLength(2)
      for (const entry of earlier) {
        expect(entry.model_inference_id).toMatch(uuidV7Pattern)
        expect(entry).toMatchObject({ provider_type: "openai", api_type: "chat_completions" })
        expect(typeof entry.data).toBe("string")
      }
      expect(chunks.slice(1).some((chunk: any) => "gateway_raw_response" in chunk)).toBe(false)
    })

    it("an error mid-stream is a last {\"error\": {...}} event in OpenAI's shape, without [DONE]", async () => {
      const { status, events } = await stream({ model: "gateway::function_name::stream_error", messages: hi })
      expect(status).toBe(200)
      expect(events.length).toBe(3)
      expect(events[0].choices[0].delta).toMatchObject({ role: "assistant", content: dummyText.slice(0, 12) })
      expect(events[1].choices[0].delta.content).toBe(dummyText.slice(12, 24))
      const error = events[2]
      expect(Object.keys(error)).toEqual(["error"])
      expect(Object.keys(error.error).sort()).toEqual(["code", "message", "param", "type"])
      expect(error.error.message).toContain("failed mid-stream")
      expect(events).not.toContain("[DONE]")
    })
  })

  it("GET /openai/v1/models lists every function and model as a `model` value", async () => {
    const response = await gateway.get("/openai/v1/models")
    expect(response.status).toBe(200)
    expect(response.body.object).toBe("list")
    const ids = response.body.data.map((entry: any) => entry.id)
    for (const fn of ["chat", "weather", "extract", "up_chat", "up_json", "up_templated", "all_fail"]) {
      expect(ids).toContain(`gateway::function_name::${fn}`)
    }
    for (const model of ["up", "up_keyed", "flaky_then_backup"]) expect(ids).toContain(`gateway::model_name::${model}`)
    for (const entry of response.body.data) {
      expect(entry.object).toBe("model")
      expect(typeof entry.owned_by).toBe("string")
      expect(Number.isInteger(entry.created)).toBe(true)
    }
    // every listed model can be called
    const templated = ids.filter((id: string) => !/templated|keyed|fail|error|slow|flaky/.test(id))
    for (const id of templated.slice(0, 4)) {
      const call = await chat({ model: id, messages: hi })
      expect(call.status, `${id}: ${JSON.stringify(call.body)}`).toBe(200)
    }
  })
})

describe("POST /openai/v1/chat/completions with observability (postgres)", () => {
  let database: TestDatabase
  let fake: FakeOpenAi
  let gateway: RunningGateway
  const ok = async (body: Record<string, unknown>) => {
    const response = await gateway.post(route, body)
    expect(response.status, JSON.stringify(response.body)).toBe(200)
    return response.body
  }

  beforeAll(async () => {
    fake = await startFakeOpenAi()
    database = await freshDatabase("postgres")
    gateway = await startGateway({
      config: `${observabilityToml()}\n${dummyConfig}\n${upstreamConfig(fake.apiBase)}`,
      files,
      env: { GATEWAY_ANALYTICS_DB_URL: database.url }
    })
  })
  afterAll(async () => {
    await gateway?.stop()
    await fake?.close()
    await database?.drop()
  })

  it("stores the inference under the response id, with gateway::tags and gateway::namespace as a tag", async () => {
    const body = await ok({
      model: "gateway::function_name::up_chat",
      messages: [{ role: "system", content: "Be brief." }, user("hi")],
      "gateway::tags": { team: "red" },
      "gateway::namespace": "acme",
      temperature: 0.5
    })
    const stored = await waitForInference(gateway, body.id)
    expect(stored.inference_id).toBe(body.id)
    expect(stored.episode_id).toBe(body.episode_id)
    expect(stored.function_name).toBe("up_chat")
    expect(stored.variant_name).toBe("main")
    expect(stored.tags).toEqual({ team: "red", "gateway::namespace": "acme" })
    expect(stored.input.system).toBe("Be brief.")
    expect(JSON.stringify(stored.output)).toContain("Hello from fake OpenAI")
    expect(JSON.stringify(stored.inference_params)).toContain("0.5")
  })

  it("stores a streamed inference under the id of its chunks, and a model call by model_name", async () => {
    const { events } = await gateway.stream(route, { model: "gateway::model_name::dummy::hello", messages: [user("hi")], stream: true })
    const stored = await waitForInference(gateway, events[0].id)
    expect(stored.episode_id).toBe(events[0].episode_id)
    expect(stored.function_name).toBe("gateway::default")
    expect(JSON.stringify(stored.output)).toContain(dummyText)
  })

  it("gateway::dryrun calls the model but stores nothing", async () => {
    const dry = await ok({ model: "gateway::function_name::up_chat", messages: [user("dry")], "gateway::dryrun": true })
    expect(dry.choices[0].message.content).toBe("Hello from fake OpenAI")
    const wet = await ok({ model: "gateway::function_name::up_chat", messages: [user("wet")] })
    await waitForInference(gateway, wet.id)
    expect(await getInferences(gateway, [dry.id])).toEqual([])
  })

  it("gateway::cache_options: an identical call with the cache on is answered from the cache", async () => {
    const request = { model: "gateway::function_name::up_chat", messages: [user(`cache me ${Date.now()}`)], seed: 7 }
    const first = await ok(request)
    await waitForInference(gateway, first.id)
    // the cache entry is written asynchronously: ask until the upstream is no longer called
    const hit = await poll("a cache hit", async () => {
      const before = fake.requests.length
      const again = await ok({ ...request, "gateway::cache_options": { enabled: "on" } })
      return fake.requests.length === before ? again : undefined
    })
    const calls = fake.requests.length
    expect(hit.choices[0].message.content).toBe("Hello from fake OpenAI")
    expect(hit.usage).toMatchObject({ prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 })
    // with the cache off the upstream is called again
    await ok({ ...request, "gateway::cache_options": { enabled: "off" } })
    expect(fake.requests.length).toBe(calls + 1)
  })

  it("a streamed cache hit is replayed with the chunks the upstream streamed, and the usage of a cache hit", async () => {
    const pieces = ["Wally,", " the", " golden", " retriever", "."]
    // every call of the upstream answers the same pieces (a call made before the entry is written writes another like it)
    fake.fallback = () => ({ kind: "stream", chunks: textStreamChunks(pieces) })
    onTestFinished(() => {
      fake.fallback = fake.defaultFallback
    })
    const request = { model: "gateway::function_name::up_chat", messages: [user(`stream me ${Date.now()}`)], stream: true, stream_options: { include_usage: true } }
    const contents = (events: ReadonlyArray<any>) => events.slice(0, -2).map((event) => event.choices[0].delta.content)
    const first = await gateway.stream(route, request)
    expect(contents(first.events)).toEqual(pieces)
    await waitForInference(gateway, first.events[0].id)
    const hit = await poll("a streamed cache hit", async () => {
      const before = fake.requests.length
      const again = await gateway.stream(route, { ...request, "gateway::cache_options": { enabled: "on" } })
      return fake.requests.length === before ? again : undefined
    })
    expect(contents(hit.events)).toEqual(pieces)
    const last = hit.events.at(-2)
    expect(last.choices[0].finish_reason).toBe("stop")
    expect(last.usage).toMatchObject({ prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 })
  })
})
