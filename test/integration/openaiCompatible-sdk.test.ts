/**
 * The OpenAI-compatible endpoint (spec 4.2, issue 4) driven by real clients: the official
 * `openai` npm package (v7) with `baseURL: <gateway>/openai/v1`, and the Vercel AI SDK's
 * OpenAI-compatible provider. What a client written for OpenAI sees, and what the upstream
 * (the fake OpenAI server) receives behind the gateway.
 */
import { createOpenAICompatible } from "@ai-sdk/openai-compatible"
import { generateText, streamText } from "ai"
import OpenAI from "openai"
import { zodResponseFormat } from "openai/helpers/zod"
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import { z } from "zod"
import { dummyConfig, dummyConfigFiles } from "../support/dummyConfig.ts"
import { completion, type FakeOpenAi, startFakeOpenAi, textCompletion, textStreamChunks } from "../support/fakeOpenAi.ts"
import { type RunningGateway, startGateway } from "../support/gateway.ts"

const dummyText = "Hello from the dummy provider. This answer is always the same."

const upstreamConfig = (apiBase: string) => `
[models.up]
routing = ["a"]
[models.up.providers.a]
type = "openai"
model_name = "gpt-up"
api_base = "${apiBase}"
api_key_location = "none"

[tools.lookup]
description = "Look up the weather of a city"
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

[functions.up_tools]
type = "chat"
tools = ["lookup"]
[functions.up_tools.variants.v]
type = "chat_completion"
model = "up"

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

[functions.up_json_free]
type = "json"
[functions.up_json_free.variants.v]
type = "chat_completion"
model = "up"
`

const files = {
  ...dummyConfigFiles,
  "tools/lookup.json": JSON.stringify({ type: "object", properties: { city: { type: "string" } }, required: ["city"] })
}

/** Gateway-specific fields ride along as extra body fields: the SDK sends unknown params as they are. */
type WithGatewayFields<T> = T & Record<`gateway::${string}`, unknown>

