/**
 * Batch inference over HTTP with each provider's batch API, faked by a local server speaking
 * its wire format (test/support/fakeBatch*.ts): a batch pending then completed, partially
 * failing, expiring, cancelled on the provider's side, failing as a whole, a provider outage
 * while polling (502, the batch stays pending and recovers), a refused creation (502, nothing
 * stored), and concurrent reads storing the results once (the reads that find another polling
 * answer pending). Then, on one provider: the
 * background poll storing results with no client reading, and two gateway processes sharing
 * the databases, one killed mid-poll, the other finishing every batch, never two polls of one
 * batch at once. The analytics and relational databases are one Postgres database here; the
 * dummy provider's batches run on both backends in batch-http.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { anthropicBatchConfig, type FakeAnthropicBatch, startAnthropicBatchFake } from "../support/fakeBatchAnthropic.ts"
import { defaultAnswer, type FakeBatchProvider } from "../support/fakeBatch.ts"
import { aiStudioBatchGatewayConfig, type AiStudioBatchFake, startAiStudioBatchFake, startVertexBatchFake, vertexBatchGatewayConfig, type VertexBatchFake } from "../support/fakeBatchGemini.ts"
import { azureBatchGatewayConfig, openAiBatchGatewayConfig, startAzureBatchFake, startOpenAiBatchFake } from "../support/fakeBatchOpenAi.ts"
import { freshDatabase, type TestDatabase } from "../support/databases.ts"
import { type RunningGateway, startGateway } from "../support/gateway.ts"
import { startTcpProxy, type TcpProxy } from "../support/tcpProxy.ts"
import { getInferences, listInferences, observabilityToml, poll } from "../support/observability.ts"

interface ProviderCase {
  readonly name: string
  /** the provider's name in the model's table */
  readonly providerName: string
  readonly start: () => Promise<FakeBatchProvider>
  /** the model `batch_model` served by the fake, and the environment it needs */
  readonly config: (fake: FakeBatchProvider) => { readonly toml: string; readonly env: Readonly<Record<string, string>> }
}

const providers: ReadonlyArray<ProviderCase> = [
  { name: "openai", providerName: "p", start: () => startOpenAiBatchFake(), config: (fake) => openAiBatchGatewayConfig(fake) },
  { name: "azure", providerName: "p", start: () => startAzureBatchFake(), config: (fake) => azureBatchGatewayConfig(fake) },
  {
    name: "anthropic",
    providerName: "anthropic",
    start: () => startAnthropicBatchFake(),
    config: (fake) => anthropicBatchConfig(fake as FakeAnthropicBatch, { model: "batch_model", provider: "anthropic" })
  },
  {
    name: "google_ai_studio_gemini",
    providerName: "google_ai_studio_gemini",
    start: () => startAiStudioBatchFake(),
    config: (fake) => aiStudioBatchGatewayConfig(fake as AiStudioBatchFake, { model: "batch_model" })
  },
  {
    name: "gcp_vertex_gemini",
    providerName: "gcp_vertex_gemini",
    start: () => startVertexBatchFake(),
    config: (fake) => vertexBatchGatewayConfig(fake as VertexBatchFake, { model: "batch_model" })
  }
]

const gatewayConfig = (providerToml: string, pollIntervalS: number) => `
${observabilityToml()}
[gateway.batch]
poll_interval_s = ${pollIntervalS}
${providerToml}
[functions.ask]
type = "chat"
[functions.ask.variants.main]
type = "chat_completion"
model = "batch_model"
`

const questions = (count: number, prefix = "question") =>
  Array.from({ length: count }, (_, i) => ({ messages: [{ role: "user", content: `${prefix} ${i}` }] }))

const submit = async (gateway: RunningGateway, count = 4, prefix = "question") => {
  const response = await gateway.post("/batch_inference", { function_name: "ask", inputs: questions(count, prefix) })
  expect(response.status, JSON.stringify(response.body)).toBe(200)
  return response.body as { batch_id: string; inference_ids: Array<string>; episode_ids: Array<string> }
}

const textOf = (inference: any): string => inference.content?.[0]?.text

