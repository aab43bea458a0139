/**
 * `POST /openai/v1/embeddings` through a running gateway, with the official `openai` SDK as the
 * client and a fake OpenAI embeddings upstream (test/support/fakeEmbeddings.ts): floats and
 * base64, one text and several, dimensions, fallback to a second provider, the cache, dryrun,
 * the stored rows on both backends, and the errors a caller sees.
 */
import OpenAI from "openai"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { freshDatabase, queryDatabase, type TestDatabase } from "../support/databases.ts"
import { type FakeEmbeddings, fakeVector, startFakeEmbeddings } from "../support/fakeEmbeddings.ts"
import { type RunningGateway, startGateway } from "../support/gateway.ts"
import { backends, observabilityToml, poll } from "../support/observability.ts"

const key = "sk-embed-test"

const config = (good: string, broken: string) => `
${observabilityToml()}
[embedding_models.small]
routing = ["main"]
timeout_ms = 5000
[embedding_models.small.providers.main]
type = "openai"
model_name = "text-embedding-3-small"
api_base = "${good}"
api_key_location = "env::EMBED_KEY"

[embedding_models.fallback]
routing = ["broken", "good"]
[embedding_models.fallback.providers.broken]
type = "openai"
model_name = "broken-model"
api_base = "${broken}"
api_key_location = "env::EMBED_KEY"
[embedding_models.fallback.providers.good]
type = "openai"
model_name = "good-model"
api_base = "${good}"
api_key_location = "env::EMBED_KEY"
`

interface StoredRow {
  readonly model_name: string
  readonly model_provider_name: string
  readonly input: ReadonlyArray<string>
  readonly cached: boolean
  readonly input_tokens: number
  readonly raw_request: string
  readonly raw_response: string
  readonly dimensions: number | null
}

const storedRows = async (database: TestDatabase): Promise<Array<StoredRow>> => {
  const table = database.backend === "clickhouse" ? "EmbeddingInference" : "embedding_inference"
  const rows = await queryDatabase(
    database,
    `SELECT model_name, model_provider_name, input, cached, input_tokens, raw_request, raw_response, dimensions FROM ${table}`
  )
  return rows.map((row) => ({
    ...row,
    input: typeof row.input === "string" ? JSON.parse(row.input) : row.input,
    cached: row.cached === true || row.cached === 1,
    input_tokens: Number(row.input_tokens)
  })) as Array<StoredRow>
}

const rowOf = (database: TestDatabase, text: string) =>
  poll(`the stored row of "${text}"`, async () => (await storedRows(database)).find((row) => row.input.includes(text)))

/** float32 rounding of what the fake sent (its values are multiples of 1/64: exact) */
const vector = (text: string, dimensions?: number) => fakeVector(text, dimensions)

