import * as Result from "effect/Result"
import { v4 as uuidv4, v7 as uuidv7, version as uuidVersion } from "uuid"
import { variantModel } from "../../src/config/types.ts"
import { describe, expect, it } from "vitest"
import type { InferenceRequest } from "../../src/api/inference.ts"
import { InvalidRequest, NotFound } from "../../src/errors.ts"
import { uuidv7Timestamp } from "../../src/ids.ts"
import { ModelTable } from "../../src/inference/models.ts"
import { defaultFunctionName, isUuidV7, type PreparedInference, prepareInference } from "../../src/inference/prepare.ts"
import { buildOk, json } from "./fixtures.ts"

const config = buildOk(`
[tools.get_weather]
description = "Weather"
parameters = "weather.json"

[models.local]
routing = ["d"]
[models.local.providers.d]
type = "dummy"
model_name = "hello"

[functions.chat]
type = "chat"
tools = ["get_weather"]
[functions.chat.variants.a]
type = "chat_completion"
model = "local"
weight = 1
[functions.chat.variants.b]
type = "chat_completion"
model = "dummy::hello"
weight = 1
[functions.chat.variants.c]
type = "chat_completion"
model = "dummy::hello"
weight = 2
[functions.chat.variants.off]
type = "chat_completion"
model = "dummy::hello"
weight = 0

[functions.dormant]
type = "chat"
[functions.dormant.variants.only]
type = "chat_completion"
model = "dummy::hello"
weight = 0

[functions.extract]
type = "json"
output_schema = "answer.json"
[functions.extract.variants.v]
type = "chat_completion"
model = "dummy::json"
`, {
  files: {
    "/cfg/weather.json": json({ type: "object", properties: { location: { type: "string" } }, required: ["location"] }),
    "/cfg/answer.json": json({ type: "object", properties: { answer: { type: "string" } }, required: ["answer"] })
  }
})
const models = new ModelTable(config)

/** the prepared inference, or the error that refused it */
const prepare = (fields: Partial<InferenceRequest>) => Result.merge(prepareInference({ input: {}, ...fields }, config, models, Date.now()))

const prepared = (fields: Partial<InferenceRequest>): PreparedInference => {
  const result = prepare(fields)
  if (result instanceof InvalidRequest || result instanceof NotFound) throw new Error(`${result._tag}: ${result.message}`)
  if ("_tag" in result) throw new Error(`unexpected ${String(result._tag)}`)
  return result
}

const invalid = (fields: Partial<InferenceRequest>): string => {
  const result = prepare(fields)
  expect(result).toBeInstanceOf(InvalidRequest)
  expect((result as InvalidRequest).status).toBe(400)
  return (result as InvalidRequest).message
}

const notFound = (fields: Partial<InferenceRequest>): string => {
  const result = prepare(fields)
  expect(result).toBeInstanceOf(NotFound)
  expect((result as NotFound).status).toBe(404)
  return (result as NotFound).message
}

describe("prepareInference: the target", () => {
  it("refuses both function_name and model_name, and neither", () => {
    expect(invalid({ function_name: "chat", model_name: "dummy::hello" })).toContain("not both")
    expect(invalid({})).toContain("function_name or model_name")
  })

  it("answers NotFound for an unknown function or model", () => {
    expect(notFound({ function_name: "nope" })).toBe("function_name: Unknown function: nope")
    expect(notFound({ model_name: "nope" })).toContain(`"nope"`)
    expect(notFound({ model_name: "skynet::x" })).toContain(`"skynet::x"`)
  })

  it("calls a configured model through gateway::default, with one variant named after the model", () => {
    const result = prepared({ model_name: "local" })
    expect(result.functionName).toBe(defaultFunctionName)
    expect(result.fn.type).toBe("chat")
    expect(result.variants.map((variant) => [variant.name, variantModel(variant).model])).toEqual([["local", "local"]])
    expect(result.tools).toBeUndefined()
  })

  it("calls a short-hand model through gateway::default", () => {
    const result = prepared({ model_name: "dummy::echo_request_messages" })
    expect(result.functionName).toBe("gateway::default")
    expect(result.variants.map((variant) => variantModel(variant).model)).toEqual(["dummy::echo_request_messages"])
    expect(models.get("dummy::echo_request_messages")!.providers.map((provider) => provider.config.type)).toEqual(["dummy"])
  })

  it("refuses variant_name with model_name", () => {
    expect(invalid({ model_name: "local", variant_name: "local" })).toMatch(/^variant_name: /)
  })
})

