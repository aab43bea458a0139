/**
 * The real `gateway` command on configurations written for TensorZero (`tensorzero` renamed
 * `gateway`): it starts, logs the deprecated keys it accepted with their replacement, serves
 * them, still refuses unknown keys, and honours `[gateway.observability] backend`.
 */
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { freshDatabase, queryDatabase, tablesOf, type TestDatabase } from "../support/databases.ts"
import { type RunningGateway, runGateway, startGateway, writeFiles } from "../support/gateway.ts"
import { poll } from "../support/observability.ts"

const tensorZeroConfig = `
[gateway]
bind_address = "[::]:3000"
enable_template_filesystem_access = true
observability.async_writes = true
observability.batch_writes = { enabled = true, flush_interval_ms = 200, max_rows = 500, max_rows_postgres = 100 }

[models.chat]
routing = ["primary", "backup"]
timeouts = { streaming = { total_ms = 60000 } }

[models.chat.providers.primary]
type = "dummy"
model_name = "error"

[models.chat.providers.backup]
type = "dummy"
model_name = "hello"

[functions.support]
type = "chat"
system_schema = "functions/support/system_schema.json"

[functions.support.variants.baseline]
type = "chat_completion"
model = "chat"
system_template = "functions/support/baseline/system_template.minijinja"
timeouts = { non_streaming = {} }

[functions.agent]
type = "chat"
tool_choice = { specific = "submit_order" }

[functions.agent.variants.baseline]
type = "chat_completion"
model = "dummy::offered_tool"

[functions.ping]
type = "chat"

[functions.ping.variants.baseline]
type = "chat_completion"
model = "dummy::hello"

[metrics.resolved]
type = "boolean"
optimize = "max"
level = "episode"
description = "Whether the customer's issue was resolved"

[[rate_limiting.rules]]
always = true
model_inferences_per_minute = 1000

[[rate_limiting.rules]]
priority = 0
model_inferences_per_minute = 100
scope = [{ tag_key = "user_id", tag_value = "gateway::each" }]

[[rate_limiting.rules]]
always = true
model_inferences_per_hour = 1
scope = [{ tag_key = "team", tag_value = "limited" }]

[[rate_limiting.rules]]
priority = 5
model_inferences_per_hour = 100
scope = [{ tag_key = "team", tag_value = "limited" }]
`

const tensorZeroFiles = {
  "functions/support/system_schema.json": JSON.stringify({ type: "object", properties: { company: { type: "string" } }, required: ["company"] }),
  "functions/support/baseline/system_template.minijinja": `{% include "partials/tone.minijinja" %} You work for {{ company }}.`,
  "partials/tone.minijinja": "Be kind."
}

describe("a TensorZero configuration, served", () => {
  let gateway: RunningGateway
  /** rate limits live in the relational database */
  let relational: TestDatabase

  beforeAll(async () => {
    relational = await freshDatabase("postgres")
    gateway = await startGateway({ config: tensorZeroConfig, files: tensorZeroFiles, env: { GATEWAY_RELATIONAL_DB_URL: relational.url } })
  })
  afterAll(async () => {
    await gateway?.stop()
    await relational?.drop()
  })

  it("starts, and logs each deprecated key with what to use instead", () => {
    const configFile = path.join(gateway.dir, "config.toml")
    expect(gateway.log()).toContain(
      `configuration: ${configFile}: gateway.enable_template_filesystem_access: deprecated: use template_filesystem_access.base_path`
    )
  })

  it("answers through the configured function, its template including another file", async () => {
    const response = await gateway.post("/inference", {
      function_name: "support",
      input: { system: { company: "Acme" }, messages: [{ role: "user", content: "Hello" }] },
      tags: { user_id: "ada" }
    })
    expect(response.status, JSON.stringify(response.body)).toBe(200)
    expect(response.body.variant_name).toBe("baseline")
  })

  it("checks a tool_choice.specific the function does not configure per request", async () => {
    const input = { messages: [{ role: "user", content: "Order a pizza" }] }
    const refused = await gateway.post("/inference", { function_name: "agent", input })
    expect(refused.status).toBe(400)
    expect(refused.body.error).toContain(`"submit_order"`)
    const answered = await gateway.post("/inference", {
      function_name: "agent",
      input,
      additional_tools: [{ name: "submit_order", description: "Submits an order", parameters: { type: "object" } }]
    })
    expect(answered.status, JSON.stringify(answered.body)).toBe(200)
    expect(answered.body.content[0]).toMatchObject({ type: "tool_call", raw_name: "submit_order" })
  })

  it("applies a rule with always = true beside a rule of higher priority", async () => {
    const request = { function_name: "ping", input: { messages: [{ role: "user", content: "Hi" }] }, tags: { team: "limited" } }
    expect((await gateway.post("/inference", request)).status).toBe(200)
    const limited = await gateway.post("/inference", request)
    expect(limited.status).toBe(429)
    expect(limited.body.error).toContain("rate_limiting.rules[2] (always) for tag team=limited: 0 of 1 model inferences per hour")
  })
})