describe.each(providers)("batch inference through $name's batch API", (provider) => {
  let database: TestDatabase
  let fake: FakeBatchProvider
  let gateway: RunningGateway

  beforeAll(async () => {
    database = await freshDatabase("postgres")
    fake = await provider.start()
    const { toml, env } = provider.config(fake)
    gateway = await startGateway({
      config: gatewayConfig(toml, 0),
      env: { ...env, GATEWAY_ANALYTICS_DB_URL: database.url, GATEWAY_RELATIONAL_DB_URL: database.url }
    })
  }, 60_000)

  afterAll(async () => {
    await gateway?.stop()
    await fake?.close()
    await database?.drop()
  })

  const reset = () => {
    fake.reset()
    fake.ending = "complete"
    fake.pollsUntilDone = 1
    fake.outage = false
    fake.refuseCreation = false
  }

  it("sends every input with its inference id, answers pending while the provider works, then completed with every answer stored", async () => {
    reset()
    const { batch_id, inference_ids } = await submit(gateway)
    expect(fake.batches).toHaveLength(1)
    expect(fake.batches[0].requests.map((request) => request.id)).toEqual(inference_ids)

    expect((await gateway.get(`/batch_inference/${batch_id}`)).body).toEqual({ status: "pending" })
    const read = await gateway.get(`/batch_inference/${batch_id}`)
    expect(read.status, JSON.stringify(read.body)).toBe(200)
    expect(read.body.status).toBe("completed")
    expect(read.body.inferences.map((inference: any) => inference.inference_id)).toEqual(inference_ids)
    expect(read.body.inferences.map(textOf)).toEqual([0, 1, 2, 3].map((i) => defaultAnswer(`question ${i}`)))
    for (const inference of read.body.inferences) {
      expect(inference.usage.input_tokens).toBeGreaterThan(0)
      expect(inference.usage.output_tokens).toBeGreaterThan(0)
    }

    const stored = await getInferences(gateway, inference_ids, { include_model_inferences: true })
    expect(stored).toHaveLength(4)
    for (const inference of stored) {
      expect(inference.tags["gateway::batch_id"]).toBe(batch_id)
      expect(inference.model_inferences).toHaveLength(1)
      expect(inference.model_inferences[0].model_provider_name).toBe(provider.providerName)
    }
    // read from the database from now on: the provider is not asked again
    const asked = fake.requests.length
    expect((await gateway.get(`/batch_inference/${batch_id}/inference/${inference_ids[2]}`)).body).toEqual({
      status: "completed",
      batch_id,
      inferences: [read.body.inferences[2]]
    })
    expect(fake.requests.length).toBe(asked)
  })

  it.each([
    ["partial", /./],
    ["expire", /expire/i],
    ["cancel", /cancel/i]
  ] as const)("reports each request without an answer in its place when the batch ends %s", async (ending, why) => {
    reset()
    fake.ending = ending
    fake.pollsUntilDone = 0
    const { batch_id, inference_ids } = await submit(gateway)
    const read = await gateway.get(`/batch_inference/${batch_id}`)
    expect(read.body.status, JSON.stringify(read.body)).toBe("completed")
    const [first, second, third, fourth] = read.body.inferences
    expect([textOf(first), textOf(third)]).toEqual([defaultAnswer("question 0"), defaultAnswer("question 2")])
    for (const failed of [second, fourth]) {
      expect(failed.content).toBeUndefined()
      expect(failed.error).toMatch(why)
    }
    const stored = await getInferences(gateway, inference_ids)
    expect(stored.map((inference) => inference.inference_id).sort()).toEqual([inference_ids[0], inference_ids[2]].sort())
  })

  it("answers failed when the provider failed the whole batch, and stores nothing", async () => {
    reset()
    fake.ending = "fail"
    fake.pollsUntilDone = 0
    const { batch_id, inference_ids } = await submit(gateway)
    const read = await gateway.get(`/batch_inference/${batch_id}`)
    expect(read.body.status, JSON.stringify(read.body)).toBe("failed")
    expect(read.body.error).toEqual(expect.any(String))
    const asked = fake.requests.length
    expect((await gateway.get(`/batch_inference/${batch_id}`)).body).toEqual(read.body)
    expect(fake.requests.length).toBe(asked)
    expect(await getInferences(gateway, inference_ids)).toEqual([])
  })

  it("answers 502 naming the provider while it is down, keeps the batch pending, and completes it once the provider is back", async () => {
    reset()
    fake.pollsUntilDone = 0
    const { batch_id } = await submit(gateway)
    fake.outage = true
    const down = await gateway.get(`/batch_inference/${batch_id}`)
    expect(down.status).toBe(502)
    expect(down.body.error).toContain(`provider "${provider.providerName}"`)
    fake.outage = false
    const read = await gateway.get(`/batch_inference/${batch_id}`)
    expect(read.body.status, JSON.stringify(read.body)).toBe("completed")
    expect(read.body.inferences).toHaveLength(4)
  })

  it("answers 502 naming the provider when it refuses the batch, and stores nothing", async () => {
    reset()
    fake.refuseCreation = true
    const before = await listInferences(gateway, { function_name: "ask", limit: 1000 })
    const response = await gateway.post("/batch_inference", { function_name: "ask", inputs: questions(2) })
    expect(response.status).toBe(502)
    expect(response.body.error).toContain(`provider "${provider.providerName}" of model "batch_model" refused the batch`)
    expect(fake.batches).toHaveLength(0)
    expect(await listInferences(gateway, { function_name: "ask", limit: 1000 })).toHaveLength(before.length)
  })

  it("sends nothing when one input is bad: 400 naming its index", async () => {
    reset()
    const response = await gateway.post("/batch_inference", {
      function_name: "ask",
      inputs: [...questions(2), { messages: [{ role: "user", content: [{ type: "template", name: "nope", arguments: {} }] }] }]
    })
    expect(response.status).toBe(400)
    expect(response.body.error).toMatch(/^inputs\[2\]\.messages\[0\]\.content\[0\]/)
    expect(fake.requests).toHaveLength(0)
    expect(fake.batches).toHaveLength(0)
  })

  it("stores a batch's results once when several reads find it finished at the same time: one polls, the others answer pending meanwhile", async () => {
    reset()
    fake.pollsUntilDone = 0
    const { batch_id, inference_ids } = await submit(gateway, 6)
    const reads = await Promise.all(Array.from({ length: 6 }, () => gateway.get(`/batch_inference/${batch_id}`)))
    const completed = reads.filter((read) => read.body.status === "completed")
    expect(completed.length).toBeGreaterThanOrEqual(1)
    for (const read of reads) expect(read.body).toEqual(read.body.status === "completed" ? completed[0].body : { status: "pending" })
    expect((await gateway.get(`/batch_inference/${batch_id}`)).body).toEqual(completed[0].body)
    const stored = await getInferences(gateway, inference_ids, { include_model_inferences: true })
    expect(stored).toHaveLength(6)
    for (const inference of stored) expect(inference.model_inferences).toHaveLength(1)
    const tagged = await listInferences(gateway, {
      function_name: "ask",
      filters: { type: "tag", key: "gateway::batch_id", value: batch_id, comparison_operator: "=" },
      limit: 100
    })
    expect(tagged).toHaveLength(6)
  })
})

