/**
 * POST /inference through the `azure` provider against a fake Azure OpenAI: every conformance
 * scenario, then the address (`{endpoint}/openai/deployments/{deployment_id}/chat/completions`,
 * `api-version`), the `api-key` header, the older AZURE_OPENAI_API_KEY read with a warning, and
 * a start-up that names AZURE_API_KEY when neither is set.
 */
import { describe, expect, it } from "vitest"
import { azureRunningFake } from "../conformance/azure.ts"
import { azureFakeDeployment, azureFakeKey, startFakeAzure } from "../support/fakeAzure.ts"
import { runGateway, startGateway, writeFiles } from "../support/gateway.ts"
import { scenarioTests } from "../support/scenarioGateway.ts"

const plainConfig = (endpoint: string, table = "") => `
[models.m]
routing = ["p"]
[models.m.providers.p]
type = "azure"
endpoint = "${endpoint}"
deployment_id = "${azureFakeDeployment}"
${table}
[functions.f]
type = "chat"
[functions.f.variants.v]
type = "chat_completion"
model = "m"
`

const hi = { function_name: "f", input: { messages: [{ role: "user", content: "hi" }] } }

describe("azure through the gateway", () => {
  // the gateway and the fake, started around the tests; a test per conformance scenario first
  const running = scenarioTests("azure", startFakeAzure, azureRunningFake, {
    extraConfig: () => `
[functions.tuned]
type = "chat"
[functions.tuned.variants.v]
type = "chat_completion"
model = "conformance"
max_tokens = 40
seed = 3
`
  })

  it("posts to the deployment with the default api-version and the api-key header, not a Bearer key", async () => {
    const response = await running.gateway.post("/inference", { function_name: "tuned", input: { messages: [{ role: "user", content: "hi" }] } })
    expect(response.status, JSON.stringify(response.body)).toBe(200)
    const upstream = running.fake.requests[0]
    expect(upstream.path).toBe(`/openai/deployments/${azureFakeDeployment}/chat/completions?api-version=2024-10-21`)
    expect(upstream.headers["api-key"]).toBe(azureFakeKey)
    expect(upstream.headers.authorization).toBeUndefined()
    expect(upstream.body).toMatchObject({ max_completion_tokens: 40, seed: 3 })
    const streamed = await running.gateway.stream("/inference", { ...hi, function_name: "plain", stream: true })
    expect(streamed.status).toBe(200)
    expect(running.fake.requests[1].body.stream_options).toEqual({ include_usage: true })
  })

  it("sends the configured api_version", async () => {
    const other = await startFakeAzure({ apiVersion: "2025-04-01-preview" })
    const gateway = await startGateway({
      config: plainConfig(other.endpoint, `api_version = "2025-04-01-preview"\napi_key_location = "env::K"`),
      env: { K: azureFakeKey }
    })
    try {
      const response = await gateway.post("/inference", hi)
      expect(response.status, JSON.stringify(response.body)).toBe(200)
      expect(other.requests[0].path).toBe(`/openai/deployments/${azureFakeDeployment}/chat/completions?api-version=2025-04-01-preview`)
    } finally {
      await gateway.stop()
      await other.close()
    }
  })

  it("reads the older AZURE_OPENAI_API_KEY when AZURE_API_KEY is unset, and warns at start-up", async () => {
    const gateway = await startGateway({
      config: plainConfig(running.fake.endpoint),
      env: { AZURE_API_KEY: undefined, AZURE_OPENAI_API_KEY: azureFakeKey }
    })
    try {
      expect(gateway.log()).toContain("AZURE_OPENAI_API_KEY")
      expect(gateway.log()).toContain("set AZURE_API_KEY instead")
      const response = await gateway.post("/inference", hi)
      expect(response.status, JSON.stringify(response.body)).toBe(200)
      expect(running.fake.requests[0].headers["api-key"]).toBe(azureFakeKey)
    } finally {
      await gateway.stop()
    }
  })

  it("prefers AZURE_API_KEY, without a warning", async () => {
    const gateway = await startGateway({
      config: plainConfig(running.fake.endpoint),
      env: { AZURE_API_KEY: azureFakeKey, AZURE_OPENAI_API_KEY: "older-key" }
    })
    try {
      expect(gateway.log()).not.toContain("AZURE_OPENAI_API_KEY")
      const response = await gateway.post("/inference", hi)
      expect(response.status, JSON.stringify(response.body)).toBe(200)
      expect(running.fake.requests[0].headers["api-key"]).toBe(azureFakeKey)
    } finally {
      await gateway.stop()
    }
  })

  it("refuses to start naming AZURE_API_KEY when no key is set", async () => {
    const dir = writeFiles({ "config.toml": plainConfig(running.fake.endpoint) })
    const result = await runGateway(["--config-file", `${dir}/config.toml`], {
      env: { AZURE_API_KEY: undefined, AZURE_OPENAI_API_KEY: undefined, GATEWAY_BIND_ADDRESS: "127.0.0.1:0" }
    })
    expect(result.code).not.toBe(0)
    expect(result.stderr + result.stdout).toContain("AZURE_API_KEY is not set")
  })

  it("shows Azure's message for a refused key, never the key", async () => {
    const gateway = await startGateway({ config: plainConfig(running.fake.endpoint, `api_key_location = "env::K"`), env: { K: "wrong-azure-key" } })
    try {
      const response = await gateway.post("/inference", hi)
      expect(response.status).toBe(502)
      expect(JSON.stringify(response.body)).toContain("Access denied")
      expect(JSON.stringify(response.body)).not.toContain("wrong-azure-key")
    } finally {
      await gateway.stop()
    }
  })

  it("refuses a provider table without endpoint or deployment_id at start-up", async () => {
    const dir = writeFiles({
      "config.toml": `
[models.m]
routing = ["p"]
[models.m.providers.p]
type = "azure"
endpoint = "http://127.0.0.1:1"
api_key_location = "none"
[functions.f]
type = "chat"
[functions.f.variants.v]
type = "chat_completion"
model = "m"
`
    })
    const result = await runGateway(["--config-file", `${dir}/config.toml`], { env: { GATEWAY_BIND_ADDRESS: "127.0.0.1:0" } })
    expect(result.code).not.toBe(0)
    expect(result.stderr + result.stdout).toContain("deployment_id")
  })
})
