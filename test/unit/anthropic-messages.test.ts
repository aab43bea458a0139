import { describe, expect, it } from "vitest"
import * as Result from "effect/Result"
import { MessagesRequest } from "../../src/anthropicMessages/api.ts"
import { type MessagesContext, translateMessages, type TranslatedMessages } from "../../src/anthropicMessages/request.ts"
import { anthropicError, anthropicErrorJson } from "../../src/api/anthropicMessages.ts"
import { messageBody } from "../../src/anthropicMessages/response.ts"
import { makeLenientDecoder } from "../../src/decode.ts"
import {
  AllProvidersFailed,
  AllVariantsFailed,
  Conflict,
  Forbidden,
  InternalError,
  InvalidRequest,
  MethodNotAllowed,
  NotFound,
  PayloadTooLarge,
  RateLimited,
  RequestTimeout,
  ServiceUnavailable,
  Unauthorized
} from "../../src/errors.ts"
import type { CompletedInference } from "../../src/inference/run.ts"

const decode = makeLenientDecoder(MessagesRequest)
const translate = (body: Record<string, unknown>, context: Partial<MessagesContext> = {}) => {
  const raw = { model: "claude", max_tokens: 100, messages: [], ...body }
  const decoded = decode(raw)
  if (!decoded.ok) throw new Error(JSON.stringify(decoded.issues))
  return Result.merge(translateMessages(decoded.value, { configuredModel: (name) => name === "claude", raw, builtinTools: "drop", ...context }))
}
const ok = (body: Record<string, unknown>, context: Partial<MessagesContext> = {}): TranslatedMessages => {
  const result = translate(body, context)
  if (result instanceof InvalidRequest || result instanceof NotFound) throw result
  return result
}
const refused = (body: Record<string, unknown>, context: Partial<MessagesContext> = {}): string => {
  const result = translate(body, context)
  if (result instanceof InvalidRequest || result instanceof NotFound) return result.message
  throw new Error("translated")
}
/** the blocks of one user message */
const blocks = (...content: ReadonlyArray<unknown>) => ok({ messages: [{ role: "user", content }] }).request.input.messages![0].content

