import { createHash } from "node:crypto"
import * as Result from "effect/Result"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { describe, expect, it } from "vitest"
import { InferenceRequest } from "../../src/api/inference.ts"
import { makeDecoder } from "../../src/decode.ts"
import { uuidv7Timestamp } from "../../src/ids.ts"
import { ChunkAccumulator, outputToChunks, replayedChunks } from "../../src/inference/chunks.ts"
import type { ProviderChunk } from "../../src/inference/types.ts"
import { ModelTable } from "../../src/inference/models.ts"
import { prepareInference, type PreparedInference } from "../../src/inference/prepare.ts"
import { makeCacheLookup } from "../../src/inference/cacheLookup.ts"
import { makePricing } from "../../src/inference/pricing.ts"
import { runInference } from "../../src/inference/run.ts"
import { cacheKey, cachePolicy } from "../../src/cache/policy.ts"
import { inferenceRows, inferenceWriteUnit, isValidOutput } from "../../src/storedInferences/rows.ts"
import { inferenceResponseBody } from "../../src/native/response.ts"
import { CacheStoreService } from "../../src/cache/store.ts"
import { BudgetTable } from "../../src/budgets/budget.ts"
import { RateLimiter } from "../../src/ratelimit/limiter.ts"
import { Models } from "../../src/services.ts"
import { HttpTransport } from "../../src/transport.ts"
import { buildOk, json } from "./fixtures.ts"

const config = buildOk(`
[functions.chat]
type = "chat"
[functions.chat.variants.v]
type = "chat_completion"
model = "dummy::echo_request_messages"
temperature = 0.5

[functions.extract]
type = "json"
output_schema = "answer.json"
[functions.extract.variants.v]
type = "chat_completion"
model = "dummy::json"
`, { files: { "/cfg/answer.json": json({ type: "object", required: ["answer"] }) } })
const models = new ModelTable(config)
const decode = makeDecoder(InferenceRequest)

const prepare = (body: unknown): PreparedInference => {
  const decoded = decode(body)
  if (!decoded.ok) throw new Error(JSON.stringify(decoded.issues))
  return Result.getOrThrow(prepareInference(decoded.value, config, models, Date.now()))
}

const services = Layer.mergeAll(
  Layer.succeed(HttpTransport, HttpTransport.of({ post: () => Effect.die("no network"), postStream: () => Effect.die("no network"), download: () => Effect.die("no network") })),
  Layer.succeed(CacheStoreService, CacheStoreService.of({ store: undefined })),
  Layer.succeed(Models, models),
  Layer.succeed(RateLimiter, RateLimiter.none),
  Layer.succeed(BudgetTable, BudgetTable.none)
)

const run = (prepared: PreparedInference) => Effect.runPromise(runInference(prepared, { templates: config.templates, now: Date.now, pricing: makePricing(), cacheLookup: makeCacheLookup() }).pipe(Effect.provide(services)))

