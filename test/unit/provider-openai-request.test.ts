import { describe, expect, it } from "vitest"
import type { ModelRequest, RequestMessage, ToolConfig, ToolDefinition } from "../../src/inference/types.ts"
import { compileJsonSchema } from "../../src/jsonSchema.ts"
import { InvalidRequest } from "../../src/errors.ts"
import { requestBodyEdit } from "../../src/inference/extraBody.ts"
import { openAiCodec } from "../../src/providers/openai/index.ts"
import { chatCompletionsUrl, respondToolDescription } from "../../src/providers/openai/request.ts"
import { wireRequest } from "../../src/providers/wireRequest.ts"
import { type ProviderCall, qualifiedProviderName } from "../../src/providers/types.ts"
import { ProviderFailure } from "../../src/providers/failure.ts"
import type { HttpCall } from "../../src/transport.ts"

const url = "https://api.openai.com/v1/chat/completions"

/** The HTTP request the openai provider (model `model`) makes for `c`, through the runner. */
const openAiRequest = (c: ProviderCall, model: string, stream: boolean) =>
  wireRequest(openAiCodec, openAiCodec.target({}, model), c, stream)

const baseRequest: ModelRequest = {
  messages: [],
  params: {},
  functionType: "chat",
  jsonMode: "off",
  providerTools: []
}

const call = (request: Partial<ModelRequest>, rest: Partial<ProviderCall> = {}): ProviderCall => ({
  request: { ...baseRequest, ...request },
  apiKey: "sk-test",
  extraBody: [],
  extraHeaders: [],
  modelName: "gpt",
  providerName: "openai",
  qualifiedName: qualifiedProviderName("gpt", "openai"),
  ...rest
})

const built = (c: ProviderCall, stream = false): HttpCall => {
  const result = openAiRequest(c, "gpt-4o-mini", stream)
  if (result instanceof ProviderFailure || result instanceof InvalidRequest) throw new Error(result.message)
  return result
}

const bodyOf = (request: Partial<ModelRequest>, rest: Partial<ProviderCall> = {}, stream = false) =>
  JSON.parse(built(call(request, rest), stream).body)

const messagesOf = (messages: ReadonlyArray<RequestMessage>, system?: string) => bodyOf({ messages, system }).messages

const tool = (name: string, strict = false): ToolDefinition => {
  const parameters = { type: "object", properties: { location: { type: "string" } }, required: ["location"] }
  const compiled = compileJsonSchema(parameters)
  if ("error" in compiled) throw new Error(compiled.error)
  return { name, description: `The ${name} tool`, parameters, strict, validator: compiled.validator }
}