describe("translateMessages", () => {
  it("reads a configured model's bare name, and the gateway's prefixed names with their variant", () => {
    const bare = ok({})
    expect(bare.request).toMatchObject({ model_name: "claude" })
    expect(bare.model).toBe("claude")
    expect(bare.extras).toEqual({ modelField: "model", functionField: "model" })
    expect(ok({ model: "gateway::model_name::openai::gpt-4o" }).request.model_name).toBe("openai::gpt-4o")
    const pinned = ok({ model: "gateway::function_name::f::variant_name::v1" })
    expect(pinned.request).toMatchObject({ function_name: "f", variant_name: "v1" })
    expect(pinned.model).toBe("gateway::function_name::f::variant_name::v1")
    expect(ok({ model: "gateway::function_name::f", "gateway::variant_name": "v2" }).request).toMatchObject({ function_name: "f", variant_name: "v2" })
  })

  it("refuses an unknown bare model (404), a malformed gateway name and a variant that disagrees (400)", () => {
    const unknown = translate({ model: "claude-x" })
    expect(unknown).toBeInstanceOf(NotFound)
    expect((unknown as NotFound).message)
      .toBe('model: unknown model "claude-x": not a configured model, nor gateway::function_name::<fn> or gateway::model_name::<model>')
    expect(refused({ model: "gateway::function_name::" })).toBe("model: the function_name after `gateway::function_name::` cannot be empty")
    expect(refused({ model: "gateway::other" }))
      .toBe('model: the `model` field must start with `gateway::function_name::` or `gateway::model_name::`, not "gateway::other"')
    expect(refused({ model: "gateway::function_name::f::variant_name::v1", "gateway::variant_name": "v2" }))
      .toBe('gateway::variant_name: "v2" differs from the variant "v1" that `model` names')
  })

  it("sets the sampling parameters, and the thinking budget when thinking is enabled", () => {
    const { request } = ok({
      max_tokens: 512,
      temperature: 0.5,
      top_p: 0.9,
      top_k: 40,
      stop_sequences: ["END"],
      thinking: { type: "enabled", budget_tokens: 1024 },
      metadata: { user_id: "u" },
      service_tier: "auto"
    })
    expect(request.params).toEqual({
      chat_completion: { max_tokens: 512, temperature: 0.5, top_p: 0.9, top_k: 40, stop_sequences: ["END"], thinking_budget_tokens: 1024 }
    })
    for (const thinking of [{ type: "disabled" }, { type: "adaptive" }]) {
      expect(ok({ thinking }).request.params).toEqual({ chat_completion: { max_tokens: 100 } })
    }
  })

  it("refuses counts that are not positive, naming the field", () => {
    expect(refused({ max_tokens: 0 })).toBe("max_tokens: expected a positive integer, got 0")
    expect(refused({ top_k: -1 })).toBe("top_k: expected a positive integer, got -1")
    expect(refused({ thinking: { type: "enabled", budget_tokens: 0 } })).toBe("thinking.budget_tokens: expected a positive integer, got 0")
  })

  it("takes the system prompt as a string, or its text blocks joined by blank lines", () => {
    expect(ok({ system: "be brief" }).request.input.system).toBe("be brief")
    expect(ok({ system: [{ type: "text", text: "one" }, { type: "text", text: "two" }] }).request.input.system).toBe("one\n\ntwo")
    expect(ok({}).request.input).toEqual({ messages: [] })
  })

  it("joins system messages, wherever they are (Claude Code's context), to the system prompt; their text blocks only", () => {
    const eph = { type: "ephemeral" }
    const translated = ok({
      system: [{ type: "text", text: "base" }],
      messages: [
        { role: "user", content: "hi" },
        { role: "system", content: [{ type: "text", text: "# Environment" }, { type: "text", text: "tools", cache_control: eph }] },
        { role: "assistant", content: "hello" },
        { role: "system", content: "later" }
      ]
    })
    expect(translated.request.input).toEqual({
      system: "base\n\n# Environment\n\ntools\n\nlater",
      messages: [{ role: "user", content: [{ type: "text", text: "hi" }] }, { role: "assistant", content: [{ type: "text", text: "hello" }] }]
    })
    expect(translated.extras.systemCacheControl).toEqual(eph)
    expect(ok({ messages: [{ role: "system", content: "only" }, { role: "user", content: "hi" }] }).request.input.system).toBe("only")
    expect(refused({ messages: [{ role: "system", content: [{ type: "image", source: { type: "url", url: "https://x/a.png" } }] }] }))
      .toBe('messages[0].content[0]: a system message holds text blocks only, not "image"')
  })

  it("turns a string content into a text block, and images and documents into files", () => {
    expect(ok({ messages: [{ role: "user", content: "hi" }] }).request.input.messages).toEqual([{ role: "user", content: [{ type: "text", text: "hi" }] }])
    expect(blocks(
      { type: "text", text: "look" },
      { type: "image", source: { type: "base64", media_type: "image/png", data: "iVBO" } },
      { type: "image", source: { type: "url", url: "https://example.com/a.png" } },
      { type: "document", source: { type: "base64", media_type: "application/pdf", data: "JVBE" } },
      { type: "document", source: { type: "url", url: "https://example.com/a.pdf" } },
      { type: "document", source: { type: "text", media_type: "text/plain", data: "héllo" } }
    )).toEqual([
      { type: "text", text: "look" },
      { type: "file", file_type: "base64", data: "iVBO", mime_type: "image/png" },
      { type: "file", file_type: "url", url: "https://example.com/a.png" },
      { type: "file", file_type: "base64", data: "JVBE", mime_type: "application/pdf" },
      { type: "file", file_type: "url", url: "https://example.com/a.pdf", mime_type: "application/pdf" },
      { type: "file", file_type: "base64", data: Buffer.from("héllo").toString("base64"), mime_type: "text/plain" }
    ])
  })

  it("turns tool uses into tool calls and names tool results after them; thinking into thoughts", () => {
    const { request } = ok({
      messages: [
        { role: "user", content: "weather?" },
        {
          role: "assistant",
          content: [
            { type: "thinking", thinking: "hmm", signature: "sig" },
            { type: "thinking", thinking: "more", signature: "" },
            { type: "tool_use", id: "t1", name: "get_weather", input: { city: "Paris" } }
          ]
        },
        {
          role: "user",
          content: [
            { type: "tool_result", tool_use_id: "t1", content: "sunny" },
            { type: "tool_result", tool_use_id: "t9", content: [{ type: "text", text: "a" }, { type: "text", text: "b" }] },
            { type: "tool_result", tool_use_id: "t1" }
          ]
        }
      ]
    })
    expect(request.input.messages!.slice(1)).toEqual([
      {
        role: "assistant",
        content: [
          { type: "thought", text: "hmm", signature: "sig", provider_type: "anthropic" },
          { type: "thought", text: "more" },
          { type: "tool_call", id: "t1", name: "get_weather", arguments: '{"city":"Paris"}' }
        ]
      },
      {
        role: "user",
        content: [
          { type: "tool_result", id: "t1", name: "get_weather", result: "sunny" },
          { type: "tool_result", id: "t9", name: "", result: "a\nb" },
          { type: "tool_result", id: "t1", name: "get_weather", result: "" }
        ]
      }
    ])
  })

  it("reads a signature another family made from its wrapping, and keeps redacted thinking for Anthropic-type providers", () => {
    const translated = ok({
      messages: [{
        role: "assistant",
        content: [
          { type: "thinking", thinking: "g", signature: "gateway.v1.gcp_vertex_gemini.CiQBc2ln" },
          { type: "redacted_thinking", data: "EmwKAhgBEgy" },
          { type: "text", text: "a" }
        ]
      }]
    })
    expect(translated.request.input.messages?.[0].content).toEqual([
      { type: "thought", text: "g", signature: "CiQBc2ln", provider_type: "gcp_vertex_gemini" },
      { type: "unknown", data: { type: "redacted_thinking", data: "EmwKAhgBEgy" }, provider_type: "anthropic" },
      { type: "text", text: "a" }
    ])
  })

  it("refuses images and documents inside a tool result, naming the block", () => {
    const image = { type: "image", source: { type: "url", url: "https://example.com/a.png" } }
    expect(refused({
      messages: [
        { role: "user", content: "hi" },
        { role: "assistant", content: [{ type: "tool_use", id: "t1", name: "f", input: {} }] },
        { role: "user", content: [{ type: "tool_result", tool_use_id: "t1", content: [{ type: "text", text: "a" }, image] }] }
      ]
    })).toBe("messages[2].content[0].content[1]: images and documents inside a tool_result are not supported yet")
  })

  it("offers custom tools, compiled, with their choice and parallel calls turned off when asked", () => {
    const schema = { type: "object", properties: { city: { type: "string" } } }
    const { request } = ok({
      tools: [
        { name: "a", description: "A", input_schema: schema, strict: true },
        { type: "custom", name: "b" },
        { type: null, name: "c", input_schema: schema }
      ],
      tool_choice: { type: "tool", name: "a", disable_parallel_tool_use: true }
    })
    expect(request.additional_tools).toEqual([
      { name: "a", description: "A", parameters: schema, strict: true },
      { name: "b", description: "", parameters: { type: "object", properties: {} }, strict: undefined },
      { name: "c", description: "", parameters: schema, strict: undefined }
    ])
    expect(request.tool_choice).toEqual({ specific: "a" })
    expect(request.parallel_tool_calls).toBe(false)
    const choice = (tool_choice: unknown) => ok({ tool_choice }).request
    expect(choice({ type: "auto" })).toMatchObject({ tool_choice: "auto", parallel_tool_calls: undefined })
    expect(choice({ type: "any", disable_parallel_tool_use: false })).toMatchObject({ tool_choice: "required", parallel_tool_calls: undefined })
    expect(choice({ type: "none" }).tool_choice).toBe("none")
    expect(ok({}).request).toMatchObject({ additional_tools: undefined, tool_choice: undefined })
  })

  it("refuses invalid input schemas, naming the tool", () => {
    expect(refused({ tools: [{ name: "a", input_schema: { type: "object", properties: 3 } }] }))
      .toBe("tools[0].input_schema: invalid JSON Schema: schema is invalid: data/properties must be object")
  })

  const anthropicOnly = { provider_family: "anthropic" }
  const bodyEditsOf = (translated: TranslatedMessages) =>
    (translated.extras.surfaceEdits?.body ?? []).map(({ scope, edit }) => ({ scope, edit: { ...edit } }))

  it("passes server tools, as sent, to Anthropic-type providers, and a choice among them", () => {
    const webSearch = { type: "web_search_20250305", name: "web_search", max_uses: 3, allowed_domains: ["example.com"] }
    const translated = ok({ tools: [{ name: "a" }, webSearch], tool_choice: { type: "tool", name: "web_search" } })
    expect(translated.request.additional_tools?.map((tool) => tool.name)).toEqual(["a"])
    expect(translated.extras.builtinTools).toEqual([{ family: "anthropic", refuseElsewhere: false, label: 'tools[1] ("web_search")', tool: webSearch }])
    // choosing the server tool is Anthropic's alone: elsewhere the model chooses
    expect(translated.request.tool_choice).toBeUndefined()
    expect(bodyEditsOf(translated)).toEqual([{ scope: anthropicOnly, edit: { pointer: "/tool_choice", value: { type: "tool", name: "web_search" } } }])
    expect(ok({ tools: [webSearch] }, { builtinTools: "refuse" }).extras.builtinTools?.[0].refuseElsewhere).toBe(true)
    // a choice among server tools only is not the gateway's either
    const only = ok({ tools: [webSearch], tool_choice: { type: "any" } })
    expect(only.request).toMatchObject({ additional_tools: undefined, tool_choice: undefined })
    expect(bodyEditsOf(only)).toEqual([{ scope: anthropicOnly, edit: { pointer: "/tool_choice", value: { type: "any" } } }])
    // a custom tool chosen beside server tools stays the gateway's choice
    expect(ok({ tools: [{ name: "a" }, webSearch], tool_choice: { type: "tool", name: "a" } }).request.tool_choice).toEqual({ specific: "a" })
  })

  it("passes Anthropic's fields the gateway does not model to Anthropic-type providers, as sent", () => {
    const translated = ok({
      metadata: { user_id: "u" },
      service_tier: "standard_only",
      context_management: { edits: [{ type: "clear_tool_uses_20250919" }] },
      "odd/name~": 1,
      thinking: { type: "enabled", budget_tokens: 2048, display: "summarized" }
    })
    expect(bodyEditsOf(translated)).toEqual([
      { scope: anthropicOnly, edit: { pointer: "/metadata", value: { user_id: "u" } } },
      { scope: anthropicOnly, edit: { pointer: "/service_tier", value: "standard_only" } },
      { scope: anthropicOnly, edit: { pointer: "/context_management", value: { edits: [{ type: "clear_tool_uses_20250919" }] } } },
      { scope: anthropicOnly, edit: { pointer: "/odd~1name~0", value: 1 } },
      { scope: anthropicOnly, edit: { pointer: "/thinking", value: { type: "enabled", budget_tokens: 2048, display: "summarized" } } }
    ])
    // the budget still reaches the other families
    expect(translated.request.params?.chat_completion?.thinking_budget_tokens).toBe(2048)
    expect(bodyEditsOf(ok({ thinking: { type: "adaptive" } }))).toEqual([
      { scope: anthropicOnly, edit: { pointer: "/thinking", value: { type: "adaptive" } } }
    ])
    expect(bodyEditsOf(ok({ thinking: { type: "enabled", budget_tokens: 2048 } }))).toEqual([])
  })

  it("keeps prompt-caching marks (blocks, tools, the system prompt) and a failed tool's is_error", () => {
    const eph = { type: "ephemeral" }
    const translated = ok({
      system: [{ type: "text", text: "a" }, { type: "text", text: "b", cache_control: eph }],
      tools: [{ name: "f", input_schema: { type: "object" }, cache_control: eph }],
      messages: [
        { role: "user", content: [{ type: "text", text: "doc", cache_control: eph }, { type: "image", source: { type: "url", url: "https://x/a.png" }, cache_control: eph }] },
        { role: "assistant", content: [{ type: "tool_use", id: "t1", name: "f", input: {}, cache_control: eph }] },
        { role: "user", content: [{ type: "tool_result", tool_use_id: "t1", content: "failed", is_error: true, cache_control: eph }] }
      ]
    })
    expect(translated.extras.systemCacheControl).toEqual(eph)
    expect(translated.request.input.system).toBe("a\n\nb")
    expect(translated.request.additional_tools?.[0].cache_control).toEqual(eph)
    expect(translated.request.input.messages).toEqual([
      { role: "user", content: [{ type: "text", text: "doc", cache_control: eph }, { type: "file", file_type: "url", url: "https://x/a.png", cache_control: eph }] },
      { role: "assistant", content: [{ type: "tool_call", id: "t1", name: "f", arguments: "{}", cache_control: eph }] },
      { role: "user", content: [{ type: "tool_result", id: "t1", name: "f", result: "failed", is_error: true, cache_control: eph }] }
    ])
    expect(ok({ system: "plain" }).extras.systemCacheControl).toBeUndefined()
  })

  it("passes anthropic-beta to Anthropic-type providers, and refuses one that cannot be sent", () => {
    const translated = ok({}, { beta: "context-management-2025-06-27,interleaved-thinking-2025-05-14" })
    expect(translated.extras.surfaceEdits?.headers.map(({ scope, edit }) => ({ scope, edit: { ...edit } }))).toEqual([
      { scope: anthropicOnly, edit: { name: "anthropic-beta", value: "context-management-2025-06-27,interleaved-thinking-2025-05-14" } }
    ])
    expect(refused({}, { beta: "a\nb" })).toMatch(/^anthropic-beta: /)
  })

  it("reads the gateway's fields, tags the surface, and copies stream", () => {
    const translated = ok({
      stream: true,
      "gateway::episode_id": "0192ced0-947e-74b3-a3d7-02fd2c54d637",
      "gateway::dryrun": true,
      "gateway::tags": { user: "u" },
      "gateway::namespace": "team-a"
    })
    expect(translated.stream).toBe(true)
    expect(translated.request).toMatchObject({ stream: true, episode_id: "0192ced0-947e-74b3-a3d7-02fd2c54d637", dryrun: true })
    expect(translated.request.tags).toEqual({ user: "u", "gateway::namespace": "team-a", "gateway::surface": "anthropic_messages" })
    expect(ok({}).stream).toBe(false)
    expect(ok({}).request.stream).toBe(false)
    expect(refused({ "gateway::tags": { "gateway::surface": "x" } }))
      .toBe('gateway::tags.gateway::surface: tags starting with "gateway::" are reserved for the gateway')
  })
})