describe("inferenceRows", () => {
  it("records the inference as received and its model call, timestamps from the ids", async () => {
    const body = { function_name: "chat", input: { messages: [{ role: "user", content: "hi" }] }, tags: { user: "u1" }, params: { chat_completion: { seed: 7 } } }
    const result = await run(prepare(body))
    const rows = inferenceRows(result)
    expect(rows.inferences).toHaveLength(1)
    const inference = rows.inferences[0]
    expect(inference).toMatchObject({
      id: result.prepared.inferenceId,
      functionName: "chat",
      functionType: "chat",
      variantName: "v",
      episodeId: result.prepared.episodeId,
      input: body.input,
      tags: { user: "u1" },
      inferenceParams: { chat_completion: { temperature: 0.5, seed: 7, json_mode: "off" } },
      timestamp: uuidv7Timestamp(result.prepared.inferenceId)
    })
    expect(inference.output).toEqual(inferenceResponseBody(result).content)
    const call = rows.modelInferences[0]
    expect(call).toMatchObject({
      inferenceId: inference.id,
      modelName: "dummy::echo_request_messages",
      modelProviderName: "dummy",
      // TensorZero's usage: 10 input tokens, one output token per block
      inputTokens: 10,
      outputTokens: 1,
      cached: false,
      finishReason: "stop",
      timestamp: uuidv7Timestamp(call.id)
    })
    expect(call.inputMessages).toEqual([{ role: "user", content: [{ type: "text", text: "hi" }] }])
    // write_only is the default: a valid answer goes to the cache, keyed by the call
    expect(call.cacheKey).toBe(cacheKey(result.origin.provider, result.origin.call))
  })

  it("keeps dryrun and off requests out of the cache, and invalid json answers too", async () => {
    const cacheKeyOf = (rows: ReturnType<typeof inferenceRows>) => rows.modelInferences[0].cacheKey
    expect(cacheKeyOf(inferenceRows(await run(prepare({ function_name: "chat", input: {}, dryrun: true }))))).toBeUndefined()
    expect(cacheKeyOf(inferenceRows(await run(prepare({ function_name: "chat", input: {}, cache_options: { enabled: "off" } }))))).toBeUndefined()
    const invalid = await run(prepare({ function_name: "extract", input: {}, output_schema: { type: "object", required: ["nope"] } }))
    expect((inferenceResponseBody(invalid).output as any).parsed).toBeNull()
    expect(cacheKeyOf(inferenceRows(invalid))).toBeUndefined()
    expect(inferenceRows(invalid).inferences[0].outputSchema).toEqual({ type: "object", required: ["nope"] })
  })

  it("gives the queue the inference's id and target along with its rows", async () => {
    const result = await run(prepare({ function_name: "extract", input: {} }))
    const unit = inferenceWriteUnit(result)
    expect(unit.inference).toEqual({
      id: result.prepared.inferenceId,
      target: { workspace: "default", functionName: "extract", functionType: "json", episodeId: result.prepared.episodeId, outputSchema: { type: "object", required: ["answer"] } }
    })
    expect(unit.batch.inferences[0].id).toBe(result.prepared.inferenceId)
  })
})

describe("cache key and policy", () => {
  it("is the same for the same call and differs when the request differs", async () => {
    const a = await run(prepare({ function_name: "chat", input: { messages: [{ role: "user", content: "hi" }] } }))
    const b = await run(prepare({ function_name: "chat", input: { messages: [{ role: "user", content: "hi" }] } }))
    const c = await run(prepare({ function_name: "chat", input: { messages: [{ role: "user", content: "hello" }] } }))
    const key = (r: typeof a) => cacheKey(r.origin.provider, r.origin.call)
    expect(key(a)).toMatch(/^[0-9a-f]{64}$/)
    expect(key(a)).toBe(key(b))
    expect(key(a)).not.toBe(key(c))
  })

  it("is the hash of the whole key's JSON, as before the provider's part was made once (entries written before still hit), scope included", async () => {
    const a = await run(prepare({ function_name: "chat", input: { messages: [{ role: "user", content: "hi" }] } }))
    const { provider, call } = a.origin
    const { tools: _, ...request } = call.request
    const whole = [call.modelName, call.providerName, provider.type, provider.modelName, provider.settings, { ...request, tools: undefined }, call.extraBody, call.extraHeaders]
    const sha = (parts: Array<unknown>) => createHash("sha256").update(JSON.stringify(parts)).digest("hex")
    expect(cacheKey(provider, call)).toBe(sha(whole))
    // the second time from the provider's made part
    expect(cacheKey(provider, call)).toBe(sha(whole))
    expect(cacheKey(provider, call, "key1")).toBe(sha([...whole, ["scope", "key1"]]))
  })

  it("reads and writes as cache_options say, never writing on dryrun", () => {
    expect(cachePolicy(undefined, false)).toEqual({ read: false, write: true, maxAgeS: undefined })
    expect(cachePolicy({ enabled: "on", max_age_s: 60 }, false)).toEqual({ read: true, write: true, maxAgeS: 60 })
    expect(cachePolicy({ enabled: "read_only" }, false)).toEqual({ read: true, write: false, maxAgeS: undefined })
    expect(cachePolicy({ enabled: "off" }, false)).toEqual({ read: false, write: false, maxAgeS: undefined })
    expect(cachePolicy({ enabled: "on" }, true)).toEqual({ read: true, write: false, maxAgeS: undefined })
  })
})

