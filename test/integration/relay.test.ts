/**
 * A relay between gateways (issue 21), with real processes: a central gateway with
 * authentication on (API keys in a Postgres database of its own) whose models are served by
 * fake providers, and edge gateways with `[gateway.relay]` whose own providers could not answer
 * (a closed port), so that every answer proves the call went through the central gateway. What
 * the fake providers receive shows the central gateway's credentials, the caller's tags and
 * edits; the edge's answers show the central gateway's failures as a provider's.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { dummyText } from "../../src/providers/dummy/index.ts"
import { type ApiKey, call, closedPort, createKey } from "../support/access.ts"
import { freshDatabase, type TestDatabase } from "../support/databases.ts"
import { fakeVector, type FakeEmbeddings, startFakeEmbeddings } from "../support/fakeEmbeddings.ts"
import { type FakeOpenAi, startFakeOpenAi, textCompletion } from "../support/fakeOpenAi.ts"
import { type RunningGateway, startGateway } from "../support/gateway.ts"
import { observabilityToml, poll, waitForInference } from "../support/observability.ts"

const centralProviderKey = "sk-central-provider"
const edgeProviderKey = "sk-edge-provider"
const answerSchema = JSON.stringify({ type: "object", properties: { answer: { type: "string" } }, required: ["answer"] })

/** the central gateway: its models on the fake provider, with its own key or the caller's */
const centralConfig = (fake: FakeOpenAi, embeddings: FakeEmbeddings) => `
${observabilityToml()}
[gateway.auth]
enabled = true

[models.mini]
routing = ["openai"]
[models.mini.providers.openai]
type = "openai"
model_name = "central-mini"
api_base = "${fake.apiBase}"
api_key_location = "env::CENTRAL_OPENAI_KEY"

[models.byok]
routing = ["openai"]
[models.byok.providers.openai]
type = "openai"
model_name = "central-byok"
api_base = "${fake.apiBase}"
api_key_location = "dynamic::openai_key"

# reads the key the edge authenticates with, were it forwarded
[models.keyed_by_central_key]
routing = ["openai"]
[models.keyed_by_central_key.providers.openai]
type = "openai"
model_name = "central-keyed"
api_base = "${fake.apiBase}"
api_key_location = "dynamic::central_key"

[embedding_models.small]
routing = ["openai"]
[embedding_models.small.providers.openai]
type = "openai"
model_name = "text-embedding-3-small"
api_base = "${embeddings.apiBase}"
api_key_location = "env::CENTRAL_OPENAI_KEY"
`

/** an edge's models: their providers could not answer (`deadBase`), but those of `skip_relay` models */
const edgeModels = (deadBase: string, local: FakeOpenAi, centralUrl: string) => `
[models.mini]
routing = ["openai"]
[models.mini.providers.openai]
type = "openai"
model_name = "edge-mini"
api_base = "${deadBase}"
api_key_location = "env::EDGE_OPENAI_KEY"

[models.byok]
routing = ["openai"]
[models.byok.providers.openai]
type = "openai"
model_name = "edge-byok"
api_base = "${deadBase}"
api_key_location = "env::EDGE_OPENAI_KEY"

[models.keyed_by_central_key]
routing = ["openai"]
[models.keyed_by_central_key.providers.openai]
type = "openai"
model_name = "edge-keyed"
api_base = "${deadBase}"
api_key_location = "env::EDGE_OPENAI_KEY"

[models.local]
routing = ["openai"]
skip_relay = true
[models.local.providers.openai]
type = "openai"
model_name = "edge-local"
api_base = "${local.apiBase}"
api_key_location = "env::EDGE_OPENAI_KEY"

# the central gateway as a provider, and the edge's own after it
[models.fallback]
routing = ["central", "local"]
skip_relay = true
[models.fallback.providers.central]
type = "gateway"
gateway_url = "${centralUrl}"
model_name = "mini"
api_key_location = "env::CENTRAL_KEY"
[models.fallback.providers.local]
type = "openai"
model_name = "edge-fallback"
api_base = "${local.apiBase}"
api_key_location = "env::EDGE_OPENAI_KEY"

[embedding_models.small]
routing = ["openai"]
[embedding_models.small.providers.openai]
type = "openai"
model_name = "edge-embedding"
api_base = "${deadBase}"
api_key_location = "env::EDGE_OPENAI_KEY"

[functions.chat]
type = "chat"
[functions.chat.variants.mini]
type = "chat_completion"
model = "mini"

[functions.extract]
type = "json"
output_schema = "answer.json"
[functions.extract.variants.mini]
type = "chat_completion"
model = "mini"
json_mode = "strict"
`