describe("the official openai SDK as a client", () => {
  let fake: FakeOpenAi
  let gateway: RunningGateway
  let client: OpenAI
  const upstream = () => fake.requests[fake.requests.length - 1].body

  beforeAll(async () => {
    fake = await startFakeOpenAi()
    gateway = await startGateway({ config: dummyConfig + upstreamConfig(fake.apiBase), files })
    client = new OpenAI({ baseURL: `${gateway.url}/openai/v1`, apiKey: "sk-anything", maxRetries: 0 })
  })
  afterAll(async () => {
    await gateway?.stop()
    await fake?.close()
  })
  beforeEach(() => fake.reset())

  it("plain chat: a ChatCompletion with the gateway's ids and usage", async () => {
    const answer = await client.chat.completions.create({
      model: "gateway::function_name::up_chat",
      messages: [{ role: "system", content: "Be brief." }, { role: "user", content: "Hello?" }],
      temperature: 0.2,
      max_completion_tokens: 50
    })
    expect(answer.object).toBe("chat.completion")
    expect(answer.model).toBe("gateway::function_name::up_chat::variant_name::main")
    expect(answer.choices[0].message.role).toBe("assistant")
    expect(answer.choices[0].message.content).toBe("Hello from fake OpenAI")
    expect(answer.choices[0].finish_reason).toBe("stop")
    expect(answer.usage).toMatchObject({ prompt_tokens: 12, completion_tokens: 7, total_tokens: 19 })
    expect((answer as any).episode_id).toMatch(/^[0-9a-f-]{36}$/)
    expect(answer.id).toMatch(/^[0-9a-f-]{36}$/)
    expect(upstream()).toEqual({
      model: "gpt-up",
      messages: [{ role: "system", content: "Be brief." }, { role: "user", content: "Hello?" }],
      temperature: 0.2,
      max_completion_tokens: 50
    })
  })

  it("a dummy model called by model_name", async () => {
    const answer = await client.chat.completions.create({ model: "gateway::model_name::dummy::hello", messages: [{ role: "user", content: "Hi" }] })
    expect(answer.choices[0].message.content).toBe(dummyText)
    expect(answer.usage?.total_tokens).toBe(20)
  })

  it("system and user templates through gateway::arguments and gateway::template parts", async () => {
    const systemParts = [
      { type: "text", "gateway::arguments": { assistant_name: "Ada" } },
      { type: "gateway::template", name: "system", arguments: { assistant_name: "Ada" } }
    ]
    for (const systemPart of systemParts) {
      await client.chat.completions.create({
        model: "gateway::function_name::up_templated",
        messages: [
          { role: "system", content: [systemPart] },
          {
            role: "user",
            content: [
              { type: "gateway::template", name: "greeting", arguments: { who: "Bob" } },
              { type: "text", "gateway::arguments": { city: "Oslo", days: 2 } }
            ]
          }
        ] as unknown as Array<OpenAI.ChatCompletionMessageParam>
      })
      expect(upstream().messages).toEqual([
        { role: "system", content: "You are Ada, a weather assistant." },
        {
          role: "user",
          content: [{ type: "text", text: "Greetings, Bob!" }, { type: "text", text: "What is the weather in Oslo for the next 2 days?" }]
        }
      ])
    }
  })

  it("streaming without usage: text chunks, the role first, finish_reason last, no usage chunk", async () => {
    const stream = await client.chat.completions.create({
      model: "gateway::function_name::chat",
      messages: [{ role: "user", content: "Hi" }],
      stream: true
    })
    const chunks: Array<OpenAI.ChatCompletionChunk> = []
    for await (const chunk of stream) chunks.push(chunk)
    expect(chunks.length).toBeGreaterThan(2)
    expect(chunks.every((chunk) => chunk.object === "chat.completion.chunk" && chunk.id === chunks[0].id)).toBe(true)
    expect(chunks[0].choices[0].delta.role).toBe("assistant")
    expect(chunks.map((chunk) => chunk.choices[0]?.delta.content ?? "").join("")).toBe(dummyText)
    expect(chunks.at(-1)!.choices[0].finish_reason).toBe("stop")
    expect(chunks.some((chunk) => chunk.usage !== undefined && chunk.usage !== null)).toBe(false)
  })

  it("streaming with usage: the final chunk carries finish_reason in its choice and the usage, as TensorZero sends them", async () => {
    const stream = await client.chat.completions.create({
      model: "gateway::function_name::up_chat",
      messages: [{ role: "user", content: "Hi" }],
      stream: true,
      stream_options: { include_usage: true }
    })
    const chunks: Array<OpenAI.ChatCompletionChunk> = []
    for await (const chunk of stream) chunks.push(chunk)
    expect(chunks.map((chunk) => chunk.choices[0]?.delta.content ?? "").join("")).toBe("Hello from fake")
    const finalChunk = chunks.at(-1)!
    expect(finalChunk.choices[0].finish_reason).toBe("stop")
    expect(finalChunk.choices[0].delta.content).toBeUndefined()
    expect(finalChunk.usage).toMatchObject({ prompt_tokens: 12, completion_tokens: 7, total_tokens: 19 })
    // every chunk before it: usage null, no finish reason
    expect(chunks.slice(0, -1).every((chunk) => chunk.usage === null && chunk.choices[0].finish_reason === null)).toBe(true)
    expect(upstream().stream).toBe(true)
  })

  it("the SDK's stream helper reads the final chunk's finish reason and usage into its final ChatCompletion", async () => {
    const stream = client.chat.completions.stream({
      model: "gateway::function_name::up_chat",
      messages: [{ role: "user", content: "Hi" }],
      stream_options: { include_usage: true }
    })
    const final = await stream.finalChatCompletion()
    expect(final.choices[0].message.content).toBe("Hello from fake")
    expect(final.choices[0].finish_reason).toBe("stop")
    expect(final.usage).toMatchObject({ prompt_tokens: 12, completion_tokens: 7, total_tokens: 19 })
  })

  it("a streamed json function's last chunk has delta.content \"\" and the SDK's parse of the text succeeds", async () => {
    fake.script.push({ kind: "stream", chunks: textStreamChunks(["{\"city\":", "\"Oslo\"}"]) })
    const stream = await client.chat.completions.create({
      model: "gateway::function_name::up_json_free",
      messages: [{ role: "user", content: "Where?" }],
      stream: true
    })
    const chunks: Array<OpenAI.ChatCompletionChunk> = []
    for await (const chunk of stream) chunks.push(chunk)
    const finalChunk = chunks.at(-1)!
    expect(finalChunk.choices[0].delta).toEqual({ content: "" })
    expect(finalChunk.choices[0].finish_reason).toBe("stop")
    expect(JSON.parse(chunks.map((chunk) => chunk.choices[0].delta.content ?? "").join(""))).toEqual({ city: "Oslo" })
  })

  it("the SDK's stream helper assembles a streamed tool call into a final ChatCompletion", async () => {
    const stream = client.chat.completions.stream({
      model: "gateway::function_name::weather",
      messages: [{ role: "user", content: "Weather in Brooklyn?" }]
    })
    const final = await stream.finalChatCompletion()
    expect(final.choices[0].finish_reason).toBe("tool_calls")
    const call = final.choices[0].message.tool_calls![0] as OpenAI.ChatCompletionMessageFunctionToolCall
    expect(call.id).toBe("0")
    expect(call.function.name).toBe("get_temperature")
    expect(JSON.parse(call.function.arguments)).toEqual({ location: "Brooklyn", units: "celsius" })
  })

  it("tools whose parameters are zod 4's JSON Schema 2020-12, as LangChain JS builds them", async () => {
    const parameters = z.toJSONSchema(z.object({ location: z.string(), units: z.enum(["celsius", "fahrenheit"]) }))
    expect(parameters.$schema).toBe("https://json-schema.org/draft/2020-12/schema")
    const answer = await client.chat.completions.create({
      model: "gateway::model_name::dummy::offered_tool",
      messages: [{ role: "user", content: "Weather in Brooklyn?" }],
      tools: [{ type: "function", function: { name: "get_weather", parameters } }]
    })
    const call = answer.choices[0].message.tool_calls![0] as OpenAI.ChatCompletionMessageFunctionToolCall
    expect(call.function.name).toBe("get_weather")
    expect(JSON.parse(call.function.arguments)).toEqual({ location: "Brooklyn", units: "celsius" })
  })

  it("a tool call round trip: assistant tool_calls, then tool results, reach the upstream", async () => {
    fake.script.push(
      {
        kind: "json",
        body: completion({
          content: null,
          tool_calls: [{ id: "call_9", type: "function", function: { name: "lookup", arguments: "{\"city\":\"Paris\"}" } }]
        }, { finishReason: "tool_calls" })
      },
      { kind: "json", body: textCompletion("It is sunny in Paris.") }
    )
    const messages: Array<OpenAI.ChatCompletionMessageParam> = [{ role: "user", content: "Weather in Paris?" }]
    const first = await client.chat.completions.create({ model: "gateway::function_name::up_tools", messages })
    expect(first.choices[0].finish_reason).toBe("tool_calls")
    const toolCall = first.choices[0].message.tool_calls![0] as OpenAI.ChatCompletionMessageFunctionToolCall
    expect(toolCall).toEqual({ id: "call_9", type: "function", function: { name: "lookup", arguments: "{\"city\":\"Paris\"}" } })
    expect(JSON.parse(toolCall.function.arguments)).toEqual({ city: "Paris" })
    expect(fake.requests[0].body.tools).toEqual([{
      type: "function",
      function: {
        name: "lookup",
        description: "Look up the weather of a city",
        parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] }
      }
    }])

    messages.push(first.choices[0].message, { role: "tool", tool_call_id: toolCall.id, content: "sunny, 24 C" })
    const episode = (first as unknown as { episode_id: string }).episode_id
    const params: WithGatewayFields<OpenAI.ChatCompletionCreateParamsNonStreaming> = {
      model: "gateway::function_name::up_tools",
      messages,
      "gateway::episode_id": episode
    }
    const second = await client.chat.completions.create(params)
    expect((second as unknown as { episode_id: string }).episode_id).toBe(episode)
    expect(second.choices[0].message.content).toBe("It is sunny in Paris.")
    expect(second.choices[0].finish_reason).toBe("stop")
    expect(fake.requests).toHaveLength(2)
    expect(fake.requests[1].body.messages).toEqual([
      { role: "user", content: "Weather in Paris?" },
      {
        role: "assistant",
        content: null,
        tool_calls: [{ id: "call_9", type: "function", function: { name: "lookup", arguments: "{\"city\":\"Paris\"}" } }]
      },
      { role: "tool", tool_call_id: "call_9", content: "sunny, 24 C" }
    ])
  })

  it("response_format json_schema on a json function: the SDK's parse() gets the validated object", async () => {
    fake.script.push({ kind: "json", body: textCompletion("{\"city\":\"Paris\",\"population\":2100000}") })
    const City = z.object({ city: z.string(), population: z.number() })
    const answer = await client.chat.completions.parse({
      model: "gateway::function_name::up_json_free",
      messages: [{ role: "user", content: "Which city?" }],
      response_format: zodResponseFormat(City, "city")
    })
    expect(answer.choices[0].message.content).toBe("{\"city\":\"Paris\",\"population\":2100000}")
    expect(answer.choices[0].message.parsed).toEqual({ city: "Paris", population: 2100000 })
    const format = upstream().response_format
    expect(format.type).toBe("json_schema")
    expect(format.json_schema.schema.properties).toEqual({ city: { type: "string" }, population: { type: "number" } })
    expect(format.json_schema.schema.required).toEqual(["city", "population"])
  })

  it("images: a remote URL and a base64 data URL reach the upstream", async () => {
    const png = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]).toString("base64")
    await client.chat.completions.create({
      model: "gateway::function_name::up_chat",
      messages: [{
        role: "user",
        content: [
          { type: "text", text: "What is in these?" },
          { type: "image_url", image_url: { url: "https://example.com/cat.jpg", detail: "high" } },
          { type: "image_url", image_url: { url: `data:image/png;base64,${png}` } }
        ]
      }]
    })
    expect(upstream().messages[0].content).toEqual([
      { type: "text", text: "What is in these?" },
      { type: "image_url", image_url: { url: "https://example.com/cat.jpg", detail: "high" } },
      { type: "image_url", image_url: { url: `data:image/png;base64,${png}` } }
    ])
  })

  it("gateway:: fields as extra body params: variant, extra_body, extra_headers, raw usage and response", async () => {
    const params: WithGatewayFields<OpenAI.ChatCompletionCreateParamsNonStreaming> = {
      model: "gateway::function_name::up_chat",
      messages: [{ role: "user", content: "Hi" }],
      "gateway::variant_name": "tuned",
      "gateway::tags": { team: "red" },
      "gateway::extra_body": [{ pointer: "/logprobs", value: true }],
      "gateway::extra_headers": [{ name: "x-team", value: "red" }],
      "gateway::include_raw_usage": true,
      "gateway::include_raw_response": true,
      "gateway::deny_unknown_fields": true
    }
    const answer: any = await client.chat.completions.create(params, { headers: { "gateway-otlp-traces-extra-header-x-tenant": "acme" } })
    const received = fake.requests[0]
    expect(received.body.temperature).toBe(0.9)
    expect(received.body.logprobs).toBe(true)
    expect(received.headers["x-team"]).toBe("red")
    // beside usage, as TensorZero puts it
    expect(answer.gateway_raw_usage[0]).toMatchObject({ provider_type: "openai", api_type: "chat_completions", data: { prompt_tokens: 12 } })
    expect(answer.usage).not.toHaveProperty("gateway_raw_usage")
    expect(answer.gateway_raw_response[0]).toMatchObject({ provider_type: "openai", api_type: "chat_completions" })
    expect(JSON.parse(answer.gateway_raw_response[0].data).choices[0].message.content).toBe("Hello from fake OpenAI")
  })

  it("a gateway:: field through the SDK's `body` request option", async () => {
    const body = {
      model: "gateway::function_name::up_chat",
      messages: [{ role: "user" as const, content: "Hi" }],
      "gateway::params": { chat_completion: { seed: 99 } }
    }
    await client.chat.completions.create(body, { body })
    expect(upstream().seed).toBe(99)
  })

  it("errors surface as the SDK's typed errors with the gateway's status and message", async () => {
    const failure = (promise: Promise<unknown>) => promise.then(() => expect.unreachable("expected an error"), (error) => error)
    const badModel = await failure(client.chat.completions.create({ model: "gpt-4o", messages: [{ role: "user", content: "Hi" }] }))
    expect(badModel).toBeInstanceOf(OpenAI.BadRequestError)
    expect(badModel.status).toBe(400)
    expect(badModel.message).toContain("gateway::function_name::")
    expect(badModel.type).toBe("invalid_request_error")

    const unknown = await failure(client.chat.completions.create({ model: "gateway::function_name::nope", messages: [{ role: "user", content: "Hi" }] }))
    expect(unknown).toBeInstanceOf(OpenAI.NotFoundError)
    expect(unknown.status).toBe(404)
    expect(unknown.message).toContain("nope")

    const denied = await failure(client.chat.completions.create({
      model: "gateway::function_name::up_chat",
      messages: [{ role: "user", content: "Hi" }],
      user: "u-1",
      "gateway::deny_unknown_fields": true
    } as WithGatewayFields<OpenAI.ChatCompletionCreateParamsNonStreaming>))
    expect(denied).toBeInstanceOf(OpenAI.BadRequestError)
    expect(denied.message).toContain("user")

    const n = await failure(client.chat.completions.create({ model: "gateway::function_name::chat", messages: [{ role: "user", content: "Hi" }], n: 3 }))
    expect(n).toBeInstanceOf(OpenAI.BadRequestError)

    const failing = await failure(client.chat.completions.create({ model: "gateway::function_name::failing", messages: [{ role: "user", content: "Hi" }] }))
    expect(failing).toBeInstanceOf(OpenAI.InternalServerError)
    expect(failing.status).toBe(502)
    expect(failing.message).toContain("Error sending request to Dummy provider for model 'error'.")
  })

  it("errors carry TensorZero's phrases, which its clients' tests match, beside the field they name", async () => {
    const hi = [{ role: "user" as const, content: "Hi" }]
    const refusal = (params: unknown) =>
      client.chat.completions.create(params as OpenAI.ChatCompletionCreateParamsNonStreaming).then(() => expect.unreachable("expected an error"), (error) => error)
    const empty = await refusal({ model: "gateway::function_name::", messages: hi })
    expect(empty).toBeInstanceOf(OpenAI.BadRequestError)
    expect(empty.message).toMatch(/function_name.*cannot be empty/)
    expect(empty.message).toContain("model: ")
    const unknown = await refusal({ model: "gateway::function_name::does_not_exist", messages: hi })
    expect(unknown).toBeInstanceOf(OpenAI.NotFoundError)
    expect(unknown.message).toMatch(/Unknown function: does_not_exist/)
    const missing = await refusal({ messages: hi })
    expect(missing).toBeInstanceOf(OpenAI.BadRequestError)
    expect(missing.message).toMatch(/missing field `model`/)
    const malformed = await refusal({ model: "chatgpt", messages: hi })
    expect(malformed).toBeInstanceOf(OpenAI.BadRequestError)
    expect(malformed.message).toMatch(/`model` field must start with/)
    // arguments that fail the system schema, and text where the user schema wants arguments
    const badArguments = await refusal({
      model: "gateway::function_name::up_templated",
      messages: [{ role: "system", content: [{ type: "text", "gateway::arguments": { name_of_assistant: "Ada" } }] }, ...hi],
      stream: true
    })
    expect(badArguments).toBeInstanceOf(OpenAI.BadRequestError)
    expect(badArguments.message).toMatch(/JSON Schema validation failed/)
    const textForSchema = await refusal({
      model: "gateway::function_name::up_templated",
      messages: [{ role: "system", content: [{ type: "text", "gateway::arguments": { assistant_name: "Ada" } }] }, ...hi]
    })
    expect(textForSchema.message).toMatch(/400 .*JSON Schema validation failed/)
    const imageInSystem = await refusal({
      model: "gateway::function_name::up_chat",
      messages: [{ role: "system", content: [{ type: "image_url", image_url: { url: "https://example.com/image.jpg" } }] }, ...hi]
    })
    expect(imageInSystem).toBeInstanceOf(OpenAI.BadRequestError)
    expect(imageInSystem.message).toMatch(/System message must contain only text or template content blocks/)
    expect(fake.requests).toHaveLength(0)
  })

  it("an error in the middle of a stream is thrown by the SDK's iterator after the chunks before it", async () => {
    const stream = await client.chat.completions.create({
      model: "gateway::function_name::stream_error",
      messages: [{ role: "user", content: "Hi" }],
      stream: true
    })
    const texts: Array<string> = []
    const error = await (async () => {
      for await (const chunk of stream) texts.push(chunk.choices[0]?.delta.content ?? "")
    })().then(() => undefined, (thrown) => thrown)
    expect(texts.join("")).toBe(dummyText.slice(0, 24))
    expect(error).toBeInstanceOf(OpenAI.APIError)
    expect(error.message).toContain("failed mid-stream")
  })

  it("client.models.list() lists the functions and models", async () => {
    const ids: Array<string> = []
    for await (const model of client.models.list()) ids.push(model.id)
    expect(ids).toContain("gateway::function_name::up_chat")
    expect(ids).toContain("gateway::function_name::chat")
    expect(ids).toContain("gateway::model_name::up")
  })
})

