import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import { describe, expect, it } from "vitest"
import { forEachChunk } from "../support/providerStreams.ts"
import type { ModelRequest, ProviderChunk, ProviderResponse, ToolConfig, ToolDefinition } from "../../src/inference/types.ts"
import {
  dummyBadToolArguments,
  dummyGoodKey,
  dummyInvalidToolArguments,
  dummyJson,
  dummyProvider,
  dummySlowDelayMs,
  dummyText,
  dummyThought,
  dummyToolArguments,
  dummyUsage
} from "../../src/providers/dummy/index.ts"
import { type ProviderCall, type ProviderClient, qualifiedProviderName } from "../../src/providers/types.ts"
import { ProviderFailure } from "../../src/providers/failure.ts"
import { HttpTransport, TransportError } from "../../src/transport.ts"

// The dummy provider needs no network: a transport that fails proves it is never used.
const noTransport = HttpTransport.of({
  post: () => Effect.fail(new TransportError({ message: "the dummy provider must not use the network", timedOut: false })),
  postStream: () => Effect.fail(new TransportError({ message: "the dummy provider must not use the network", timedOut: false })),
  download: () => Effect.fail(new TransportError({ message: "the dummy provider must not use the network", timedOut: false }))
})

const client = (modelName: string): ProviderClient =>
  dummyProvider.make({
    name: "dummy",
    type: "dummy",
    modelName,
    credential: { kind: "none" },
    extraBody: [],
    extraHeaders: [],
    timeouts: {},
    settings: {}
  })

const request = (fields: Partial<ModelRequest> = {}): ModelRequest => ({
  messages: [{ role: "user", content: [{ type: "text", text: "Hi" }] }],
  params: {},
  functionType: "chat",
  jsonMode: "off",
  providerTools: [],
  ...fields
})

const call = (fields: Partial<ModelRequest> = {}, apiKey?: string): ProviderCall => ({
  request: request(fields),
  apiKey,
  extraBody: [],
  extraHeaders: [],
  modelName: "m",
  providerName: "dummy",
  qualifiedName: qualifiedProviderName("m", "dummy")
})

const run = <A, E>(effect: Effect.Effect<A, E, HttpTransport>) =>
  Effect.runPromise(Effect.result(Effect.provideService(effect, HttpTransport, noTransport)))

const infer = async (c: ProviderClient, providerCall: ProviderCall = call()): Promise<ProviderResponse> => {
  const result = await run(c.infer(providerCall))
  if (Result.isFailure(result)) throw new Error(result.failure.message)
  return result.success
}

const inferFailure = async (c: ProviderClient, providerCall: ProviderCall = call()): Promise<ProviderFailure> => {
  const result = await run(c.infer(providerCall))
  if (Result.isSuccess(result)) throw new Error("expected a failure")
  if (!(result.failure instanceof ProviderFailure)) throw new Error(`expected a provider failure: ${result.failure.message}`)
  return result.failure
}

/** the chunks of a stream, and the failure that ended it, if any */
const streamAll = async (c: ProviderClient, providerCall: ProviderCall = call()) => {
  const result = await run(Effect.flatMap(c.stream(providerCall), (started) => {
    const chunks: Array<ProviderChunk> = []
    return forEachChunk(started, (chunk) => Effect.sync(() => chunks.push(chunk))).pipe(
      Effect.result,
      Effect.map((end) => ({ rawRequest: started.rawRequest, chunks, failure: Result.isFailure(end) ? end.failure : undefined }))
    )
  }))
  if (Result.isFailure(result)) throw new Error(`the stream did not start: ${result.failure.message}`)
  return result.success
}

const streamedText = (chunks: ReadonlyArray<ProviderChunk>, type: "text" | "thought" = "text") =>
  chunks.flatMap((chunk) => chunk.content).filter((delta) => delta.type === type).map((delta) => (delta as { text: string }).text).join("")

const tool = (name: string): ToolDefinition => ({
  name,
  description: name,
  parameters: {},
  strict: false,
  validator: { schema: {}, validate: () => undefined }
})