describe("isValidOutput", () => {
  it("is false for tool calls that failed validation and unparsed json", () => {
    expect(isValidOutput([{ type: "text", text: "x" }])).toBe(true)
    expect(isValidOutput([{ type: "tool_call", id: "1", name: null, arguments: null, raw_name: "x", raw_arguments: "{}" }])).toBe(false)
    expect(isValidOutput([{ type: "tool_call", id: "1", name: "x", arguments: null, raw_name: "x", raw_arguments: "{" }])).toBe(false)
    expect(isValidOutput({ raw: "{}", parsed: {} })).toBe(true)
    expect(isValidOutput({ raw: "x", parsed: null })).toBe(false)
  })
})

describe("chunks", () => {
  it("streams a whole answer and puts it back together", () => {
    const output = [
      { type: "thought" as const, text: "thinking about it" },
      { type: "text" as const, text: "Hello there, how are you?" },
      { type: "tool_call" as const, id: "c1", raw_name: "f", raw_arguments: "{\"a\":\"long value here\"}" }
    ]
    const chunks = outputToChunks(output, { input_tokens: 1, output_tokens: 2 }, "tool_call", 5)
    expect(chunks.length).toBeGreaterThan(6)
    const accumulated = new ChunkAccumulator()
    for (const chunk of chunks) accumulated.add(chunk)
    expect(accumulated.output()).toEqual(output)
    expect(accumulated.usage).toEqual({ input_tokens: 1, output_tokens: 2 })
    expect(accumulated.finishReason).toBe("tool_call")
    expect(accumulated.chunking()).toBeUndefined()
  })

  it("keeps how a stream was cut, and replays its answer cut the same way", () => {
    const streamed: ReadonlyArray<ProviderChunk> = [
      { content: [{ type: "thought", id: "t", text: "hm" }], raw: "1" },
      { content: [{ type: "thought", id: "t", text: "m", signature: "sig" }, { type: "text", id: "a", text: "Hel" }], raw: "2" },
      { content: [], raw: "3" },
      { content: [{ type: "text", id: "a", text: "lo" }, { type: "tool_call", id: "c1", raw_name: "f", raw_arguments: "{\"a\":" }], raw: "4" },
      { content: [{ type: "tool_call", id: "c1", raw_name: "", raw_arguments: "1}" }], raw: "5" },
      { content: [], usage: { input_tokens: 3, output_tokens: 4 }, finishReason: "tool_call", raw: "6" }
    ]
    const accumulated = new ChunkAccumulator(true)
    for (const chunk of streamed) accumulated.add(chunk)
    const output = accumulated.output()
    const chunking = accumulated.chunking()!
    const replayed = replayedChunks(output, chunking, { input_tokens: 0, output_tokens: 0 }, "tool_call")
    // the chunks with content, as they came (a text or thought block's id is its place), then the end
    expect(replayed.map((chunk) => chunk.content)).toEqual([
      [{ type: "thought", id: "0", text: "hm" }],
      [{ type: "thought", id: "0", text: "m", signature: "sig" }, { type: "text", id: "1", text: "Hel" }],
      [{ type: "text", id: "1", text: "lo" }, { type: "tool_call", id: "c1", raw_name: "f", raw_arguments: "{\"a\":" }],
      [{ type: "tool_call", id: "c1", raw_name: "", raw_arguments: "1}" }],
      []
    ])
    expect(replayed.at(-1)).toMatchObject({ usage: { input_tokens: 0, output_tokens: 0 }, finishReason: "tool_call" })
    const again = new ChunkAccumulator()
    for (const chunk of replayed) again.add(chunk)
    expect(again.output()).toEqual(output)
    // a chunking that does not fit the answer (a stored row cut down) falls back to one chunk per block
    const cut = [{ type: "text" as const, text: "He" }]
    expect(replayedChunks(cut, chunking, { input_tokens: 0, output_tokens: 0 }, "stop")).toEqual(outputToChunks(cut, { input_tokens: 0, output_tokens: 0 }, "stop"))
    expect(replayedChunks(output, "not json", { input_tokens: 0, output_tokens: 0 }, "stop").length).toBe(output.length + 1)
  })
})
