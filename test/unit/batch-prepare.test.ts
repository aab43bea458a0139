import * as Result from "effect/Result"
import { describe, expect, it } from "vitest"
import type { BatchInferenceRequest } from "../../src/api/batch.ts"
import { batchIdTag, prepareBatch, type PreparedBatch } from "../../src/batch/prepare.ts"
import { batchInferenceBody, completedRows, modelInferenceIdOf, submittedRows } from "../../src/batch/results.ts"
import { type GatewayError, InvalidRequest, isGatewayError, NotFound } from "../../src/errors.ts"
import { isUuidV7 } from "../../src/inference/prepare.ts"
import { ModelTable } from "../../src/inference/models.ts"
import { uuidv7, uuidv7Timestamp } from "../../src/ids.ts"
import type { BatchResult } from "../../src/providers/types.ts"
import { buildOk, json } from "./fixtures.ts"
import { operatorCaller } from "../../src/workspace.ts"

const config = buildOk(`
[tools.get_weather]
description = "Weather"
parameters = "weather.json"

[models.local]
routing = ["d"]
[models.local.providers.d]
type = "dummy"
model_name = "hello"

[models.per_request_key]
routing = ["d"]
[models.per_request_key.providers.d]
type = "dummy"
model_name = "hello"
api_key_location = "dynamic::customer_key"

[models.no_batch]
routing = ["m"]
[models.no_batch.providers.m]
type = "mistral"
model_name = "mistral-small"
api_key_location = "none"

[functions.chat]
type = "chat"
tools = ["get_weather"]
user_schema = "user.json"
[functions.chat.variants.a]
type = "chat_completion"
model = "local"
weight = 1
user_template = "user.minijinja"
[functions.chat.variants.keyed]
type = "chat_completion"
model = "per_request_key"
weight = 0
user_template = "user.minijinja"
[functions.chat.variants.mistral]
type = "chat_completion"
model = "no_batch"
weight = 0
user_template = "user.minijinja"

[functions.extract]
type = "json"
output_schema = "answer.json"
[functions.extract.variants.v]
type = "chat_completion"
model = "dummy::json"
`, {
  files: {
    "/cfg/weather.json": json({ type: "object", properties: { location: { type: "string" } }, required: ["location"] }),
    "/cfg/answer.json": json({ type: "object", properties: { answer: { type: "string" } }, required: ["answer"] }),
    "/cfg/user.json": json({ type: "object", properties: { city: { type: "string" } }, required: ["city"] }),
    "/cfg/user.minijinja": "Weather in {{ city }}?"
  }
})
const models = new ModelTable(config)
const now = Date.UTC(2026, 10, 24, 12)

const cityInput = (city: string) => ({ messages: [{ role: "user" as const, content: [{ type: "text" as const, arguments: { city } }] }] })

const prepare = (request: Partial<BatchInferenceRequest>, apiKey?: string) =>
  Result.merge(prepareBatch({ function_name: "chat", inputs: [cityInput("Paris"), cityInput("Oslo")], ...request } as BatchInferenceRequest, config, models, config.templates, now, { publicId: apiKey, workspace: "default", role: "member" }))

const prepared = (request: Partial<BatchInferenceRequest>, apiKey?: string): PreparedBatch => {
  const result = prepare(request, apiKey)
  if (isGatewayError(result)) throw new Error(`expected a prepared batch, got ${result.message}`)
  return result
}

const refusal = (request: Partial<BatchInferenceRequest>): GatewayError => {
  const result = prepare(request)
  if (!isGatewayError(result)) throw new Error("expected the batch to be refused")
  return result
}

