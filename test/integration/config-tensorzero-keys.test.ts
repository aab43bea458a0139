/**
 * TensorZero configuration keys this gateway once refused (issue 35, section 7), on the real
 * `gateway` command in front of fake providers: each loads, is honoured where the gateway can
 * (the provider sees the field, the tool, the model name; the error body carries `error_json`;
 * the Postgres pool keeps to its size; DICL with k = 0 embeds nothing), and is named in a
 * start-up warning where it is not run.
 */
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { freshDatabase, queryDatabase, type TestDatabase } from "../support/databases.ts"
import { type FakeOpenAi, startFakeOpenAi } from "../support/fakeOpenAi.ts"
import { type RunningGateway, startGateway } from "../support/gateway.ts"

const configOf = (apiBase: string) => `
[gateway]
unstable_error_json = true

[postgres]
enabled = true
connection_pool_size = 2

[optimizers.sft]
type = "openai_sft"
model = "gpt-4o-mini"

[provider_types.openai.sft]
batch_size = 8

[[rate_limiting.rules]]
always = true
model_inferences_per_minute = 100000

[models.groq]
routing = ["p"]
[models.groq.providers.p]
type = "groq"
model_name = "qwen"
api_base = "${apiBase}"
api_key_location = "none"
reasoning_format = "parsed"

[models.mistral]
routing = ["p"]
[models.mistral.providers.p]
type = "mistral"
model_name = "magistral"
api_base = "${apiBase}"
api_key_location = "none"
prompt_mode = "reasoning"

[models.searching]
routing = ["p"]
[models.searching.providers.p]
type = "openai"
model_name = "gpt-5"
api_base = "${apiBase}"
api_key_location = "none"
provider_tools = [{ type = "web_search" }]

[models.tgi]
routing = ["p"]
[models.tgi.providers.p]
type = "tgi"
api_base = "${apiBase}"
api_key_location = "none"

[embedding_models.slow]
routing = ["p"]
[embedding_models.slow.providers.p]
type = "openai"
model_name = "slow-embedding"
api_base = "${apiBase}"
api_key_location = "none"
timeout_ms = 200

[functions.ask]
type = "chat"

[functions.ask.variants.headers]
type = "chat_completion"
model = "groq"
weight = 0
extra_headers = [{ name = "Content-Length", value = "5" }, { name = "x-team", value = "blue" }]

[functions.ask.variants.no_examples]
type = "experimental_dynamic_in_context_learning"
model = "groq"
embedding_model = "slow"
k = 0
weight = 0
`

const ask = (model: string) => ({ model_name: model, input: { messages: [{ role: "user", content: "Hello" }] } })

