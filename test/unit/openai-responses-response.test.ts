/**
 * The Responses surface's whole answer (src/openaiResponses/response.ts and items.ts, design
 * 3.2): the `response` object a client reads, its items and their ids, its status and usage.
 */
import * as Result from "effect/Result"
import { describe, expect, it } from "vitest"
import type { CompletedInference } from "../../src/inference/run.ts"
import type { ToolConfig } from "../../src/inference/types.ts"
import { decodeCreateResponse } from "../../src/openaiResponses/decode.ts"
import { translateCreateResponse, type TranslatedResponse } from "../../src/openaiResponses/request.ts"
import { responseBody } from "../../src/openaiResponses/response.ts"

const inferenceId = "0192d7a8-1c2b-7d3e-8f40-5a6b7c8d9e0f"
const stem = "0192d7a81c2b7d3e8f405a6b7c8d9e0f"

const translated = (body: Record<string, unknown> = {}): TranslatedResponse => {
  const raw = { model: "gpt-5", input: "hi", ...body }
  return Result.getOrThrow(translateCreateResponse(Result.getOrThrow(decodeCreateResponse(raw)), { isModel: () => true, functionType: () => undefined, builtinTools: "drop" }, { available: false }, raw))
}

const tools = {
  tools: [
    { name: "get_weather", parameters: {} },
    { name: "apply_patch", parameters: {}, custom: {} }
  ],
  choice: { type: "auto" }
} as unknown as ToolConfig

/** the message item of block `block`, with its text, as the whole answer writes it */
const assistantMessage = (block: number, text: string) => ({
  id: `msg_${stem}_${block}`,
  type: "message",
  role: "assistant",
  status: "completed",
  content: [{ type: "output_text", text, annotations: [], logprobs: [] }]
})

const answer = (fields: Record<string, unknown>) => ({
  prepared: { inferenceId, episodeId: "episode-1", tools },
  variant: { name: "v1" },
  output: [{ type: "text", text: "Hello" }],
  usage: { input_tokens: 10, output_tokens: 2 },
  finishReason: "stop",
  otherCalls: [],
  ...fields
}) as unknown as CompletedInference

