import * as Result from "effect/Result"
import { describe, expect, it } from "vitest"
import { InvalidRequest } from "../../src/errors.ts"
import type { CompletedInference } from "../../src/inference/run.ts"
import type { ChunkDelta } from "../../src/inference/types.ts"
import { ChatCompletionRequest } from "../../src/openaiCompatible/api.ts"
import { translateChatCompletion, type TranslatedRequest } from "../../src/openaiCompatible/request.ts"
import { chatCompletionBody, openAiStreamEncoder } from "../../src/openaiCompatible/response.ts"
import { makeLenientDecoder } from "../../src/decode.ts"

const decode = makeLenientDecoder(ChatCompletionRequest)
const translate = (body: unknown, type: "chat" | "json" = "chat") => {
  const decoded = decode(body)
  if (!decoded.ok) throw new Error(JSON.stringify(decoded.issues))
  return Result.merge(translateChatCompletion(decoded.value, () => type))
}
const ok = (result: ReturnType<typeof translate>): TranslatedRequest => {
  if (result instanceof InvalidRequest) throw result
  return result
}

describe("translateChatCompletion", () => {
  it("joins system messages, keeps tool results together and puts extra content back in place", () => {
    const { request } = ok(translate({
      model: "gateway::model_name::dummy::echo_request_messages",
      messages: [
        { role: "system", content: "one" },
        { role: "developer", content: [{ type: "text", text: "two" }] },
        { role: "user", content: "hi" },
        {
          role: "assistant",
          content: "calling",
          tool_calls: [{ id: "c1", type: "function", function: { name: "f", arguments: "{}" } }],
          gateway_extra_content: [{ type: "thought", text: "hmm", insert_index: 0 }]
        },
        { role: "tool", tool_call_id: "c1", content: "42" },
        { role: "tool", tool_call_id: "c2", content: [{ type: "text", text: "43" }] }
      ]
    }))
    expect(request.model_name).toBe("dummy::echo_request_messages")
    expect(request.input).toEqual({
      system: "one\ntwo",
      messages: [
        { role: "user", content: "hi" },
        {
          role: "assistant",
          content: [
            { type: "thought", text: "hmm", signature: undefined },
            { type: "text", text: "calling" },
            { type: "tool_call", id: "c1", name: "f", arguments: "{}" }
          ]
        },
        { role: "user", content: [{ type: "tool_result", id: "c1", name: "f", result: "42" }, { type: "tool_result", id: "c2", name: "", result: "43" }] }
      ]
    })
  })

  it("turns system parts into the system template's arguments: a template part, or a text part with gateway::arguments", () => {
    const system = (...messages: ReadonlyArray<unknown>) => ok(translate({ model: "gateway::function_name::f", messages })).request.input.system
    expect(system({ role: "system", content: [{ type: "gateway::template", name: "system", arguments: { assistant_name: "Ada" } }] }))
      .toEqual({ assistant_name: "Ada" })
    expect(system({ role: "developer", content: [{ type: "text", "gateway::arguments": { assistant_name: "Bo" } }] }))
      .toEqual({ assistant_name: "Bo" })
    // texts and raw texts, in one message or several, are one system prompt
    expect(system(
      { role: "system", content: [{ type: "text", text: "a" }, { type: "gateway::raw_text", value: "{{ b }}" }] },
      { role: "user", content: "hi" },
      { role: "system", content: "c" }
    )).toBe("a\n{{ b }}\nc")
  })

  it("refuses system parts that are not one text or one set of arguments, naming the part", () => {
    const refused = (...messages: ReadonlyArray<unknown>) =>
      (translate({ model: "gateway::function_name::f", messages }) as InvalidRequest).message
    const template = { type: "gateway::template", name: "system", arguments: { assistant_name: "Ada" } }
    expect(refused({ role: "system", content: [{ type: "gateway::template", name: "greeting", arguments: {} }] }))
      .toBe('messages[0].content[0].name: a system message renders the "system" template, not "greeting"')
    expect(refused({ role: "system", content: [template, { type: "text", "gateway::arguments": {} }] }))
      .toBe("messages[0].content[1]: the system template's arguments are given twice")
    expect(refused({ role: "system", content: [template] }, { role: "system", content: "and text" }))
      .toBe("messages: system messages carry either text or the system template's arguments, not both")
    expect(refused({ role: "system", content: [{ type: "image_url", image_url: { url: "https://example.com/a.png" } }] }))
      .toBe("messages[0].content[0]: System message must contain only text or template content blocks (text, gateway::raw_text and gateway::template parts), not image_url")
    expect(refused({ role: "system", content: [{ type: "text" }] }))
      .toBe("messages[0].content[0]: a text part takes exactly one of text or gateway::arguments")
  })

  it("takes the smaller of max_tokens and max_completion_tokens, and lets gateway::params win over response_format", () => {
    const { request } = ok(translate({
      model: "gateway::function_name::f",
      messages: [],
      max_tokens: 50,
      max_completion_tokens: 20,
      stop: "END",
      response_format: { type: "json_object" },
      "gateway::params": { chat_completion: { json_mode: "off", temperature: 0.1 } }
    }))
    expect(request.params).toEqual({ chat_completion: { max_tokens: 20, stop_sequences: ["END"], json_mode: "off", temperature: 0.1 } })
  })

  it("sends a json_schema to a json function as its output schema, to a chat function's provider otherwise", () => {
    const schema = { type: "object", properties: { a: { type: "string" } } }
    const body = { model: "gateway::function_name::f", messages: [], response_format: { type: "json_schema", json_schema: { name: "x", schema } } }
    const json = ok(translate(body, "json"))
    expect(json.request.output_schema).toEqual(schema)
    expect(json.extras.responseSchema).toBeUndefined()
    const chat = ok(translate(body, "chat"))
    expect(chat.request.output_schema).toBeUndefined()
    expect(chat.extras.responseSchema).toEqual(schema)
    expect(chat.request.params?.chat_completion?.json_mode).toBe("strict")
  })

  it("refuses other model names, empty names after a prefix, and n other than 1", () => {
    expect((translate({ model: "gpt-4o", messages: [] }) as InvalidRequest).message)
      .toBe("model: the `model` field must start with `gateway::function_name::` or `gateway::model_name::`, not \"gpt-4o\"")
    expect((translate({ model: "gateway::function_name::", messages: [] }) as InvalidRequest).message)
      .toBe("model: the function_name after `gateway::function_name::` cannot be empty")
    expect((translate({ model: "gateway::model_name::dummy::x", messages: [], n: 2 }) as InvalidRequest).message)
      .toBe("n: only 1 choice is supported, got 2")
  })

  it("reads a variant pinned in model, as answers name it, agreeing with gateway::variant_name", () => {
    const pinned = ok(translate({ model: "gateway::function_name::f::variant_name::v1", messages: [] }))
    expect(pinned.request).toMatchObject({ function_name: "f", variant_name: "v1" })
    const both = ok(translate({ model: "gateway::function_name::f::variant_name::v1", messages: [], "gateway::variant_name": "v1" }))
    expect(both.request.variant_name).toBe("v1")
    const byField = ok(translate({ model: "gateway::function_name::f", messages: [], "gateway::variant_name": "v2" }))
    expect(byField.request).toMatchObject({ function_name: "f", variant_name: "v2" })
    expect((translate({ model: "gateway::function_name::f::variant_name::v1", messages: [], "gateway::variant_name": "v2" }) as InvalidRequest).message)
      .toBe("gateway::variant_name: \"v2\" differs from the variant \"v1\" that `model` names")
    expect((translate({ model: "gateway::function_name::f::variant_name::", messages: [] }) as InvalidRequest).message)
      .toBe("model: the variant_name after `::variant_name::` cannot be empty")
    expect((translate({ model: "gateway::function_name::::variant_name::v1", messages: [] }) as InvalidRequest).message)
      .toBe("model: the function_name after `gateway::function_name::` cannot be empty")
    // a model's name is taken whole: shorthand names carry `::` of their own
    expect(ok(translate({ model: "gateway::model_name::dummy::x::variant_name::y", messages: [] })).request.model_name)
      .toBe("dummy::x::variant_name::y")
  })

  it("turns allowed_tools into a mode and a list, and a namespace into a tag", () => {
    const { request, extras } = ok(translate({
      model: "gateway::model_name::dummy::x",
      messages: [],
      tools: [
        { type: "function", function: { name: "a", parameters: { type: "object" } } },
        { type: "custom", custom: { name: "b", format: { type: "text" } } }
      ],
      tool_choice: { type: "allowed_tools", allowed_tools: { mode: "required", tools: [{ type: "custom", custom: { name: "b" } }] } },
      "gateway::namespace": "team-a",
      "gateway::tags": { user: "u" }
    }))
    expect(request.tool_choice).toBe("required")
    expect(request.allowed_tools).toEqual(["b"])
    expect(request.additional_tools).toEqual([{ name: "a", description: "", parameters: { type: "object" }, strict: undefined }])
    expect(extras.customTools).toEqual([{ name: "b", description: undefined, format: { type: "text" } }])
    expect(request.tags).toEqual({ user: "u", "gateway::namespace": "team-a" })
  })
})

