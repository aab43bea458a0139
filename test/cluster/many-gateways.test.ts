/**
 * Many gateways (issue 38): three gateway instances, each `--workers 2` (nine processes), on one
 * Postgres (relational and analytics). Requests go to the three instances over fresh
 * connections, so that the kernel spreads them over each instance's workers, as a load balancer
 * spreads them over instances.
 * - A rate limit holds exactly across all six workers.
 * - `GET /metrics` is per instance: each instance counts the requests its own workers answered.
 * - Durable tasks (DICL example tasks, whose embedding calls a fake counts) run once, whichever
 *   instance took them; and a configuration change rolled out one instance at a time (each
 *   stopped with SIGTERM while tasks run, then started again on the new configuration) loses
 *   none of them.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { dummyInference, pollUntil } from "../support/access.ts"
import { freshDatabase, type TestDatabase } from "../support/databases.ts"
import { embeddingModelToml, type FakeEmbeddings, startFakeEmbeddings } from "../support/fakeEmbeddings.ts"
import { rawRequest, type RunningGateway, startGateway } from "../support/gateway.ts"
import { observabilityToml, poll } from "../support/observability.ts"

const embedKey = "sk-many-gateways"
const limit = 30

const config = (embeddings: FakeEmbeddings, version: number) => `
${observabilityToml()}
# the connection budget: 3 instances x 2 workers x 6 = 36 of the shared Postgres's 100
[postgres]
connection_pool_size = 6

[[rate_limiting.rules]]
always = true
model_inferences_per_hour = ${limit}
scope = [{ tag_key = "burst", tag_value = "gateway::each" }]

${embeddingModelToml(embeddings.apiBase)}

[functions.answer]
type = "chat"
[functions.answer.variants.dicl]
type = "chat_completion"
model = "dummy::text"

# what the rolled-out change adds: a function the first configuration does not have
${version === 2 ? `[functions.added]\ntype = "chat"\n[functions.added.variants.main]\ntype = "chat_completion"\nmodel = "dummy::text"\n` : ""}
`

/** resolves once `count` workers of `gateway` said they listen (the harness resolves at the first) */
const untilListening = (gateway: RunningGateway, count: number) =>
  pollUntil(async () => gateway.log().match(/Listening on http/g)?.length ?? 0, (lines) => lines >= count, 20_000)

/** `POST /inference` over a fresh connection, tagged with the burst's bucket */
const inference = (gateway: RunningGateway, burst: string) =>
  rawRequest(gateway.url + "/inference", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(dummyInference({ tags: { burst } }))
  })

/** an instance's count of `/inference` answers with `status`, from its own `GET /metrics` */
const served = async (gateway: RunningGateway, status: number): Promise<number> => {
  const scrape = await rawRequest(gateway.url + "/metrics")
  expect(scrape.status).toBe(200)
  const line = scrape.text.split("\n").find((text) => text.startsWith(`gateway_http_requests_total{route="/inference",status="${status}"}`))
  return line === undefined ? 0 : Number(line.split(" ").at(-1))
}

const userInput = (text: string) => ({ messages: [{ role: "user", content: [{ type: "text", text }] }] })

