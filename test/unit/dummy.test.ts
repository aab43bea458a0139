import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import { describe, expect, it } from "vitest"
import { forEachChunk } from "../support/providerStreams.ts"
import type { ModelRequest, ProviderChunk, ProviderResponse, ToolConfig, ToolDefinition } from "../../src/inference/types.ts"
import { requestBodyEdit, requestHeaderEdit } from "../../src/inference/extraBody.ts"
import {
  dummyAlternateText,
  dummyBadToolArguments,
  dummyDelayMs,
  dummyGoodKey,
  dummyGoodToolArguments,
  dummyHelloText,
  dummyHelloUsage,
  dummyInvalidToolArguments,
  dummyJson,
  dummyProvider,
  dummyStreamedJsonPieces,
  dummyStreamedPieces,
  dummyStreamedToolPieces,
  dummyText,
  dummyThought,
  dummyToolArguments
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

/** the chunks of a stream, each with the time it arrived, and the failure that ended it, if any */
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

const text = (value: string) => ({ type: "text", text: value })
const toolCall = (name: string, args: string) => ({ type: "tool_call", id: "0", raw_name: name, raw_arguments: args })

describe("dummy provider: TensorZero's models, whole", () => {
  it("answers good and any unknown name with TensorZero's sentence: 10 input tokens, one output token per block", async () => {
    for (const name of ["good", "text", "whatever"]) {
      const response = await infer(client(name), call({ system: "sys" }))
      expect(response.output).toEqual([text(dummyText)])
      expect(response.usage).toEqual({ input_tokens: 10, output_tokens: 1 })
      expect(response.finishReason).toBe("stop")
      expect(JSON.parse(response.rawRequest)).toMatchObject({ model: name, system: "sys", json_mode: "off" })
    }
    expect(dummyText).toBe(
      "Megumin gleefully chanted her spell, unleashing a thunderous explosion that lit up the sky and left a massive crater in its wake."
    )
  })

  it("answers each of TensorZero's names as it does", async () => {
    const cases: ReadonlyArray<readonly [string, ReadonlyArray<unknown>, string]> = [
      ["null", [], "stop"],
      ["empty", [text("")], "stop"],
      ["tool", [toolCall("get_temperature", dummyToolArguments)], "tool_call"],
      ["bad_tool", [toolCall("get_temperature", dummyBadToolArguments)], "tool_call"],
      ["invalid_tool_arguments", [toolCall("get_temperature", dummyInvalidToolArguments)], "tool_call"],
      ["good_tool", [toolCall("output_schema_tool", dummyGoodToolArguments)], "tool_call"],
      ["reasoner", [{ type: "thought", text: "hmmm" }, text(dummyText)], "stop"],
      ["reasoner_with_signature", [{ type: "thought", text: "hmmm", signature: "my_signature" }, text(dummyText)], "stop"],
      ["json_reasoner", [{ type: "thought", text: "hmmm" }, text(dummyJson)], "stop"],
      ["json", [text("{\"answer\":\"Hello\"}")], "stop"],
      ["json_goodbye", [text("{\"answer\":\"Goodbye\"}")], "stop"],
      ["json_cot", [text("{\"thinking\":\"hmmm\", \"response\": {\"answer\":\"tokyo!\"}}")], "stop"],
      ["json_diff_schema", [text("{\"response\":\"Hello\"}")], "stop"],
      ["json_beatles_1", [text("{\"names\":[\"John\", \"George\"]}")], "stop"],
      ["json_beatles_2", [text("{\"names\":[\"Paul\", \"Ringo\"]}")], "stop"],
      ["best_of_n_0", [text("{\"thinking\": \"hmmm\", \"answer_choice\": 0}")], "stop"],
      ["best_of_n_1", [text("{\"thinking\": \"hmmm\", \"answer_choice\": 1}")], "stop"],
      ["best_of_n_big", [text("{\"thinking\": \"hmmm\", \"answer_choice\": 100}")], "stop"],
      ["llm_judge::true", [text("{\"score\": true}")], "stop"],
      ["llm_judge::false", [text("{\"score\": false}")], "stop"],
      ["llm_judge::zero", [text("{\"score\": 0}")], "stop"],
      ["llm_judge::one", [text("{\"score\": 1}")], "stop"],
      ["alternate", [text(dummyAlternateText)], "stop"],
      // TensorZero reads the finish reason off the name
      ["tool_split_name", [text(dummyText)], "tool_call"]
    ]
    for (const [name, output, finishReason] of cases) {
      const response = await infer(client(name))
      expect(response.output, name).toEqual(output)
      expect(response.usage, name).toEqual({ input_tokens: 10, output_tokens: output.length })
      expect(response.finishReason, name).toBe(finishReason)
    }
    expect(JSON.parse(dummyToolArguments)).toEqual({ location: "Brooklyn", units: "celsius" })
    expect(JSON.parse(dummyBadToolArguments)).toEqual({ location: "Brooklyn", units: "Celsius" })
    expect(dummyThought).toBe("hmmm")
  })

  it("counts usage as the names that say so", async () => {
    expect((await infer(client("input_tokens_zero"))).usage).toEqual({ input_tokens: 0, output_tokens: 1 })
    expect((await infer(client("output_tokens_zero"))).usage).toEqual({ input_tokens: 10, output_tokens: 0 })
    expect((await infer(client("input_tokens_output_tokens_zero"))).usage).toEqual({ input_tokens: 0, output_tokens: 0 })
    expect((await infer(client("input_five_output_six"))).usage).toEqual({ input_tokens: 5, output_tokens: 6 })
  })

  it("json under json_mode tool in a json function: the same JSON as the respond tool's call", async () => {
    const asTool = await infer(client("json"), call({ functionType: "json", jsonMode: "tool" }))
    expect(asTool.output).toEqual([toolCall("respond", dummyJson)])
    expect(asTool.finishReason).toBe("tool_call")
  })

  it("random_answer: a new UUIDv7 answer each time", async () => {
    const c = client("random_answer")
    const [a, b] = [await infer(c), await infer(c)].map((response) => JSON.parse((response.output[0] as { text: string }).text).answer)
    expect(a).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7/)
    expect(a).not.toBe(b)
  })

  it("echo: the first text of the last user message; echo_request_messages: the system and messages received", async () => {
    const messages = [
      { role: "user" as const, content: [{ type: "text" as const, text: "first" }] },
      { role: "assistant" as const, content: [{ type: "text" as const, text: "Nothing yet." }] },
      { role: "user" as const, content: [{ type: "text" as const, text: "What did I say?" }, { type: "text" as const, text: "more" }] }
    ]
    expect((await infer(client("echo"), call({ messages }))).output).toEqual([text("What did I say?")])
    expect((await infer(client("echo"), call({ messages: [] }))).output).toEqual([text("")])
    const [block] = (await infer(client("echo_request_messages"), call({ system: "Be nice.", messages }))).output
    expect(block).toEqual(text(JSON.stringify({ system: "Be nice.", messages })))
    const [noSystem] = (await infer(client("echo_request_messages"), call({ messages: [] }))).output
    expect(noSystem).toEqual(text("{\"system\":null,\"messages\":[]}"))
  })

  it("echo_extra_info: the variant's and the request's edits in TensorZero's shape; echo_injected_data: what they make", async () => {
    const requested = { model_name: "dummy::echo_extra_info", provider_name: "dummy", pointer: "/thinking", value: { type: "enabled" } }
    const fromRequest = requestBodyEdit({ pointer: "/thinking", value: { type: "enabled" } }, "extra_body[0]", requested)
    const header = { name: "x-my-extra-header", value: "v" }
    const headerFromRequest = requestHeaderEdit({ ...header }, "extra_headers[0]", header)
    const configured = { pointer: "/temperature", value: 0.5 }
    const withEdits: ProviderCall = {
      ...call(),
      extraBody: [{ pointer: "/provider", value: 1 }, configured, fromRequest],
      extraHeaders: [headerFromRequest],
      caller: { tags: {}, dryrun: false, credentials: {}, extraBody: [configured, fromRequest], extraHeaders: [headerFromRequest] }
    }
    const [info] = (await infer(client("echo_extra_info"), withEdits)).output
    expect(JSON.parse((info as { text: string }).text)).toEqual({
      extra_body: { extra_body: [configured], inference_extra_body: [requested] },
      extra_headers: { variant_extra_headers: null, inference_extra_headers: [header] }
    })
    const [none] = (await infer(client("echo_extra_info"))).output
    expect(JSON.parse((none as { text: string }).text)).toEqual({
      extra_body: { inference_extra_body: [] },
      extra_headers: { variant_extra_headers: null, inference_extra_headers: [] }
    })
    const [injected] = (await infer(client("echo_injected_data"), withEdits)).output
    expect(JSON.parse((injected as { text: string }).text)).toEqual({
      injected_body: { provider: 1, temperature: 0.5, thinking: { type: "enabled" } },
      injected_headers: [["x-my-extra-header", "v"]]
    })
  })

  it("fails as TensorZero's does: error*, llm_judge::error, multiple-text-blocks, test_key", async () => {
    for (const name of ["error", "error_model"]) {
      expect((await inferFailure(client(name))).message).toBe(`Error sending request to Dummy provider for model '${name}'.`)
    }
    expect((await inferFailure(client("llm_judge::error"))).message).toBe("Dummy error in inference")
    expect((await inferFailure(client("multiple-text-blocks"))).message).toBe("First message must have exactly two text blocks")
    const twoBlocks = call({ messages: [{ role: "user", content: [{ type: "text", text: "a" }, { type: "text", text: "b" }] }] })
    expect((await infer(client("multiple-text-blocks"), twoBlocks)).output).toEqual([text(dummyText)])
    const keyed = client("test_key")
    expect((await infer(keyed, call({}, dummyGoodKey))).output).toEqual([text(dummyText)])
    expect((await inferFailure(keyed, call({}, "bad_key"))).message).toBe("Invalid API key for Dummy provider")
    // without a key (api_key_location none) it answers, as TensorZero's does
    expect((await infer(keyed, call({}))).output).toEqual([text(dummyText)])
  })

  it("flaky_*: fails its even-numbered calls; a rate_limit one as a 429", async () => {
    const c = client("flaky_model")
    const outcomes: Array<string> = []
    for (let i = 0; i < 4; i++) outcomes.push(Result.isSuccess(await run(c.infer(call()))) ? "ok" : "fail")
    expect(outcomes).toEqual(["ok", "fail", "ok", "fail"])
    const limited = client("flaky_rate_limit")
    await infer(limited)
    const failure = await inferFailure(limited)
    expect(failure.status).toBe(429)
    expect(failure.message).toContain("Flaky model 'flaky_rate_limit'")
    const judge = client("flaky_best_of_n_judge")
    expect((await infer(judge)).output).toEqual([text("{\"thinking\": \"hmmm\", \"answer_choice\": 0}")])
    expect((await inferFailure(judge)).message).toBe("Flaky model 'flaky_best_of_n_judge' failed on call number 2")
  })
})