describe("background polls across gateway processes", () => {
  const provider = providers[0]
  let database: TestDatabase
  let fake: FakeBatchProvider
  const gateways: Array<RunningGateway> = []

  const start = async () => {
    const { toml, env } = provider.config(fake)
    const gateway = await startGateway({
      config: gatewayConfig(toml, 1),
      env: { ...env, GATEWAY_ANALYTICS_DB_URL: database.url, GATEWAY_RELATIONAL_DB_URL: database.url }
    })
    gateways.push(gateway)
    return gateway
  }

  const stored = (gateway: RunningGateway, batchId: string) =>
    listInferences(gateway, {
      function_name: "ask",
      filters: { type: "tag", key: "gateway::batch_id", value: batchId, comparison_operator: "=" },
      limit: 100
    })

  beforeAll(async () => {
    database = await freshDatabase("postgres")
    fake = await provider.start()
  })

  afterAll(async () => {
    for (const gateway of gateways) if (gateway.process.exitCode === null) await gateway.stop()
    await fake?.close()
    await database?.drop()
  })

  it("stores a batch's results with no client reading it", async () => {
    const gateway = await start()
    fake.pollsUntilDone = 1
    const { batch_id } = await submit(gateway, 3, "unread")
    const results = await poll("the background poll to store the batch", async () => {
      const found = await stored(gateway, batch_id)
      return found.length === 3 ? found : undefined
    }, { timeoutMs: 20_000, intervalMs: 250 })
    expect(results.map((inference: any) => inference.output[0].text).sort()).toEqual([0, 1, 2].map((i) => defaultAnswer(`unread ${i}`)))
    await gateway.stop()
  }, 40_000)

  it("finishes every batch on the surviving gateway after the other is killed mid-poll, never polling one batch twice at once", async () => {
    fake.reset()
    fake.pollsUntilDone = 2
    fake.pollDelayMs = 1500
    const first = await start()
    const second = await start()
    const batches = [await submit(first, 2, "a"), await submit(first, 2, "b"), await submit(second, 2, "c")]
    // kill the first once it is polling
    await poll("a background poll to start", async () => fake.requests.some((request) => request.method === "GET") ? true : undefined, {
      timeoutMs: 15_000
    })
    first.process.kill("SIGKILL")
    for (const { batch_id } of batches) {
      await poll(`batch ${batch_id} to be stored`, async () => {
        const found = await stored(second, batch_id)
        return found.length === 2 ? found : undefined
      }, { timeoutMs: 60_000, intervalMs: 500 })
    }
    expect(fake.maxConcurrentPolls).toBe(1)
    for (const { batch_id } of batches) {
      const read = await second.get(`/batch_inference/${batch_id}`)
      expect(read.body.status).toBe("completed")
      expect(read.body.inferences).toHaveLength(2)
    }
  }, 120_000)
})

