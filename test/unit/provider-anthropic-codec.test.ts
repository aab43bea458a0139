/** The anthropic codecs' choices outside the fixtures: Vertex's URLs and body, and the requests they refuse, naming the provider. */
import { describe, expect, it } from "vitest"
import { ChunkAccumulator } from "../../src/inference/chunks.ts"
import type { ModelRequest } from "../../src/inference/types.ts"
import { compileJsonSchema } from "../../src/jsonSchema.ts"
import { anthropicCodec } from "../../src/providers/anthropic/index.ts"
import { makeAnthropicChunkParser } from "../../src/providers/anthropic/response.ts"
import { vertexAnthropicCodec } from "../../src/providers/anthropic/vertex.ts"
import { WireProblem } from "../../src/providers/codec.ts"
import { parseShorthandModel, providerTypes } from "../../src/providers/registry.ts"
import { streamFixture } from "../support/providerFixtures.ts"
import { hiRequest } from "../support/modelRequests.ts"

const request = hiRequest
const validatorOf = (schema: object) => {
  const compiled = compileJsonSchema(schema)
  if (!("validator" in compiled)) throw new Error(compiled.error)
  return compiled.validator
}
const wireCall = <T>(target: T, stream = false) => ({ target, stream, qualifiedName: "q", providerTools: [] })

describe("gcp_vertex_anthropic", () => {
  it("names the model by model_id, location and project_id: rawPredict, streamRawPredict, the body without model and with Vertex's anthropic_version", () => {
    const target = vertexAnthropicCodec.target({ model_id: "claude-sonnet-4-5@20250929", location: "us-east5", project_id: "my-project" }, "")
    expect(vertexAnthropicCodec.url(target, false)).toBe(
      "https://us-east5-aiplatform.googleapis.com/v1/projects/my-project/locations/us-east5/publishers/anthropic/models/claude-sonnet-4-5@20250929:rawPredict"
    )
    expect(vertexAnthropicCodec.url(target, true)).toMatch(/models\/claude-sonnet-4-5@20250929:streamRawPredict$/)
    expect(vertexAnthropicCodec.body(request, wireCall(target))).toEqual({
      anthropic_version: "vertex-2023-10-16",
      max_tokens: 4096,
      messages: [{ role: "user", content: [{ type: "text", text: "Hi" }] }]
    })
    expect(vertexAnthropicCodec.headers(target, "{}")).toEqual({ "content-type": "application/json" })
  })

  it("takes an endpoint_id, an api_base, or the model path of the short-hand", () => {
    const endpoint = vertexAnthropicCodec.target({ endpoint_id: "123", location: "europe-west1", project_id: "p", api_base: "http://127.0.0.1:9/" }, "")
    expect(vertexAnthropicCodec.url(endpoint, false)).toBe("http://127.0.0.1:9/v1/projects/p/locations/europe-west1/endpoints/123:rawPredict")
    const shorthand = vertexAnthropicCodec.target({}, "projects/p/locations/us-east5/publishers/anthropic/models/claude-haiku-4-5")
    expect(vertexAnthropicCodec.url(shorthand, true)).toBe(
      "https://us-east5-aiplatform.googleapis.com/v1/projects/p/locations/us-east5/publishers/anthropic/models/claude-haiku-4-5:streamRawPredict"
    )
  })

  it("counts tokens at its location's count-tokens model (under api_base when set, for the short-hand's model too); an endpoint has none", () => {
    const countOf = (settings: Parameters<typeof vertexAnthropicCodec.target>[0], model = "") =>
      vertexAnthropicCodec.countTokens!.url(vertexAnthropicCodec.target(settings, model))
    expect(countOf({ model_id: "claude-sonnet-4-5@20250929", location: "global", project_id: "p" })).toBe(
      "https://aiplatform.googleapis.com/v1/projects/p/locations/global/publishers/anthropic/models/count-tokens:rawPredict"
    )
    expect(countOf({ model_id: "claude-haiku-4-5", location: "europe-west1", project_id: "p", api_base: "http://127.0.0.1:9/" })).toBe(
      "http://127.0.0.1:9/v1/projects/p/locations/europe-west1/publishers/anthropic/models/count-tokens:rawPredict"
    )
    const shorthand = vertexAnthropicCodec.target({}, "projects/p/locations/us-east5/publishers/anthropic/models/claude-haiku-4-5")
    expect(shorthand.count).toEqual({
      url: "https://us-east5-aiplatform.googleapis.com/v1/projects/p/locations/us-east5/publishers/anthropic/models/count-tokens:rawPredict",
      model: "claude-haiku-4-5"
    })
    expect(vertexAnthropicCodec.target({ endpoint_id: "123", location: "europe-west1", project_id: "p" }, "").count).toBeUndefined()
  })

  it("the global location has no regional host", () => {
    const target = vertexAnthropicCodec.target({ model_id: "claude-sonnet-4-5@20250929", location: "global", project_id: "p" }, "")
    expect(vertexAnthropicCodec.url(target, false)).toBe(
      "https://aiplatform.googleapis.com/v1/projects/p/locations/global/publishers/anthropic/models/claude-sonnet-4-5@20250929:rawPredict"
    )
  })

  it("refuses every call of a provider that names no model, saying what it needs", () => {
    const target = vertexAnthropicCodec.target({}, "claude")
    const body = vertexAnthropicCodec.body(request, wireCall(target))
    expect(body).toBeInstanceOf(WireProblem)
    expect((body as WireProblem).message).toContain("gcp_vertex_anthropic provider needs model_id")
  })
})

