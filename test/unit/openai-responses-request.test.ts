/**
 * The Responses surface's request translation (src/openaiResponses/request.ts, design 3.1):
 * what each field of a `responses.create` body becomes in the gateway's inference request, and
 * the 400s (and the 404) naming the field at fault.
 */
import * as Result from "effect/Result"
import { describe, expect, it } from "vitest"
import { NotFound } from "../../src/errors.ts"
import { decodeCreateResponse } from "../../src/openaiResponses/decode.ts"
import { storeWarning, translateCreateResponse } from "../../src/openaiResponses/request.ts"
import { translationOutcomes } from "../support/translations.ts"

const names = {
  isModel: (name: string) => name === "gpt-5",
  functionType: (name: string) => (name === "extract" ? "json" as const : name === "chat" ? "chat" as const : undefined),
  builtinTools: "drop" as const
}
// decoded as the handler decodes it, whose 400 names the field as the translation's do
const { ok, outcome: translate, refused } = translationOutcomes((body) =>
  Result.flatMap(decodeCreateResponse({ model: "gpt-5", ...body }), (decoded) => translateCreateResponse(decoded, names, { available: false }, { model: "gpt-5", ...body }))
)
const messages = (input: unknown) => ok({ input }).request.input.messages

describe("translateCreateResponse", () => {
  it("reads a configured model's bare name, and the gateway's prefixed names with their variant; an unknown name is a 404", () => {
    expect(ok({}).request).toMatchObject({ model_name: "gpt-5" })
    expect(ok({}).model).toBe("gpt-5")
    expect(ok({ model: "gateway::model_name::openai::gpt-4o" }).request.model_name).toBe("openai::gpt-4o")
    const pinned = ok({ model: "gateway::function_name::chat::variant_name::v1" })
    expect(pinned.request).toMatchObject({ function_name: "chat", variant_name: "v1" })
    expect(pinned.extras).toMatchObject({ modelField: "model", functionField: "model" })
    const unknown = translate({ model: "gpt-unknown" })
    expect(unknown).toBeInstanceOf(NotFound)
    expect((unknown as NotFound).message).toContain('"gpt-unknown"')
  })

  it("takes a string input as one user message, and instructions, system and developer messages as the system prompt", () => {
    expect(messages("Hello")).toEqual([{ role: "user", content: [{ type: "text", text: "Hello" }] }])
    const { request } = ok({
      instructions: "Be brief.",
      input: [
        { role: "developer", content: "Answer in French." },
        { role: "system", content: [{ type: "input_text", text: "No emojis." }] },
        { role: "user", content: "Hi" }
      ]
    })
    expect(request.input).toEqual({
      system: "Be brief.\n\nAnswer in French.\n\nNo emojis.",
      messages: [{ role: "user", content: [{ type: "text", text: "Hi" }] }]
    })
    expect(ok({ input: "x" }).request.input.system).toBeUndefined()
  })

  it("turns user parts into texts and files: images by URL or data URL, files by data URL or URL", () => {
    expect(messages([{
      type: "message",
      role: "user",
      content: [
        { type: "input_text", text: "look" },
        { type: "input_image", image_url: "https://example.com/a.png", detail: "high" },
        { type: "input_image", image_url: "data:image/png;base64,iVBO", detail: "auto" },
        { type: "input_file", file_data: "data:application/pdf;base64,JVBE", filename: "a.pdf" },
        { type: "input_file", file_data: "JVBE", filename: "b.PDF" },
        { type: "input_file", file_url: "https://example.com/c.pdf" }
      ]
    }])).toEqual([{
      role: "user",
      content: [
        { type: "text", text: "look" },
        { type: "file", file_type: "url", url: "https://example.com/a.png", detail: "high" },
        { type: "file", file_type: "base64", data: "iVBO", mime_type: "image/png", detail: "auto" },
        { type: "file", file_type: "base64", data: "JVBE", mime_type: "application/pdf" },
        { type: "file", file_type: "base64", data: "JVBE", mime_type: "application/pdf" },
        { type: "file", file_type: "url", url: "https://example.com/c.pdf" }
      ]
    }])
  })

  it("joins a turn's reasoning, message and calls into one assistant message, and the calls' outputs into one user message", () => {
    expect(messages([
      { role: "user", content: "Weather in Paris and London?" },
      { type: "reasoning", id: "rs_1", summary: [{ type: "summary_text", text: "Two cities." }, { type: "summary_text", text: "Two calls." }], encrypted_content: "gAAAA-sig" },
      { type: "message", role: "assistant", id: "msg_1", status: "completed", content: [{ type: "output_text", text: "Checking.", annotations: [] }] },
      { type: "function_call", id: "fc_1", call_id: "call_a", name: "get_weather", arguments: '{"city":"Paris"}' },
      { type: "function_call", id: "fc_2", call_id: "call_b", name: "get_weather", arguments: '{"city":"London"}' },
      { type: "function_call_output", call_id: "call_a", output: "sunny" },
      { type: "function_call_output", call_id: "call_b", output: [{ type: "input_text", text: "rain" }, { type: "input_text", text: "12°C" }] },
      { type: "custom_tool_call", call_id: "call_c", name: "apply_patch", input: "*** Begin Patch" },
      { type: "custom_tool_call_output", call_id: "call_c", output: "done" }
    ])).toEqual([
      { role: "user", content: [{ type: "text", text: "Weather in Paris and London?" }] },
      {
        role: "assistant",
        content: [
          { type: "thought", text: "Two cities.\n\nTwo calls.", signature: "gAAAA-sig", provider_type: "openai" },
          { type: "text", text: "Checking." },
          { type: "tool_call", id: "call_a", name: "get_weather", arguments: '{"city":"Paris"}' },
          { type: "tool_call", id: "call_b", name: "get_weather", arguments: '{"city":"London"}' }
        ]
      },
      {
        role: "user",
        content: [
          { type: "tool_result", id: "call_a", name: "get_weather", result: "sunny" },
          { type: "tool_result", id: "call_b", name: "get_weather", result: "rain\n12°C" }
        ]
      },
      { role: "assistant", content: [{ type: "tool_call", id: "call_c", name: "apply_patch", arguments: "*** Begin Patch" }] },
      { role: "user", content: [{ type: "tool_result", id: "call_c", name: "apply_patch", result: "done" }] }
    ])
  })

  it("takes an assistant's refusal as its text, and leaves out a reasoning item with neither text nor signature", () => {
    expect(messages([
      { type: "reasoning", summary: [] },
      { role: "assistant", content: [{ type: "refusal", refusal: "I can't." }] }
    ])).toEqual([{ role: "assistant", content: [{ type: "text", text: "I can't." }] }])
  })

  it("refuses, naming the item or part: file ids, files in assistant and system messages and tool outputs, item references, unknown items", () => {
    expect(refused({ input: [{ role: "user", content: [{ type: "input_image", file_id: "file-1", detail: "auto" }] }] }))
      .toBe("input[0].content[0].file_id: file ids need the Files API, which the gateway does not serve; send image_url")
    expect(refused({ input: [{ role: "user", content: [{ type: "input_file", file_data: "JVBE", filename: "a.txt" }] }] }))
      .toBe("input[0].content[0].file_data: expected a data URL (data:<media type>;base64,...)")
    expect(refused({ input: [{ role: "assistant", content: [{ type: "input_image", image_url: "https://x/a.png" }] }] }))
      .toBe("input[0].content[0]: input_image parts are taken in user messages only")
    expect(refused({ input: [{ role: "developer", content: [{ type: "refusal", refusal: "no" }] }] })).toBe("input[0].content[0]: a developer message takes input_text parts only")
    expect(refused({ input: [{ type: "function_call_output", call_id: "c", output: [{ type: "input_image", image_url: "https://x/a.png" }] }] }))
      .toBe("input[0].output[0]: images and files in a tool's output are not supported yet")
    expect(refused({ input: [{ type: "item_reference", id: "msg_1" }] }))
      .toBe("input[0]: item references point into stored responses, which are not served yet; send the item itself")
    expect(refused({ input: [{ role: "user", content: "a" }, { type: "web_search_call", id: "ws_1" }] })).toBe('input[1]: items of type "web_search_call" are not served')
    expect(refused({ input: [{ type: "function_call", call_id: "c", name: "f" }] })).toBe("input[0].arguments: missing field")
    expect(refused({ input: ["hi"] })).toBe("input[0]: expected an object")
    expect(refused({ input: [{ role: "user", content: [{ type: "input_audio", data: "x" }] }] })).toMatch(/^input\[0\]\.content\[0\]: Expected a content part of type/)
  })

  it("offers function and custom tools, compiling schemas to name the field at fault", () => {
    const parameters = { type: "object", properties: { city: { type: "string" } }, required: ["city"] }
    const { request, extras } = ok({
      tools: [
        { type: "function", name: "get_weather", description: "The weather", parameters, strict: true },
        { type: "function", name: "now" },
        { type: "custom", name: "apply_patch", description: "Patch files", format: { type: "text" } }
      ]
    })
    expect(request.additional_tools).toEqual([
      { name: "get_weather", description: "The weather", parameters, strict: true },
      { name: "now", description: "", parameters: { type: "object", properties: {} }, strict: undefined }
    ])
    expect(extras.customTools).toEqual([{ name: "apply_patch", description: "Patch files", format: { type: "text" } }])
    expect(refused({ tools: [{ type: "function", name: "f", parameters: { type: "nonsense" } }] })).toMatch(/^tools\[0\]\.parameters: /)
    expect(refused({ tools: [{ type: "function", description: "no name" }] })).toBe("tools[0].name: missing field")
  })

  it("reads tool_choice and parallel_tool_calls as the chat route does", () => {
    expect(ok({ tool_choice: "required" }).request.tool_choice).toBe("required")
    expect(ok({ tool_choice: { type: "function", name: "get_weather" } }).request.tool_choice).toEqual({ specific: "get_weather" })
    const allowed = ok({ tool_choice: { type: "allowed_tools", mode: "auto", tools: [{ type: "function", name: "a" }, { type: "function", name: "b" }] } })
    expect(allowed.request).toMatchObject({ tool_choice: "auto", allowed_tools: ["a", "b"] })
    expect(ok({ parallel_tool_calls: false }).request.parallel_tool_calls).toBe(false)
  })

  const family = { provider_family: "openai_responses" }
  const familyEdits = (translated: { extras: { surfaceEdits?: { body: ReadonlyArray<{ scope: unknown; edit: object }> } } }) =>
    (translated.extras.surfaceEdits?.body ?? []).map(({ scope, edit }) => ({ scope, edit: { ...edit } }))

  it("passes built-in tools, as sent, to the Responses API's providers, and a choice naming one", () => {
    const webSearch = { type: "web_search", search_context_size: "low", user_location: { type: "approximate", country: "FR" } }
    const translated = ok({ tools: [{ type: "function", name: "f" }, webSearch], tool_choice: { type: "web_search_preview" } })
    expect(translated.request.additional_tools?.map((tool) => tool.name)).toEqual(["f"])
    expect(translated.extras.builtinTools).toEqual([{ family: "openai_responses", refuseElsewhere: false, label: 'tools[1] ("web_search")', tool: webSearch }])
    expect(translated.request.tool_choice).toBeUndefined()
    expect(familyEdits(translated)).toEqual([{ scope: family, edit: { pointer: "/tool_choice", value: { type: "web_search_preview" } } }])
    // "required" among built-in tools only is theirs too; "auto" is everyone's
    expect(ok({ tools: [webSearch], tool_choice: "required" }).request.tool_choice).toBeUndefined()
    expect(ok({ tools: [webSearch], tool_choice: "auto" }).request.tool_choice).toBe("auto")
  })

  it("reads another family's signature from its wrapping", () => {
    const input = [
      { type: "reasoning", id: "rs_1", summary: [], encrypted_content: "gateway.v1.anthropic.EqQBCkYI" },
      { type: "message", role: "assistant", content: [{ type: "output_text", text: "a" }] }
    ]
    expect(messages(input)?.[0].content[0]).toEqual({ type: "thought", text: "", signature: "EqQBCkYI", provider_type: "anthropic" })
  })

  it("passes the Responses API's own fields to its providers as sent", () => {
    const translated = ok({
      user: "u-1",
      include: ["reasoning.encrypted_content"],
      prompt_cache_key: "k",
      safety_identifier: "s",
      reasoning: { effort: "low", summary: "auto" }
    })
    expect(familyEdits(translated)).toEqual([
      { scope: family, edit: { pointer: "/user", value: "u-1" } },
      { scope: family, edit: { pointer: "/include", value: ["reasoning.encrypted_content"] } },
      { scope: family, edit: { pointer: "/safety_identifier", value: "s" } },
      { scope: family, edit: { pointer: "/prompt_cache_key", value: "k" } },
      { scope: family, edit: { pointer: "/reasoning/summary", value: "auto" } }
    ])
    expect(ok({}).extras.surfaceEdits).toBeUndefined()
  })

  it("sets the sampling parameters, the output limit and the reasoning effort", () => {
    const { request } = ok({
      max_output_tokens: 256,
      temperature: 0.3,
      top_p: 0.9,
      reasoning: { effort: "low", summary: "auto" },
      service_tier: "flex",
      text: { verbosity: "low" }
    })
    expect(request.params).toEqual({
      chat_completion: { max_tokens: 256, temperature: 0.3, top_p: 0.9, reasoning_effort: "low", service_tier: "flex", verbosity: "low" }
    })
    expect(ok({}).request.params).toBeUndefined()
    expect(refused({ max_output_tokens: 0 })).toBe("max_output_tokens: expected a positive integer, got 0")
  })

  it("reads text.format: json_object, and json_schema as the output schema of a json function or the chat function's response format", () => {
    const schema = { type: "object", properties: { answer: { type: "string" } }, required: ["answer"] }
    expect(ok({ text: { format: { type: "json_object" } } }).request.params).toEqual({ chat_completion: { json_mode: "on" } })
    const json = ok({ model: "gateway::function_name::extract", text: { format: { type: "json_schema", name: "answer", schema, strict: true } } })
    expect(json.request).toMatchObject({ output_schema: schema, params: { chat_completion: { json_mode: "strict" } } })
    expect(json.extras.responseSchema).toBeUndefined()
    const chat = ok({ model: "gateway::function_name::chat", text: { format: { type: "json_schema", name: "answer", schema } } })
    expect(chat.request.output_schema).toBeUndefined()
    expect(chat.extras.responseSchema).toEqual(schema)
    expect(refused({ text: { format: { type: "json_schema", name: "x", schema: { type: 12 } } } })).toMatch(/^text\.format\.schema: /)
  })

  it("tags the inference with its surface, the metadata and gateway::tags; refuses metadata past OpenAI's bounds or in the gateway's names", () => {
    const { request } = ok({ metadata: { team: "search", user: "m" }, "gateway::tags": { user: "g" }, "gateway::namespace": "ns" })
    expect(request.tags).toEqual({ team: "search", user: "g", "gateway::namespace": "ns", "gateway::surface": "openai_responses" })
    expect(refused({ metadata: { "gateway::surface": "x" } })).toBe('metadata.gateway::surface: tags starting with "gateway::" are reserved for the gateway')
    expect(refused({ metadata: Object.fromEntries(Array.from({ length: 17 }, (_, i) => [`k${i}`, "v"])) })).toBe("metadata: at most 16 keys, got 17")
    expect(refused({ metadata: { k: "v".repeat(513) } })).toBe("metadata.k: a value is at most 512 characters, got 513")
    expect(refused({ metadata: { ["k".repeat(65)]: "v" } })).toMatch(/^metadata: a key is at most 64 characters/)
  })

  it("passes the gateway's own fields as the chat route does", () => {
    const { request } = ok({ "gateway::episode_id": "0192d7a8-0000-7000-8000-000000000000", "gateway::dryrun": true, "gateway::cache_options": { enabled: "on" } })
    expect(request).toMatchObject({ episode_id: "0192d7a8-0000-7000-8000-000000000000", dryrun: true, cache_options: { enabled: "on" } })
  })

  it("answers store: false, with a warning when store: true was asked; reads stream and include", () => {
    expect(ok({}).warning).toBeUndefined()
    expect(ok({ store: false }).warning).toBeUndefined()
    expect(ok({ store: true })).toMatchObject({ warning: storeWarning, echo: { store: false } })
    expect(ok({ stream: true })).toMatchObject({ stream: true, request: { stream: true } })
    expect(ok({}).encryptedReasoning).toBe(false)
    expect(ok({ include: ["reasoning.encrypted_content"] }).encryptedReasoning).toBe(true)
  })

  it("with an analytics database, stores by default (tagged), not with store: false nor a dryrun", () => {
    const translate = (body: Record<string, unknown>) =>
      Result.getOrThrow(Result.flatMap(decodeCreateResponse({ model: "gpt-5", input: "hi", ...body }), (decoded) => translateCreateResponse(decoded, names, { available: true }, body)))
    const stored = translate({})
    expect(stored).toMatchObject({ store: true, echo: { store: true }, warning: undefined })
    expect(stored.request.tags).toMatchObject({ "gateway::surface": "openai_responses", "gateway::response_store": "true", "gateway::response_model": "gpt-5" })
    for (const body of [{ store: false }, { "gateway::dryrun": true }]) {
      const unstored = translate(body)
      expect(unstored).toMatchObject({ store: false, echo: { store: false } })
      expect(unstored.request.tags?.["gateway::response_store"]).toBeUndefined()
    }
  })

  it("puts the previous response's conversation first, in its episode, naming its tool calls' results", () => {
    const previous = {
      id: "0192d7a8-0000-7000-8000-00000000000a",
      episodeId: "0192d7a8-0000-7000-8000-00000000000e",
      messages: [
        { role: "user" as const, content: [{ type: "text" as const, text: "weather?" }] },
        { role: "assistant" as const, content: [{ type: "tool_call" as const, id: "call_1", name: "get_weather", arguments: "{}" }] }
      ]
    }
    const raw = {
      model: "gpt-5",
      previous_response_id: previous.id,
      instructions: "be brief",
      input: [{ type: "function_call_output", call_id: "call_1", output: "sunny" }]
    }
    const { request, echo } = Result.getOrThrow(translateCreateResponse(Result.getOrThrow(decodeCreateResponse(raw)), names, { available: true, previous }, raw))
    expect(request.input).toEqual({
      system: "be brief",
      messages: [...previous.messages, { role: "user", content: [{ type: "tool_result", id: "call_1", name: "get_weather", result: "sunny" }] }]
    })
    expect(request.episode_id).toBe(previous.episodeId)
    expect(request.tags?.["gateway::previous_response_id"]).toBe(previous.id)
    expect(echo.previous_response_id).toBe(previous.id)
  })

  it("refuses what needs state or features not served, naming the field", () => {
    expect(refused({ background: true })).toBe('background: background responses are not served; send "background": false')
    expect(refused({ conversation: "conv_1" })).toBe("conversation: conversations are not served; send the whole conversation in input")
    expect(refused({ prompt: { id: "pmpt_1" } })).toBe("prompt: stored prompts are not served; send instructions and input")
    expect(ok({ background: false, previous_response_id: null }).request.model_name).toBe("gpt-5")
  })

  it("echoes the request's settings, with OpenAI's defaults", () => {
    expect(ok({}).echo).toEqual({
      instructions: null,
      tools: [],
      tool_choice: "auto",
      parallel_tool_calls: true,
      temperature: null,
      top_p: null,
      max_output_tokens: null,
      text: { format: { type: "text" } },
      reasoning: { effort: null, summary: null },
      metadata: {},
      store: false,
      previous_response_id: null,
      truncation: "disabled"
    })
    expect(ok({ user: "u-1", temperature: 0.5, instructions: "x" }).echo).toMatchObject({ user: "u-1", temperature: 0.5, instructions: "x" })
  })
})