describe("messageBody", () => {
  const translated = ok({ model: "claude", stop_sequences: ["END"] })
  const answer = (fields: Record<string, unknown>) => ({
    prepared: { inferenceId: "i", episodeId: "e" },
    variant: { name: "v" },
    output: [{ type: "text", text: "a" }],
    usage: { input_tokens: 10, output_tokens: 2 },
    otherCalls: [],
    ...fields
  }) as unknown as CompletedInference

  it("writes the blocks in order, the ids and the request's model", () => {
    const body = messageBody(
      answer({
        origin: { provider: { type: "openai", modelName: "gpt", settings: {} } },
        output: [
          { type: "thought", text: "hmm", signature: "sig" },
          { type: "thought", text: "no signature" },
          { type: "text", text: "calling" },
          { type: "tool_call", id: "t1", name: "f", arguments: { x: 1 }, raw_name: "f", raw_arguments: '{"x":1}' },
          { type: "tool_call", id: "t2", name: null, arguments: null, raw_name: "g", raw_arguments: "{not json" },
          { type: "unknown", data: { type: "redacted_thinking" }, model_provider_name: "m::p" }
        ],
        finishReason: "tool_call"
      }),
      translated
    )
    expect(body).toEqual({
      id: "i",
      type: "message",
      role: "assistant",
      model: "claude",
      content: [
        { type: "thinking", thinking: "hmm", signature: "sig" },
        { type: "thinking", thinking: "no signature", signature: "" },
        { type: "text", text: "calling" },
        { type: "tool_use", id: "t1", name: "f", input: { x: 1 } },
        { type: "tool_use", id: "t2", name: "g", input: {} }
      ],
      stop_reason: "tool_use",
      stop_sequence: null,
      usage: { input_tokens: 10, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 2 },
      gateway_episode_id: "e",
      gateway_variant_name: "v"
    })
  })

  it("wraps another family's signatures with their maker's type; passes an Anthropic provider's own blocks as they are", () => {
    const fromGemini = messageBody(answer({
      origin: { provider: { type: "google_ai_studio_gemini", modelName: "g", settings: {} } },
      output: [{ type: "thought", text: "t", signature: "CiQB", provider_type: "google_ai_studio_gemini" }, { type: "unknown", data: { type: "x" }, model_provider_name: "m::p" }]
    }), translated)
    expect(fromGemini.content).toEqual([{ type: "thinking", thinking: "t", signature: "gateway.v1.google_ai_studio_gemini.CiQB" }])
    const redacted = { type: "redacted_thinking", data: "EmwK" }
    const fromVertexClaude = messageBody(answer({
      origin: { provider: { type: "gcp_vertex_anthropic", modelName: "c", settings: {} } },
      output: [{ type: "thought", text: "t", signature: "EqQB", provider_type: "gcp_vertex_anthropic" }, { type: "unknown", data: redacted, model_provider_name: "m::p" }]
    }), translated)
    expect(fromVertexClaude.content).toEqual([{ type: "thinking", thinking: "t", signature: "EqQB" }, redacted])
  })

  it("answers a json function's output as one text block", () => {
    expect(messageBody(answer({ output: { raw: '{"a":1}', parsed: { a: 1 } } }), translated).content).toEqual([{ type: "text", text: '{"a":1}' }])
  })

  it("maps the finish reason, tool_use only when there is a tool call, and names the one stop sequence asked for", () => {
    const stop = (finishReason: string | undefined, t: TranslatedMessages = translated) => {
      const body = messageBody(answer({ finishReason }), t)
      return [body.stop_reason, body.stop_sequence]
    }
    expect(stop("stop")).toEqual(["end_turn", null])
    expect(stop("stop_sequence")).toEqual(["stop_sequence", "END"])
    expect(stop("stop_sequence", ok({ stop_sequences: ["A", "B"] }))).toEqual(["stop_sequence", null])
    expect(stop("stop_sequence", ok({}))).toEqual(["stop_sequence", null])
    expect(stop("length")).toEqual(["max_tokens", null])
    expect(stop("tool_call")).toEqual(["end_turn", null])
    expect(stop("content_filter")).toEqual(["refusal", null])
    expect(stop("unknown")).toEqual(["end_turn", null])
    expect(stop(undefined)).toEqual(["end_turn", null])
  })

  it("answers an Anthropic-type provider's own stop reason and matched sequence, and no other provider's", () => {
    const provider = (type: string) => ({ origin: { provider: { type, modelName: "m", settings: {} } } })
    const stop = (fields: Record<string, unknown>) => {
      const body = messageBody(answer(fields), translated)
      return [body.stop_reason, body.stop_sequence]
    }
    expect(stop({ ...provider("anthropic"), finishReason: "unknown", providerStop: { reason: "pause_turn" } })).toEqual(["pause_turn", null])
    expect(stop({ ...provider("gcp_vertex_anthropic"), finishReason: "stop_sequence", providerStop: { reason: "stop_sequence", sequence: "STOP" } }))
      .toEqual(["stop_sequence", "STOP"])
    expect(stop({ ...provider("anthropic"), finishReason: "length", providerStop: { reason: "model_context_window_exceeded" } }))
      .toEqual(["model_context_window_exceeded", null])
    // a reason newer than the gateway knows, or another family's, is read from the finish reason
    expect(stop({ ...provider("anthropic"), finishReason: "unknown", providerStop: { reason: "some_new_reason" } })).toEqual(["end_turn", null])
    expect(stop({ ...provider("openai"), finishReason: "length", providerStop: { reason: "pause_turn" } })).toEqual(["max_tokens", null])
  })

  it("counts input without the cache's reads and writes, over every model call", () => {
    const completed = answer({
      usage: { input_tokens: 110, output_tokens: 2, cached_input_tokens: 6, cache_write_input_tokens: 100 },
      otherCalls: [{ usage: { input_tokens: 5, output_tokens: 1 } }]
    })
    expect(messageBody(completed, translated).usage)
      .toEqual({ input_tokens: 9, cache_creation_input_tokens: 100, cache_read_input_tokens: 6, output_tokens: 3 })
  })
})