describe("prepareInference: episode", () => {
  it("starts a new episode (a UUIDv7) when none or null is given", () => {
    for (const episode_id of [undefined, null]) {
      const result = prepared({ function_name: "chat", episode_id })
      expect(uuidVersion(result.episodeId)).toBe(7)
      expect(uuidVersion(result.inferenceId)).toBe(7)
      expect(result.inferenceId).not.toBe(result.episodeId)
    }
  })

  it("starts processing at the time it is given, which the new ids carry", () => {
    // the present: the id generator never goes back in time, so a time it passed would not show
    const at = Date.now() + 1
    const result = Result.getOrThrow(prepareInference({ input: {}, function_name: "chat" }, config, models, at))
    expect(result.startedAt).toBe(at)
    expect(uuidv7Timestamp(result.episodeId)).toBe(at)
    expect(uuidv7Timestamp(result.inferenceId)).toBe(at)
    expect(result.inferenceId > result.episodeId).toBe(true)
  })

  it("keeps a given UUIDv7 episode id", () => {
    const id = uuidv7()
    expect(prepared({ function_name: "chat", episode_id: id }).episodeId).toBe(id)
  })

  it("refuses an episode id that is not a UUIDv7", () => {
    const v4 = uuidv4()
    const message = invalid({ function_name: "chat", episode_id: v4 })
    expect(message).toMatch(/^episode_id: /)
    expect(message).toContain(v4)
    expect(invalid({ function_name: "chat", episode_id: "not-a-uuid" })).toMatch(/^episode_id: /)
  })

  it("isUuidV7 accepts v7 only", () => {
    expect(isUuidV7(uuidv7())).toBe(true)
    expect(isUuidV7(uuidv4())).toBe(false)
    expect(isUuidV7("")).toBe(false)
  })
})

describe("prepareInference: variants", () => {
  it("orders the positive-weight variants, the same way for the same episode", () => {
    const episode_id = uuidv7()
    const first = prepared({ function_name: "chat", episode_id }).variants.map((variant) => variant.name)
    expect([...first].sort()).toEqual(["a", "b", "c"])
    for (let i = 0; i < 5; i++) {
      expect(prepared({ function_name: "chat", episode_id }).variants.map((variant) => variant.name)).toEqual(first)
    }
  })

  it("starts with different variants for different episodes, by weight", () => {
    const counts: Record<string, number> = { a: 0, b: 0, c: 0 }
    const n = 4000
    for (let i = 0; i < n; i++) counts[prepared({ function_name: "chat" }).variants[0].name]++
    expect(Math.abs(counts.a / n - 0.25)).toBeLessThan(0.04)
    expect(Math.abs(counts.b / n - 0.25)).toBeLessThan(0.04)
    expect(Math.abs(counts.c / n - 0.5)).toBeLessThan(0.04)
  })

  it("pins a variant with variant_name, even one of weight 0", () => {
    expect(prepared({ function_name: "chat", variant_name: "off" }).variants.map((variant) => variant.name)).toEqual(["off"])
    expect(prepared({ function_name: "dormant", variant_name: "only" }).variants.map((variant) => variant.name)).toEqual(["only"])
  })

  it("answers NotFound for an unknown variant", () => {
    const message = notFound({ function_name: "chat", variant_name: "zzz" })
    expect(message).toContain(`"zzz"`)
    expect(message).toContain(`"chat"`)
  })

  it("refuses a function with no positive-weight variant unless one is pinned", () => {
    expect(invalid({ function_name: "dormant" })).toContain("no variant with a positive weight")
  })
})

describe("prepareInference: tools", () => {
  it("resolves the function's tools", () => {
    const result = prepared({ function_name: "chat", tool_choice: "required" })
    expect(result.tools?.tools.map((tool) => tool.name)).toEqual(["get_weather"])
    expect(result.tools?.choice).toEqual({ type: "required" })
  })

  it("refuses additional_tools with an invalid schema", () => {
    expect(invalid({
      function_name: "chat",
      additional_tools: [{ name: "x", description: "", parameters: { type: 12 } }]
    })).toMatch(/^additional_tools\[0\]\.parameters: invalid JSON Schema/)
  })

  it("refuses allowed_tools naming an unknown tool", () => {
    expect(invalid({ function_name: "chat", allowed_tools: ["get_weather", "nope"] })).toMatch(/^allowed_tools\[1\]: /)
  })

  it("refuses tool_choice naming an unknown tool", () => {
    expect(invalid({ function_name: "chat", tool_choice: { specific: "nope" } })).toMatch(/^tool_choice\.specific: /)
  })

  it("refuses tools for a json function", () => {
    expect(invalid({
      function_name: "extract",
      additional_tools: [{ name: "x", description: "", parameters: {} }]
    })).toMatch(/^additional_tools: json functions do not take tools/)
  })
})

describe("prepareInference: output_schema", () => {
  it("uses the function's output schema by default", () => {
    const result = prepared({ function_name: "extract" })
    expect(result.outputSchema?.validate({ answer: "x" })).toBeUndefined()
    expect(result.outputSchema?.validate({})).toBeDefined()
  })

  it("uses the request's output schema for a json function", () => {
    const result = prepared({ function_name: "extract", output_schema: { type: "object", required: ["score"] } })
    expect(result.outputSchema?.validate({ score: 1 })).toBeUndefined()
    expect(result.outputSchema?.validate({ answer: "x" })).toBeDefined()
  })

  it("refuses output_schema for a chat function", () => {
    expect(invalid({ function_name: "chat", output_schema: { type: "object" } })).toMatch(/^output_schema: only json functions/)
  })

  it("refuses an invalid output_schema", () => {
    expect(invalid({ function_name: "extract", output_schema: { type: "nonsense" } })).toMatch(/^output_schema: invalid JSON Schema/)
  })
})