describe("the Vercel AI SDK's OpenAI-compatible provider as a client", () => {
  let fake: FakeOpenAi
  let gateway: RunningGateway

  beforeAll(async () => {
    fake = await startFakeOpenAi()
    gateway = await startGateway({ config: dummyConfig + upstreamConfig(fake.apiBase), files })
  })
  afterAll(async () => {
    await gateway?.stop()
    await fake?.close()
  })

  it("generateText on a dummy function", async () => {
    const provider = createOpenAICompatible({ name: "gateway", baseURL: `${gateway.url}/openai/v1`, apiKey: "anything" })
    const result = await generateText({ model: provider("gateway::function_name::chat"), prompt: "Say hello", maxRetries: 0 })
    expect(result.text).toBe(dummyText)
    expect(result.finishReason).toBe("stop")
    expect(result.usage.inputTokens).toBe(10)
    expect(result.usage.outputTokens).toBe(10)
  })

  it("streamText through the gateway to the fake upstream", async () => {
    const provider = createOpenAICompatible({ name: "gateway", baseURL: `${gateway.url}/openai/v1`, apiKey: "anything", includeUsage: true })
    const result = streamText({
      model: provider("gateway::function_name::up_chat"),
      system: "Be brief.",
      prompt: "Say hello",
      maxRetries: 0
    })
    const pieces: Array<string> = []
    for await (const piece of result.textStream) pieces.push(piece)
    expect(pieces.join("")).toBe("Hello from fake")
    expect(pieces.length).toBeGreaterThan(1)
    expect(await result.finishReason).toBe("stop")
    expect((await result.usage).inputTokens).toBe(12)
    const received = fake.requests.at(-1)!.body
    expect(received.stream).toBe(true)
    expect(received.messages).toEqual([{ role: "system", content: "Be brief." }, { role: "user", content: "Say hello" }])
  })
})
