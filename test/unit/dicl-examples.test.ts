/**
 * The pure helpers of DICL examples (src/dicl/): the text an input is embedded by (one text for
 * equal inputs however they are spelt), examples as user/assistant message pairs (chat text and
 * tool calls, json raw text), the outputs that make an example, embeddings that cannot be
 * compared, distances brought into range and cut at maxDistance, the variant's embedding model,
 * and a task as the GET answers it.
 */
import { describe, expect, it } from "vitest"
import type { GatewayConfig, VariantConfig } from "../../src/config/types.ts"
import { diclEmbeddingModelOf, embeddingModelRequestName } from "../../src/dicl/embeddingModel.ts"
import {
  diclExampleMessages,
  diclInputText,
  diclOutputOfInference,
  diclOutputOfValue,
  embeddingProblem,
  vectorNorm
} from "../../src/dicl/examples.ts"
import { diclTaskBody } from "../../src/dicl/service.ts"
import { neighborsWithin, wholeK } from "../../src/dicl/store.ts"

describe("diclInputText", () => {
  it("is stable JSON of system and messages: key order, string content and absent fields do not change it", () => {
    const blocks = { system: { b: 2, a: [1, { z: 1, y: 2 }] }, messages: [{ role: "user", content: [{ type: "text", text: "hi" }] }] }
    const spelt = { messages: [{ content: "hi", role: "user" }], system: { a: [1, { y: 2, z: 1 }], b: 2 } }
    expect(diclInputText(blocks)).toBe(diclInputText(spelt))
    expect(diclInputText(blocks)).toBe('{"messages":[{"content":[{"text":"hi","type":"text"}],"role":"user"}],"system":{"a":[1,{"y":2,"z":1}],"b":2}}')
    expect(diclInputText({ messages: [], system: undefined })).toBe('{"messages":[]}')
    expect(diclInputText({})).toBe('{"messages":[]}')
    expect(diclInputText({ system: "be terse" })).toBe('{"messages":[],"system":"be terse"}')
  })

  it("tells different inputs apart: text, role, order of messages, template arguments", () => {
    const texts = [
      { messages: [{ role: "user", content: "a" }] },
      { messages: [{ role: "user", content: "b" }] },
      { messages: [{ role: "assistant", content: "a" }] },
      { messages: [{ role: "user", content: "a" }, { role: "user", content: "b" }] },
      { messages: [{ role: "user", content: "b" }, { role: "user", content: "a" }] },
      { messages: [{ role: "user", content: [{ type: "text", arguments: { city: "Oslo" } }] }] },
      { messages: [{ role: "user", content: [{ type: "text", arguments: { city: "Lima" } }] }] },
      { system: "x", messages: [{ role: "user", content: "a" }] }
    ].map(diclInputText)
    expect(new Set(texts).size).toBe(texts.length)
  })
})

describe("diclExampleMessages", () => {
  const input = { messages: [{ role: "user", content: "What is 2 + 2?" }] }

  it("makes a user message of the input's text and an assistant message of a chat output's text", () => {
    const output = [{ type: "thought", text: "easy" }, { type: "text", text: "4" }, { type: "text", text: " it is" }]
    expect(diclExampleMessages([{ input, output }], "chat")).toEqual([
      { role: "user", content: [{ type: "text", text: diclInputText(input) }] },
      { role: "assistant", content: [{ type: "text", text: "4" }, { type: "text", text: " it is" }] }
    ])
  })

  it("writes a chat output with tool calls as the JSON text of its blocks (an example has no tool results to pair them with)", () => {
    const output = [
      { type: "thought", text: "easy" },
      { type: "text", text: "4" },
      { type: "tool_call", id: "call_1", name: "add", arguments: { a: 2, b: 2 }, raw_name: "add", raw_arguments: "{\"a\": 2, \"b\": 2}" },
      { type: "tool_call", id: "call_2", name: null, arguments: null, raw_name: "sub", raw_arguments: "not json" },
      { type: "tool_call", id: "call_3", name: "mul", arguments: { a: 1 } },
      { type: "unknown", data: {}, model_provider_name: "x" }
    ]
    expect(diclExampleMessages([{ input, output }], "chat")).toEqual([
      { role: "user", content: [{ type: "text", text: diclInputText(input) }] },
      {
        role: "assistant",
        content: [{
          type: "text",
          text: JSON.stringify([
            { type: "text", text: "4" },
            { type: "tool_call", name: "add", arguments: { a: 2, b: 2 } },
            { type: "tool_call", name: "sub", arguments: "not json" },
            { type: "tool_call", name: "mul", arguments: { a: 1 } }
          ])
        }]
      }
    ])
  })

  it("makes an assistant message of a json output's raw text, pairs in the order given, and leaves out examples with nothing to say", () => {
    const other = { messages: [{ role: "user", content: "And 3 + 3?" }] }
    expect(diclExampleMessages([
      { input, output: { raw: "{\"answer\": 4}", parsed: { answer: 4 } } },
      { input: other, output: { raw: "{\"answer\":6}", parsed: { answer: 6 } } }
    ], "json")).toEqual([
      { role: "user", content: [{ type: "text", text: diclInputText(input) }] },
      { role: "assistant", content: [{ type: "text", text: "{\"answer\": 4}" }] },
      { role: "user", content: [{ type: "text", text: diclInputText(other) }] },
      { role: "assistant", content: [{ type: "text", text: "{\"answer\":6}" }] }
    ])
    expect(diclExampleMessages([{ input, output: [{ type: "thought", text: "hm" }] }], "chat")).toEqual([])
    expect(diclExampleMessages([{ input, output: [] }], "chat")).toEqual([])
    expect(diclExampleMessages([], "json")).toEqual([])
  })
})

