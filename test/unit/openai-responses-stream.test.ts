/**
 * The Responses surface's stream (src/openaiResponses/stream.ts) as a client sees it: named
 * events numbered from 0, items opened and closed in order with the ids the whole answer gives
 * them, and the bytes read by the official `openai` SDK's own accumulator
 * (`ResponseStream`), whose `finalResponse()` is the whole body of the same answer.
 */
import { APIError } from "openai"
import { ResponseStream } from "openai/lib/responses/ResponseStream"
import { Stream as SdkStream } from "openai/streaming"
import * as Result from "effect/Result"
import { describe, expect, it } from "vitest"
import type { VariantConfig } from "../../src/config/types.ts"
import { ChunkAccumulator } from "../../src/inference/chunks.ts"
import { chatOutput, jsonOutput, jsonRawText } from "../../src/inference/output.ts"
import type { PreparedInference } from "../../src/inference/prepare.ts"
import type { CompletedInference } from "../../src/inference/run.ts"
import { ProviderFailure } from "../../src/providers/failure.ts"
import type { FinishReason, ProviderChunk, ToolConfig } from "../../src/inference/types.ts"
import { decodeCreateResponse } from "../../src/openaiResponses/decode.ts"
import { translateCreateResponse, type TranslatedResponse } from "../../src/openaiResponses/request.ts"
import { responseBody } from "../../src/openaiResponses/response.ts"
import { responsesStreamEncoder } from "../../src/openaiResponses/stream.ts"

const inferenceId = "0192d7a8-1c2b-7d3e-8f40-5a6b7c8d9e0f"
const stem = "0192d7a81c2b7d3e8f405a6b7c8d9e0f"
const createdAt = 1_700_000_000
const variant = { name: "v" } as VariantConfig

const translated = (body: Record<string, unknown> = {}): TranslatedResponse => {
  const raw = { model: "gateway::function_name::f", input: "hi", stream: true, ...body }
  return Result.getOrThrow(translateCreateResponse(Result.getOrThrow(decodeCreateResponse(raw)), { isModel: () => false, functionType: () => "chat", builtinTools: "drop" }, { available: false }, raw))
}

const weatherTools = {
  tools: [{ name: "get_weather", description: "", parameters: {}, strict: false, validator: { schema: {}, validate: () => undefined } }],
  choice: { type: "auto" }
} as unknown as ToolConfig

const prepared = (type: "chat" | "json", tools?: ToolConfig) =>
  ({ inferenceId, episodeId: "e", fn: { type }, tools }) as unknown as PreparedInference

interface Streamed {
  /** the body as sent */
  readonly text: string
  readonly events: ReadonlyArray<{ readonly name: string; readonly data: any }>
  /** the answer as the engine completes it from the same chunks */
  readonly completed: CompletedInference
}

/** the chunks through the encoder (each one's events as one write), and the answer they make */
const stream = (
  chunks: ReadonlyArray<ProviderChunk>,
  options: { type?: "chat" | "json"; tools?: ToolConfig; finishReason?: FinishReason; t?: TranslatedResponse } = {}
): Streamed => {
  const type = options.type ?? "chat"
  const t = options.t ?? translated()
  const prep = prepared(type, options.tools)
  const encoder = responsesStreamEncoder(prep, variant, t, createdAt)
  const accumulator = new ChunkAccumulator()
  let text = ""
  for (const chunk of chunks) {
    accumulator.add(chunk)
    text += encoder.chunk(chunk) ?? ""
  }
  const blocks = accumulator.output()
  const completed = {
    prepared: prep,
    variant,
    output: type === "chat" ? chatOutput(blocks, options.tools) : jsonOutput(jsonRawText(blocks), undefined),
    usage: { input_tokens: 12, output_tokens: 30, cached_input_tokens: 4 },
    finishReason: options.finishReason ?? "stop",
    otherCalls: []
  } as unknown as CompletedInference
  text += encoder.end(completed)
  return { text, events: parse(text), completed }
}

const parse = (text: string) =>
  text.split("\n\n").filter((event) => event !== "").map((event) => {
    const [nameLine, dataLine] = event.split("\n")
    expect(nameLine.startsWith("event: ") && dataLine.startsWith("data: "), event).toBe(true)
    return { name: nameLine.slice("event: ".length), data: JSON.parse(dataLine.slice("data: ".length)) }
  })

/** the body read by the SDK's own SSE reader and Responses accumulator */
const sdkFinal = (text: string) => {
  const events = SdkStream.fromSSEResponse(new Response(text, { headers: { "content-type": "text/event-stream" } }), new AbortController())
  return ResponseStream.fromReadableStream(events.toReadableStream()).finalResponse()
}

