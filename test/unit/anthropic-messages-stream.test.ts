/**
 * The Anthropic Messages stream (issue 37, design 2.3): the events the encoder writes for
 * interleaved blocks, failures after the start, and what the official SDK's accumulator makes
 * of those bytes (it must be the whole answer's body); the pings and the early commit of
 * src/sseWriter.ts.
 */
import { MessageStream } from "@anthropic-ai/sdk/lib/MessageStream"
import { Stream as SdkStream } from "@anthropic-ai/sdk/streaming"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Result from "effect/Result"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import { TestClock } from "effect/testing"
import { describe, expect, it } from "vitest"
import { MessagesRequest } from "../../src/anthropicMessages/api.ts"
import { translateMessages, type TranslatedMessages } from "../../src/anthropicMessages/request.ts"
import { messageBody } from "../../src/anthropicMessages/response.ts"
import { messagesStreamEncoder, openingEvents, streamFailureType, type StreamState } from "../../src/anthropicMessages/stream.ts"
import type { VariantConfig } from "../../src/config/types.ts"
import { makeLenientDecoder } from "../../src/decode.ts"
import { ChunkAccumulator } from "../../src/inference/chunks.ts"
import type { PreparedInference } from "../../src/inference/prepare.ts"
import type { CompletedInference } from "../../src/inference/run.ts"
import type { ChunkDelta, FinishReason, ProviderChunk, Usage } from "../../src/inference/types.ts"
import { ProviderFailure } from "../../src/providers/failure.ts"
import { keepAliveWrites, sseNamedEvent, startOrCommit } from "../../src/sseWriter.ts"

const decode = makeLenientDecoder(MessagesRequest)
const translated = (body: Record<string, unknown> = {}): TranslatedMessages => {
  const raw = { model: "claude", max_tokens: 100, messages: [], stream: true, ...body }
  const decoded = decode(raw)
  if (!decoded.ok) throw new Error(JSON.stringify(decoded.issues))
  return Result.getOrThrow(translateMessages(decoded.value, { configuredModel: (name) => name === "claude", raw, builtinTools: "drop" }))
}
const prepared = (type: "chat" | "json" = "chat") => ({ inferenceId: "inf-1", episodeId: "ep-1", fn: { type } }) as unknown as PreparedInference
const variant = { name: "main" } as VariantConfig

const text = (id: string, text: string): ChunkDelta => ({ type: "text", id, text })
const thought = (id: string, text: string, signature?: string): ChunkDelta =>
  signature === undefined ? { type: "thought", id, text } : { type: "thought", id, text, signature }
const tool = (id: string, name: string, args: string): ChunkDelta => ({ type: "tool_call", id, raw_name: name, raw_arguments: args })
const chunk = (...content: Array<ChunkDelta>): ProviderChunk => ({ content, raw: "" })
const last = (usage: Usage, finishReason: FinishReason): ProviderChunk => ({ content: [], usage, finishReason, raw: "" })

/** the inference the chunks make, as the engine puts it together */
const completedOf = (chunks: ReadonlyArray<ProviderChunk>, type: "chat" | "json" = "chat"): CompletedInference => {
  const accumulated = new ChunkAccumulator()
  for (const each of chunks) accumulated.add(each)
  const blocks = accumulated.output()
  const output = type === "chat" ? blocks : { raw: blocks.map((block) => (block.type === "text" ? block.text : "")).join(""), parsed: null }
  return {
    prepared: prepared(type),
    variant,
    output,
    usage: accumulated.usage ?? { input_tokens: 0, output_tokens: 0 },
    finishReason: accumulated.finishReason,
    otherCalls: []
  } as unknown as CompletedInference
}

/** the encoder's text for these chunks, then the end of the inference they make */
const encode = (chunks: ReadonlyArray<ProviderChunk>, options: { type?: "chat" | "json"; t?: TranslatedMessages; state?: StreamState } = {}) => {
  const encoder = messagesStreamEncoder(prepared(options.type), options.t ?? translated(), variant, options.state)
  return chunks.map((each) => encoder.chunk(each) ?? "").join("") + encoder.end(completedOf(chunks, options.type))
}

