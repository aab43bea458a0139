/**
 * The `dummy` provider streamed (`stream: true`) over real HTTP through configured functions:
 * Server-Sent Events carrying the ids and variant, content deltas with ids, a last chunk with
 * usage and finish_reason, then `data: [DONE]`. TensorZero's models stream TensorZero's pieces
 * (each of its names is in dummy-tensorzero.test.ts), the gateway's own their whole answer.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import {
  dummyDelayMs,
  dummyGoodKey,
  dummyHelloText,
  dummyHelloUsage,
  dummyStreamedJsonPieces,
  dummyStreamedPieces,
  dummyToolArguments
} from "../../src/providers/dummy/index.ts"
import { dummyConfig, dummyConfigFiles } from "../support/dummyConfig.ts"
import { type RunningGateway, startGateway } from "../support/gateway.ts"

const uuidV7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/
const hello = { messages: [{ role: "user", content: "Hello" }] }
/** TensorZero's streamed text and its usage: one output token per piece */
const streamedText = dummyStreamedPieces.join("")
const textStreamUsage = { input_tokens: 10, output_tokens: dummyStreamedPieces.length }

type Streamed = Awaited<ReturnType<RunningGateway["stream"]>>

interface CheckedStream {
  readonly inferenceId: string
  readonly episodeId: string
  /** the chunks before the last one */
  readonly chunks: ReadonlyArray<any>
  /** every content delta, in order */
  readonly deltas: ReadonlyArray<any>
  readonly final: any
}

/** Checks the envelope every successful stream shares and returns its parts. */
const checkStream = (
  streamed: Streamed,
  expected: {
    readonly variant: string
    readonly finishReason: string
    readonly kind?: "chat" | "json"
    /** the usage of the last chunk; any when absent */
    readonly usage?: { readonly input_tokens: number; readonly output_tokens: number }
  }
): CheckedStream => {
  expect(streamed.status, streamed.raw).toBe(200)
  expect(streamed.headers.get("content-type")).toMatch(/^text\/event-stream/)
  expect(streamed.raw.endsWith("data: [DONE]\n\n")).toBe(true)
  expect(streamed.events.at(-1)).toBe("[DONE]")
  const all = streamed.events.slice(0, -1)
  expect(all.length).toBeGreaterThanOrEqual(2)
  expect(all).not.toContain("[DONE]")
  const inferenceId = all[0].inference_id
  const episodeId = all[0].episode_id
  expect(inferenceId).toMatch(uuidV7)
  expect(episodeId).toMatch(uuidV7)
  for (const chunk of all) {
    expect(chunk.inference_id).toBe(inferenceId)
    expect(chunk.episode_id).toBe(episodeId)
    expect(chunk.variant_name).toBe(expected.variant)
    expect(chunk).not.toHaveProperty("error")
  }
  const chunks = all.slice(0, -1)
  const final = all.at(-1)
  if (expected.usage !== undefined) expect(final.usage).toEqual(expected.usage)
  else expect(final.usage).toEqual({ input_tokens: expect.any(Number), output_tokens: expect.any(Number) })
  expect(final.finish_reason).toBe(expected.finishReason)
  if (expected.kind === "json") {
    expect(final.raw).toBe("")
    for (const chunk of chunks) {
      expect(typeof chunk.raw).toBe("string")
      expect(chunk).not.toHaveProperty("usage")
    }
    return { inferenceId, episodeId, chunks, deltas: [], final }
  }
  expect(final.content).toEqual([])
  for (const chunk of chunks) {
    expect(chunk.content.length).toBeGreaterThan(0)
    expect(chunk).not.toHaveProperty("usage")
    for (const delta of chunk.content) expect(typeof delta.id).toBe("string")
  }
  return { inferenceId, episodeId, chunks, deltas: chunks.flatMap((chunk) => chunk.content), final }
}

/** the text of the deltas of one type and block id, joined */
const joined = (deltas: ReadonlyArray<any>, type: string, id: string, field = "text") =>
  deltas.filter((delta) => delta.type === type && delta.id === id).map((delta) => delta[field]).join("")