describe("dummy provider: infer", () => {
  it("answers the fixed text by default, with usage and finish reason stop", async () => {
    const response = await infer(client("text"), call({ system: "sys" }))
    expect(response.output).toEqual([{ type: "text", text: dummyText }])
    expect(response.usage).toEqual(dummyUsage)
    expect(response.finishReason).toBe("stop")
    expect(JSON.parse(response.rawRequest)).toMatchObject({ model: "text", system: "sys", json_mode: "off" })
    expect(JSON.parse(response.rawResponse)).toEqual({ output: response.output, usage: dummyUsage })
    // any unknown model name behaves the same
    expect((await infer(client("whatever"))).output).toEqual([{ type: "text", text: dummyText }])
  })

  it("json: answers JSON text, or a respond tool call with json_mode tool", async () => {
    expect((await infer(client("json"), call({ functionType: "json", jsonMode: "on" }))).output).toEqual([
      { type: "text", text: dummyJson }
    ])
    const asTool = await infer(client("json"), call({ functionType: "json", jsonMode: "tool" }))
    expect(asTool.output).toEqual([{ type: "tool_call", id: "0", raw_name: "respond", raw_arguments: dummyJson }])
    expect(asTool.finishReason).toBe("tool_call")
    expect(JSON.parse(dummyJson)).toEqual({ answer: "Hello" })
  })

  it("tool: calls get_temperature without tools, else the first offered, allowed or forced tool", async () => {
    const toolNameFor = async (tools: ToolConfig | undefined) => {
      const response = await infer(client("tool"), call({ tools }))
      expect(response.finishReason).toBe("tool_call")
      const [block] = response.output
      if (block.type !== "tool_call") throw new Error("expected a tool call")
      expect(block.raw_arguments).toBe(dummyToolArguments)
      return block.raw_name
    }
    expect(await toolNameFor(undefined)).toBe("get_temperature")
    expect(await toolNameFor({ tools: [tool("a"), tool("b")], choice: { type: "auto" } })).toBe("a")
    expect(await toolNameFor({ tools: [tool("a"), tool("b")], allowed: ["b"], choice: { type: "auto" } })).toBe("b")
    expect(await toolNameFor({ tools: [tool("a"), tool("b")], choice: { type: "specific", name: "b" } })).toBe("b")
    expect(JSON.parse(dummyToolArguments)).toEqual({ location: "Brooklyn", units: "celsius" })
  })

  it("bad_tool: calls the tool with arguments that do not fit its schema", async () => {
    expect((await infer(client("bad_tool"))).output).toEqual([
      { type: "tool_call", id: "0", raw_name: "get_temperature", raw_arguments: dummyBadToolArguments }
    ])
    expect(JSON.parse(dummyBadToolArguments)).toEqual({ location: 12345 })
  })

  it("invalid_tool_arguments: calls the tool with arguments that are not JSON", async () => {
    const [block] = (await infer(client("invalid_tool_arguments"))).output
    expect(block).toEqual({ type: "tool_call", id: "0", raw_name: "get_temperature", raw_arguments: dummyInvalidToolArguments })
    expect(() => JSON.parse(dummyInvalidToolArguments)).toThrow()
  })

  it("reasoner: thinks, then answers", async () => {
    expect((await infer(client("reasoner"))).output).toEqual([
      { type: "thought", text: dummyThought },
      { type: "text", text: dummyText }
    ])
  })

  it("echo: answers with the system prompt and messages it received", async () => {
    const messages = [
      { role: "user" as const, content: [{ type: "text" as const, text: "What did I say?" }] },
      { role: "assistant" as const, content: [{ type: "text" as const, text: "Nothing yet." }] }
    ]
    const [block] = (await infer(client("echo"), call({ system: "Be nice.", messages }))).output
    if (block.type !== "text") throw new Error("expected text")
    expect(JSON.parse(block.text)).toEqual({ system: "Be nice.", messages })
    const [noSystem] = (await infer(client("echo"), call({ messages: [] }))).output
    expect(noSystem.type === "text" && JSON.parse(noSystem.text)).toEqual({ system: null, messages: [] })
  })

  it("error: always fails", async () => {
    const c = client("error")
    for (let i = 0; i < 3; i++) {
      const failure = await inferFailure(c)
      expect(failure).toBeInstanceOf(ProviderFailure)
      expect(failure.message).toContain("error")
      expect(failure.timedOut).toBe(false)
    }
  })

  it("flaky: fails every other call, starting with the first", async () => {
    const c = client("flaky")
    const outcomes: Array<string> = []
    for (let i = 0; i < 6; i++) {
      const result = await run(c.infer(call()))
      outcomes.push(Result.isSuccess(result) ? "ok" : "fail")
    }
    expect(outcomes).toEqual(["fail", "ok", "fail", "ok", "fail", "ok"])
    // another client starts over
    expect((await inferFailure(client("flaky"))).message).toContain("flaky")
  })

  it("slow: answers after a delay", async () => {
    const started = Date.now()
    const response = await infer(client("slow"))
    expect(Date.now() - started).toBeGreaterThanOrEqual(dummySlowDelayMs - 20)
    expect(response.output).toEqual([{ type: "text", text: dummyText }])
  })

  it("test_key: succeeds only with the API key good_key", async () => {
    const c = client("test_key")
    expect((await infer(c, call({}, dummyGoodKey))).output).toEqual([{ type: "text", text: dummyText }])
    expect((await inferFailure(c, call({}, "bad_key"))).message).toContain("invalid API key")
    expect((await inferFailure(c, call({}))).message).toContain("invalid API key")
    expect(dummyGoodKey).toBe("good_key")
  })
})