describe("anthropicError", () => {
  it("gives each gateway error Anthropic's status and type", () => {
    const cases = [
      [new InvalidRequest({ message: "m" }), 400, "invalid_request_error"],
      [new Conflict({ message: "m" }), 400, "invalid_request_error"],
      [new MethodNotAllowed({ message: "m" }), 405, "invalid_request_error"],
      [new Unauthorized({ message: "m" }), 401, "authentication_error"],
      [new Forbidden({ message: "m" }), 403, "permission_error"],
      [new NotFound({ message: "m" }), 404, "not_found_error"],
      [new PayloadTooLarge({ message: "m" }), 413, "request_too_large"],
      [new RateLimited({ message: "m", retryAfterS: 1 }), 429, "rate_limit_error"],
      [new AllProvidersFailed({ message: "m", kind: "rate_limited" }), 429, "rate_limit_error"],
      [new AllVariantsFailed({ message: "m", kind: "request" }), 400, "invalid_request_error"],
      [new AllProvidersFailed({ message: "m", kind: "upstream" }), 500, "api_error"],
      [new AllProvidersFailed({ message: "m", kind: "upstream", overloaded: true }), 529, "overloaded_error"],
      [new AllVariantsFailed({ message: "m", kind: "upstream", overloaded: true }), 529, "overloaded_error"],
      [new AllVariantsFailed({ message: "m", kind: "timeout" }), 500, "api_error"],
      [new RequestTimeout({ message: "m" }), 500, "api_error"],
      [new InternalError({ message: "m" }), 500, "api_error"],
      [new ServiceUnavailable({ message: "m" }), 529, "overloaded_error"]
    ] as const
    for (const [error, status, type] of cases) expect([error._tag, anthropicError(error)]).toEqual([error._tag, { status, type }])
  })

  it("writes Anthropic's error body", () => {
    expect(anthropicErrorJson(new NotFound({ message: "no such model" })))
      .toEqual({ type: "error", error: { type: "not_found_error", message: "no such model" } })
  })
})