describe("the dummy provider, streamed", () => {
  let gateway: RunningGateway
  beforeAll(async () => {
    gateway = await startGateway({ config: dummyConfig, files: dummyConfigFiles })
  })
  afterAll(async () => {
    await gateway?.stop()
  })

  const stream = (body: Record<string, unknown>) => gateway.stream("/inference", { input: hello, stream: true, ...body })

  it("default text: TensorZero's text deltas of one block, one per chunk, usage 10 + 16", async () => {
    for (const [body, variant] of [[{ model_name: "dummy::test" }, "dummy::test"], [{ function_name: "good" }, "good"]] as const) {
      const checked = checkStream(await stream(body), { variant, finishReason: "stop", usage: textStreamUsage })
      expect(checked.chunks.map((chunk) => chunk.content)).toEqual(dummyStreamedPieces.map((text) => [{ type: "text", id: "0", text }]))
      expect(joined(checked.deltas, "text", "0")).toBe(streamedText)
    }
  })

  it("hello (the gateway's own): its whole text in pieces of 12 characters, usage 10 + 10", async () => {
    const checked = checkStream(await stream({ function_name: "chat" }), { variant: "text", finishReason: "stop", usage: dummyHelloUsage })
    expect(checked.deltas.length).toBeGreaterThan(1)
    expect(joined(checked.deltas, "text", "0")).toBe(dummyHelloText)
  })

  it("keeps the episode_id it is given", async () => {
    const first = checkStream(await stream({ model_name: "dummy::test" }), { variant: "dummy::test", finishReason: "stop", usage: textStreamUsage })
    const second = checkStream(await stream({ model_name: "dummy::test", episode_id: first.episodeId }), {
      variant: "dummy::test",
      finishReason: "stop",
      usage: textStreamUsage
    })
    expect(second.episodeId).toBe(first.episodeId)
    expect(second.inferenceId).not.toBe(first.inferenceId)
  })

  it("json in a json function: raw deltas that add up to TensorZero's streamed JSON (not its whole answer's)", async () => {
    for (const variant of ["json", "as_tool"]) {
      const checked = checkStream(await stream({ function_name: "extract", variant_name: variant }), {
        variant,
        finishReason: "stop",
        kind: "json",
        usage: { input_tokens: 10, output_tokens: dummyStreamedJsonPieces.length }
      })
      expect(checked.chunks.map((chunk) => chunk.raw)).toEqual(dummyStreamedJsonPieces)
      expect(checked.chunks.map((chunk) => chunk.raw).join("")).toBe("{\"name\":\"John\",\"age\":30}")
    }
  })

  it("tool: tool_call deltas, the first naming the tool, whose arguments add up", async () => {
    const checked = checkStream(await stream({ function_name: "weather", variant_name: "tensorzero_tool" }), {
      variant: "tensorzero_tool",
      finishReason: "tool_call",
      usage: { input_tokens: 10, output_tokens: 5 }
    })
    for (const delta of checked.deltas) expect(delta.type).toBe("tool_call")
    expect(checked.deltas.map((delta) => delta.raw_name)).toEqual(["get_temperature", "", "", "", ""])
    expect(joined(checked.deltas, "tool_call", "0", "raw_arguments")).toBe(dummyToolArguments)
  })

  it("offered_tool (the gateway's own): streams its whole call, naming the configured tool", async () => {
    const checked = checkStream(await stream({ function_name: "weather" }), {
      variant: "tool",
      finishReason: "tool_call",
      usage: dummyHelloUsage
    })
    expect(checked.deltas[0].raw_name).toBe("get_temperature")
    expect(joined(checked.deltas, "tool_call", checked.deltas[0].id, "raw_arguments")).toBe(dummyToolArguments)
  })

  it("bad_tool and invalid_tool_arguments: TensorZero's streamed text, as TensorZero's stream them", async () => {
    for (const variant of ["bad_tool", "invalid_tool_arguments"]) {
      const checked = checkStream(await stream({ function_name: "weather", variant_name: variant }), { variant, finishReason: "stop", usage: textStreamUsage })
      expect(joined(checked.deltas, "text", "0")).toBe(streamedText)
    }
  })

  it("reasoner: thought deltas first, then text deltas", async () => {
    const checked = checkStream(await stream({ function_name: "reasoning" }), {
      variant: "reasoner",
      finishReason: "stop",
      usage: { input_tokens: 10, output_tokens: 18 }
    })
    const types = checked.deltas.map((delta) => delta.type)
    expect(types).toEqual(["thought", "thought", ...new Array(16).fill("text")])
    expect(joined(checked.deltas, "thought", "0")).toBe("hmmmhmmm")
    expect(joined(checked.deltas, "text", "0")).toBe(streamedText)
  })

  it("error: a JSON 502 listing the provider error instead of a stream", async () => {
    const streamed = await stream({ function_name: "failing" })
    expect(streamed.status).toBe(502)
    expect(streamed.headers.get("content-type")).toMatch(/^application\/json/)
    const body = JSON.parse(streamed.raw)
    expect(Object.keys(body)).toEqual(["error"])
    expect(body.error).toContain("Error sending request to Dummy provider for model 'error'.")
  })

  it("flaky called directly: every other stream fails before it starts", async () => {
    const statuses: Array<number> = []
    for (let i = 0; i < 4; i++) {
      const streamed = await stream({ model_name: "dummy::flaky" })
      statuses.push(streamed.status)
      if (streamed.status === 200) checkStream(streamed, { variant: "dummy::flaky", finishReason: "stop", usage: dummyHelloUsage })
      else expect(JSON.parse(streamed.raw).error).toMatch(/flaky/)
    }
    expect([[502, 200, 502, 200], [200, 502, 200, 502]]).toContainEqual(statuses)
  })

  it("flaky with a second provider, or with a retry: every stream succeeds", async () => {
    for (let i = 0; i < 3; i++) {
      checkStream(await stream({ function_name: "flaky_with_backup" }), { variant: "only", finishReason: "stop" })
      const retried = checkStream(await stream({ function_name: "flaky_retried" }), { variant: "only", finishReason: "stop" })
      expect(joined(retried.deltas, "text", "0")).toBe(dummyHelloText)
    }
  })

  it("delay_500ms: a time-to-first-token limit shorter than the delay answers 408 (the variant's) or 504 (the provider's or the model's)", async () => {
    for (const [functionName, status] of [["slow_variant_timeout", 408], ["slow_provider_timeout", 504], ["slow_model_timeout", 504]] as const) {
      const started = Date.now()
      const streamed = await stream({ function_name: functionName })
      expect(streamed.status, functionName).toBe(status)
      expect(JSON.parse(streamed.raw).error).toMatch(/timed out after 100 ms/)
      expect(Date.now() - started).toBeLessThan(dummyDelayMs)
    }
  })

  it("delay_500ms: without a limit, streams after the delay", async () => {
    const checked = checkStream(await stream({ function_name: "slow_without_timeout" }), { variant: "only", finishReason: "stop", usage: dummyHelloUsage })
    expect(joined(checked.deltas, "text", "0")).toBe(dummyHelloText)
  })

  it("echo and echo_request_messages stream TensorZero's text, as TensorZero's do", async () => {
    for (const variant of ["echo", "echo_request_messages"]) {
      const checked = checkStream(
        await stream({
          function_name: "templated",
          variant_name: variant,
          input: { system: { assistant_name: "Skye" }, messages: [{ role: "user", content: [{ type: "text", arguments: { city: "Oslo", days: 2 } }] }] }
        }),
        { variant, finishReason: "stop", usage: textStreamUsage }
      )
      expect(joined(checked.deltas, "text", "0")).toBe(streamedText)
    }
  })

  it("test_key: streams with any key (TensorZero's checks the key of whole answers only), 400 without one", async () => {
    for (const key of [dummyGoodKey, "bad_key"]) {
      checkStream(await stream({ function_name: "keyed", credentials: { key } }), { variant: "only", finishReason: "stop", usage: textStreamUsage })
    }
    const missing = await stream({ function_name: "keyed" })
    expect(missing.status).toBe(400)
    expect(JSON.parse(missing.raw).error).toMatch(/credentials\.key/)
  })

  it("stream_error: some content events, then an error event, and no [DONE]", async () => {
    const streamed = await stream({ function_name: "stream_error" })
    expect(streamed.status).toBe(200)
    expect(streamed.headers.get("content-type")).toMatch(/^text\/event-stream/)
    const events = streamed.events
    expect(events).not.toContain("[DONE]")
    expect(events.length).toBeGreaterThanOrEqual(2)
    const last = events.at(-1)
    expect(Object.keys(last)).toEqual(["error"])
    expect(last.error).toMatch(/stream_error/)
    const before = events.slice(0, -1)
    expect(before.length).toBeGreaterThan(0)
    for (const chunk of before) {
      expect(chunk.variant_name).toBe("only")
      expect(chunk.inference_id).toMatch(uuidV7)
      expect(chunk.content[0]).toEqual({ type: "text", id: "0", text: expect.any(String) })
    }
    expect(dummyHelloText.startsWith(before.map((chunk) => chunk.content[0].text).join(""))).toBe(true)
  })

  it("refuses include_original_response when streaming", async () => {
    const streamed = await stream({ model_name: "dummy::test", include_original_response: true })
    expect(streamed.status).toBe(400)
    expect(JSON.parse(streamed.raw).error).toMatch(/include_original_response/)
  })
})