const chunk = (...content: ProviderChunk["content"]): ProviderChunk => ({ content, raw: "" })

describe("responsesStreamEncoder", () => {
  it("names and numbers every event, from 0 and one by one, and the name is the data's type", () => {
    const { events } = stream([chunk({ type: "text", id: "0", text: "Hel" }), chunk({ type: "text", id: "0", text: "lo" })])
    expect(events.map((event) => event.data.sequence_number)).toEqual(events.map((_, i) => i))
    for (const event of events) expect(event.data.type).toBe(event.name)
    expect(events.map((event) => event.name)).toEqual([
      "response.created",
      "response.in_progress",
      "response.output_item.added",
      "response.content_part.added",
      "response.output_text.delta",
      "response.output_text.delta",
      "response.output_text.done",
      "response.content_part.done",
      "response.output_item.done",
      "response.completed"
    ])
    expect(events[0].data.response).toMatchObject({ id: inferenceId, status: "in_progress", output: [], usage: null, model: "gateway::function_name::f" })
    expect(events[6].data).toMatchObject({ item_id: `msg_${stem}_0`, output_index: 0, content_index: 0, text: "Hello" })
    expect(events[9].data.response).toMatchObject({
      status: "completed",
      output_text: "Hello",
      usage: { input_tokens: 12, input_tokens_details: { cached_tokens: 4 }, output_tokens: 30, total_tokens: 42 }
    })
  })

  it("streams a thought, a text and two interleaved tool calls as items in that order, with the whole answer's ids", async () => {
    const { events, text, completed } = stream([
      chunk({ type: "thought", id: "0", text: "Let me " }, { type: "thought", id: "0", text: "think." }),
      chunk({ type: "thought", id: "0", text: "", signature: "sig-1" }),
      chunk({ type: "text", id: "1", text: "Checking " }, { type: "text", id: "1", text: "both." }),
      chunk({ type: "tool_call", id: "call_a", raw_name: "get_weather", raw_arguments: "" }),
      chunk({ type: "tool_call", id: "call_b", raw_name: "get_weather", raw_arguments: '{"city":' }),
      chunk({ type: "tool_call", id: "call_a", raw_name: "", raw_arguments: '{"city":"Paris"}' }),
      chunk({ type: "tool_call", id: "call_b", raw_name: "", raw_arguments: '"London"}' })
    ], { tools: weatherTools, finishReason: "tool_call", t: translated({ include: ["reasoning.encrypted_content"] }) })
    const added = events.filter((event) => event.name === "response.output_item.added").map((event) => [event.data.output_index, event.data.item.id])
    const done = events.filter((event) => event.name === "response.output_item.done").map((event) => [event.data.output_index, event.data.item.id])
    const ids = [`rs_${stem}_0`, `msg_${stem}_1`, `fc_${stem}_2`, `fc_${stem}_3`]
    expect(added).toEqual(ids.map((id, i) => [i, id]))
    // the thought closes when the text begins, the text when the first call begins, the calls at the end
    expect(done).toEqual(ids.map((id, i) => [i, id]))
    const argumentDeltas = events.filter((event) => event.name === "response.function_call_arguments.delta").map((event) => [event.data.output_index, event.data.delta])
    expect(argumentDeltas).toEqual([[3, '{"city":'], [2, '{"city":"Paris"}'], [3, '"London"}']])
    expect(events.find((event) => event.name === "response.reasoning_summary_text.done")?.data).toMatchObject({ text: "Let me think.", summary_index: 0 })
    expect(events.find((event) => event.name === "response.function_call_arguments.done" && event.data.output_index === 3)?.data)
      .toMatchObject({ name: "get_weather", arguments: '{"city":"London"}', item_id: `fc_${stem}_3` })

    const whole = responseBody(completed, translated({ include: ["reasoning.encrypted_content"] }), createdAt)
    expect(whole.output).toEqual([
      { id: `rs_${stem}_0`, type: "reasoning", summary: [{ type: "summary_text", text: "Let me think." }], encrypted_content: "sig-1" },
      { id: `msg_${stem}_1`, type: "message", role: "assistant", status: "completed", content: [{ type: "output_text", text: "Checking both.", annotations: [], logprobs: [] }] },
      { id: `fc_${stem}_2`, type: "function_call", call_id: "call_a", name: "get_weather", arguments: '{"city":"Paris"}', status: "completed" },
      { id: `fc_${stem}_3`, type: "function_call", call_id: "call_b", name: "get_weather", arguments: '{"city":"London"}', status: "completed" }
    ])
    expect(events[events.length - 1].data.response).toEqual(whole)
    const final = await sdkFinal(text)
    expect(final).toMatchObject(whole)
    expect(final.output_text).toBe("Checking both.")
  })

  it("keeps a function call's name streamed in pieces, whole in its last events", async () => {
    const { events, text } = stream([
      chunk({ type: "tool_call", id: "c1", raw_name: "get_", raw_arguments: "" }),
      chunk({ type: "tool_call", id: "c1", raw_name: "weather", raw_arguments: "{}" })
    ], { tools: weatherTools, finishReason: "tool_call" })
    expect(events.find((event) => event.name === "response.output_item.done")?.data.item).toMatchObject({ name: "get_weather", arguments: "{}" })
    expect((await sdkFinal(text)).output).toMatchObject([{ type: "function_call", name: "get_weather", call_id: "c1" }])
  })

  it("leaves encrypted_content out unless include asks for it", () => {
    const { events } = stream([chunk({ type: "thought", id: "0", text: "hmm", signature: "sig" }), chunk({ type: "text", id: "1", text: "ok" })])
    const reasoning = events.find((event) => event.name === "response.output_item.done")?.data.item
    expect(reasoning).toEqual({ id: `rs_${stem}_0`, type: "reasoning", summary: [{ type: "summary_text", text: "hmm" }] })
  })

  it("streams a json function's answer as one message of its JSON text", async () => {
    const { events, text, completed } = stream(
      [chunk({ type: "text", id: "0", text: '{"answer":' }), chunk({ type: "text", id: "0", text: '"Hello"}' })],
      { type: "json" }
    )
    expect(events.filter((event) => event.name === "response.output_text.delta").map((event) => event.data.delta)).toEqual(['{"answer":', '"Hello"}'])
    const whole = responseBody(completed, translated(), createdAt)
    expect(whole.output).toEqual([
      { id: `msg_${stem}_0`, type: "message", role: "assistant", status: "completed", content: [{ type: "output_text", text: '{"answer":"Hello"}', annotations: [], logprobs: [] }] }
    ])
    expect(await sdkFinal(text)).toMatchObject({ ...whole, output_text: '{"answer":"Hello"}' })
  })

  it("ends an answer cut by its length with response.incomplete", async () => {
    const { events, text } = stream([chunk({ type: "text", id: "0", text: "Once upon" })], { finishReason: "length" })
    const last = events[events.length - 1]
    expect(last.name).toBe("response.incomplete")
    expect(last.data.response).toMatchObject({ status: "incomplete", incomplete_details: { reason: "max_output_tokens" }, output_text: "Once upon" })
    expect(await sdkFinal(text)).toMatchObject({ status: "incomplete" })
  })

  it("ends a stream that fails after its start with an error event, which the SDK raises", async () => {
    const encoder = responsesStreamEncoder(prepared("chat"), variant, translated(), createdAt)
    const text = encoder.chunk(chunk({ type: "text", id: "0", text: "Hel" }))! + encoder.failure(new ProviderFailure({ message: "provider \"p\" failed: connection reset", timedOut: false }))
    const events = parse(text)
    expect(events.map((event) => event.data.sequence_number)).toEqual(events.map((_, i) => i))
    expect(events[events.length - 1]).toEqual({
      name: "error",
      data: { type: "error", sequence_number: 5, code: "server_error", message: "provider \"p\" failed: connection reset", param: null }
    })
    const raised = await sdkFinal(text).catch((error: unknown) => error)
    expect(raised).toBeInstanceOf(APIError)
    expect((raised as Error).message).toContain("connection reset")
  })

  it("opens the stream even when its first chunk carries nothing, and sends nothing for an empty chunk after", () => {
    const encoder = responsesStreamEncoder(prepared("chat"), variant, translated(), createdAt)
    expect(parse(encoder.chunk(chunk())!).map((event) => event.name)).toEqual(["response.created", "response.in_progress"])
    expect(encoder.chunk(chunk())).toBeUndefined()
  })

  it("gives a text begun again after another block an item of its own", async () => {
    const { events, text } = stream([
      chunk({ type: "text", id: "0", text: "a" }),
      chunk({ type: "tool_call", id: "c1", raw_name: "get_weather", raw_arguments: "{}" }),
      chunk({ type: "text", id: "0", text: "b" })
    ], { tools: weatherTools })
    const ids = events.filter((event) => event.name === "response.output_item.added").map((event) => event.data.item.id)
    expect(ids).toEqual([`msg_${stem}_0`, `fc_${stem}_1`, `msg_${stem}_0_2`])
    expect((await sdkFinal(text)).output_text).toBe("ab")
  })
})