describe("dummy provider: TensorZero's models, streamed", () => {
  const deltasOf = (chunks: ReadonlyArray<ProviderChunk>) => chunks.flatMap((chunk) => chunk.content)

  it("streams TensorZero's 16 pieces for any name without a stream of its own, then usage 10 + 16", async () => {
    for (const name of ["good", "bad_tool", "null", "echo"]) {
      const { chunks, failure } = await streamAll(client(name))
      expect(failure).toBeUndefined()
      expect(chunks.slice(0, -1).map((chunk) => chunk.content)).toEqual(dummyStreamedPieces.map((piece) => [{ type: "text", id: "0", text: piece }]))
      expect(chunks.at(-1)).toEqual({ content: [], usage: { input_tokens: 10, output_tokens: 16 }, finishReason: "stop", raw: "" })
    }
    expect(dummyStreamedPieces.join("")).toBe("Wally, the golden retriever, wagged his tail excitedly as he devoured a slice of cheese pizza.")
  })

  it("streams reasoner's thought pieces, then the text pieces, usage 10 + 18", async () => {
    const { chunks } = await streamAll(client("reasoner"))
    expect(deltasOf(chunks).slice(0, 3)).toEqual([
      { type: "thought", id: "0", text: "hmmm" },
      { type: "thought", id: "0", text: "hmmm" },
      { type: "text", id: "0", text: "Wally," }
    ])
    expect(streamedText(chunks)).toBe(dummyStreamedPieces.join(""))
    expect(chunks.at(-1)!.usage).toEqual({ input_tokens: 10, output_tokens: 18 })
  })

  it("streams json's own JSON (not its whole answer's), json_reasoner's after the thought", async () => {
    const json = await streamAll(client("json"))
    expect(streamedText(json.chunks)).toBe("{\"name\":\"John\",\"age\":30}")
    expect(json.chunks.at(-1)!.usage).toEqual({ input_tokens: 10, output_tokens: dummyStreamedJsonPieces.length })
    const reasoner = await streamAll(client("json_reasoner"))
    expect(streamedText(reasoner.chunks, "thought")).toBe("hmmmhmmm")
    expect(streamedText(reasoner.chunks)).toBe("{\"name\":\"John\",\"age\":30}")
  })

  it("streams a tool call: the name in the first delta only (split for tool_split_name), the arguments in pieces", async () => {
    for (const [name, names, args] of [
      ["tool", ["get_temperature", "", "", "", ""], dummyStreamedToolPieces],
      ["tool_split_name", ["get_temp", "erature", "", "", ""], dummyStreamedToolPieces],
      ["good_tool", ["get_temperature", "", "", "", ""], ["{\"sentiment\"", ":\"positive\"", ",\"confidence\"", ":0.95", "}"]]
    ] as const) {
      const { chunks } = await streamAll(client(name))
      expect(deltasOf(chunks), name).toEqual(names.map((rawName, i) => ({ type: "tool_call", id: "0", raw_name: rawName, raw_arguments: args[i] })))
      expect(chunks.at(-1), name).toEqual({ content: [], usage: { input_tokens: 10, output_tokens: 5 }, finishReason: "tool_call", raw: "" })
    }
  })

  it("sends one chunk per pull", async () => {
    const c = client("good")
    const reads = await run(Effect.flatMap(c.stream(call()), (started) => {
      const sizes: Array<number> = []
      const loop: Effect.Effect<Array<number>> = Effect.matchEffect(started.next, {
        onFailure: () => Effect.succeed(sizes),
        onSuccess: (chunks) =>
          Effect.suspend(() => {
            sizes.push(chunks.length)
            return loop
          })
      })
      return loop
    }))
    expect(Result.isSuccess(reads) && reads.success).toEqual(new Array(17).fill(1))
  })

  it("fails as TensorZero's stream does: error* before it starts, fatal_stream_error at its third chunk, err_in_stream at its fourth", async () => {
    const errorResult = await run(client("error").stream(call()))
    expect(Result.isFailure(errorResult) && errorResult.failure.message).toBe("Error sending request to Dummy provider for model 'error'.")
    const fatal = await streamAll(client("fatal_stream_error"))
    expect(fatal.chunks).toHaveLength(2)
    expect(fatal.failure?.message).toBe("Dummy fatal error")
    const inStream = await streamAll(client("err_in_stream"))
    expect(inStream.chunks).toHaveLength(3)
    expect(inStream.failure?.message).toBe("Dummy error in stream")
  })

  it("flaky_* counts streamed calls too", async () => {
    const c = client("flaky_stream")
    expect((await streamAll(c)).failure).toBeUndefined()
    expect(Result.isFailure(await run(c.stream(call())))).toBe(true)
    expect((await infer(c)).output).toEqual([text(dummyText)])
  })
})