/** the events of an SSE text, each checked to be named as its data's type */
const eventsOf = (sse: string): Array<any> =>
  sse.split("\n\n").filter((block) => block !== "").map((block) => {
    const match = /^event: ([a-z_]+)\ndata: (.*)$/s.exec(block)
    expect(match, block).not.toBeNull()
    const data = JSON.parse(match![2])
    expect(data.type).toBe(match![1])
    return data
  })

/** one line per event, to read a sequence at a glance */
const summary = (sse: string): Array<string> =>
  eventsOf(sse).map((event) => {
    switch (event.type) {
      case "content_block_start":
        return `start ${event.index} ${event.content_block.type}${event.content_block.type === "tool_use" ? ` ${event.content_block.id} ${event.content_block.name}` : ""}`
      case "content_block_delta": {
        const { type, ...rest } = event.delta
        return `${event.index} ${type} ${Object.values(rest)[0]}`
      }
      case "content_block_stop":
        return `stop ${event.index}`
      case "message_delta":
        return `message_delta ${event.delta.stop_reason}`
      default:
        return event.type
    }
  })

/** what the official SDK's accumulator makes of the bytes: `messages.stream(...).finalMessage()` */
const sdkFinalMessage = (sse: string) => {
  const events = SdkStream.fromSSEResponse(new Response(sse), new AbortController())
  return MessageStream.fromReadableStream(events.toReadableStream()).finalMessage()
}

const usage: Usage = { input_tokens: 30, output_tokens: 12, cached_input_tokens: 20 }

/** thinking (its signature in a delta of its own), text, then two tool calls, the first in two pieces */
const thinkingTextTools: Array<ProviderChunk> = [
  chunk(thought("0", "Let me"), thought("0", " think")),
  chunk(thought("0", "", "sig-abc")),
  chunk(text("1", "Checking.")),
  chunk(tool("call_1", "get_weather", "{\"city\":"), tool("call_1", "", "\"Paris\"}")),
  chunk(tool("call_2", "get_time", "{}")),
  last(usage, "tool_call")
]