describe("anthropic refusals", () => {
  const target = anthropicCodec.target({}, "claude")
  const refused = (r: Partial<ModelRequest>) => {
    const body = anthropicCodec.body({ ...request, ...r }, wireCall(target))
    if (!(body instanceof WireProblem)) throw new Error("expected a refusal")
    return body.message
  }

  it("refuses files it cannot take, custom tools, and tool calls whose arguments are not an object", () => {
    expect(refused({ messages: [{ role: "user", content: [{ type: "file", source: { kind: "base64", data: "AA==", mimeType: "audio/wav" } }] }] }))
      .toBe("the anthropic provider takes images, PDFs and plain text files, not audio/wav")
    expect(refused({
      tools: {
        tools: [{ name: "grammar", description: "", parameters: {}, strict: false, validator: validatorOf({}), custom: {} }],
        choice: { type: "auto" }
      }
    })).toBe("the anthropic provider does not take custom (free-text) tools: \"grammar\"")
    expect(refused({ messages: [{ role: "assistant", content: [{ type: "tool_call", id: "1", name: "f", arguments: "[1]" }] }] }))
      .toContain("the anthropic provider takes a tool call's arguments back as a JSON object")
  })

  it("sets max_tokens above a thinking budget unless the request sets it", () => {
    expect(anthropicCodec.body({ ...request, params: { thinking_budget_tokens: 1024 } }, wireCall(target))).toMatchObject({
      max_tokens: 5120,
      thinking: { type: "enabled", budget_tokens: 1024 }
    })
    expect(anthropicCodec.body({ ...request, params: { thinking_budget_tokens: 1024, max_tokens: 2000 } }, wireCall(target))).toMatchObject({
      max_tokens: 2000
    })
  })
})

describe("registry", () => {
  it("knows both types, their default credentials, and their short-hands", () => {
    expect(providerTypes.get("anthropic")?.defaultCredential).toEqual({ kind: "env", name: "ANTHROPIC_API_KEY" })
    expect(providerTypes.get("gcp_vertex_anthropic")?.defaultCredential).toEqual({ kind: "path_from_env", name: "GCP_VERTEX_CREDENTIALS_PATH" })
    expect(providerTypes.get("gcp_vertex_anthropic")?.requiresModelName).toBe(false)
    expect(parseShorthandModel("anthropic::claude-sonnet-4-5")).toEqual({ type: "anthropic", model: "claude-sonnet-4-5" })
    expect(parseShorthandModel("gcp_vertex_anthropic::projects/p/locations/us-east5/publishers/anthropic/models/claude-haiku-4-5")).toEqual({
      type: "gcp_vertex_anthropic",
      model: "projects/p/locations/us-east5/publishers/anthropic/models/claude-haiku-4-5"
    })
  })
})

describe("a streamed thought, stored", () => {
  it("keeps the signature Anthropic sends in a delta of its own", () => {
    const parse = makeAnthropicChunkParser()
    const accumulated = new ChunkAccumulator()
    for (const transcriptLine of streamFixture("anthropic", "thinking").transcript.split("\n")) {
      if (!transcriptLine.startsWith("data: ")) continue
      const chunk = parse(transcriptLine.slice(6))
      if (chunk instanceof WireProblem) throw new Error(chunk.message)
      accumulated.add(chunk)
    }
    expect(accumulated.output()).toEqual([
      { type: "thought", text: "Let me solve this: 27 * 453 = 12231.", signature: "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds" },
      { type: "text", text: "12,231" }
    ])
  })
})