describe("dummy provider: the gateway's own models", () => {
  it("hello: the gateway's former default, usage 10 + 10, streamed in pieces of 12 characters at once", async () => {
    const response = await infer(client("hello"))
    expect(response.output).toEqual([text(dummyHelloText)])
    expect(response.usage).toEqual(dummyHelloUsage)
    expect(dummyHelloUsage).toEqual({ input_tokens: 10, output_tokens: 10 })
    const { chunks } = await streamAll(client("hello"))
    expect(streamedText(chunks)).toBe(dummyHelloText)
    expect(chunks.slice(0, -1).every((chunk) => chunk.content.every((delta) => delta.type === "text" && delta.text.length <= 12))).toBe(true)
    expect(chunks.at(-1)).toMatchObject({ usage: dummyHelloUsage, finishReason: "stop" })
  })

  it("offered_tool: calls get_temperature without tools, else the forced, first allowed or first offered tool", async () => {
    const toolNameFor = async (tools: ToolConfig | undefined, fields: Partial<ModelRequest> = {}) => {
      const response = await infer(client("offered_tool"), call({ tools, ...fields }))
      expect(response.finishReason).toBe("tool_call")
      expect(response.usage).toEqual(dummyHelloUsage)
      const [block] = response.output
      if (block.type !== "tool_call") throw new Error("expected a tool call")
      expect(block.raw_arguments).toBe(dummyToolArguments)
      return block.raw_name
    }
    expect(await toolNameFor(undefined)).toBe("get_temperature")
    expect(await toolNameFor({ tools: [tool("a"), tool("b")], choice: { type: "auto" } })).toBe("a")
    expect(await toolNameFor({ tools: [tool("a"), tool("b")], allowed: ["b"], choice: { type: "auto" } })).toBe("b")
    expect(await toolNameFor({ tools: [tool("a"), tool("b")], choice: { type: "specific", name: "b" } })).toBe("b")
    expect(await toolNameFor(undefined, { functionType: "json", jsonMode: "tool" })).toBe("respond")
  })

  it("flaky: fails every other call, starting with the first; another client starts over", async () => {
    const c = client("flaky")
    const outcomes: Array<string> = []
    for (let i = 0; i < 6; i++) outcomes.push(Result.isSuccess(await run(c.infer(call()))) ? "ok" : "fail")
    expect(outcomes).toEqual(["fail", "ok", "fail", "ok", "fail", "ok"])
    expect((await inferFailure(client("flaky"))).message).toContain("flaky")
    expect(Result.isFailure(await run(c.stream(call())))).toBe(true)
    expect(streamedText((await streamAll(c)).chunks)).toBe(dummyHelloText)
  })

  it("delay_500ms: answers after half a second", async () => {
    const started = Date.now()
    const response = await infer(client("delay_500ms"))
    expect(Date.now() - started).toBeGreaterThanOrEqual(dummyDelayMs - 20)
    expect(response.output).toEqual([text(dummyHelloText)])
  })

  it("stream_error: sends two chunks, then fails mid-stream", async () => {
    const { chunks, failure } = await streamAll(client("stream_error"))
    expect(chunks).toHaveLength(2)
    expect(streamedText(chunks)).toBe(dummyHelloText.slice(0, 24))
    expect(failure).toBeInstanceOf(ProviderFailure)
    expect(failure!.message).toContain("mid-stream")
  })
})