describe("dummy provider: stream", () => {
  it("streams the text in several pieces, then usage and finish reason", async () => {
    const { chunks, failure, rawRequest } = await streamAll(client("text"))
    expect(failure).toBeUndefined()
    expect(chunks.length).toBeGreaterThan(2)
    expect(streamedText(chunks)).toBe(dummyText)
    const last = chunks[chunks.length - 1]
    expect(last.content).toEqual([])
    expect(last.usage).toEqual(dummyUsage)
    expect(last.finishReason).toBe("stop")
    expect(chunks.slice(0, -1).every((chunk) => chunk.usage === undefined)).toBe(true)
    expect(JSON.parse(rawRequest).model).toBe("text")
  })

  it("streams a reasoner's thought then its text", async () => {
    const { chunks } = await streamAll(client("reasoner"))
    expect(streamedText(chunks, "thought")).toBe(dummyThought)
    expect(streamedText(chunks)).toBe(dummyText)
    const types = chunks.flatMap((chunk) => chunk.content).map((delta) => delta.type)
    expect(types.indexOf("text")).toBeGreaterThan(types.lastIndexOf("thought"))
  })

  it("streams a tool call: the name in the first delta, the arguments in pieces", async () => {
    const { chunks } = await streamAll(client("tool"))
    const deltas = chunks.flatMap((chunk) => chunk.content)
    expect(deltas.length).toBeGreaterThan(1)
    expect(deltas.every((delta) => delta.type === "tool_call" && delta.id === "0")).toBe(true)
    expect(deltas.map((delta) => delta.type === "tool_call" ? delta.raw_name : "")).toEqual(
      ["get_temperature", ...new Array(deltas.length - 1).fill("")]
    )
    expect(deltas.map((delta) => delta.type === "tool_call" ? delta.raw_arguments : "").join("")).toBe(dummyToolArguments)
    expect(chunks[chunks.length - 1].finishReason).toBe("tool_call")
  })

  it("stream_error: sends two chunks, then fails mid-stream", async () => {
    const { chunks, failure } = await streamAll(client("stream_error"))
    expect(chunks).toHaveLength(2)
    expect(streamedText(chunks)).toBe(dummyText.slice(0, 24))
    expect(failure).toBeInstanceOf(ProviderFailure)
    expect(failure!.message).toContain("mid-stream")
  })

  it("error and test_key fail before the stream starts", async () => {
    const errorResult = await run(client("error").stream(call()))
    expect(Result.isFailure(errorResult)).toBe(true)
    const keyResult = await run(client("test_key").stream(call({}, "nope")))
    expect(Result.isFailure(keyResult)).toBe(true)
    const { chunks } = await streamAll(client("test_key"), call({}, dummyGoodKey))
    expect(streamedText(chunks)).toBe(dummyText)
  })

  it("flaky counts streamed calls too", async () => {
    const c = client("flaky")
    expect(Result.isFailure(await run(c.stream(call())))).toBe(true)
    expect(streamedText((await streamAll(c)).chunks)).toBe(dummyText)
    expect(Result.isFailure(await run(c.infer(call())))).toBe(true)
  })
})

describe("dummy provider definition", () => {
  it("needs no credential and no settings", () => {
    expect(dummyProvider.type).toBe("dummy")
    expect(dummyProvider.defaultCredential).toEqual({ kind: "none" })
    expect(Object.keys(dummyProvider.settingsFields)).toEqual([])
  })
})