describe("TensorZero's keys, loaded and honoured", () => {
  let fake: FakeOpenAi
  let relational: TestDatabase
  let gateway: RunningGateway

  beforeAll(async () => {
    fake = await startFakeOpenAi()
    relational = await freshDatabase("postgres")
    gateway = await startGateway({ config: configOf(fake.apiBase), env: { GATEWAY_RELATIONAL_DB_URL: relational.url } })
  })
  afterAll(async () => {
    await gateway?.stop()
    await fake?.close()
    await relational?.drop()
  })

  it("names in a warning each key it loads without running", () => {
    const configFile = path.join(gateway.dir, "config.toml")
    const log = gateway.log()
    expect(log).toContain(`${configFile}: optimizers.sft: fine-tuning optimizers are not run by this gateway`)
    expect(log).toContain(`${configFile}: provider_types.openai.sft: supervised fine-tuning is not run by this gateway`)
    expect(log).toContain(`${configFile}: postgres.enabled: ignored: Postgres is used when GATEWAY_RELATIONAL_DB_URL`)
    expect(log).toContain(`${configFile}: functions.ask.variants.headers.extra_headers[0].name: "Content-Length" is set by the gateway's HTTP client: this entry is ignored`)
  })

  it("sends Groq's reasoning_format and Mistral's prompt_mode in the request body", async () => {
    fake.reset()
    expect((await gateway.post("/inference", ask("groq"))).status).toBe(200)
    expect((await gateway.post("/inference", ask("mistral"))).status).toBe(200)
    const [groq, mistral] = fake.requests
    expect(groq.body).toMatchObject({ model: "qwen", reasoning_format: "parsed" })
    expect(mistral.body).toMatchObject({ model: "magistral", prompt_mode: "reasoning" })
    expect(mistral.body.reasoning_format).toBeUndefined()
  })

  it("sends a model provider's provider_tools with every call, before the request's own", async () => {
    fake.reset()
    const response = await gateway.post("/inference", { ...ask("searching"), provider_tools: [{ tool: { type: "file_search" } }] })
    expect(response.status, JSON.stringify(response.body)).toBe(200)
    expect(fake.requests[0].body.tools).toEqual([{ type: "web_search" }, { type: "file_search" }])
  })

  it("calls a TGI server configured without model_name as `tgi`", async () => {
    fake.reset()
    expect((await gateway.post("/inference", ask("tgi"))).status).toBe(200)
    expect(fake.requests[0].body.model).toBe("tgi")
  })

  it("drops a configured Content-Length header and sends the variant's other headers", async () => {
    fake.reset()
    const response = await gateway.post("/inference", { function_name: "ask", variant_name: "headers", input: { messages: [{ role: "user", content: "Hello" }] } })
    expect(response.status, JSON.stringify(response.body)).toBe(200)
    const [received] = fake.requests
    expect(received.headers["x-team"]).toBe("blue")
    expect(received.headers["content-length"]).toBe(String(Buffer.byteLength(JSON.stringify(received.body))))
  })

  it("runs a DICL variant with k = 0 on the input alone, embedding nothing", async () => {
    fake.reset()
    const response = await gateway.post("/inference", { function_name: "ask", variant_name: "no_examples", input: { messages: [{ role: "user", content: "Hello" }] } })
    expect(response.status, JSON.stringify(response.body)).toBe(200)
    expect(fake.requests.map((request) => request.path)).toEqual(["/v1/chat/completions"])
    const userMessages = fake.requests[0].body.messages.filter((message: { role: string }) => message.role !== "system")
    expect(userMessages).toHaveLength(1)
  })

  it("bounds a call to an embedding model's provider by its timeout_ms", async () => {
    fake.reset()
    fake.script.push({ kind: "json", delayMs: 3000, body: { object: "list", data: [{ object: "embedding", index: 0, embedding: [0.1] }], model: "slow-embedding", usage: { prompt_tokens: 1, total_tokens: 1 } } })
    const response = await gateway.post("/openai/v1/embeddings", { model: "gateway::embedding_model_name::slow", input: "Hello" })
    expect(response.status).toBeGreaterThanOrEqual(500)
    expect(JSON.stringify(response.body)).toMatch(/timed out|timeout/i)
  })

  it("answers errors with error_json beside error (unstable_error_json)", async () => {
    const response = await gateway.post("/inference", { function_name: "nope", input: {} })
    expect(response.status).toBe(404)
    expect(response.body).toEqual({ error: response.body.error, error_json: { NotFound: { message: response.body.error } } })
    expect(response.body.error).toContain("Unknown function: nope")
  })

  it("keeps its relational database pool to [postgres] connection_pool_size", async () => {
    // every call is charged against the rate limits, kept in the relational database
    const answers = await Promise.all(Array.from({ length: 40 }, () => gateway.post("/inference", ask("groq"))))
    expect(answers.every((answer) => answer.status === 200)).toBe(true)
    const [{ connections }] = await queryDatabase(
      relational,
      `SELECT count(*)::int AS connections FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'llm-gateway'`
    )
    expect(connections).toBeGreaterThanOrEqual(1)
    expect(connections).toBeLessThanOrEqual(2)
  })
})

describe("TensorZero's typescript evaluators", () => {
  let analytics: TestDatabase
  let gateway: RunningGateway

  beforeAll(async () => {
    analytics = await freshDatabase("postgres")
    gateway = await startGateway({
      config: `
[functions.write]
type = "chat"
[functions.write.variants.v]
type = "chat_completion"
model = "dummy::good"
[functions.write.evaluators.exact]
type = "exact_match"
[functions.write.evaluators.scripted]
type = "typescript"
typescript_file = "evaluators/scripted.ts"
`,
      env: { GATEWAY_ANALYTICS_DB_URL: analytics.url }
    })
  })
  afterAll(async () => {
    await gateway?.stop()
    await analytics?.drop()
  })

  it("load with a warning, and a run that would use one is a 400 naming it", async () => {
    expect(gateway.log()).toContain("functions.write.evaluators.scripted: TypeScript evaluators are not run by this gateway")
    const refused = await gateway.post("/v1/evaluations/run", { function_name: "write", variant_name: "v", dataset_name: "examples" })
    expect(refused.status).toBe(400)
    expect(refused.body.error).toBe(`evaluator_names: evaluator "scripted" is a TypeScript evaluator, which this gateway does not run (name the others)`)
  })
})