describe("dummy provider: batches", () => {
  it("answers each request whole at the first poll, a failing one with its message", async () => {
    for (const [name, expected] of [["good", [text(dummyText)]], ["hello", [text(dummyHelloText)]]] as const) {
      const batch = client(name).batch!
      const started = await run(batch.start([{ id: "a", call: call() }, { id: "b", call: call() }]))
      if (Result.isFailure(started)) throw new Error(started.failure.message)
      const polled = await run(batch.poll(started.success.handle, { apiKey: undefined, qualifiedName: "q", extraHeaders: [] }))
      if (Result.isFailure(polled) || polled.success.status !== "completed") throw new Error("expected a completed batch")
      expect(polled.success.results.map((result) => result.ok && result.response.output)).toEqual([expected, expected])
    }
    const judge = client("llm_judge::error").batch!
    const started = await run(judge.start([{ id: "a", call: call() }]))
    if (Result.isFailure(started)) throw new Error(started.failure.message)
    const polled = await run(judge.poll(started.success.handle, { apiKey: undefined, qualifiedName: "q", extraHeaders: [] }))
    expect(Result.isSuccess(polled) && polled.success.status === "completed" && polled.success.results).toEqual([
      { id: "a", ok: false, message: "Dummy error in inference" }
    ])
    // error* fails the whole batch, as a provider refusing it would
    expect(Result.isFailure(await run(client("error").batch!.start([{ id: "a", call: call() }])))).toBe(true)
  })
})