describe("prepareBatch", () => {
  it("prepares every input with the one variant, minting ids in input order and tagging each with the batch", () => {
    const batch = prepared({}, "pk_public")
    expect(batch.variant.name).toBe("a")
    expect(batch.provider.config.name).toBe("d")
    expect(isUuidV7(batch.batchId)).toBe(true)
    expect(uuidv7Timestamp(batch.batchId)).toBe(now)
    const ids = batch.inferences.map(({ prepared }) => prepared.inferenceId)
    expect(new Set(ids).size).toBe(2)
    expect(ids.every(isUuidV7)).toBe(true)
    expect(batch.inferences.map(({ modelRequest }) => modelRequest.messages[0].content)).toEqual([
      [{ type: "text", text: "Weather in Paris?" }],
      [{ type: "text", text: "Weather in Oslo?" }]
    ])
    for (const { prepared } of batch.inferences) {
      expect(prepared.request.tags).toEqual({ [batchIdTag]: batch.batchId, "gateway::api_key_public_id": "pk_public" })
    }
  })

  it("takes each list's entry for its input, null meaning the default", () => {
    const episode = uuidv7(now - 1000)
    const batch = prepared({
      episode_ids: [episode, null],
      tags: [{ team: "a" }, null],
      params: { chat_completion: { temperature: [0.2, null], max_tokens: [null, 50] } },
      allowed_tools: [[], null],
      tool_choice: ["none", null]
    })
    const [first, second] = batch.inferences
    expect(first.prepared.episodeId).toBe(episode)
    expect(second.prepared.episodeId).not.toBe(episode)
    expect(first.prepared.request.tags?.team).toBe("a")
    expect(second.prepared.request.tags?.team).toBeUndefined()
    expect(first.modelRequest.params.temperature).toBe(0.2)
    expect(first.modelRequest.params.max_tokens).toBeUndefined()
    expect(second.modelRequest.params.max_tokens).toBe(50)
    expect(first.modelRequest.tools?.choice).toEqual({ type: "none" })
    expect(second.modelRequest.tools?.choice).toEqual({ type: "auto" })
  })

  it("checks json inputs against each input's output schema", () => {
    const schema = { type: "object", properties: { n: { type: "integer" } }, required: ["n"] }
    const result = Result.merge(prepareBatch({
      function_name: "extract",
      inputs: [{ messages: [{ role: "user", content: "one" }] }, { messages: [{ role: "user", content: "two" }] }],
      output_schemas: [schema, null]
    } as BatchInferenceRequest, config, models, config.templates, now, operatorCaller()))
    if (isGatewayError(result)) throw new Error(result.message)
    expect(result.inferences[0].prepared.outputSchema?.schema).toEqual(schema)
    expect(result.inferences[1].prepared.outputSchema?.schema).toEqual(config.functions.get("extract")!.outputSchema!.schema)
  })

  it.each([
    [{ stream: true }, "stream: a batch is not streamed"],
    [{ dryrun: true }, "dryrun: not available for batches"],
    [{ cache_options: { enabled: "on" } }, "cache_options: batch inference neither reads nor writes the cache"],
    [{ inputs: [] }, "inputs: a batch needs at least one input"],
    [{ episode_ids: [null] }, "episode_ids: has 1 entries for 2 inputs"],
    [{ tags: [null, null, null] }, "tags: has 3 entries for 2 inputs"],
    [{ output_schemas: [] }, "output_schemas: has 0 entries for 2 inputs"],
    [{ params: { chat_completion: { temperature: [0.5] } } }, "params.chat_completion.temperature: has 1 entries for 2 inputs"],
    [{ variant_name: "mistral" }, `provider "m" of model "no_batch" (type mistral) has no batch API`],
    [{ variant_name: "keyed" }, "credentials.customer_key: provider \"d\" reads its key only from the request"]
  ])("refuses %j with a 400 naming the field", (request, message) => {
    const error = refusal(request as Partial<BatchInferenceRequest>)
    expect(error).toBeInstanceOf(InvalidRequest)
    expect(error.message).toContain(message)
  })

  it("names the index of the one bad input, whatever the field", () => {
    expect(refusal({ inputs: [cityInput("Paris"), cityInput("Oslo"), { messages: [{ role: "user", content: [{ type: "text", arguments: {} }] }] }] as never })
      .message).toMatch(/^inputs\[2\]\.messages\[0\]\.content\[0\]\.arguments: does not fit the user schema/)
    expect(refusal({ episode_ids: [null, "not-an-id"] }).message).toMatch(/^episode_ids\[1\]: "not-an-id" is not an episode id/)
    expect(refusal({ params: { chat_completion: { temperature: [null, "hot"] } } }).message).toMatch(/^params\.chat_completion\.temperature\[1\]: /)
    expect(refusal({ tags: [{ "gateway::mine": "x" }, null] }).message).toContain("tags[0].gateway::mine: tags starting with \"gateway::\" are reserved")
    expect(refusal({ tool_choice: [null, { specific: "nope" }] as never }).message).toMatch(/^tool_choice\[1\]/)
  })

  it("answers 404 for an unknown function or variant", () => {
    expect(refusal({ function_name: "nope" })).toBeInstanceOf(NotFound)
    expect(refusal({ variant_name: "nope" })).toBeInstanceOf(NotFound)
  })
})