describe("messagesStreamEncoder: the events", () => {
  it("thinking, then text, then two tool calls: one block each, in order, each closed before the next (Anthropic's own sequence)", () => {
    const sse = encode(thinkingTextTools)
    expect(summary(sse)).toEqual([
      "message_start",
      "start 0 thinking",
      "0 thinking_delta Let me",
      "0 thinking_delta  think",
      "0 signature_delta sig-abc",
      "stop 0",
      "start 1 text",
      "1 text_delta Checking.",
      "stop 1",
      "start 2 tool_use call_1 get_weather",
      "2 input_json_delta {\"city\":",
      "2 input_json_delta \"Paris\"}",
      // tool calls stay open while another starts: some servers interleave their pieces
      "start 3 tool_use call_2 get_time",
      "3 input_json_delta {}",
      "stop 2",
      "stop 3",
      "message_delta tool_use",
      "message_stop"
    ])
    const events = eventsOf(sse)
    expect(events[0]).toEqual({
      type: "message_start",
      message: {
        id: "inf-1",
        type: "message",
        role: "assistant",
        model: "claude",
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { input_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 0 },
        gateway_episode_id: "ep-1",
        gateway_variant_name: "main"
      }
    })
    expect(events[1]).toEqual({ type: "content_block_start", index: 0, content_block: { type: "thinking", thinking: "", signature: "" } })
    expect(events[9]).toEqual({ type: "content_block_start", index: 2, content_block: { type: "tool_use", id: "call_1", name: "get_weather", input: {} } })
    // Anthropic's convention: input without the cache's reads
    expect(events.at(-2)).toEqual({
      type: "message_delta",
      delta: { stop_reason: "tool_use", stop_sequence: null },
      usage: { input_tokens: 10, cache_creation_input_tokens: 0, cache_read_input_tokens: 20, output_tokens: 12 }
    })
    expect(sse.endsWith("event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n")).toBe(true)
  })

  it("a signature another family's provider streams goes wrapped with its type; an Anthropic-type provider's as it is", () => {
    const signatures = (providerType: string) =>
      eventsOf(
        [chunk(thought("0", "hm")), chunk(thought("0", "", "CiQB"))].map((each) =>
          messagesStreamEncoder(prepared(), translated(), variant, { opened: true }, providerType).chunk(each) ?? ""
        ).join("")
      ).filter((event) => event.delta?.type === "signature_delta").map((event) => event.delta.signature)
    expect(signatures("gcp_vertex_gemini")).toEqual(["gateway.v1.gcp_vertex_gemini.CiQB"])
    expect(signatures("gcp_vertex_anthropic")).toEqual(["CiQB"])
  })

  it("two tool calls interleaved: each delta goes to its own block's index", () => {
    expect(summary(encode([
      chunk(tool("a", "f", "{\"x\""), tool("b", "g", "{\"y\"")),
      chunk(tool("b", "", ":2}")),
      chunk(tool("a", "", ":1}")),
      last(usage, "tool_call")
    ]))).toEqual([
      "message_start",
      "start 0 tool_use a f",
      "0 input_json_delta {\"x\"",
      "start 1 tool_use b g",
      "1 input_json_delta {\"y\"",
      "1 input_json_delta :2}",
      "0 input_json_delta :1}",
      "stop 0",
      "stop 1",
      "message_delta tool_use",
      "message_stop"
    ])
  })

  it("text after a tool call: the tool call closes the text; text again (even of the same block) is a new block after it", () => {
    expect(summary(encode([
      chunk(text("0", "Let me look.")),
      chunk(tool("c", "f", "{}")),
      chunk(text("0", "Also, ")),
      chunk(text("0", "this.")),
      chunk(thought("t", "hmm")),
      last(usage, "stop")
    ]))).toEqual([
      "message_start",
      "start 0 text",
      "0 text_delta Let me look.",
      "stop 0",
      "start 1 tool_use c f",
      "1 input_json_delta {}",
      "stop 1",
      "start 2 text",
      "2 text_delta Also, ",
      "2 text_delta this.",
      "stop 2",
      "start 3 thinking",
      "3 thinking_delta hmm",
      "stop 3",
      "message_delta end_turn",
      "message_stop"
    ])
  })

  it("a json function: one text block of its text (a json_mode tool's arguments too), even when nothing streamed", () => {
    expect(summary(encode([chunk(text("0", "{\"a\":")), chunk(tool("respond", "respond", "1}")), last(usage, "stop")], { type: "json" })))
      .toEqual(["message_start", "start 0 text", "0 text_delta {\"a\":", "0 text_delta 1}", "stop 0", "message_delta end_turn", "message_stop"])
    expect(summary(encode([last(usage, "stop")], { type: "json" })))
      .toEqual(["message_start", "start 0 text", "stop 0", "message_delta end_turn", "message_stop"])
  })

  it("message_start with the first chunk, even an empty one, and once; not at all when a committed stream's opening wrote it", () => {
    const encoder = messagesStreamEncoder(prepared(), translated(), variant)
    expect(summary(encoder.chunk(chunk())!)).toEqual(["message_start"])
    expect(encoder.chunk(chunk())).toBeUndefined()
    expect(summary(encoder.chunk(chunk(text("0", "hi")))!)).toEqual(["start 0 text", "0 text_delta hi"])

    const state: StreamState = { opened: false }
    const opening = openingEvents(prepared(), translated(), state)
    expect(opening).toBe(
      `event: message_start\ndata: {"type":"message_start","message":{"id":"inf-1","type":"message","role":"assistant","model":"claude","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":0,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":0},"gateway_episode_id":"ep-1"}}\n\n` +
        `event: ping\ndata: {"type": "ping"}\n\n`
    )
    expect(summary(encode([chunk(text("0", "hi")), last(usage, "stop")], { state })))
      .toEqual(["start 0 text", "0 text_delta hi", "stop 0", "message_delta end_turn", "message_stop"])
  })

  it("names the stop sequence when one was asked for", () => {
    const events = eventsOf(encode([chunk(text("0", "a")), last(usage, "stop_sequence")], { t: translated({ stop_sequences: ["END"] }) }))
    expect(events.at(-2).delta).toEqual({ stop_reason: "stop_sequence", stop_sequence: "END" })
  })

  it("a failure after the start is an error event, typed by the provider's status", () => {
    const encoder = messagesStreamEncoder(prepared(), translated(), variant)
    const failure = (status?: number) => new ProviderFailure({ message: "upstream said no", timedOut: false, ...(status === undefined ? {} : { status }) })
    expect(encoder.failure(failure(529))).toBe(
      `event: error\ndata: {"type":"error","error":{"type":"overloaded_error","message":"upstream said no"}}\n\n`
    )
    const typeOf = (status?: number) => eventsOf(encoder.failure(failure(status)))[0].error.type
    expect([529, 503, 429, 400, 404, 413, 500, 502, undefined].map(typeOf)).toEqual([
      "overloaded_error",
      "overloaded_error",
      "rate_limit_error",
      "invalid_request_error",
      "invalid_request_error",
      "invalid_request_error",
      "api_error",
      "api_error",
      "api_error"
    ])
    expect(streamFailureType(undefined)).toBe("api_error")
    expect(eventsOf(encoder.failure(new ProviderFailure({ message: "timed out", timedOut: true })))[0].error.type).toBe("api_error")
  })
})