describe("openai request: messages", () => {
  it("sends the system prompt and a user text as OpenAI chat messages", () => {
    const request = built(call({ system: "You are terse.", messages: [{ role: "user", content: [{ type: "text", text: "Hi!" }] }] }))
    expect(request.url).toBe(url)
    expect(JSON.parse(request.body)).toEqual({
      model: "gpt-4o-mini",
      messages: [
        { role: "system", content: "You are terse." },
        { role: "user", content: "Hi!" }
      ]
    })
  })

  it("sends several parts of one message as a content array", () => {
    expect(messagesOf([{ role: "user", content: [{ type: "text", text: "a" }, { type: "text", text: "b" }] }])).toEqual([
      { role: "user", content: [{ type: "text", text: "a" }, { type: "text", text: "b" }] }
    ])
  })

  it("sends images by URL and as base64 data URLs, with detail when given", () => {
    expect(messagesOf([{
      role: "user",
      content: [
        { type: "text", text: "What is this?" },
        { type: "file", source: { kind: "url", url: "https://example.com/cat.png" }, detail: "low" },
        { type: "file", source: { kind: "url", url: "https://example.com/dog.jpg", mimeType: "image/jpeg" } },
        { type: "file", source: { kind: "base64", data: "iVBORw0KGgo=", mimeType: "image/png" }, detail: "high" }
      ]
    }])).toEqual([{
      role: "user",
      content: [
        { type: "text", text: "What is this?" },
        { type: "image_url", image_url: { url: "https://example.com/cat.png", detail: "low" } },
        { type: "image_url", image_url: { url: "https://example.com/dog.jpg" } },
        { type: "image_url", image_url: { url: "data:image/png;base64,iVBORw0KGgo=", detail: "high" } }
      ]
    }])
  })

  it("sends a base64 PDF as a file part, ignoring detail", () => {
    expect(messagesOf([{
      role: "user",
      content: [{ type: "file", source: { kind: "base64", data: "JVBERi0xLjQ=", mimeType: "application/pdf" }, detail: "low" }]
    }])).toEqual([{
      role: "user",
      content: [{ type: "file", file: { file_data: "data:application/pdf;base64,JVBERi0xLjQ=", filename: "input.pdf" } }]
    }])
  })

  it("refuses a PDF given by URL, with an explanation", () => {
    const result = openAiRequest(
      call({
        messages: [{
          role: "user",
          content: [{ type: "file", source: { kind: "url", url: "https://example.com/a.pdf", mimeType: "application/pdf" } }]
        }]
      }),
      "gpt-4o-mini",
      false
    )
    expect(result).toBeInstanceOf(ProviderFailure)
    expect((result as ProviderFailure).message).toContain("application/pdf")
  })

  it("sends audio as input_audio with its format", () => {
    expect(messagesOf([{
      role: "user",
      content: [
        { type: "file", source: { kind: "base64", data: "UklGRg==", mimeType: "audio/wav" } },
        { type: "file", source: { kind: "base64", data: "SUQz", mimeType: "audio/mpeg" } }
      ]
    }])).toEqual([{
      role: "user",
      content: [
        { type: "input_audio", input_audio: { data: "UklGRg==", format: "wav" } },
        { type: "input_audio", input_audio: { data: "SUQz", format: "mp3" } }
      ]
    }])
  })

  it("sends tool calls in assistant messages (content null) and tool results as tool messages", () => {
    expect(messagesOf([
      { role: "user", content: [{ type: "text", text: "Weather in Paris and Rome?" }] },
      {
        role: "assistant",
        content: [
          { type: "tool_call", id: "call_1", name: "get_weather", arguments: "{\"location\":\"Paris\"}" },
          { type: "tool_call", id: "call_2", name: "get_weather", arguments: "{\"location\":\"Rome\"}" }
        ]
      },
      {
        role: "user",
        content: [
          { type: "tool_result", id: "call_1", name: "get_weather", result: "18C" },
          { type: "tool_result", id: "call_2", name: "get_weather", result: "24C" }
        ]
      }
    ])).toEqual([
      { role: "user", content: "Weather in Paris and Rome?" },
      {
        role: "assistant",
        content: null,
        tool_calls: [
          { id: "call_1", type: "function", function: { name: "get_weather", arguments: "{\"location\":\"Paris\"}" } },
          { id: "call_2", type: "function", function: { name: "get_weather", arguments: "{\"location\":\"Rome\"}" } }
        ]
      },
      { role: "tool", tool_call_id: "call_1", content: "18C" },
      { role: "tool", tool_call_id: "call_2", content: "24C" }
    ])
  })

  it("keeps the text of an assistant message that also calls a tool", () => {
    expect(messagesOf([{
      role: "assistant",
      content: [{ type: "text", text: "Checking." }, { type: "tool_call", id: "c", name: "f", arguments: "{}" }]
    }])).toEqual([{
      role: "assistant",
      content: "Checking.",
      tool_calls: [{ id: "c", type: "function", function: { name: "f", arguments: "{}" } }]
    }])
  })

  it("drops thoughts (and a message left empty by it)", () => {
    expect(messagesOf([
      { role: "assistant", content: [{ type: "thought", text: "hmm", signature: "s" }] },
      { role: "assistant", content: [{ type: "thought", text: "hmm" }, { type: "text", text: "Answer." }] }
    ])).toEqual([{ role: "assistant", content: "Answer." }])
  })

  it("sends unknown blocks to their own provider only (or to all when unscoped)", () => {
    expect(messagesOf([{
      role: "user",
      content: [
        { type: "unknown", data: { type: "mine", x: 1 }, modelProviderName: qualifiedProviderName("gpt", "openai") },
        { type: "unknown", data: { type: "theirs" }, modelProviderName: qualifiedProviderName("gpt", "azure") },
        { type: "unknown", data: { type: "anyone" } }
      ]
    }])).toEqual([{ role: "user", content: [{ type: "mine", x: 1 }, { type: "anyone" }] }])
  })
})

describe("openai request: parameters", () => {
  it("maps the inference parameters to OpenAI's names", () => {
    const body = bodyOf({
      params: {
        temperature: 0.3,
        max_tokens: 256,
        seed: 42,
        top_p: 0.9,
        presence_penalty: 0.1,
        frequency_penalty: 0.2,
        stop_sequences: ["\n\n", "END"],
        reasoning_effort: "low",
        service_tier: "flex",
        verbosity: "low",
        thinking_budget_tokens: 1000
      }
    })
    expect(body).toEqual({
      model: "gpt-4o-mini",
      messages: [],
      temperature: 0.3,
      max_completion_tokens: 256,
      seed: 42,
      top_p: 0.9,
      presence_penalty: 0.1,
      frequency_penalty: 0.2,
      stop: ["\n\n", "END"],
      reasoning_effort: "low",
      service_tier: "flex",
      verbosity: "low"
    })
  })

  it("asks for usage in the last chunk when streaming", () => {
    const body = bodyOf({}, {}, true)
    expect(body.stream).toBe(true)
    expect(body.stream_options).toEqual({ include_usage: true })
    expect(bodyOf({}).stream).toBeUndefined()
  })
})