let database: TestDatabase
let edgeDatabase: TestDatabase
let fake: FakeOpenAi
let local: FakeOpenAi
let embeddings: FakeEmbeddings
let key: ApiKey
let central: RunningGateway
/** relays with `env::CENTRAL_KEY`, forwards no credentials, stores its inferences */
let edge: RunningGateway
/** relays with the caller's `dynamic::central_key`, forwards the caller's other credentials */
let byokEdge: RunningGateway

beforeAll(async () => {
  ;[database, edgeDatabase, fake, local] = await Promise.all([freshDatabase("postgres"), freshDatabase("postgres"), startFakeOpenAi(), startFakeOpenAi()])
  embeddings = await startFakeEmbeddings(centralProviderKey)
  key = await createKey(database.url)
  central = await startGateway({
    config: centralConfig(fake, embeddings),
    env: { GATEWAY_RELATIONAL_DB_URL: database.url, GATEWAY_ANALYTICS_DB_URL: database.url, CENTRAL_OPENAI_KEY: centralProviderKey }
  })
  const deadBase = `http://127.0.0.1:${await closedPort()}/v1/`
  const models = edgeModels(deadBase, local, central.url)
  const files = { "answer.json": answerSchema }
  const edgeEnv = { EDGE_OPENAI_KEY: edgeProviderKey, CENTRAL_KEY: key.key }
  ;[edge, byokEdge] = await Promise.all([
    startGateway({
      config: `${observabilityToml()}\n[gateway.relay]\ngateway_url = "${central.url}"\napi_key_location = "env::CENTRAL_KEY"\n${models}`,
      files,
      env: { ...edgeEnv, GATEWAY_ANALYTICS_DB_URL: edgeDatabase.url, GATEWAY_RELATIONAL_DB_URL: edgeDatabase.url }
    }),
    startGateway({
      config: `[gateway.relay]\ngateway_url = "${central.url}"\napi_key_location = "dynamic::central_key"\nforward_credentials = true\n${models}`,
      files,
      env: edgeEnv
    })
  ])
})

afterAll(async () => {
  await Promise.all([edge?.stop(), byokEdge?.stop(), central?.stop()])
  await Promise.all([fake?.close(), local?.close(), embeddings?.close()])
  await Promise.all([database?.drop(), edgeDatabase?.drop()])
})

const chat = (text: string, extra: Record<string, unknown> = {}) => ({
  function_name: "chat",
  input: { messages: [{ role: "user", content: text }] },
  ...extra
})

/** the requests the central gateway's fake provider received for `model` */
const receivedFor = (provider: FakeOpenAi, model: string) => provider.requests.filter((request) => request.body?.model === model)