describe("batch inference while the analytics database is down", () => {
  const provider = providers[0]
  let analytics: TestDatabase
  let relational: TestDatabase
  let proxy: TcpProxy
  let fake: FakeBatchProvider
  let gateway: RunningGateway

  beforeAll(async () => {
    analytics = await freshDatabase("postgres")
    relational = await freshDatabase("postgres")
    const url = new URL(analytics.url)
    proxy = await startTcpProxy({ host: url.hostname, port: Number(url.port || 5432) })
    fake = await provider.start()
    const { toml, env } = provider.config(fake)
    gateway = await startGateway({
      config: gatewayConfig(toml, 0),
      env: { ...env, GATEWAY_ANALYTICS_DB_URL: proxy.urlFor(analytics.url), GATEWAY_RELATIONAL_DB_URL: relational.url }
    })
  }, 60_000)

  afterAll(async () => {
    await gateway?.stop()
    await proxy?.close()
    await fake?.close()
    await analytics?.drop()
    await relational?.drop()
  })

  it("answers 503 naming the database, logs the provider's batch it could not record, and works again once the database is back", async () => {
    const before = await submit(gateway, 1, "before")
    proxy.cut()
    try {
      const refused = await gateway.post("/batch_inference", { function_name: "ask", inputs: questions(2, "during") })
      expect(refused.status).toBe(503)
      expect(refused.body.error).toContain("postgres database is unavailable")
      // the provider accepted it: the log names it, to be cancelled there
      const orphan = fake.batches[fake.batches.length - 1]
      expect(orphan.requests).toHaveLength(2)
      expect(gateway.log()).toContain(`accepted it as ${orphan.id}, but it could not be stored`)
      expect((await gateway.get(`/batch_inference/${before.batch_id}`)).status).toBe(503)
    } finally {
      proxy.restore()
    }
    const read = await poll("the batch to read back", async () => {
      const response = await gateway.get(`/batch_inference/${before.batch_id}`)
      return response.status === 200 && response.body.status !== "pending" ? response.body : undefined
    }, { timeoutMs: 15_000, intervalMs: 250 })
    expect(read.status).toBe("completed")
  }, 40_000)
})
