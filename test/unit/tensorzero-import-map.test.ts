/**
 * TensorZero's records as this gateway's (src/tensorzeroImport/map.ts): the renames, the input
 * and output shapes of TensorZero's releases, and the skips, each with its reason.
 */
import { createHash } from "node:crypto"
import { describe, expect, it } from "vitest"
import { gatewayName, gatewayTags } from "../../src/tensorzeroImport/names.ts"
import {
  mapApiKey,
  mapBatch,
  mapDatapoint,
  mapDiclExample,
  mapFeedback,
  mapInference,
  mapModelInference,
  mappers,
  pendingBatchMessage
} from "../../src/tensorzeroImport/map.ts"
import type { TzInference } from "../../src/tensorzeroImport/source.ts"

const id = "0192e7a4-1b2c-7d3e-8f40-123456789abc"
const episode = "0192e7a4-1b2c-7d3e-8f40-0000000000e1"
const storagePath = { kind: { type: "s3_compatible", bucket_name: "tz-files", region: "us-east-1", endpoint: null, allow_http: null }, path: "observability/files/abc.png" }

const chatInference = (overrides: Partial<TzInference> = {}): TzInference => ({
  id,
  kind: "chat",
  functionName: "draft_email",
  variantName: "gpt",
  episodeId: episode,
  input: JSON.stringify({
    system: { assistant_name: "Ada" },
    messages: [{
      role: "user",
      content: [
        { type: "text", text: "Describe the image" },
        { type: "file", source_url: "https://example.com/cat.png", mime_type: "image/png", storage_path: storagePath },
        { type: "template", name: "user", arguments: { topic: "cats" } }
      ]
    }]
  }),
  output: [
    { type: "thought", text: "thinking", signature: "sig" },
    { type: "text", text: "A cat." },
    { type: "tool_call", id: "call_1", name: "lookup", arguments: { q: "cat" }, raw_name: "lookup", raw_arguments: "{\"q\":\"cat\"}" }
  ],
  toolParams: { tools_available: [{ name: "lookup", description: "Look up", parameters: { type: "object" }, strict: false }], tool_choice: "auto", parallel_tool_calls: null },
  inferenceParams: { chat_completion: { temperature: 0.2 } },
  processingTimeMs: 420,
  ttftMs: 80,
  tags: { "tensorzero::evaluation_run_id": "0192e7a4-0000-7000-8000-000000000001", user: "u1" },
  timestamp: 1_730_000_000_000,
  ...overrides
})

describe("names", () => {
  it("renames tensorzero:: to gateway:: in names and tag keys, never in tag values", () => {
    expect(gatewayName("tensorzero::llm_judge::eval::judge")).toBe("gateway::llm_judge::eval::judge")
    expect(gatewayName("tensorzero::evaluation_name::e::evaluator_name::x")).toBe("gateway::evaluation_name::e::evaluator_name::x")
    expect(gatewayName("draft_email")).toBe("draft_email")
    expect(gatewayTags({ "tensorzero::dataset_name": "tensorzero::kept", other: "v" })).toEqual({ "gateway::dataset_name": "tensorzero::kept", other: "v" })
  })

  it("takes TensorZero's older dynamic evaluation tag as the workflow evaluation run's, the newer name winning", () => {
    expect(gatewayTags({ "tensorzero::dynamic_evaluation_run_id": "old" })).toEqual({ "gateway::workflow_evaluation_run_id": "old" })
    expect(gatewayTags({ "tensorzero::dynamic_evaluation_run_id": "old", "tensorzero::workflow_evaluation_run_id": "new" }))
      .toEqual({ "gateway::workflow_evaluation_run_id": "new" })
    expect(gatewayTags({ "tensorzero::workflow_evaluation_run_id": "new", "tensorzero::dynamic_evaluation_run_id": "old" }))
      .toEqual({ "gateway::workflow_evaluation_run_id": "new" })
  })
})

