/**
 * Embeddings in the core: the `[embedding_models]` configuration, the Chat Completions family's
 * embeddings hooks on OpenAI's recorded wire format, the model table's short-hands, and
 * OpenAI's base64 encoding.
 */
import { readFileSync } from "node:fs"
import { describe, expect, it } from "vitest"
import { EmbeddingModelTable } from "../../src/embeddings/models.ts"
import { base64Embedding } from "../../src/embeddings/response.ts"
import { WireProblem } from "../../src/providers/codec.ts"
import { openAiCodec } from "../../src/providers/openai/index.ts"
import { providerTypes } from "../../src/providers/registry.ts"
import { buildErrors, buildOk } from "./fixtures.ts"

const fixture = (name: string) =>
  readFileSync(new URL(`../../src/providers/openai/fixtures/embeddings/${name}`, import.meta.url), "utf8")

const embeddingModel = (providers: string, extra = "") => `
[embedding_models.small]
routing = ["a"]
${extra}
[embedding_models.small.providers.a]
${providers}
`

describe("[embedding_models]", () => {
  it("builds a model with its providers, routing and timeout_ms", () => {
    const config = buildOk(embeddingModel(`type = "openai"\nmodel_name = "text-embedding-3-small"\napi_base = "http://localhost:1/v1"\napi_key_location = "none"\nextra_headers = [{ name = "x-a", value = "b" }]`, "timeout_ms = 250"))
    const model = config.embeddingModels.get("small")!
    expect(model.routing).toEqual(["a"])
    expect(model.timeoutMs).toBe(250)
    expect(model.providers.get("a")).toMatchObject({ type: "openai", modelName: "text-embedding-3-small", settings: { api_base: "http://localhost:1/v1" } })
  })

  it("reports an unknown provider type, a type without embeddings, and routing errors, naming the key", () => {
    expect(buildErrors(embeddingModel(`type = "nope"\nmodel_name = "m"`))).toEqual(
      [expect.stringMatching(/embedding_models\.small\.providers\.a\.type: unknown provider type "nope"/)]
    )
    expect(buildErrors(embeddingModel(`type = "anthropic"\nmodel_name = "m"\napi_key_location = "none"`))).toEqual(
      [expect.stringMatching(/embedding_models\.small\.providers\.a\.type: provider type "anthropic" does not support embeddings \(types that do: openai.*, dummy\)/)]
    )
    const routing = buildErrors(`
[embedding_models.small]
routing = ["a", "b"]
[embedding_models.small.providers.a]
type = "openai"
model_name = "m"
api_key_location = "none"
[embedding_models.small.providers.c]
type = "openai"
model_name = "m"
api_key_location = "none"
`)
    expect(routing).toEqual(expect.arrayContaining([
      expect.stringMatching(/embedding_models\.small\.routing\[1\]: provider "b" is not defined/),
      expect.stringMatching(/embedding_models\.small\.providers\.c: provider "c" is not listed in routing/)
    ]))
    expect(buildErrors(embeddingModel(`type = "openai"\nmodel_name = "m"\napi_key_location = "none"`, "timeout_ms = 0"))).toEqual(
      [expect.stringMatching(/embedding_models\.small\.timeout_ms/)]
    )
    expect(buildErrors(`[embedding_models."openai::x"]\nrouting = []\nproviders = {}`)).toEqual(
      [expect.stringMatching(/reserved for short-hand names/)]
    )
  })

  it("fails at start-up naming the variable when a provider's credential is missing", () => {
    const errors = buildErrors(embeddingModel(`type = "openai"\nmodel_name = "m"\napi_key_location = "env::MY_EMBED_KEY"`), { env: {} })
    expect(errors).toEqual([expect.stringMatching(/embedding_models\.small\.providers\.a: .*MY_EMBED_KEY/)])
    expect(buildOk(embeddingModel(`type = "openai"\nmodel_name = "m"\napi_key_location = "env::MY_EMBED_KEY"`), { env: { MY_EMBED_KEY: "k" } })
      .embeddingModels.get("small")!.providers.get("a")!.credential).toEqual({ kind: "static", value: "k" })
  })
})

