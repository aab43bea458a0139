import * as Result from "effect/Result"
/**
 * `[gateway.relay]` and the `gateway` provider type, at start-up: the configuration rewritten so
 * that every model call (but `skip_relay` models') goes to the central gateway, the problems of
 * a relay or a gateway provider table named by their key path, and what one call to the
 * central gateway carries (its key, and never that key among the forwarded credentials).
 */
import { describe, expect, it } from "vitest"
import { planBatch } from "../../src/batch/prepare.ts"
import { ModelTable } from "../../src/inference/models.ts"
import { EmbeddingModelTable } from "../../src/embeddings/models.ts"
import { gatewayCodec } from "../../src/providers/gateway/index.ts"
import { providerCall as providerCallResult } from "../../src/inference/providerCall.ts"
import { wireRequest } from "../../src/providers/wireRequest.ts"
import { type ProviderCall } from "../../src/providers/types.ts"
import { ProviderFailure } from "../../src/providers/failure.ts"
import { buildErrors, buildOk } from "./fixtures.ts"
import { hiRequest } from "../support/modelRequests.ts"

/** the call `providerCall` makes, or why it cannot be made */
const providerCall = <Request>(...args: Parameters<typeof providerCallResult<Request>>) => Result.merge(providerCallResult<Request>(...args))

const relay = (table = `gateway_url = "http://central:3000"\napi_key_location = "env::CENTRAL_KEY"`) => `
[gateway.relay]
${table}
`

const models = `
[models.mini]
routing = ["openai"]
timeouts = { non_streaming = { total_ms = 5000 } }
[models.mini.providers.openai]
type = "openai"
model_name = "gpt-4o-mini"
api_key_location = "env::OPENAI_API_KEY"

[models.local]
routing = ["dummy"]
skip_relay = true
[models.local.providers.dummy]
type = "dummy"
model_name = "good"

[embedding_models.small]
routing = ["openai"]
[embedding_models.small.providers.openai]
type = "openai"
model_name = "text-embedding-3-small"
api_key_location = "env::OPENAI_API_KEY"

[functions.chat]
type = "chat"
[functions.chat.variants.a]
type = "chat_completion"
model = "mini"
[functions.chat.variants.b]
type = "chat_completion"
model = "anthropic::claude-3-5-haiku"
`

const env = { CENTRAL_KEY: "sk-gw-central" }

describe("[gateway.relay]", () => {
  it("gives every model without skip_relay one provider, gateway_relay, calling the central gateway's model of its name", () => {
    // the edge needs no provider credential of its own: OPENAI_API_KEY and ANTHROPIC_API_KEY are not set
    const config = buildOk(relay() + models, { env })
    const mini = config.models.get("mini")!
    expect(mini.routing).toEqual(["gateway_relay"])
    const provider = mini.providers.get("gateway_relay")!
    expect(provider).toMatchObject({
      type: "gateway",
      modelName: "mini",
      credential: { kind: "static", value: "sk-gw-central" },
      settings: { gateway_url: "http://central:3000", forward_credentials: false }
    })
    expect(mini.timeouts).toEqual({ non_streaming: { total_ms: 5000 } })
    expect([...config.models.get("local")!.providers.values()].map((p) => p.type)).toEqual(["dummy"])
    expect(config.embeddingModels.get("small")!.providers.get("gateway_relay")).toMatchObject({
      type: "gateway",
      modelName: "gateway::embedding_model_name::small"
    })
  })

  it("sends short-hand models, chat and embedding, to the central gateway under their name", () => {
    const config = buildOk(relay() + models, { env })
    const chat = new ModelTable(config).get("anthropic::claude-3-5-haiku")!
    expect(chat.providers.map((p) => [p.config.name, p.config.type, p.config.modelName])).toEqual([
      ["gateway_relay", "gateway", "anthropic::claude-3-5-haiku"]
    ])
    const found = new EmbeddingModelTable(config).get("openai::text-embedding-3-small")
    if (!("model" in found)) throw new Error(JSON.stringify(found))
    expect(found.model.providers.map((p) => [p.config.name, p.config.modelName])).toEqual([["gateway_relay", "openai::text-embedding-3-small"]])
  })

  it("takes forward_credentials and a dynamic:: key", () => {
    const config = buildOk(relay(`gateway_url = "https://central.example/v2"\napi_key_location = "dynamic::central_key"\nforward_credentials = true`) + models)
    expect(config.models.get("mini")!.providers.get("gateway_relay")).toMatchObject({
      credential: { kind: "dynamic", name: "central_key" },
      settings: { gateway_url: "https://central.example/v2", forward_credentials: true }
    })
  })

  it("a skip_relay model still needs its own credentials", () => {
    const toml = relay() + models.replace("[models.mini]\nrouting", "[models.mini]\nskip_relay = true\nrouting")
    expect(buildErrors(toml, { env }).join("\n")).toContain(`model "mini" uses provider "openai", whose credential is missing: environment variable OPENAI_API_KEY is not set`)
  })

  it("reports what is wrong with the table by key path", () => {
    expect(buildErrors(relay(`api_key_location = "none"`), { env })).toEqual([expect.stringMatching(/gateway\.relay\.gateway_url: missing/)])
    const errors = buildErrors(relay(`gateway_url = "ftp://central"\napi_key_location = "path::/key"`), { env })
    expect(errors).toEqual([
      expect.stringMatching(/gateway\.relay\.gateway_url: expected an http:\/\/ or https:\/\/ URL, got "ftp:\/\/central"/),
      expect.stringMatching(/gateway\.relay\.api_key_location: expected "env::NAME", "dynamic::NAME" or "none", got "path::\/key"/)
    ])
    expect(buildErrors(relay(), {}).join("\n")).toMatch(/gateway\.relay\.api_key_location: environment variable CENTRAL_KEY is not set/)
  })

  it("a relayed model has no batch inference", () => {
    const config = buildOk(relay() + models, { env })
    const refused = Result.merge(planBatch({ function_name: "chat", variant_name: "a", inputs: [{ messages: [] }] }, config, new ModelTable(config), 0))
    expect(refused).toMatchObject({ message: expect.stringContaining(`model "mini" is relayed to another gateway ([gateway.relay]), which has no batch inference`) })
  })
})