describe.each(backends)("embeddings on %s", (backend) => {
  let good: FakeEmbeddings
  let broken: FakeEmbeddings
  let database: TestDatabase
  let gateway: RunningGateway
  let client: OpenAI

  beforeAll(async () => {
    good = await startFakeEmbeddings(key)
    broken = await startFakeEmbeddings(key)
    broken.failWith = 503
    database = await freshDatabase(backend)
    gateway = await startGateway({
      config: config(good.apiBase, broken.apiBase),
      env: { EMBED_KEY: key, GATEWAY_ANALYTICS_DB_URL: database.url }
    })
    client = new OpenAI({ baseURL: `${gateway.url}/openai/v1`, apiKey: "unused", maxRetries: 0 })
  })

  afterAll(async () => {
    await gateway?.stop()
    await good?.close()
    await broken?.close()
    await database?.drop()
  })

  it("embeds one text as floats, sends OpenAI's request upstream with the key, and stores the call", async () => {
    const text = `float single ${backend}`
    const response = await client.embeddings.create({ model: "gateway::embedding_model_name::small", input: text, encoding_format: "float" })
    expect(response.object).toBe("list")
    expect(response.model).toBe("gateway::embedding_model_name::small")
    expect(response.data).toEqual([{ object: "embedding", index: 0, embedding: vector(text) }])
    expect(response.usage).toEqual({ prompt_tokens: 3, total_tokens: 3 })
    const sent = good.requests.at(-1)!
    expect(sent.path).toBe("/v1/embeddings")
    expect(sent.authorization).toBe(`Bearer ${key}`)
    expect(sent.body).toEqual({ model: "text-embedding-3-small", input: [text], encoding_format: "float" })

    const row = await rowOf(database, text)
    expect(row).toMatchObject({ model_name: "small", model_provider_name: "main", input: [text], cached: false, input_tokens: 3, dimensions: null })
    expect(JSON.parse(row.raw_request)).toEqual(sent.body)
    expect(JSON.parse(row.raw_response).data).toHaveLength(1)
  })

  it("embeds a list with dimensions in base64 (the SDK's default encoding), in input order", async () => {
    const texts = [`first ${backend}`, `second text ${backend}`, `third ${backend}`]
    const response = await client.embeddings.create({ model: "gateway::embedding_model_name::small", input: texts, dimensions: 5 })
    expect(response.data.map((item) => item.index)).toEqual([0, 1, 2])
    expect(response.data.map((item) => item.embedding)).toEqual(texts.map((text) => vector(text, 5)))
    expect(good.requests.at(-1)!.body).toMatchObject({ input: texts, dimensions: 5 })

    // the wire itself: OpenAI's base64 of little-endian float32
    const raw = await gateway.post("/openai/v1/embeddings", { model: "gateway::embedding_model_name::small", input: texts[0], encoding_format: "base64" })
    expect(raw.status).toBe(200)
    const bytes = Buffer.from(raw.body.data[0].embedding, "base64")
    expect(Array.from({ length: bytes.length / 4 }, (_, index) => bytes.readFloatLE(index * 4))).toEqual(vector(texts[0]))
    expect((await rowOf(database, texts[1])).dimensions).toBe(5)
  })

  it("falls back to the next provider in routing order", async () => {
    const text = `fallback ${backend}`
    const before = broken.requests.length
    const response = await client.embeddings.create({ model: "gateway::embedding_model_name::fallback", input: text, encoding_format: "float" })
    expect(response.data[0].embedding).toEqual(vector(text))
    expect(broken.requests.length).toBe(before + 1)
    expect(good.requests.at(-1)!.body.model).toBe("good-model")
    expect(await rowOf(database, text)).toMatchObject({ model_name: "fallback", model_provider_name: "good" })
  })

  it("answers a second identical call from the cache without calling the provider", async () => {
    const text = `cached ${backend}`
    const body = { model: "gateway::embedding_model_name::small", input: [text], encoding_format: "float", "gateway::cache_options": { enabled: "on" } }
    const first = await gateway.post("/openai/v1/embeddings", body)
    expect(first.status).toBe(200)
    await rowOf(database, text)
    const sent = good.requests.length
    const second = await gateway.post("/openai/v1/embeddings", body)
    expect(second.status).toBe(200)
    expect(good.requests.length).toBe(sent)
    expect(second.body.data).toEqual(first.body.data)
    await poll("the cached row", async () => (await storedRows(database)).find((row) => row.input.includes(text) && row.cached))
  })

  it("stores nothing for a dryrun", async () => {
    const text = `dryrun ${backend}`
    const answered = await gateway.post("/openai/v1/embeddings", { model: "gateway::embedding_model_name::small", input: text, "gateway::dryrun": true })
    expect(answered.status).toBe(200)
    expect(good.requests.at(-1)!.body.input).toEqual([text])
    // a later call is stored: by then the dryrun would have been too
    const later = `after dryrun ${backend}`
    await gateway.post("/openai/v1/embeddings", { model: "gateway::embedding_model_name::small", input: later })
    await rowOf(database, later)
    expect((await storedRows(database)).filter((row) => row.input.includes(text))).toEqual([])
  })

  it("answers an unknown model with a 404 naming it, and a bad input with a 400 naming the field", async () => {
    const unknown = await client.embeddings.create({ model: "gateway::embedding_model_name::nope", input: "x" }).catch((error) => error)
    expect(unknown).toBeInstanceOf(OpenAI.NotFoundError)
    expect(unknown.message).toContain(`unknown embedding model "nope"`)

    const notAModel = await gateway.post("/openai/v1/embeddings", { model: "nope", input: "x" })
    expect(notAModel.status).toBe(400)
    expect(notAModel.body.error.message).toContain(`model: "nope"`)

    const badInput = await gateway.post("/openai/v1/embeddings", { model: "gateway::embedding_model_name::small", input: 42 })
    expect(badInput.status).toBe(400)
    expect(badInput.body.error.type).toBe("invalid_request_error")
    expect(badInput.body.error.message).toMatch(/^input/)

    const tokens = await gateway.post("/openai/v1/embeddings", { model: "gateway::embedding_model_name::small", input: [[1, 2, 3]] })
    expect(tokens.status).toBe(400)
    expect(tokens.body.error.message).toContain("input: token arrays are not supported")

    const dimensions = await gateway.post("/openai/v1/embeddings", { model: "gateway::embedding_model_name::small", input: "x", dimensions: 0 })
    expect(dimensions.status).toBe(400)
    expect(dimensions.body.error.message).toMatch(/^dimensions/)
  })

  it("answers with a 5xx naming every provider when all fail", async () => {
    broken.failWith = 503
    good.failWith = 500
    try {
      const failed = await gateway.post("/openai/v1/embeddings", { model: "gateway::embedding_model_name::fallback", input: "x" })
      expect(failed.status).toBe(502)
      expect(failed.body.error.message).toContain(`provider "broken"`)
      expect(failed.body.error.message).toContain(`provider "good"`)
    } finally {
      good.failWith = undefined
    }
  })
})