describe("the model table", () => {
  const config = buildOk(embeddingModel(`type = "openai"\nmodel_name = "m"\napi_key_location = "none"`), { env: { OPENAI_API_KEY: "k" } })
  const table = new EmbeddingModelTable(config)

  it("finds configured models by gateway::embedding_model_name:: and short-hands of types with embeddings", () => {
    const found = table.get("gateway::embedding_model_name::small")
    expect("model" in found && found.model.providers.map((provider) => provider.config.name)).toEqual(["a"])
    const shorthand = table.get("openai::text-embedding-3-small")
    expect("model" in shorthand && shorthand.model.providers.map((provider) => provider.config.modelName)).toEqual(["text-embedding-3-small"])
  })

  it("says why a name reaches no model", () => {
    expect(table.get("gateway::embedding_model_name::other")).toEqual({ unknown: `unknown embedding model "other"` })
    expect(table.get("anthropic::x")).toEqual({ refused: expect.stringContaining(`provider type "anthropic" does not support embeddings`) })
    expect(table.get("small")).toEqual({ refused: expect.stringContaining(`model: "small" names no embedding model`) })
  })
})

describe("the Chat Completions family's embeddings hooks", () => {
  const hooks = openAiCodec.embeddings!
  const target = openAiCodec.target({ api_base: "http://fake.test/v1" }, "text-embedding-3-small")

  it("posts to {api_base}/embeddings OpenAI's body, with dimensions only when asked", () => {
    expect(hooks.url(target)).toBe("http://fake.test/v1/embeddings")
    expect(openAiCodec.target({}, "m").embeddingsUrl).toBe("https://api.openai.com/v1/embeddings")
    expect(hooks.body(target, { input: ["The food was delicious", "and the waiter..."], dimensions: 3 })).toEqual(JSON.parse(fixture("request.json")))
    expect(hooks.body(target, { input: ["a"] })).toEqual({ model: "text-embedding-3-small", input: ["a"], encoding_format: "float" })
  })

  it("reads the recorded answer, placing each vector by its index", () => {
    expect(hooks.parse(fixture("response.json"))).toEqual({
      embeddings: [[0.0023064255, -0.009327292, -0.0028842222], [0.5, -0.25, 0.125]],
      usage: { input_tokens: 9, output_tokens: 0 }
    })
  })

  it("refuses answers it cannot read, saying what is wrong", () => {
    expect(hooks.parse("<html>")).toEqual(new WireProblem("the provider answered with a body that is not JSON"))
    expect((hooks.parse(`{"data": [{"index": 0, "embedding": "AAAA"}]}`) as WireProblem).message).toContain("data[0].embedding")
    expect((hooks.parse(`{"data": [{"index": 0, "embedding": [1]}, {"index": 0, "embedding": [2]}]}`) as WireProblem).message).toContain("data[1].index")
    expect((hooks.parse(`{"object": "list"}`) as WireProblem).message).toContain("no `data` list")
  })

  it("is declared by the registry's types of the family, and by dummy (in process), not by anthropic", () => {
    expect(providerTypes.get("openai")!.embeddings).toBe(true)
    expect(providerTypes.get("dummy")!.embeddings).toBe(true)
    expect(providerTypes.get("anthropic")!.embeddings).not.toBe(true)
  })
})

describe("base64 encoding", () => {
  it("is OpenAI's: little-endian float32 bytes", () => {
    const encoded = base64Embedding([1, -0.5, 0.25])
    const bytes = Buffer.from(encoded, "base64")
    expect(bytes.length).toBe(12)
    expect([bytes.readFloatLE(0), bytes.readFloatLE(4), bytes.readFloatLE(8)]).toEqual([1, -0.5, 0.25])
    expect(encoded).toBe(Buffer.from(new Float32Array([1, -0.5, 0.25]).buffer).toString("base64"))
  })
})