const gatewayModel = (table: string) => `
[models.central]
routing = ["central"]
[models.central.providers.central]
type = "gateway"
gateway_url = "http://central:3000"
${table}
`

describe("a provider of type gateway", () => {
  it("names a model or a function there, not both, and takes variant_name only with a function", () => {
    expect(buildOk(gatewayModel(`model_name = "mini"`)).models.get("central")!.providers.get("central")!.credential).toEqual({ kind: "none" })
    buildOk(gatewayModel(`function_name = "extract"\nvariant_name = "gpt"`))
    expect(buildErrors(gatewayModel(``))).toEqual([expect.stringMatching(/models\.central\.providers\.central: model_name: give model_name or function_name/)])
    expect(buildErrors(gatewayModel(`model_name = "mini"\nfunction_name = "f"`))).toEqual([
      expect.stringMatching(/models\.central\.providers\.central: function_name: give model_name or function_name, not both/)
    ])
    expect(buildErrors(gatewayModel(`model_name = "mini"\nvariant_name = "v"`))).toEqual([
      expect.stringMatching(/models\.central\.providers\.central: variant_name: only with function_name/)
    ])
    expect(buildErrors(gatewayModel(`model_name = "mini"`).replace("http://central:3000", "central:3000"))).toEqual([
      expect.stringMatching(/gateway_url: expected an http:\/\/ or https:\/\/ URL, got "central:3000"/)
    ])
  })

  it("has no short-hand", () => {
    expect(buildErrors(`
[functions.f]
type = "chat"
[functions.f.variants.v]
type = "chat_completion"
model = "gateway::mini"
`).join("\n")).toMatch(/unknown model "gateway::mini"/)
  })
})

const request = hiRequest

describe("a call to the central gateway", () => {
  const config = buildOk(relay(`gateway_url = "http://central:3000"\napi_key_location = "dynamic::central_key"\nforward_credentials = true`) + models)
  const provider = config.models.get("mini")!.providers.get("gateway_relay")!
  const variant = { name: "a", extraBody: [], extraHeaders: [] }

  it("sends the caller's key as Bearer and forwards the other credentials, never that key", () => {
    const call = providerCall(request, "mini", provider, variant, {
      bodyEdits: [],
      headerEdits: [],
      credentials: { central_key: "sk-gw-edge", openai_key: "sk-openai", copy: "sk-gw-edge" },
      tags: { team: "search" }
    }) as ProviderCall
    const built = wireRequest(gatewayCodec, gatewayCodec.target(provider.settings as never, "mini"), call, false)
    if (!("body" in built)) throw new Error(built.message)
    expect(built.headers.authorization).toBe("Bearer sk-gw-edge")
    const body = JSON.parse(built.body)
    expect(body.credentials).toEqual({ openai_key: "sk-openai" })
    expect(body.tags).toEqual({ team: "search" })
    expect(built.body).not.toContain("sk-gw-edge")
  })

  it("a missing dynamic key is the caller's mistake", () => {
    const refused = providerCall(request, "mini", provider, variant, { bodyEdits: [], headerEdits: [], credentials: {} })
    expect(refused).toMatchObject({ _tag: "InvalidRequest", message: expect.stringContaining("credentials.central_key: missing") })
  })

  it("cannot take a custom (free-text) tool: not sent", () => {
    const call = providerCall({
      ...request,
      tools: { tools: [{ name: "sql", description: "", parameters: {}, strict: false, validator: undefined as never, custom: {} }], choice: { type: "auto" } }
    }, "mini", provider, variant, { bodyEdits: [], headerEdits: [], credentials: { central_key: "k" } }) as ProviderCall
    const built = wireRequest(gatewayCodec, gatewayCodec.target(provider.settings as never, "mini"), call, false)
    expect(built).toBeInstanceOf(ProviderFailure)
    expect(built).toMatchObject({ unsupported: true, message: expect.stringContaining(`tool "sql" is a custom (free-text) tool`) })
  })

  it("asks the central gateway's OpenAI-compatible route for embeddings, by the name it knows them", () => {
    const hooks = gatewayCodec.embeddings!
    const target = (model: string) => gatewayCodec.target({ gateway_url: "http://central:3000/", forward_credentials: true }, model)
    const caller = { tags: {}, dryrun: false, credentials: { openai_key: "sk-openai" }, extraBody: [], extraHeaders: [] }
    expect(hooks.url(target("small"))).toBe("http://central:3000/openai/v1/embeddings")
    expect(hooks.body(target("small"), { input: ["a"], dimensions: 8 }, caller)).toEqual({
      model: "gateway::embedding_model_name::small",
      input: ["a"],
      encoding_format: "float",
      dimensions: 8,
      "gateway::credentials": { openai_key: "sk-openai" }
    })
    expect(hooks.body(target("openai::text-embedding-3-small"), { input: ["a"] }).model).toBe("openai::text-embedding-3-small")
  })
})