describe("messagesStreamEncoder: read by the official SDK (MessageStream, as messages.stream() reads it)", () => {
  const cases: Record<string, { chunks: Array<ProviderChunk>; type?: "chat" | "json"; t?: TranslatedMessages }> = {
    "thinking with its signature, text, two tool calls": { chunks: thinkingTextTools },
    "two tool calls interleaved": {
      chunks: [
        chunk(tool("a", "f", "{\"x\""), tool("b", "g", "{\"y\"")),
        chunk(tool("b", "", ":2}")),
        chunk(tool("a", "", ":1}")),
        last({ input_tokens: 5, output_tokens: 3 }, "tool_call")
      ]
    },
    "text stopped by a stop sequence": {
      chunks: [chunk(text("0", "unicode: é 😀 \"quoted\"\n")), chunk(text("0", "done")), last(usage, "stop_sequence")],
      t: translated({ stop_sequences: ["END"] })
    },
    "a json function": { chunks: [chunk(text("0", "{\"answer\":")), chunk(text("0", "42}")), last(usage, "stop")], type: "json" }
  }
  for (const [name, { chunks, type, t }] of Object.entries(cases)) {
    it(`${name}: finalMessage() is the whole answer's body`, async () => {
      const request = t ?? translated()
      // the SDK adds its parse helper's `parsed_output` and `stop_details` (a newer API's field) of its own
      const { parsed_output, stop_details, ...final } = await sdkFinalMessage(encode(chunks, { type, t: request }))
      expect([parsed_output, stop_details]).toEqual([null, undefined])
      expect(final).toEqual(messageBody(completedOf(chunks, type), request))
    })
  }

  it("an error event after the start: the SDK raises the error's type", async () => {
    const encoder = messagesStreamEncoder(prepared(), translated(), variant)
    const sse = encoder.chunk(chunk(text("0", "partial")))! + encoder.failure(new ProviderFailure({ message: "overloaded upstream", timedOut: false, status: 529 }))
    const error = await sdkFinalMessage(sse).catch((error: unknown) => error)
    expect(error).toMatchObject({ error: { type: "error", error: { type: "overloaded_error", message: "overloaded upstream" } } })
  })
})

const bytes = (text: string) => new TextEncoder().encode(text)
const texts = (chunks: ReadonlyArray<Uint8Array>) => chunks.map((each) => new TextDecoder().decode(each))