describe("responseBody", () => {
  it("answers OpenAI's response object: the inference id, the request's model and settings, the episode and the variant", () => {
    const body = responseBody(answer({}), translated({ instructions: "Be brief.", temperature: 0.2, metadata: { team: "search" }, user: "u-1" }), 1_700_000_000)
    expect(body).toEqual({
      id: inferenceId,
      object: "response",
      created_at: 1_700_000_000,
      status: "completed",
      incomplete_details: null,
      error: null,
      model: "gpt-5",
      output: [assistantMessage(0, "Hello")],
      output_text: "Hello",
      instructions: "Be brief.",
      tools: [],
      tool_choice: "auto",
      parallel_tool_calls: true,
      temperature: 0.2,
      top_p: null,
      max_output_tokens: null,
      text: { format: { type: "text" } },
      reasoning: { effort: null, summary: null },
      metadata: { team: "search" },
      store: false,
      previous_response_id: null,
      truncation: "disabled",
      user: "u-1",
      usage: { input_tokens: 10, input_tokens_details: { cached_tokens: 0 }, output_tokens: 2, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 12 },
      gateway_episode_id: "episode-1",
      gateway_variant_name: "v1"
    })
  })

  it("writes the blocks as items in order, ids from the inference and the block's index; consecutive texts make one message", () => {
    const body = responseBody(answer({
      output: [
        { type: "thought", text: "Two cities.", signature: "sig" },
        { type: "text", text: "Checking " },
        { type: "text", text: "both." },
        { type: "tool_call", id: "call_a", name: "get_weather", arguments: { city: "Paris" }, raw_name: "get_weather", raw_arguments: '{"city":"Paris"}' },
        { type: "tool_call", id: "call_b", name: null, arguments: null, raw_name: "get_wether", raw_arguments: "{not json" },
        { type: "tool_call", id: "call_c", name: "apply_patch", arguments: "*** Begin", raw_name: "apply_patch", raw_arguments: "*** Begin" },
        { type: "unknown", data: { type: "web_search_call" }, model_provider_name: "m::p" },
        { type: "thought", text: "", signature: "sig-2" },
        { type: "text", text: "Done." }
      ],
      finishReason: "tool_call"
    }), translated(), 0)
    expect(body.output).toEqual([
      { id: `rs_${stem}_0`, type: "reasoning", summary: [{ type: "summary_text", text: "Two cities." }] },
      assistantMessage(1, "Checking both."),
      { id: `fc_${stem}_3`, type: "function_call", call_id: "call_a", name: "get_weather", arguments: '{"city":"Paris"}', status: "completed" },
      // a call the model made up is the model's call all the same: the client decides
      { id: `fc_${stem}_4`, type: "function_call", call_id: "call_b", name: "get_wether", arguments: "{not json", status: "completed" },
      { id: `ctc_${stem}_5`, type: "custom_tool_call", call_id: "call_c", name: "apply_patch", input: "*** Begin" },
      { id: `rs_${stem}_7`, type: "reasoning", summary: [] },
      assistantMessage(8, "Done.")
    ])
    expect(body.output_text).toBe("Checking both.Done.")
    expect(body.status).toBe("completed")
  })

  it("gives a thought's signature as encrypted_content when include asks for it", () => {
    const output = [{ type: "thought", text: "hmm", signature: "gAAAA-sig" }, { type: "thought", text: "no signature" }]
    expect(responseBody(answer({ output }), translated({ include: ["reasoning.encrypted_content"] }), 0).output).toEqual([
      { id: `rs_${stem}_0`, type: "reasoning", summary: [{ type: "summary_text", text: "hmm" }], encrypted_content: "gAAAA-sig" },
      { id: `rs_${stem}_1`, type: "reasoning", summary: [{ type: "summary_text", text: "no signature" }], encrypted_content: null }
    ])
  })

  it("answers a json function's output as one message of its JSON text", () => {
    const body = responseBody(answer({ output: { raw: '{"answer":"Hello"}', parsed: { answer: "Hello" } } }), translated(), 0)
    expect(body.output).toEqual([assistantMessage(0, '{"answer":"Hello"}')])
    expect(body.output_text).toBe('{"answer":"Hello"}')
  })

  it("is incomplete when the answer was cut by its length or a content filter, saying why", () => {
    const ending = (finishReason: string | undefined) => {
      const body = responseBody(answer({ finishReason }), translated(), 0)
      return [body.status, body.incomplete_details]
    }
    expect(ending("length")).toEqual(["incomplete", { reason: "max_output_tokens" }])
    expect(ending("content_filter")).toEqual(["incomplete", { reason: "content_filter" }])
    for (const reason of ["stop", "stop_sequence", "tool_call", "unknown", undefined]) expect(ending(reason)).toEqual(["completed", null])
  })

  it("counts usage in OpenAI's convention over every model call: input with the cache's reads, and their count apart", () => {
    const completed = answer({
      usage: { input_tokens: 100, output_tokens: 20, cached_input_tokens: 60 },
      otherCalls: [{ usage: { input_tokens: 5, output_tokens: 1 } }]
    })
    expect(responseBody(completed, translated(), 0).usage).toEqual({
      input_tokens: 105,
      input_tokens_details: { cached_tokens: 60 },
      output_tokens: 21,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: 126
    })
  })

  it("echoes the tools, tool choice, text format and reasoning asked for", () => {
    const tool = { type: "function", name: "get_weather", parameters: { type: "object", properties: {} } }
    const format = { type: "json_schema", name: "answer", schema: { type: "object" }, strict: true }
    const body = responseBody(answer({}), translated({
      tools: [tool],
      tool_choice: "required",
      parallel_tool_calls: false,
      text: { format },
      reasoning: { effort: "high", summary: "auto" },
      max_output_tokens: 99,
      top_p: 0.5
    }), 0)
    expect(body).toMatchObject({
      tools: [tool],
      tool_choice: "required",
      parallel_tool_calls: false,
      text: { format },
      reasoning: { effort: "high", summary: "auto" },
      max_output_tokens: 99,
      top_p: 0.5
    })
  })
})