describe("the outputs that make an example", () => {
  it("an inference's: chat blocks with a text or a tool call; json output that parsed", () => {
    const blocks = [{ type: "text", text: "hi" }]
    expect(diclOutputOfInference("chat", blocks)).toBe(blocks)
    expect(diclOutputOfInference("chat", [{ type: "thought", text: "hm" }])).toBeUndefined()
    expect(diclOutputOfInference("chat", [])).toBeUndefined()
    expect(diclOutputOfInference("json", { raw: "{\"a\":1}", parsed: { a: 1 } })).toEqual({ raw: "{\"a\":1}", parsed: { a: 1 } })
    expect(diclOutputOfInference("json", { raw: "not json", parsed: null })).toBeUndefined()
  })

  it("a datapoint's or a demonstration's: chat blocks; a json value with its JSON text; none for null or absent", () => {
    const blocks = [{ type: "tool_call", id: "c", name: "f", arguments: {} }]
    expect(diclOutputOfValue("chat", blocks)).toBe(blocks)
    expect(diclOutputOfValue("chat", "text")).toBeUndefined()
    expect(diclOutputOfValue("json", { a: [1, "x"] })).toEqual({ raw: "{\"a\":[1,\"x\"]}", parsed: { a: [1, "x"] } })
    expect(diclOutputOfValue("json", 0)).toEqual({ raw: "0", parsed: 0 })
    expect(diclOutputOfValue("json", null)).toBeUndefined()
    expect(diclOutputOfValue("json", undefined)).toBeUndefined()
  })
})

describe("embeddings and distances", () => {
  it("refuses embeddings that cannot be compared", () => {
    expect(embeddingProblem([0.1, -0.2])).toBeUndefined()
    expect(embeddingProblem([])).toMatch(/empty/)
    expect(embeddingProblem([0, 0, 0])).toMatch(/zeros/)
    expect(embeddingProblem([1, Number.NaN])).toMatch(/finite/)
    expect(embeddingProblem([1, -Infinity])).toMatch(/finite/)
    expect(vectorNorm([3, 4])).toBe(5)
  })

  it("brings distances into [0, 2] and leaves out those past maxDistance", () => {
    const rows = [-1e-9, 0.3, 0.5, 2.0000001].map((distance) => ({ input: {}, output: [], distance }))
    expect(neighborsWithin(rows, undefined).map((row) => row.distance)).toEqual([0, 0.3, 0.5, 2])
    expect(neighborsWithin(rows, 0.5).map((row) => row.distance)).toEqual([0, 0.3, 0.5])
    expect(neighborsWithin(rows, 0).map((row) => row.distance)).toEqual([0])
    expect([3, 2.9, 0, -1, Number.NaN].map(wholeK)).toEqual([3, 2, 0, 0, 0])
  })
})

describe("the embedding model of a variant", () => {
  const variant = (fields: Record<string, unknown>) => ({ name: "v", ...fields }) as unknown as VariantConfig
  const config = { embeddingModels: new Map([["small", {}]]) } as unknown as GatewayConfig

  it("is a DICL variant's embedding model; other variants have none", () => {
    expect(diclEmbeddingModelOf(variant({ type: "experimental_dynamic_in_context_learning", embeddingModel: "small" }))).toBe("small")
    expect(diclEmbeddingModelOf(variant({ type: "chat_completion", model: "m" }))).toBeUndefined()
    expect(diclEmbeddingModelOf(variant({ type: "chat_completion", embeddingModel: "small" }))).toBeUndefined()
  })

  it("is asked for by its prefixed name when configured, as a short-hand otherwise", () => {
    expect(embeddingModelRequestName(config, "small")).toBe("gateway::embedding_model_name::small")
    expect(embeddingModelRequestName(config, "openai::text-embedding-3-small")).toBe("openai::text-embedding-3-small")
  })
})

describe("a DICL task as GET answers it", () => {
  const base = { id: "0190", kind: "dicl.examples", payload: {}, createdAt: 0 }

  it("answers the spec's statuses: queued and running as pending with progress, completed with its result, failed and cancelled as error with why", () => {
    expect(diclTaskBody({ ...base, state: "queued" })).toEqual({ task_id: "0190", status: "pending" })
    expect(diclTaskBody({ ...base, state: "running", progress: { embedded: 64, total: 100 } }))
      .toEqual({ task_id: "0190", status: "pending", progress: { embedded: 64, total: 100 } })
    const result = { examples_written: 100, function_name: "f", variant_name: "v", embedding_model: "small" }
    expect(diclTaskBody({ ...base, state: "completed", progress: { embedded: 100, total: 100 }, result }))
      .toEqual({ task_id: "0190", status: "completed", progress: { embedded: 100, total: 100 }, result })
    expect(diclTaskBody({ ...base, state: "failed", error: "provider down", result }))
      .toEqual({ task_id: "0190", status: "error", error: "provider down" })
    expect(diclTaskBody({ ...base, state: "cancelled", progress: "odd" })).toEqual({ task_id: "0190", status: "error", error: "cancelled" })
  })
})