describe("three gateways, two workers each, on one Postgres", () => {
  let database: TestDatabase
  let embeddings: FakeEmbeddings
  let gateways: Array<RunningGateway> = []

  const start = async (version: number) => {
    const gateway = await startGateway({
      config: config(embeddings, version),
      args: ["--config-file", "config.toml", "--workers", "2"],
      env: { GATEWAY_ANALYTICS_DB_URL: database.url, GATEWAY_RELATIONAL_DB_URL: database.url, EMBED_KEY: embedKey },
      startTimeoutMs: 30_000
    })
    await untilListening(gateway, 2)
    return gateway
  }

  beforeAll(async () => {
    ;[database, embeddings] = await Promise.all([freshDatabase("postgres"), startFakeEmbeddings(embedKey)])
    // the first starts alone: it applies the migrations the others find done
    gateways = [await start(1)]
    gateways.push(...await Promise.all([start(1), start(1)]))
  }, 120_000)

  afterAll(async () => {
    await Promise.all(gateways.map((gateway) => gateway.stop()))
    await embeddings?.close()
    await database?.drop()
  })

  it("hold a rate limit exactly across the six workers, and each instance's /metrics counts what its own workers answered", async () => {
    const before = await Promise.all(gateways.map(async (gateway) => ({ ok: await served(gateway, 200), refused: await served(gateway, 429) })))
    // three times the limit, all at once, a third to each instance
    const answers = await Promise.all(Array.from({ length: 3 * limit }, (_, index) => {
      const instance = index % 3
      return inference(gateways[instance], "first").then((answer) => ({ instance, status: answer.status, text: answer.text }))
    }))
    expect(answers.filter((answer) => answer.status !== 200 && answer.status !== 429)).toEqual([])
    expect(answers.filter((answer) => answer.status === 200)).toHaveLength(limit)
    expect(answers.filter((answer) => answer.status === 429)).toHaveLength(2 * limit)

    for (const [instance, gateway] of gateways.entries()) {
      const mine = answers.filter((answer) => answer.instance === instance)
      expect(await served(gateway, 200) - before[instance].ok).toBe(mine.filter((answer) => answer.status === 200).length)
      expect(await served(gateway, 429) - before[instance].refused).toBe(mine.filter((answer) => answer.status === 429).length)
    }
    // and both workers of every instance served
    for (const gateway of gateways) expect(gateway.log()).toMatch(/worker: 2/)
  }, 60_000)

  it("run each durable task once, whichever instance took it, and lose none while a configuration change rolls out one instance at a time", async () => {
    const texts = ["What is two plus two?", "Name a color.", "Which planet is the largest?"]
    const created = await gateways[0].post("/v1/datasets/golden/datapoints", {
      datapoints: texts.map((text) => ({ type: "chat", function_name: "answer", input: userInput(text), output: [{ type: "text", text: `A: ${text}` }] }))
    })
    expect(created.status, JSON.stringify(created.body)).toBe(200)
    const launch = async (gateway: RunningGateway) => {
      const answer = await gateway.post("/v1/optimization/dicl", {
        function_name: "answer", variant_name: "dicl", embedding_model: "small", dataset_name: "golden", append: true, batch_size: 1, max_concurrency: 1
      })
      expect(answer.status, JSON.stringify(answer.body)).toBe(200)
      return answer.body.task_id as string
    }
    const ended = (gateway: () => RunningGateway, taskId: string) =>
      poll(`task ${taskId} to end`, async () => {
        const answer = await gateway().get(`/v1/optimization/dicl/${taskId}`).catch(() => undefined)
        return answer?.status === 200 && answer.body.status !== "pending" ? answer.body : undefined
      }, { timeoutMs: 90_000, intervalMs: 200 })

    // two tasks launched on each instance, run wherever pg-boss hands them: each ran once
    const first = await Promise.all(gateways.flatMap((gateway) => [launch(gateway), launch(gateway)]))
    for (const taskId of first) {
      const done = await ended(() => gateways[0], taskId)
      expect(done, JSON.stringify(done)).toMatchObject({ status: "completed", result: { examples_written: 3 } })
    }
    const embedded = () => embeddings.requests.reduce((sum, request) => sum + (Array.isArray(request.body.input) ? request.body.input.length : 1), 0)
    expect(embedded()).toBe(first.length * texts.length)

    // the roll-out: slow embeddings keep tasks running while each instance in turn stops (SIGTERM) and starts on the new configuration
    embeddings.delayMs = 150
    try {
      const rolled = await Promise.all(gateways.flatMap((gateway) => [launch(gateway), launch(gateway)]))
      for (let instance = 0; instance < gateways.length; instance++) {
        expect(await gateways[instance].stop()).toBe(0)
        gateways[instance] = await start(2)
        // the new configuration serves: its added function answers
        const added = await gateways[instance].post("/inference", { function_name: "added", input: userInput("hi") })
        expect(added.status, JSON.stringify(added.body)).toBe(200)
      }
      for (const taskId of rolled) {
        expect(await ended(() => gateways[0], taskId)).toMatchObject({ status: "completed", result: { examples_written: 3 } })
      }
    } finally {
      embeddings.delayMs = 0
    }
  }, 240_000)
})