describe("inferences", () => {
  it("keeps ids, timing and tags, and stores a file in object storage as a storage pointer", () => {
    const mapped = mapInference(chatInference(), "default")
    if (!("record" in mapped)) throw new Error(JSON.stringify(mapped))
    const record = mapped.record
    expect(record).toMatchObject({
      id,
      episodeId: episode,
      functionName: "draft_email",
      functionType: "chat",
      processingTimeMs: 420,
      ttftMs: 80,
      tags: { "gateway::evaluation_run_id": "0192e7a4-0000-7000-8000-000000000001", user: "u1" },
      inferenceParams: { chat_completion: { temperature: 0.2 } }
    })
    expect(record.timestamp).toBe(parseInt(id.slice(0, 8) + id.slice(9, 13), 16))
    expect((record.input as any).messages[0].content[1]).toEqual({
      type: "file",
      file_type: "object_storage",
      mime_type: "image/png",
      storage_path: storagePath,
      source_url: "https://example.com/cat.png"
    })
    expect(record.output).toEqual([
      { type: "thought", text: "thinking", signature: "sig" },
      { type: "text", text: "A cat." },
      { type: "tool_call", id: "call_1", name: "lookup", arguments: { q: "cat" }, raw_name: "lookup", raw_arguments: "{\"q\":\"cat\"}" }
    ])
    expect(record.toolParams).toEqual({
      tools_available: [{ name: "lookup", description: "Look up", parameters: { type: "object" }, strict: false }],
      tool_choice: "auto",
      parallel_tool_calls: null,
      allowed_tools: null
    })
  })

  it("reads TensorZero's older file shape (file.url, file.mime_type) and text blocks' `value`", () => {
    const mapped = mapInference(chatInference({
      input: {
        messages: [{
          role: "user",
          content: [{ type: "text", value: "hi" }, { type: "text", value: { name: "x" } }, { type: "file", file: { url: null, mime_type: "image/jpeg" }, storage_path: storagePath }]
        }]
      }
    }), "default")
    if (!("record" in mapped)) throw new Error(JSON.stringify(mapped))
    expect((mapped.record.input as any).messages[0].content).toEqual([
      { type: "text", text: "hi" },
      { type: "text", arguments: { name: "x" } },
      { type: "file", file_type: "object_storage", mime_type: "image/jpeg", storage_path: storagePath, source_url: null }
    ])
  })

  it("maps a json inference's output, and a raw that TensorZero left null", () => {
    const json = mapInference(chatInference({ kind: "json", output: "{\"raw\":\"{\\\"a\\\":1}\",\"parsed\":{\"a\":1}}", outputSchema: "{\"type\":\"object\"}", toolParams: undefined }), "default")
    if (!("record" in json)) throw new Error(JSON.stringify(json))
    expect(json.record.output).toEqual({ raw: "{\"a\":1}", parsed: { a: 1 } })
    expect(json.record.outputSchema).toEqual({ type: "object" })
    const unparsed = mapInference(chatInference({ kind: "json", output: { raw: null, parsed: null } }), "default")
    if (!("record" in unparsed)) throw new Error(JSON.stringify(unparsed))
    expect(unparsed.record.output).toEqual({ raw: "", parsed: null })
  })

  it("carries the key that made it as the gateway's tag", () => {
    const mapped = mapInference(chatInference({ apiKeyPublicId: "AbCdEf123456" }), "default")
    if (!("record" in mapped)) throw new Error(JSON.stringify(mapped))
    expect(mapped.record.tags["gateway::api_key_public_id"]).toBe("AbCdEf123456")
  })

  it("skips with a reason: a dropped payload, input that is not JSON, an invalid input, an unknown output block, a bad id", () => {
    const reasonOf = (row: TzInference) => {
      const mapped = mapInference(row, "default")
      return "skip" in mapped ? mapped.skip : undefined
    }
    expect(reasonOf(chatInference({ input: undefined }))?.reason).toBe("payload dropped by TensorZero's retention")
    expect(reasonOf(chatInference({ input: "{not json" }))?.reason).toBe("input is not JSON")
    expect(reasonOf(chatInference({ input: { messages: [{ role: "robot", content: "hi" }] } }))).toMatchObject({
      reason: "input is not a valid input",
      detail: expect.stringContaining("input.messages[0].role")
    })
    expect(reasonOf(chatInference({ output: [{ type: "hologram" }] }))).toEqual({ reason: "output holds a block of unknown type", detail: "hologram" })
    expect(reasonOf(chatInference({ episodeId: "nope" }))).toEqual({ reason: "episode_id is not a UUID", detail: "nope" })
  })
})

