/**
 * Durable tasks on gateways whose configurations differ, as in a rolling deploy (issue 35): real
 * gateway processes on one Postgres (analytics and relational), fake upstreams speaking their
 * wire formats (OpenAI chat models for GEPA, test/support/gepaFakes.ts; OpenAI embeddings for
 * DICL; OpenAI's Batch API). A gateway whose configuration lacks a task's function or model
 * hands the task back rather than ending it:
 * - beside a gateway that has them, one that has not (started first, and taking GEPA tasks
 *   while the other runs its one at a time) does not end anything: DICL tasks, GEPA tasks and a
 *   batch's background polls all complete, run where the configuration has them;
 * - when the gateway that has them is replaced by one that has not, the tasks it was running
 *   or had queued end in error, saying that no gateway could run them, once the (short) bound
 *   `[gateway.tasks] unrunnable_timeout_s` has passed.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { freshDatabase, type TestDatabase } from "../support/databases.ts"
import { defaultAnswer } from "../support/fakeBatch.ts"
import { type FakeOpenAiBatch, openAiBatchGatewayConfig, startOpenAiBatchFake } from "../support/fakeBatchOpenAi.ts"
import { embeddingModelToml, type FakeEmbeddings, startFakeEmbeddings } from "../support/fakeEmbeddings.ts"
import { type RunningGateway, startGateway } from "../support/gateway.ts"
import { gepaConfig, gepaFiles, type GepaFakeModels, startGepaFakeModels, wordDatapoints } from "../support/gepaFakes.ts"
import { listInferences, observabilityToml, poll } from "../support/observability.ts"

const embedKey = "sk-tasks-configurations"

/** what every gateway here has: the databases' settings, a quick background poll of batches */
const common = (unrunnableTimeoutS?: number) => `
[gateway.batch]
poll_interval_s = 1
${unrunnableTimeoutS === undefined ? "" : `[gateway.tasks]\nunrunnable_timeout_s = ${unrunnableTimeoutS}`}
`

/** the configuration that runs every task here: GEPA's function and models, a DICL function and its embedding model, a batch model */
const fullConfig = (gepa: GepaFakeModels, embeddings: FakeEmbeddings, batch: FakeOpenAiBatch) => `
${gepaConfig(gepa.apiBase)}
${common()}
${embeddingModelToml(embeddings.apiBase)}

[functions.answer]
type = "chat"
[functions.answer.variants.dicl]
type = "chat_completion"
model = "dummy::text"

${openAiBatchGatewayConfig(batch).toml}
[functions.ask]
type = "chat"
[functions.ask.variants.main]
type = "chat_completion"
model = "batch_model"
`

/** a configuration with none of them (a later release that dropped them, say) */
const bareConfig = (unrunnableTimeoutS?: number) => `
${observabilityToml()}
${common(unrunnableTimeoutS)}
`

const userInput = (text: string) => ({ messages: [{ role: "user", content: [{ type: "text", text }] }] })