describe("chatCompletionBody", () => {
  const options = { includeRawUsage: false, includeRawResponse: false } as TranslatedRequest
  const answer = (request: Record<string, unknown>, functionName: string, variantName: string) => ({
    prepared: { inferenceId: "i", episodeId: "e", functionName, fn: { type: "chat" }, tools: undefined, request },
    variant: { name: variantName },
    origin: { modelInferenceId: "m", provider: { type: "openai" } },
    output: [{ type: "text", text: "a" }],
    usage: { input_tokens: 1, output_tokens: 2 },
    rawResponse: "{}",
    otherCalls: []
  }) as unknown as CompletedInference

  it("names what answered in model: the function and its variant, or the model called; created is the caller's time", () => {
    expect(chatCompletionBody(answer({ function_name: "weather" }, "weather", "v2"), options, 1_700_000_000)).toMatchObject({
      model: "gateway::function_name::weather::variant_name::v2",
      created: 1_700_000_000
    })
    expect(chatCompletionBody(answer({ model_name: "openai::gpt-4o-mini" }, "gateway::default", "openai::gpt-4o-mini"), options, 5).model)
      .toBe("gateway::model_name::openai::gpt-4o-mini")
  })

  it("streams the same model and created in every chunk", () => {
    const { prepared, variant } = answer({ function_name: "weather" }, "weather", "v2")
    const encoder = openAiStreamEncoder(prepared, variant, [], options, 42)
    const chunk = JSON.parse(encoder.chunk({ content: [{ type: "text", id: "0", text: "hi" }], raw: "" })!.slice("data: ".length))
    expect(chunk).toMatchObject({ model: "gateway::function_name::weather::variant_name::v2", created: 42, object: "chat.completion.chunk", usage: null })
  })

  it("streams a thought's pieces, its signature included, with the insert_index of its block among the answer's", () => {
    const { prepared, variant } = answer({ function_name: "weather" }, "weather", "v2")
    const encoder = openAiStreamEncoder(prepared, variant, [], options, 42)
    const delta = (content: ReadonlyArray<ChunkDelta>) => JSON.parse(encoder.chunk({ content, raw: "" })!.slice("data: ".length)).choices[0].delta
    expect(delta([{ type: "text", id: "0", text: "Hi" }])).toEqual({ role: "assistant", content: "Hi" })
    expect(delta([{ type: "thought", id: "1", text: "hmm" }])).toEqual({ gateway_extra_content: [{ type: "thought", insert_index: 1, text: "hmm" }] })
    expect(delta([{ type: "text", id: "0", text: "!" }, { type: "thought", id: "1", text: "", signature: "sig" }])).toEqual({
      content: "!",
      gateway_extra_content: [{ type: "thought", insert_index: 1, text: "", signature: "sig" }]
    })
    expect(delta([{ type: "thought", id: "2", text: "more" }])).toEqual({ gateway_extra_content: [{ type: "thought", insert_index: 2, text: "more" }] })
    // a chunk with nothing to say, and no raw text asked for, is not sent
    expect(encoder.chunk({ content: [], raw: "{}" })).toBeUndefined()
  })

  it("reports unknown blocks with their model and provider apart, as a client sends them back", () => {
    const completed = {
      prepared: { inferenceId: "i", episodeId: "e", fn: { type: "chat" }, tools: undefined, request: {} },
      variant: { name: "v" },
      origin: { modelInferenceId: "m", provider: { type: "openai" } },
      output: [
        { type: "text", text: "a" },
        { type: "unknown", data: { x: 1 }, model_provider_name: "gateway::model_name::gpt::provider_name::main" }
      ],
      usage: { input_tokens: 1, output_tokens: 2 },
      finishReason: "stop",
      rawResponse: "{}",
      otherCalls: []
    } as unknown as CompletedInference
    const body = chatCompletionBody(completed, options, 0)
    expect(body.choices[0].message).toEqual({
      role: "assistant",
      content: "a",
      gateway_extra_content: [{ type: "unknown", insert_index: 1, data: { x: 1 }, model_name: "gpt", provider_name: "main" }]
    })
    expect(body.usage).toEqual({ prompt_tokens: 1, completion_tokens: 2, total_tokens: 3, gateway_cost: null })
  })

  it("reports the call's cost as gateway_cost, and prompt-cache reads as prompt_tokens_details.cached_tokens", () => {
    const completed = {
      ...answer({ function_name: "weather" }, "weather", "v2"),
      usage: { input_tokens: 10, output_tokens: 2, cached_input_tokens: 6 },
      cost: 0.0042
    } as CompletedInference
    expect(chatCompletionBody(completed, options, 0).usage).toEqual({
      prompt_tokens: 10,
      completion_tokens: 2,
      total_tokens: 12,
      prompt_tokens_details: { cached_tokens: 6 },
      gateway_cost: 0.0042
    })
  })
})