describe.concurrent("a TensorZero configuration that does not start", () => {
  const failStartup = async (config: string, env: Record<string, string | undefined> = {}) => {
    const dir = writeFiles({ "config.toml": config })
    const configFile = path.join(dir, "config.toml")
    const result = await runGateway(["--config-file", configFile], { env: { GATEWAY_BIND_ADDRESS: "127.0.0.1:0", ...env }, cwd: dir })
    expect(result.code, result.stderr).toBe(1)
    expect(result.stderr).not.toContain("Listening on")
    return { configFile, stderr: result.stderr }
  }

  it("names an unknown key, among keys TensorZero has and the gateway accepts", async () => {
    const { configFile, stderr } = await failStartup(`
[gateway.observability]
async_writes = true
batch_writes = { enabled = true, max_row = 10 }
`)
    expect(stderr).toContain(`${configFile}: gateway.observability.batch_writes.max_row: unknown field`)
  })

  it("names backend = \"clickhouse\" when the analytics database is Postgres", async () => {
    const { stderr } = await failStartup(`[gateway.observability]\nbackend = "clickhouse"\n`, {
      GATEWAY_ANALYTICS_DB_URL: "postgres://postgres@127.0.0.1:5432/postgres"
    })
    expect(stderr).toContain(`gateway.observability.backend = "clickhouse" needs GATEWAY_ANALYTICS_DB_URL to be a ClickHouse http(s):// URL`)
  })
})

describe("observability backend = \"postgres\" with a ClickHouse analytics URL and a relational Postgres", () => {
  let analytics: TestDatabase
  let relational: TestDatabase
  let gateway: RunningGateway

  beforeAll(async () => {
    analytics = await freshDatabase("clickhouse")
    relational = await freshDatabase("postgres")
    gateway = await startGateway({
      config: `
[gateway.observability]
backend = "postgres"
batch_writes = { flush_interval_ms = 20 }

[functions.greet]
type = "chat"
[functions.greet.variants.v]
type = "chat_completion"
model = "dummy::hello"
`,
      env: { GATEWAY_ANALYTICS_DB_URL: analytics.url, GATEWAY_RELATIONAL_DB_URL: relational.url }
    })
  })
  afterAll(async () => {
    await gateway?.stop()
    await analytics?.drop()
    await relational?.drop()
  })

  it("stores inferences in the relational Postgres, and nothing in ClickHouse", async () => {
    expect(gateway.log()).toContain("observability: storing in postgres")
    const response = await gateway.post("/inference", { function_name: "greet", input: { messages: [{ role: "user", content: "Hi" }] } })
    expect(response.status, JSON.stringify(response.body)).toBe(200)
    const id = response.body.inference_id
    const rows = await poll("the inference in Postgres", async () => {
      const found = await queryDatabase(relational, `SELECT id::text AS id, function_name, variant_name FROM chat_inference WHERE id = '${id}'`)
      return found.length === 0 ? undefined : found
    })
    expect(rows).toEqual([{ id, function_name: "greet", variant_name: "v" }])
    // read back through the gateway, from the same database
    const read = await gateway.post("/v1/inferences/get_inferences", { ids: [id] })
    expect(read.status).toBe(200)
    expect(read.body.inferences.map((inference: any) => inference.inference_id)).toEqual([id])
    expect(await tablesOf(analytics)).toEqual([])
  })
})