describe("keepAliveWrites", () => {
  it("writes a ping whenever nothing was written for everyMs, and ends with the body", async () => {
    const body = Stream.concat(
      Stream.make(bytes("a")),
      Stream.concat(Stream.fromEffect(Effect.as(Effect.sleep(25), bytes("b"))), Stream.fromEffect(Effect.as(Effect.sleep(100), bytes("c"))))
    )
    const program = Effect.gen(function*() {
      const fiber = yield* Effect.forkChild(Stream.runCollect(keepAliveWrites(body, bytes("."), 30)))
      // a millisecond at a time: the streams' fibers run between
      for (let ms = 0; ms < 200; ms++) yield* TestClock.adjust(1)
      return yield* Fiber.join(fiber)
    })
    const written = texts(await Effect.runPromise(program.pipe(Effect.provide(TestClock.layer()))))
    // b at 25 ms (no ping: 30 ms had not passed), pings 30, 60 and 90 ms after b, c at 125 ms, then the end
    expect(written).toEqual(["a", "b", ".", ".", ".", "c"])
  })

  it("stops reading the body when the stream is cut short (a client hanging up)", async () => {
    let bodyClosed = false
    const body = Stream.ensuring(Stream.concat(Stream.make(bytes("a")), Stream.never), Effect.sync(() => (bodyClosed = true)))
    const program = Effect.gen(function*() {
      const fiber = yield* Effect.forkChild(Stream.runCollect(Stream.take(keepAliveWrites(body, bytes("."), 30), 2)))
      for (let ms = 0; ms < 40; ms++) yield* TestClock.adjust(1)
      return yield* Fiber.join(fiber)
    })
    expect(texts(await Effect.runPromise(program.pipe(Effect.provide(TestClock.layer()))))).toEqual(["a", "."])
    expect(bodyClosed).toBe(true)
  })
})

describe("startOrCommit", () => {
  const committed = {
    opening: () => "open;",
    eventsOf: (events: Stream.Stream<Uint8Array>) => events,
    failed: (error: string) => `failed:${error};`
  }
  const run = <A>(program: Effect.Effect<A, unknown, Scope.Scope>) =>
    Effect.runPromise(Effect.scoped(program).pipe(Effect.provide(TestClock.layer())))
  const startingAfter = (ms: number, outcome: Effect.Effect<Stream.Stream<Uint8Array>, string>) => Effect.andThen(Effect.sleep(ms), outcome)

  it("a start within commitAfterMs: its outcome as it is, a failure as a failure (the caller answers it with its status)", async () => {
    const started = await run(Effect.gen(function*() {
      const fiber = yield* Effect.forkChild(startOrCommit(startingAfter(10, Effect.succeed(Stream.make(bytes("x")))), 50, committed))
      yield* TestClock.adjust(10)
      return yield* Fiber.join(fiber)
    }))
    expect(started._tag).toBe("Started")
    const failed = await run(Effect.gen(function*() {
      const fiber = yield* Effect.forkChild(startOrCommit(startingAfter(10, Effect.fail("refused")), 50, committed))
      yield* TestClock.adjust(10)
      return yield* Fiber.await(fiber)
    }))
    expect(failed).toEqual(Exit.fail("refused"))
  })

  it("a later start: committed, the opening at once, then its events, or its failure as the last event", async () => {
    const body = (outcome: Effect.Effect<Stream.Stream<Uint8Array>, string>) =>
      run(Effect.gen(function*() {
        const fiber = yield* Effect.forkChild(Effect.flatMap(startOrCommit(startingAfter(200, outcome), 50, committed), (begun) =>
          begun._tag === "Committed" ? Stream.runCollect(begun.body) : Effect.die("started")))
        yield* TestClock.adjust(200)
        return texts(yield* Fiber.join(fiber))
      }))
    expect(await body(Effect.succeed(Stream.make(bytes("x"), bytes("y"))))).toEqual(["open;", "x", "y"])
    expect(await body(Effect.fail("too many requests"))).toEqual(["open;", "failed:too many requests;"])
  })

  it("the start goes on in the request's scope: closing it (the client hung up) interrupts the start", async () => {
    let interrupted = false
    const start = Effect.onInterrupt(startingAfter(10_000, Effect.succeed(Stream.empty)), () => Effect.sync(() => (interrupted = true)))
    const begun = await Effect.runPromise(Effect.gen(function*() {
      const scope = yield* Scope.make()
      const fiber = yield* Effect.forkChild(Scope.provide(startOrCommit(start, 50, committed), scope))
      yield* TestClock.adjust(50)
      const begun = yield* Fiber.join(fiber)
      expect(interrupted).toBe(false)
      yield* Scope.close(scope, Exit.void)
      return begun
    }).pipe(Effect.provide(TestClock.layer())))
    expect(begun._tag).toBe("Committed")
    expect(interrupted).toBe(true)
  })
})

describe("sseNamedEvent", () => {
  it("frames a named event", () => {
    expect(sseNamedEvent("ping", `{"type": "ping"}`)).toBe(`event: ping\ndata: {"type": "ping"}\n\n`)
  })
})