describe("model inferences", () => {
  it("keeps usage, cost, cache reads, the finish reason and the raw exchange; tool calls as the provider named them", () => {
    const mapped = mapModelInference({
      id,
      inferenceId: episode,
      rawRequest: "{\"model\":\"gpt\"}",
      rawResponse: "{\"id\":\"r\"}",
      system: "be brief",
      inputMessages: "[{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"hi\"}]}]",
      output: "[{\"type\":\"tool_call\",\"id\":\"c\",\"name\":\"f\",\"arguments\":\"{}\"}]",
      inputTokens: 10,
      outputTokens: 5,
      cacheReadInputTokens: 4,
      cost: 0.00125,
      responseTimeMs: 300,
      ttftMs: null,
      modelName: "gpt-4o",
      modelProviderName: "openai",
      cached: false,
      finishReason: "tool_call",
      timestamp: 0
    }, "default")
    if (!("record" in mapped)) throw new Error(JSON.stringify(mapped))
    expect(mapped.record).toMatchObject({
      inputTokens: 10,
      outputTokens: 5,
      cachedInputTokens: 4,
      cost: 0.00125,
      finishReason: "tool_call",
      system: "be brief",
      rawRequest: "{\"model\":\"gpt\"}",
      output: [{ type: "tool_call", id: "c", raw_name: "f", raw_arguments: "{}" }]
    })
    expect(mapped.record.ttftMs).toBeUndefined()
  })
})

describe("feedback", () => {
  const feedback = { id, metricName: "tensorzero::evaluation_name::e::evaluator_name::exact", targetId: episode, targetType: "inference" as const, tags: { "tensorzero::evaluator_inference_id": id }, timestamp: 0 }
  it("renames evaluator metrics and tags, keeps each kind's value", () => {
    expect(mapFeedback({ ...feedback, kind: "boolean", value: 1 }, "default")).toMatchObject({
      record: { kind: "boolean", value: true, metricName: "gateway::evaluation_name::e::evaluator_name::exact", tags: { "gateway::evaluator_inference_id": id } }
    })
    expect(mapFeedback({ ...feedback, kind: "float", value: 0.5 }, "default")).toMatchObject({ record: { value: 0.5 } })
    expect(mapFeedback({ ...feedback, kind: "demonstration", metricName: "demonstration", value: "[{\"type\":\"text\",\"text\":\"x\"}]", targetType: "episode" }, "default"))
      .toMatchObject({ record: { targetType: "inference", value: [{ type: "text", text: "x" }] } })
  })
  it("skips a value its kind cannot hold", () => {
    expect(mapFeedback({ ...feedback, kind: "float", value: "many" }, "default")).toEqual({ skip: { reason: "float feedback whose value is not a number", detail: "many" } })
    expect(mapFeedback({ ...feedback, kind: "boolean", value: "yes" }, "default")).toMatchObject({ skip: { reason: "boolean feedback whose value is not a boolean" } })
  })
})

describe("datapoints", () => {
  it("keeps staleness, the source inference and custom edits; a json datapoint's output is its value", () => {
    const mapped = mapDatapoint({
      id,
      kind: "json",
      datasetName: "train",
      functionName: "extract",
      input: { messages: [{ role: "user", content: [{ type: "text", text: "Ada, 36" }] }] },
      output: { raw: "{\"name\":\"Ada\"}", parsed: { name: "Ada" } },
      outputSchema: { type: "object" },
      tags: { "tensorzero::datapoint_source": "x" },
      isCustom: true,
      sourceInferenceId: episode,
      name: "first",
      staledAt: 1_730_000_100_000,
      updatedAt: 1_730_000_100_000
    }, "default")
    if (!("record" in mapped)) throw new Error(JSON.stringify(mapped))
    expect(mapped.record).toMatchObject({
      id,
      datasetName: "train",
      functionType: "json",
      output: { name: "Ada" },
      outputSchema: { type: "object" },
      sourceInferenceId: episode,
      isCustom: true,
      name: "first",
      staledAt: 1_730_000_100_000,
      tags: { "gateway::datapoint_source": "x" }
    })
    expect(mapped.record.searchText).toContain("ada, 36")
  })

  it("gives a chat datapoint's dynamic tools as its additional tools", () => {
    const mapped = mapDatapoint({
      id,
      kind: "chat",
      datasetName: "train",
      functionName: "draft",
      input: { messages: [{ role: "user", content: "hi" }] },
      output: [{ type: "text", text: "hello" }],
      toolParams: { tools_available: [{ name: "t", description: "d", parameters: {}, strict: true }], tool_choice: { specific: "t" }, parallel_tool_calls: true, allowed_tools: ["t"] },
      tags: {},
      isCustom: false,
      updatedAt: 0
    }, "default")
    if (!("record" in mapped)) throw new Error(JSON.stringify(mapped))
    expect(mapped.record.toolParams).toEqual({
      additional_tools: [{ name: "t", description: "d", parameters: {}, strict: true }],
      allowed_tools: ["t"],
      tool_choice: { specific: "t" },
      parallel_tool_calls: true
    })
  })
})