describe("prepareInference: extra_body and extra_headers", () => {
  it("keeps valid edits with their scopes", () => {
    const result = prepared({
      function_name: "chat",
      extra_body: [
        { pointer: "/a", value: 1 },
        { pointer: "/b", delete: true, variant_name: "a" },
        { pointer: "/c", value: null, model_name: "local", provider_name: "d" }
      ],
      extra_headers: [{ name: "X-A", value: "1", model_name: "local" }, { name: "X-B", delete: true }]
    })
    expect(result.bodyEdits).toEqual([
      { scope: { variant_name: undefined, model_name: undefined, provider_name: undefined }, edit: { pointer: "/a", value: 1 } },
      { scope: { variant_name: "a", model_name: undefined, provider_name: undefined }, edit: { pointer: "/b", delete: true } },
      { scope: { variant_name: undefined, model_name: "local", provider_name: "d" }, edit: { pointer: "/c", value: null } }
    ])
    expect(result.headerEdits).toEqual([
      { scope: { variant_name: undefined, model_name: "local", provider_name: undefined }, edit: { name: "X-A", value: "1" } },
      { scope: { variant_name: undefined, model_name: undefined, provider_name: undefined }, edit: { name: "X-B", delete: true } }
    ])
  })

  it("requires exactly one of value or delete = true in an extra_body entry", () => {
    expect(invalid({ function_name: "chat", extra_body: [{ pointer: "/a", value: 1 }, { pointer: "/b" }] })).toMatch(
      /^extra_body\[1\]: give exactly one of value or delete/
    )
    expect(invalid({ function_name: "chat", extra_body: [{ pointer: "/a", value: 1, delete: true }] })).toMatch(/^extra_body\[0\]: /)
    expect(invalid({ function_name: "chat", extra_body: [{ pointer: "/a", delete: false }] })).toMatch(/^extra_body\[0\]: /)
  })

  it("requires exactly one of value or delete = true in an extra_headers entry", () => {
    expect(invalid({ function_name: "chat", extra_headers: [{ name: "x" }] })).toMatch(/^extra_headers\[0\]: give exactly one/)
    expect(invalid({ function_name: "chat", extra_headers: [{ name: "x", value: "1", delete: true }] })).toMatch(/^extra_headers\[0\]: /)
  })

  it("refuses an extra_body pointer that is not a JSON Pointer to a field", () => {
    expect(invalid({ function_name: "chat", extra_body: [{ pointer: "/ok", value: 1 }, { pointer: "temperature", value: 1 }] }))
      .toMatch(/^extra_body\[1\]\.pointer: /)
    expect(invalid({ function_name: "chat", extra_body: [{ pointer: "", value: 1 }] })).toMatch(/^extra_body\[0\]\.pointer: /)
  })

  it("refuses a scope by variant and by model at once, and provider_name without model_name", () => {
    expect(invalid({ function_name: "chat", extra_body: [{ pointer: "/a", value: 1, variant_name: "a", model_name: "local" }] }))
      .toMatch(/^extra_body\[0\]: scope by variant_name or by model_name/)
    expect(invalid({ function_name: "chat", extra_headers: [{ name: "x", value: "1", provider_name: "d" }] })).toBe(
      "extra_headers[0].provider_name: needs model_name too"
    )
  })
})

describe("prepareInference: the rest of the request", () => {
  it("refuses include_original_response on a streamed inference", () => {
    expect(invalid({ function_name: "chat", stream: true, include_original_response: true })).toMatch(/^include_original_response: /)
    expect(prepared({ function_name: "chat", stream: true }).request.stream).toBe(true)
    expect(prepared({ function_name: "chat", include_original_response: true }).request.include_original_response).toBe(true)
  })

  it("carries params, credentials and provider_tools", () => {
    const result = prepared({
      function_name: "chat",
      params: { chat_completion: { temperature: 0.1, json_mode: "off" } },
      credentials: { key: "v" },
      provider_tools: [{ tool: { type: "web_search" } }, { scope: { model_name: "local", model_provider_name: "d" }, tool: { type: "x" } }]
    })
    expect(result.params).toEqual({ temperature: 0.1, json_mode: "off" })
    expect(result.credentials).toEqual({ key: "v" })
    expect(result.providerTools).toEqual([
      { modelName: undefined, providerName: undefined, tool: { type: "web_search" } },
      { modelName: "local", providerName: "d", tool: { type: "x" } }
    ])
  })
})