describe("durable tasks on gateways with different configurations", () => {
  let database: TestDatabase
  let gepa: GepaFakeModels
  let embeddings: FakeEmbeddings
  let batch: FakeOpenAiBatch
  const gateways: Array<RunningGateway> = []

  const env = () => ({
    GATEWAY_ANALYTICS_DB_URL: database.url,
    GATEWAY_RELATIONAL_DB_URL: database.url,
    EMBED_KEY: embedKey,
    ...openAiBatchGatewayConfig(batch).env
  })
  const startFull = async () => {
    const gateway = await startGateway({ config: fullConfig(gepa, embeddings, batch), files: gepaFiles, env: env() })
    gateways.push(gateway)
    return gateway
  }
  const startBare = async (unrunnableTimeoutS?: number) => {
    const gateway = await startGateway({ config: bareConfig(unrunnableTimeoutS), env: env() })
    gateways.push(gateway)
    return gateway
  }

  beforeAll(async () => {
    ;[database, gepa, embeddings, batch] = await Promise.all([
      freshDatabase("postgres"),
      startGepaFakeModels(),
      startFakeEmbeddings(embedKey),
      startOpenAiBatchFake()
    ])
  }, 60_000)

  afterAll(async () => {
    await Promise.all(gateways.filter((gateway) => gateway.process.exitCode === null && gateway.process.signalCode === null).map((gateway) => gateway.stop()))
    await Promise.all([gepa?.close(), embeddings?.close(), batch?.close()])
    await database?.drop()
  })

  const post = async (gateway: RunningGateway, path: string, body: unknown) => {
    const answer = await gateway.post(path, body)
    expect(answer.status, JSON.stringify(answer.body)).toBe(200)
    return answer.body
  }

  /** an optimization task once it is no longer pending, read through `gateway` */
  const ended = (gateway: RunningGateway, path: string) =>
    poll(`${path} to end`, async () => {
      const answer = await gateway.get(path)
      expect(answer.status, JSON.stringify(answer.body)).toBe(200)
      return answer.body.status === "pending" ? undefined : answer.body
    }, { timeoutMs: 60_000, intervalMs: 250 })

  const gepaRequest = (prefix: string, maxIterations = 1) => ({
    function_name: "echo",
    analysis_model: "analyst",
    mutation_model: "mutator",
    dataset_name: "words",
    evaluators: ["exact"],
    initial_variants: ["base"],
    max_iterations: maxIterations,
    seed: 7,
    variant_prefix: prefix
  })

  it("completes DICL tasks, GEPA tasks and a batch's background polls where the configuration has them, beside a gateway without them", async () => {
    // started first, the bare gateway is polling for tasks before the full one
    const bare = await startBare()
    const full = await startFull()
    await post(full, "/v1/datasets/words/datapoints", { datapoints: wordDatapoints(["apple", "banana", "cherry", "damson", "elder", "fig"]) })
    const texts = ["What is two plus two?", "Name a color.", "Which planet is the largest one of all?"]
    await post(full, "/v1/datasets/golden/datapoints", {
      datapoints: texts.map((text) => ({ type: "chat", function_name: "answer", input: userInput(text), output: [{ type: "text", text: `A: ${text}` }] }))
    })

    // the full gateway runs one GEPA task at a time and two DICL tasks: the others wait, and the bare one takes them meanwhile
    const gepaTasks = await Promise.all(["first", "second"].map(async (prefix) => (await post(full, "/v1/optimization/gepa", gepaRequest(prefix))).task_id as string))
    const diclTasks = await Promise.all([1, 2, 3].map(async () =>
      (await post(full, "/v1/optimization/dicl", { function_name: "answer", variant_name: "dicl", embedding_model: "small", dataset_name: "golden" })).task_id as string
    ))
    batch.pollsUntilDone = 1
    const submitted = await post(full, "/batch_inference", {
      function_name: "ask",
      inputs: ["one", "two"].map((text) => ({ messages: [{ role: "user", content: text }] }))
    })

    for (const [index, taskId] of gepaTasks.entries()) {
      const done = await ended(bare, `/v1/optimization/gepa/${taskId}`)
      expect(done.status, JSON.stringify(done)).toBe("completed")
      expect(done.variants[`${["first", "second"][index]}_1`].templates.system.content).toContain("MAGIC")
    }
    for (const taskId of diclTasks) {
      const done = await ended(bare, `/v1/optimization/dicl/${taskId}`)
      expect(done, JSON.stringify(done)).toMatchObject({ status: "completed", result: { examples_written: 3, function_name: "answer", variant_name: "dicl" } })
    }
    expect(embeddings.requests.length).toBeGreaterThanOrEqual(3)

    // no client reads the batch: its background polls store the results
    const stored = await poll("the batch's results to be stored", async () => {
      const found = await listInferences(bare, {
        function_name: "ask",
        filters: { type: "tag", key: "gateway::batch_id", value: submitted.batch_id, comparison_operator: "=" },
        limit: 10
      })
      return found.length === 2 ? found : undefined
    }, { timeoutMs: 60_000, intervalMs: 250 })
    expect(stored.map((inference: any) => inference.output[0].text).sort()).toEqual([defaultAnswer("one"), defaultAnswer("two")])
    const read = await full.get(`/batch_inference/${submitted.batch_id}`)
    expect(read.body.status).toBe("completed")
  }, 150_000)

  it("ends in error the tasks of a gateway replaced by one whose configuration lacks their function, once the bound has passed", async () => {
    const [bare, full] = gateways
    await bare.stop()
    gepa.delayMs = 300
    try {
      // the full gateway runs one task (too long to end while it stops) and queues the other behind it
      const modelCalls = () => [...gepa.calls.values()].reduce((sum, count) => sum + count, 0)
      const callsBefore = modelCalls()
      const running = (await post(full, "/v1/optimization/gepa", gepaRequest("long", 50))).task_id as string
      const queued = (await post(full, "/v1/optimization/gepa", gepaRequest("waiting", 50))).task_id as string
      await poll("a task's model calls", async () => (modelCalls() > callsBefore ? true : undefined), { timeoutMs: 30_000 })

      // the rolling restart: the full gateway stops (its running task is handed back), one without the function takes over
      await full.stop()
      const replacement = await startBare(3)
      const expected = `no gateway whose configuration can run this task took it within 3 s: function "echo" is not configured on the gateway that last tried`
      for (const taskId of [running, queued]) {
        expect(await ended(replacement, `/v1/optimization/gepa/${taskId}`)).toEqual({ status: "error", error: expected })
      }
    } finally {
      gepa.delayMs = 20
    }
  }, 150_000)
})