describe("keys", () => {
  it("decodes TensorZero's hex SHA-256 of the secret to the digest this gateway checks, keeping the public id's case", () => {
    const secret = "Ab".repeat(24)
    const hash = createHash("sha256").update(secret).digest()
    const mapped = mapApiKey({ publicId: "AbCdEfGh1234", hash: hash.toString("hex"), description: "ci", createdAt: 1, updatedAt: 2, disabledAt: 3, expiresAt: null }, "team")
    expect(mapped).toEqual({
      record: { publicId: "AbCdEfGh1234", secretHash: Uint8Array.from(hash), description: "ci", createdAt: 1, expiresAt: undefined, disabledAt: 3, workspace: "team" }
    })
    expect(mapApiKey({ publicId: "short", hash: hash.toString("hex"), createdAt: 1, updatedAt: 1 }, "default")).toMatchObject({ skip: { reason: "public id is not 12 letters and digits" } })
    expect(mapApiKey({ publicId: "AbCdEfGh1234", hash: "argon2$...", createdAt: 1, updatedAt: 1 }, "default")).toMatchObject({ skip: { reason: "hash is not a hex SHA-256" } })
  })
})

describe("workflow evaluations, batches and DICL examples", () => {
  it("does not bring back a run TensorZero deleted", () => {
    expect(mappers.workflow_evaluation_runs({ runId: id, variantPins: { "tensorzero::x": "v" }, tags: {}, staledAt: 5, timestamp: 0, updatedAt: 5 }, "default"))
      .toEqual({ skip: { reason: "deleted in TensorZero", detail: undefined } })
    expect(mappers.workflow_evaluation_runs({ runId: id, variantPins: { draft: "v1" }, projectName: "p", tags: {}, timestamp: 0, updatedAt: 0 }, "default"))
      .toMatchObject({ record: { id, variants: { draft: "v1" }, projectName: "p" } })
  })

  it("stores a batch TensorZero was still waiting for as failed, saying why", () => {
    const mapped = mapBatch({
      batchId: id,
      requestId: id,
      functionName: "draft",
      variantName: "v",
      modelName: "gpt",
      modelProviderName: "openai",
      status: "pending",
      timestamp: 0,
      updatedAt: 10,
      inferences: [{ inferenceId: episode, episodeId: episode, functionName: "draft", variantName: "v", input: { messages: [] }, modelName: "gpt", modelProviderName: "openai", tags: {}, timestamp: 0 }]
    }, "default")
    if (!("record" in mapped)) throw new Error(JSON.stringify(mapped))
    expect(mapped.record.batch).toMatchObject({ status: "failed", errorMessage: pendingBatchMessage, updatedAt: 10 })
    expect(mapped.record.inferences).toHaveLength(1)
  })

  it("parses a DICL example's input and output texts and refuses an example without an embedding", () => {
    const example = { id, functionName: "draft", variantName: "dicl", input: "{\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"q\"}]}]}", output: "[{\"type\":\"text\",\"text\":\"a\"}]", embedding: [0.1, 0.2], timestamp: 7 }
    expect(mapDiclExample(example)).toMatchObject({ record: { output: [{ type: "text", text: "a" }], embedding: [0.1, 0.2], createdAt: 7 } })
    expect(mapDiclExample({ ...example, input: "not json" })).toMatchObject({ skip: { reason: "input is not JSON" } })
    expect(mapDiclExample({ ...example, embedding: [] })).toMatchObject({ skip: { reason: "embedding is empty or not numbers" } })
  })
})