describe("openai request: tools", () => {
  const tools = (config: Partial<ToolConfig>): ToolConfig => ({
    tools: [tool("get_weather", true), tool("search")],
    choice: { type: "auto" },
    ...config
  })

  it("sends function tools, tool_choice and parallel_tool_calls", () => {
    const body = bodyOf({ tools: tools({ parallelToolCalls: false }) })
    expect(body.tools).toEqual([
      {
        type: "function",
        function: {
          name: "get_weather",
          description: "The get_weather tool",
          parameters: { type: "object", properties: { location: { type: "string" } }, required: ["location"] },
          strict: true
        }
      },
      {
        type: "function",
        function: {
          name: "search",
          description: "The search tool",
          parameters: { type: "object", properties: { location: { type: "string" } }, required: ["location"] }
        }
      }
    ])
    expect(body.tool_choice).toBe("auto")
    expect(body.parallel_tool_calls).toBe(false)
  })

  it("maps each tool_choice", () => {
    expect(bodyOf({ tools: tools({ choice: { type: "none" } }) }).tool_choice).toBe("none")
    expect(bodyOf({ tools: tools({ choice: { type: "required" } }) }).tool_choice).toBe("required")
    expect(bodyOf({ tools: tools({ choice: { type: "specific", name: "search" } }) }).tool_choice).toEqual({
      type: "function",
      function: { name: "search" }
    })
    expect(bodyOf({ tools: tools({}) }).parallel_tool_calls).toBeUndefined()
  })

  it("sends every tool plus the allowed list with allowed_tools", () => {
    const body = bodyOf({ tools: tools({ allowed: ["search"], choice: { type: "required" } }) })
    expect(body.tools.map((t: any) => t.function.name)).toEqual(["get_weather", "search"])
    expect(body.tool_choice).toEqual({
      type: "allowed_tools",
      allowed_tools: { mode: "required", tools: [{ type: "function", function: { name: "search" } }] }
    })
    expect(bodyOf({ tools: tools({ allowed: ["search"], choice: { type: "auto" } }) }).tool_choice.allowed_tools.mode).toBe("auto")
    expect(bodyOf({ tools: tools({ allowed: ["search"], choice: { type: "none" } }) }).tool_choice).toBe("none")
  })

  it("sends no tools fields without tools", () => {
    const body = bodyOf({ tools: { tools: [], choice: { type: "auto" }, parallelToolCalls: true } })
    expect(body.tools).toBeUndefined()
    expect(body.tool_choice).toBeUndefined()
  })

  it("adds provider tools scoped to this model and provider only", () => {
    const body = bodyOf({
      providerTools: [
        { tool: { type: "web_search_preview" } },
        { modelName: "gpt", tool: { type: "for_gpt" } },
        { modelName: "gpt", providerName: "openai", tool: { type: "for_gpt_openai" } },
        { modelName: "other", tool: { type: "for_other" } },
        { modelName: "gpt", providerName: "azure", tool: { type: "for_gpt_azure" } }
      ]
    })
    expect(body.tools).toEqual([{ type: "web_search_preview" }, { type: "for_gpt" }, { type: "for_gpt_openai" }])
    expect(body.tool_choice).toBeUndefined()
  })
})