describe("a batch's rows", () => {
  const batch = prepared({ tags: [{ team: "a" }, null] })
  const submitted = submittedRows(batch, { function_name: "chat", inputs: [] } as never, { providerBatchId: "pb_1", data: { file: "f" } }, ["raw0", "raw1"], now + 5, "team-a")

  it("records the batch as pending and each inference as sent", () => {
    expect(submitted.batch).toMatchObject({ id: batch.batchId, status: "pending", providerBatchId: "pb_1", providerBatchData: { file: "f" }, variantName: "a", modelName: "local", modelProviderName: "d", updatedAt: now + 5 })
    expect(submitted.inferences.map((row) => [row.index, row.rawRequest])).toEqual([[0, "raw0"], [1, "raw1"]])
    expect(submitted.inferences[0].tags.team).toBe("a")
    expect(submitted.inferences[0].inputMessages).toEqual(batch.inferences[0].modelRequest.messages)
  })

  it("turns results into inferences with their model inferences, and lists those without an answer", () => {
    const [first, second] = submitted.inferences
    const results: Array<BatchResult> = [
      {
        id: first.inferenceId,
        ok: true,
        response: {
          output: [{ type: "tool_call", id: "c1", raw_name: "get_weather", raw_arguments: "{\"location\":\"Paris\"}" }],
          usage: { input_tokens: 7, output_tokens: 3 },
          finishReason: "tool_call",
          rawRequest: "",
          rawResponse: "{\"raw\":1}"
        }
      },
      { id: second.inferenceId, ok: false, message: "the provider's batch expired before this request ran" }
    ]
    const done = completedRows(submitted.batch, submitted.inferences, new Map(results.map((result) => [result.id, result])), now + 60_000)
    expect(done.failures).toEqual({ [second.inferenceId]: "the provider's batch expired before this request ran" })
    expect(done.writes.inferences).toHaveLength(1)
    const [inference] = done.writes.inferences
    expect(inference).toMatchObject({ id: first.inferenceId, episodeId: first.episodeId, variantName: "a", processingTimeMs: 60_000 - (first.timestamp - now) })
    expect(inference.output).toEqual([{ type: "tool_call", id: "c1", name: "get_weather", arguments: { location: "Paris" }, raw_name: "get_weather", raw_arguments: "{\"location\":\"Paris\"}" }])
    const [call] = done.writes.modelInferences
    expect(call).toMatchObject({ id: modelInferenceIdOf(first.inferenceId), inferenceId: first.inferenceId, rawRequest: "raw0", rawResponse: "{\"raw\":1}", inputTokens: 7, outputTokens: 3, cached: false })

    expect(batchInferenceBody(first, inference, call, undefined)).toEqual({
      inference_id: first.inferenceId,
      episode_id: first.episodeId,
      variant_name: "a",
      content: inference.output,
      usage: { input_tokens: 7, output_tokens: 3 },
      finish_reason: "tool_call"
    })
    expect(batchInferenceBody(second, undefined, undefined, done.failures[second.inferenceId])).toEqual({
      inference_id: second.inferenceId,
      episode_id: second.episodeId,
      variant_name: "a",
      error: "the provider's batch expired before this request ran"
    })
  })

  it("derives a model inference's id from its inference's: the same every time, another id, a UUIDv7 of the same time", () => {
    const id = uuidv7(now)
    const derived = modelInferenceIdOf(id)
    expect(derived).toBe(modelInferenceIdOf(id))
    expect(derived).not.toBe(id)
    expect(isUuidV7(derived)).toBe(true)
    expect(uuidv7Timestamp(derived)).toBe(now)
  })
})