describe("a function inference through the relay", () => {
  it("is answered by the central gateway's provider, with the central gateway's key, the caller's tags and extra_body", async () => {
    fake.reset()
    fake.script.push({ kind: "json", body: textCompletion("Sunny in Paris") })
    const answer = await edge.post("/inference", chat("Weather in Paris?", {
      tags: { team: "search" },
      extra_body: [{ pointer: "/user", value: "edge-caller" }],
      params: { chat_completion: { temperature: 0.25 } }
    }))
    expect(answer.status, JSON.stringify(answer.body)).toBe(200)
    expect(answer.body.content).toEqual([{ type: "text", text: "Sunny in Paris" }])

    const [sent] = receivedFor(fake, "central-mini")
    expect(sent.headers.authorization).toBe(`Bearer ${centralProviderKey}`)
    expect(sent.body).toMatchObject({ user: "edge-caller", temperature: 0.25, messages: [{ role: "user", content: "Weather in Paris?" }] })
    expect(JSON.stringify(fake.requests)).not.toContain(edgeProviderKey)

    // the edge stored its inference and model inference; the central gateway its own, with the caller's tags
    const stored = await waitForInference(edge, answer.body.inference_id, { include_model_inferences: true })
    const [modelInference] = stored.model_inferences
    expect(modelInference.model_provider_name).toBe("gateway_relay")
    expect(JSON.parse(modelInference.raw_request)).toMatchObject({ model_name: "mini", tags: { team: "search" } })
    const centralId = JSON.parse(modelInference.raw_response).inference_id
    const centralInference = await poll("the central gateway's inference", async () => {
      const got = await call(central, "POST", "/v1/inferences/get_inferences", { key, body: { ids: [centralId] } })
      return got.body.inferences?.[0]
    })
    expect(centralInference.tags).toMatchObject({ team: "search" })
    expect(centralInference.function_name).toBe("gateway::default")
  })

  it("streams: the text arrives as the central gateway streams it", async () => {
    fake.reset()
    const { status, events } = await edge.stream("/inference", chat("Tell me", { stream: true }))
    expect(status).toBe(200)
    expect(events.at(-1)).toBe("[DONE]")
    const chunks = events.slice(0, -1)
    expect(chunks.flatMap((chunk: any) => chunk.content.map((delta: any) => delta.text)).join("")).toBe("Hello from fake")
    expect(chunks.at(-1).usage).toMatchObject({ input_tokens: 12, output_tokens: 7 })
    const [sent] = receivedFor(fake, "central-mini")
    expect(sent.body.stream).toBe(true)
    expect(sent.headers.authorization).toBe(`Bearer ${centralProviderKey}`)
  })

  it("a json function keeps its output schema: the central gateway's provider gets it as structured output", async () => {
    fake.reset()
    fake.script.push({ kind: "json", body: textCompletion(`{"answer":"Paris"}`) })
    const answer = await edge.post("/inference", { function_name: "extract", input: { messages: [{ role: "user", content: "Capital of France?" }] } })
    expect(answer.status, JSON.stringify(answer.body)).toBe(200)
    expect(answer.body.output).toEqual({ raw: `{"answer":"Paris"}`, parsed: { answer: "Paris" } })
    const [sent] = receivedFor(fake, "central-mini")
    expect(sent.body.response_format).toEqual({ type: "json_schema", json_schema: { name: "response", strict: true, schema: JSON.parse(answerSchema) } })
  })

  it("sends short-hand models under their name, resolved by the central gateway", async () => {
    const answer = await edge.post("/inference", { model_name: "dummy::good", input: { messages: [{ role: "user", content: "Hi" }] } })
    expect(answer.status, JSON.stringify(answer.body)).toBe(200)
    expect(answer.body.content).toEqual([{ type: "text", text: dummyText }])
    const stored = await waitForInference(edge, answer.body.inference_id, { include_model_inferences: true })
    expect(stored.model_inferences[0].model_provider_name).toBe("gateway_relay")
    expect(JSON.parse(stored.model_inferences[0].raw_request).model_name).toBe("dummy::good")
  })

  it("keeps a skip_relay model on the edge's own providers", async () => {
    fake.reset()
    local.reset()
    const answer = await edge.post("/inference", { model_name: "local", input: { messages: [{ role: "user", content: "Hi" }] } })
    expect(answer.status, JSON.stringify(answer.body)).toBe(200)
    expect(receivedFor(local, "edge-local")[0].headers.authorization).toBe(`Bearer ${edgeProviderKey}`)
    expect(fake.requests).toHaveLength(0)
  })

  it("refuses a batch of a relayed model, naming the relay", async () => {
    const answer = await edge.post("/batch_inference", { function_name: "chat", inputs: [{ messages: [{ role: "user", content: "Hi" }] }] })
    expect(answer.status).toBe(400)
    expect(answer.body.error).toContain(`model "mini" is relayed to another gateway ([gateway.relay])`)
  })
})