describe("openai request: json_mode", () => {
  const schema = { type: "object", properties: { answer: { type: "string" } }, required: ["answer"] }

  it("on: asks for a JSON object", () => {
    expect(bodyOf({ functionType: "json", jsonMode: "on", outputSchema: schema }).response_format).toEqual({ type: "json_object" })
  })

  it("strict: sends the output schema as a strict json_schema (json_object without a schema)", () => {
    expect(bodyOf({ functionType: "json", jsonMode: "strict", outputSchema: schema }).response_format).toEqual({
      type: "json_schema",
      json_schema: { name: "response", strict: true, schema }
    })
    expect(bodyOf({ functionType: "json", jsonMode: "strict" }).response_format).toEqual({ type: "json_object" })
  })

  it("tool: forces a call of the tool respond whose parameters are the output schema", () => {
    const body = bodyOf({ functionType: "json", jsonMode: "tool", outputSchema: schema })
    expect(body.response_format).toBeUndefined()
    expect(body.tools).toEqual([{
      type: "function",
      function: { name: "respond", description: expect.any(String), parameters: schema }
    }])
    expect(body.tool_choice).toEqual({ type: "function", function: { name: "respond" } })
  })

  it("off: no response_format, for json and chat functions alike", () => {
    expect(bodyOf({ functionType: "json", jsonMode: "off", outputSchema: schema }).response_format).toBeUndefined()
    expect(bodyOf({ functionType: "chat", jsonMode: "off", outputSchema: schema }).response_format).toBeUndefined()
  })

  it("a chat function asked for JSON (OpenAI's response_format) gets it; tool mode with its schema forces the respond tool, as TensorZero does", () => {
    expect(bodyOf({ functionType: "chat", jsonMode: "on" }).response_format).toEqual({ type: "json_object" })
    expect(bodyOf({ functionType: "chat", jsonMode: "strict", outputSchema: schema }).response_format).toEqual({
      type: "json_schema",
      json_schema: { name: "response", strict: true, schema }
    })
    const body = bodyOf({ functionType: "chat", jsonMode: "tool", outputSchema: schema })
    expect(body.response_format).toBeUndefined()
    expect(body.tools).toEqual([{ type: "function", function: { name: "respond", description: respondToolDescription, parameters: schema } }])
    expect(body.tool_choice).toEqual({ type: "function", function: { name: "respond" } })
    // without a schema there is no tool to build
    const bare = bodyOf({ functionType: "chat", jsonMode: "tool" })
    expect(bare.tools).toBeUndefined()
    expect(bare.response_format).toBeUndefined()
  })
})

describe("openai request: extra_body, extra_headers and authorization", () => {
  it("sends the API key as a bearer token, and no authorization without a key", () => {
    expect(built(call({})).headers).toEqual({ "content-type": "application/json", authorization: "Bearer sk-test" })
    expect(built(call({}, { apiKey: undefined })).headers).toEqual({ "content-type": "application/json" })
  })

  it("applies extra_body last, over what the gateway set", () => {
    const body = JSON.parse(built(call({ params: { temperature: 1 } }, {
      extraBody: [
        { pointer: "/temperature", value: 0 },
        { pointer: "/stream_options/include_usage", value: false },
        { pointer: "/messages/-", value: { role: "user", content: "added" } },
        { pointer: "/model", delete: true }
      ]
    }), true).body)
    expect(body.temperature).toBe(0)
    expect(body.stream_options).toEqual({ include_usage: false })
    expect(body.messages).toEqual([{ role: "user", content: "added" }])
    expect("model" in body).toBe(false)
  })

  it("fails this provider with the explanation of a configured extra_body edit that cannot be applied", () => {
    expect(openAiRequest(call({}, { extraBody: [{ pointer: "temperature", value: 0 }] }), "m", false)).toEqual(
      new ProviderFailure({ message: `extra_body pointer "temperature" must start with "/"`, timedOut: false })
    )
  })

  it("refuses the request (an InvalidRequest naming its field) when a request's own extra_body edit cannot be applied", () => {
    const edit = requestBodyEdit({ pointer: "/messages/0/content/x", value: 1 }, "extra_body[1]")
    const result = openAiRequest(call({ messages: [{ role: "user", content: [{ type: "text", text: "hi" }] }] }, { extraBody: [edit] }), "m", false)
    expect(result).toBeInstanceOf(InvalidRequest)
    expect((result as InvalidRequest).message).toBe(
      `extra_body[1].pointer: extra_body pointer "/messages/0/content/x" goes through a value that is not an object or array`
    )
  })

  it("applies extra_headers last, able to replace or delete the gateway's headers", () => {
    expect(built(call({}, {
      extraHeaders: [{ name: "Authorization", value: "Bearer other" }, { name: "OpenAI-Organization", value: "org-1" }]
    })).headers).toEqual({ "content-type": "application/json", Authorization: "Bearer other", "OpenAI-Organization": "org-1" })
    expect(built(call({}, { extraHeaders: [{ name: "AUTHORIZATION", delete: true }] })).headers).toEqual({
      "content-type": "application/json"
    })
  })
})

describe("chatCompletionsUrl", () => {
  it("appends chat/completions to the API base, with or without a trailing slash", () => {
    expect(chatCompletionsUrl("https://api.openai.com/v1/")).toBe("https://api.openai.com/v1/chat/completions")
    expect(chatCompletionsUrl("https://api.openai.com/v1")).toBe("https://api.openai.com/v1/chat/completions")
    expect(chatCompletionsUrl("http://127.0.0.1:8000/openai/v1")).toBe("http://127.0.0.1:8000/openai/v1/chat/completions")
  })
})
