/**
 * The azure codec beyond its fixtures: its settings and default credential, its embeddings
 * hooks (the deployment's `/embeddings` address, OpenAI's body and answer), and the older
 * AZURE_OPENAI_API_KEY read with a warning when the configuration is built.
 */
import { describe, expect, it } from "vitest"
import { azureCodec, defaultAzureApiVersion } from "../../src/providers/azure/index.ts"
import { WireProblem } from "../../src/providers/codec.ts"
import { providerTypes } from "../../src/providers/registry.ts"
import { build } from "./fixtures.ts"

const target = azureCodec.target({ endpoint: "https://res.openai.azure.com/", deployment_id: "emb 3", api_version: "2024-10-21" }, "")

describe("azure", () => {
  it("is registered, names its model by deployment_id, and reads AZURE_API_KEY, then the older AZURE_OPENAI_API_KEY", () => {
    const definition = providerTypes.get("azure")!
    expect(definition.requiresModelName).toBe(false)
    expect(Object.keys(definition.settingsFields).sort()).toEqual(["api_version", "deployment_id", "endpoint"])
    expect(definition.defaultCredential).toEqual({
      kind: "fallback",
      primary: { kind: "env", name: "AZURE_API_KEY" },
      fallback: { kind: "env", name: "AZURE_OPENAI_API_KEY" }
    })
    expect(defaultAzureApiVersion).toBe("2024-10-21")
  })

  it("sends embeddings to the deployment's /embeddings with OpenAI's body, and reads the vectors by index", () => {
    const hooks = azureCodec.embeddings!
    expect(hooks.url(target)).toBe("https://res.openai.azure.com/openai/deployments/emb%203/embeddings?api-version=2024-10-21")
    expect(hooks.body(target, { input: ["a", "bb"], dimensions: 256 })).toEqual({ input: ["a", "bb"], dimensions: 256, encoding_format: "float" })
    expect(hooks.body(target, { input: ["a"] })).toEqual({ input: ["a"], encoding_format: "float" })
    const parsed = hooks.parse(JSON.stringify({
      object: "list",
      data: [{ object: "embedding", index: 1, embedding: [0.3] }, { object: "embedding", index: 0, embedding: [0.1, 0.2] }],
      model: "text-embedding-3-small",
      usage: { prompt_tokens: 5, total_tokens: 5 }
    }))
    expect(parsed).toEqual({ embeddings: [[0.1, 0.2], [0.3]], usage: { input_tokens: 5, output_tokens: 0 } })
    expect(hooks.parse("<html>")).toBeInstanceOf(WireProblem)
    expect(hooks.parse(JSON.stringify({ data: [{ index: 0, embedding: "AAAA" }] }))).toBeInstanceOf(WireProblem)
  })

  const table = `
[models.m]
routing = ["p"]
[models.m.providers.p]
type = "azure"
endpoint = "https://res.openai.azure.com"
deployment_id = "gpt"
[functions.f]
type = "chat"
[functions.f.variants.v]
type = "chat_completion"
model = "m"
`

  it("warns when it reads the older AZURE_OPENAI_API_KEY", () => {
    const built = build(table, { env: { AZURE_OPENAI_API_KEY: "old" } })
    if (!("config" in built)) throw new Error(JSON.stringify(built))
    expect(built.warnings).toHaveLength(1)
    expect(built.warnings[0]).toContain("models.m.providers.p")
    expect(built.warnings[0]).toContain("reads its API key from AZURE_OPENAI_API_KEY, an older name: set AZURE_API_KEY instead")
    expect(built.config.models.get("m")!.providers.get("p")!.credential).toEqual({ kind: "static", value: "old" })
  })

  it("reads AZURE_API_KEY without a warning, and names it when neither is set", () => {
    const built = build(table, { env: { AZURE_API_KEY: "new", AZURE_OPENAI_API_KEY: "old" } })
    if (!("config" in built)) throw new Error(JSON.stringify(built))
    expect(built.warnings).toEqual([])
    expect(built.config.models.get("m")!.providers.get("p")!.credential).toEqual({ kind: "static", value: "new" })
    const missing = build(table, { env: {} })
    expect(JSON.stringify(missing)).toContain("environment variable AZURE_API_KEY is not set (nor the older AZURE_OPENAI_API_KEY)")
  })

  it("does not warn for a location the configuration wrote", () => {
    const built = build(table.replace('deployment_id = "gpt"', 'deployment_id = "gpt"\napi_key_location = { default = "env::AZURE_API_KEY", fallback = "env::AZURE_OPENAI_API_KEY" }'), {
      env: { AZURE_OPENAI_API_KEY: "old" }
    })
    if (!("config" in built)) throw new Error(JSON.stringify(built))
    expect(built.warnings).toEqual([])
  })
})