describe("dummy provider: embeddings", () => {
  const embed = (name: string, input: ReadonlyArray<string>, apiKey?: string) =>
    run(client(name).embeddings!.embed({ ...call({}, apiKey), request: { input, dimensions: 8 } }))

  it("answers a vector of 1536 zeros per input, whatever the dimensions, usage 10 + 0, and reads its raw answer back", async () => {
    const result = await embed("any", ["a", "b"])
    if (Result.isFailure(result)) throw new Error(result.failure.message)
    expect(result.success.embeddings).toEqual([new Array(1536).fill(0), new Array(1536).fill(0)])
    expect(result.success.usage).toEqual({ input_tokens: 10, output_tokens: 0 })
    expect(client("any").embeddings!.parse(result.success.rawResponse)).toEqual({ embeddings: result.success.embeddings, usage: result.success.usage })
  })

  it("fails for error* and test_key with another key", async () => {
    const failed = await embed("error", ["a"])
    expect(Result.isFailure(failed) && failed.failure.message).toBe("Error sending request to Dummy provider for model 'error'.")
    const refused = await embed("test_key", ["a"], "bad")
    expect(Result.isFailure(refused) && refused.failure.message).toBe("Invalid API key for Dummy provider")
    expect(Result.isSuccess(await embed("test_key", ["a"], dummyGoodKey))).toBe(true)
  })
})

describe("dummy provider definition", () => {
  it("needs no credential and no settings; has embeddings and batches", () => {
    expect(dummyProvider.type).toBe("dummy")
    expect(dummyProvider.defaultCredential).toEqual({ kind: "none" })
    expect(Object.keys(dummyProvider.settingsFields)).toEqual([])
    expect(dummyProvider.embeddings).toBe(true)
    expect(dummyProvider.batch).toBe(true)
  })
})