describe("the central gateway's key and the caller's credentials", () => {
  it("dynamic::central_key: missing is the caller's 400, a wrong key the central gateway's refusal (not a 200)", async () => {
    const missing = await byokEdge.post("/inference", chat("Hi"))
    expect(missing.status).toBe(400)
    expect(missing.body.error).toContain("credentials.central_key: missing")
    const wrong = await byokEdge.post("/inference", chat("Hi", { credentials: { central_key: "sk-gw-aaaaaaaaaaaa-wrong" } }))
    expect(wrong.status).toBe(502)
    expect(wrong.body.error).toMatch(/provider "gateway_relay": credentials refused, HTTP 401/)
    const right = await byokEdge.post("/inference", chat("Hi", { credentials: { central_key: key.key } }))
    expect(right.status, JSON.stringify(right.body)).toBe(200)
  })

  it("forwards the caller's credentials only with forward_credentials, and never the central gateway's key", async () => {
    fake.reset()
    const forwarded = await byokEdge.post("/inference", {
      model_name: "byok",
      input: { messages: [{ role: "user", content: "Hi" }] },
      credentials: { central_key: key.key, openai_key: "sk-caller-openai" }
    })
    expect(forwarded.status, JSON.stringify(forwarded.body)).toBe(200)
    expect(receivedFor(fake, "central-byok")[0].headers.authorization).toBe("Bearer sk-caller-openai")

    // the central gateway's model reading `central_key` does not get the edge's key
    const notForwarded = await byokEdge.post("/inference", {
      model_name: "keyed_by_central_key",
      input: { messages: [{ role: "user", content: "Hi" }] },
      credentials: { central_key: key.key }
    })
    expect(notForwarded.status).toBe(400)
    expect(notForwarded.body.error).toContain("credentials.central_key: missing")

    // without forward_credentials the central gateway never sees them
    const kept = await edge.post("/inference", {
      model_name: "byok",
      input: { messages: [{ role: "user", content: "Hi" }] },
      credentials: { openai_key: "sk-caller-openai" }
    })
    expect(kept.status).toBe(400)
    expect(kept.body.error).toContain("credentials.openai_key: missing")
    expect(receivedFor(fake, "central-keyed")).toHaveLength(0)
    expect(receivedFor(fake, "central-byok")).toHaveLength(1)
  })
})

describe("the central gateway's failures", () => {
  it("a 429 with Retry-After reaches the edge's caller as a 429 with Retry-After", async () => {
    fake.reset()
    fake.script.push({ kind: "json", status: 429, body: { error: { message: "Rate limit reached", type: "requests" } }, headers: { "retry-after": "7" } })
    const answer = await edge.post("/inference", chat("Hi"))
    expect(answer.status).toBe(429)
    expect(answer.headers.get("retry-after")).toBe("7")
    expect(answer.body.error).toContain("Rate limit reached")
  })
})

describe("embeddings through the relay", () => {
  it("are the central gateway's embedding model's, by its name", async () => {
    embeddings.requests.length = 0
    const answer = await edge.post("/openai/v1/embeddings", { model: "gateway::embedding_model_name::small", input: ["first text", "second"] })
    expect(answer.status, JSON.stringify(answer.body)).toBe(200)
    expect(answer.body.data.map((item: any) => item.embedding)).toEqual([fakeVector("first text"), fakeVector("second")])
    expect(embeddings.requests).toHaveLength(1)
    expect(embeddings.requests[0]).toMatchObject({ authorization: `Bearer ${centralProviderKey}`, body: { model: "text-embedding-3-small" } })
  })
})

// last: the central gateway is stopped
describe("with the central gateway down", () => {
  it("the edge answers 502 naming the relay provider and the central gateway's address; a model that falls back to its own provider answers", async () => {
    const address = new URL(central.url).host
    await central.stop()
    const down = await edge.post("/inference", chat("Hi"))
    expect(down.status).toBe(502)
    expect(down.body.error).toContain(`provider "gateway_relay"`)
    expect(down.body.error).toContain(address)

    local.reset()
    local.script.push({ kind: "json", body: textCompletion("from the edge itself") })
    const fellBack = await edge.post("/inference", { model_name: "fallback", input: { messages: [{ role: "user", content: "Hi" }] } })
    expect(fellBack.status, JSON.stringify(fellBack.body)).toBe(200)
    expect(fellBack.body.content).toEqual([{ type: "text", text: "from the edge itself" }])
    expect(receivedFor(local, "edge-fallback")).toHaveLength(1)
    const stored = await waitForInference(edge, fellBack.body.inference_id, { include_model_inferences: true })
    expect(stored.model_inferences[0].model_provider_name).toBe("local")
  })
})
