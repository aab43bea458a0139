/**
 * Creating the examples of a DICL variant over real HTTP against a real gateway on ClickHouse
 * and on Postgres (the relational database, for the durable task, on Postgres), with a fake
 * OpenAI embeddings upstream (test/support/fakeEmbeddings.ts): a dataset's datapoints embedded in
 * batches (what the upstream received: each input's DICL text), the task read back completed
 * with its progress and result, the examples stored (nearest to an input's vector: that input,
 * with its output) and the embedding calls stored as embedding inferences; append and replace;
 * json examples; stored inferences by query, with their outputs or their demonstrations; a
 * failing embedding provider (the task failed with the provider's error, the examples as they
 * were); the 400s naming the field, unknown tasks, /status, and the 503 without a relational
 * database.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { diclInputText } from "../../src/dicl/examples.ts"
import { freshDatabase, queryDatabase, type TestDatabase } from "../support/databases.ts"
import { embeddingModelToml, type FakeEmbeddings, fakeVector, startFakeEmbeddings } from "../support/fakeEmbeddings.ts"
import { type RunningGateway, startGateway } from "../support/gateway.ts"
import { backends, listInferences, observabilityToml, poll } from "../support/observability.ts"
import { type OpenStore, openStore, run } from "../support/storeFixtures.ts"

const key = "sk-dicl-test"

const config = (good: string, broken: string) => `
${observabilityToml()}
${embeddingModelToml(good)}

[embedding_models.broken]
routing = ["fake"]
[embedding_models.broken.providers.fake]
type = "openai"
model_name = "text-embedding-3-small"
api_base = "${broken}"
api_key_location = "env::EMBED_KEY"

[functions.answer]
type = "chat"
[functions.answer.variants.dicl]
type = "chat_completion"
model = "dummy::hello"

[functions.extract]
type = "json"
output_schema = "answer.json"
[functions.extract.variants.dicl]
type = "chat_completion"
model = "dummy::json"
`

const files = {
  "answer.json": JSON.stringify({ type: "object", properties: { answer: { type: "string" } }, required: ["answer"] })
}

const userInput = (text: string) => ({ messages: [{ role: "user", content: [{ type: "text", text }] }] })
const textOutput = (text: string) => [{ type: "text", text }]

describe.each(backends)("DICL examples over HTTP on %s", (backend) => {
  let good: FakeEmbeddings
  let broken: FakeEmbeddings
  let analytics: TestDatabase
  let relational: TestDatabase
  let gateway: RunningGateway
  let opened: OpenStore

  beforeAll(async () => {
    good = await startFakeEmbeddings(key)
    broken = await startFakeEmbeddings(key)
    broken.failWith = 500
    analytics = await freshDatabase(backend)
    relational = backend === "postgres" ? analytics : await freshDatabase("postgres")
    gateway = await startGateway({
      config: config(good.apiBase, broken.apiBase),
      files,
      env: { GATEWAY_ANALYTICS_DB_URL: analytics.url, GATEWAY_RELATIONAL_DB_URL: relational.url, EMBED_KEY: key }
    })
    opened = await openStore(backend, analytics.url)
  }, 60_000)

  afterAll(async () => {
    await opened?.close()
    await gateway?.stop()
    await good?.close()
    await broken?.close()
    await analytics?.drop()
    if (relational !== analytics) await relational?.drop()
  })

  const createDatapoints = async (dataset: string, datapoints: ReadonlyArray<unknown>): Promise<Array<string>> => {
    const answer = await gateway.post(`/v1/datasets/${dataset}/datapoints`, { datapoints })
    expect(answer.status, JSON.stringify(answer.body)).toBe(200)
    return answer.body.ids
  }

  /** queues a task, expecting a 200; its id */
  const start = async (body: Record<string, unknown>): Promise<string> => {
    const answer = await gateway.post("/v1/optimization/dicl", body)
    expect(answer.status, JSON.stringify(answer.body)).toBe(200)
    expect(Object.keys(answer.body)).toEqual(["task_id"])
    return answer.body.task_id
  }

  /** the task once it ended */
  const ended = (taskId: string) =>
    poll(`task ${taskId} to end`, async () => {
      const answer = await gateway.get(`/v1/optimization/dicl/${taskId}`)
      expect(answer.status, JSON.stringify(answer.body)).toBe(200)
      return answer.body.status === "pending" ? undefined : answer.body
    }, { timeoutMs: 25_000, intervalMs: 200 })

  const nearest = (functionName: string, text: string, k = 10) =>
    run(opened.store.dicl.nearest("default", { functionName, variantName: "dicl", embedding: fakeVector(diclInputText(userInput(text))), k }))

  const count = (functionName: string) => run(opened.store.dicl.count("default", functionName, "dicl"))

  const expectRefused = async (body: Record<string, unknown>, field: RegExp) => {
    const answer = await gateway.post("/v1/optimization/dicl", body)
    expect(answer.status, JSON.stringify(answer.body)).toBe(400)
    expect(answer.body.error).toMatch(field)
  }

  it("says in /status how examples are ranked", async () => {
    const status = await gateway.get("/status")
    expect(status.body.background_tasks).toBe("pg-boss")
    if (backend === "clickhouse") {
      expect(status.body.observability.vector_search).toBe("clickhouse")
    } else {
      const pgvector = await queryDatabase(analytics, "SELECT 1 FROM pg_available_extensions WHERE name = 'vector'")
      expect(status.body.observability.vector_search).toBe(pgvector.length > 0 ? "pgvector" : "float_array")
    }
  })

  it("embeds a dataset's datapoints in batches as a task, and stores them as the variant's examples", async () => {
    // lengths differ, so that the fake's vectors do
    const texts = ["What is two plus two?", "Name a color.", "Which planet is the largest one of all?"]
    await createDatapoints("golden", [
      ...texts.map((text, i) => ({ type: "chat", function_name: "answer", input: userInput(text), output: textOutput(`answer ${i}`) })),
      // no output: no example
      { type: "chat", function_name: "answer", input: userInput("unanswered") },
      // another function's
      { type: "json", function_name: "extract", input: userInput("elsewhere"), output: { answer: "x" } }
    ])
    const before = good.requests.length
    const taskId = await start({ function_name: "answer", variant_name: "dicl", embedding_model: "small", dataset_name: "golden", batch_size: 2 })

    const task = await ended(taskId)
    expect(task).toEqual({
      task_id: taskId,
      status: "completed",
      progress: { embedded: 3, total: 3 },
      result: { examples_written: 3, function_name: "answer", variant_name: "dicl", embedding_model: "small" }
    })

    // two embedding calls of at most 2 inputs, each input's DICL text once
    const calls = good.requests.slice(before)
    expect(calls.map((call) => call.body.input.length).sort()).toEqual([1, 2])
    expect(calls.every((call) => call.path === "/v1/embeddings" && call.body.model === "text-embedding-3-small")).toBe(true)
    expect(calls.flatMap((call) => call.body.input).sort()).toEqual(texts.map((text) => diclInputText(userInput(text))).sort())

    expect(await count("answer")).toBe(3)
    for (const [i, text] of texts.entries()) {
      const [first] = await nearest("answer", text)
      expect(first.input).toEqual(userInput(text))
      expect(first.output).toEqual(textOutput(`answer ${i}`))
      expect(first.distance).toBeLessThan(1e-6)
    }
    expect(await nearest("answer", texts[0], 2)).toHaveLength(2)

    // each embedding call is stored as an embedding inference
    const table = backend === "clickhouse" ? "EmbeddingInference" : "embedding_inference"
    await poll("the embedding calls to be stored", async () => {
      const rows = await queryDatabase(analytics, `SELECT input FROM ${table}`)
      const inputs = rows.flatMap((row) => typeof row.input === "string" ? JSON.parse(row.input) : row.input)
      return texts.every((text) => inputs.includes(diclInputText(userInput(text)))) ? true : undefined
    })
  })

  it("appends examples, or replaces them", async () => {
    await createDatapoints("more", [{ type: "chat", function_name: "answer", input: userInput("Is the sky blue?"), output: textOutput("yes") }])
    const appended = await ended(await start({ function_name: "answer", variant_name: "dicl", embedding_model: "small", dataset_name: "more", append: true }))
    expect(appended.result.examples_written).toBe(1)
    expect(await count("answer")).toBe(4)
    expect((await nearest("answer", "Is the sky blue?"))[0].output).toEqual(textOutput("yes"))

    const replaced = await ended(await start({ function_name: "answer", variant_name: "dicl", embedding_model: "small", dataset_name: "more" }))
    expect(replaced.status).toBe("completed")
    expect(await count("answer")).toBe(1)
    const [only] = await nearest("answer", "What is two plus two?")
    expect(only.output).toEqual(textOutput("yes"))
  })

  it("takes json datapoints with their output as JSON text, and caps the examples at max_examples", async () => {
    await createDatapoints("json", [
      { type: "json", function_name: "extract", input: userInput("Say hello."), output: { answer: "hello" } },
      { type: "json", function_name: "extract", input: userInput("Say goodbye, please."), output: { answer: "goodbye" } }
    ])
    const all = await ended(await start({ function_name: "extract", variant_name: "dicl", embedding_model: "small", dataset_name: "json" }))
    expect(all.result.examples_written).toBe(2)
    const [hello] = await nearest("extract", "Say hello.")
    expect(hello.output).toEqual({ raw: JSON.stringify({ answer: "hello" }), parsed: { answer: "hello" } })

    const capped = await ended(await start({ function_name: "extract", variant_name: "dicl", embedding_model: "small", dataset_name: "json", max_examples: 1 }))
    expect(capped.result.examples_written).toBe(1)
    expect(await count("extract")).toBe(1)
  })

  it("takes stored inferences by query, with their own outputs or their latest demonstrations", async () => {
    const ids: Array<string> = []
    for (const text of ["First question?", "A second question, longer?", "Third"]) {
      const answer = await gateway.post("/inference", { function_name: "answer", variant_name: "dicl", input: userInput(text), tags: { source: "dicl-test" } })
      expect(answer.status, JSON.stringify(answer.body)).toBe(200)
      ids.push(answer.body.inference_id)
    }
    await poll("the inferences to be stored", async () => {
      const stored = await listInferences(gateway, { function_name: "answer", filters: { type: "tag", key: "source", value: "dicl-test" } })
      return stored.length === 3 ? stored : undefined
    })
    const tagged = { type: "tag", key: "source", value: "dicl-test" }
    const own = await ended(await start({ function_name: "answer", variant_name: "dicl", embedding_model: "small", inference_query: { filters: tagged } }))
    expect(own.result.examples_written).toBe(3)
    const [first] = await nearest("answer", "First question?")
    expect(first.input).toEqual(userInput("First question?"))
    expect(first.output).toEqual(textOutput("Hello from the dummy provider. This answer is always the same."))

    const feedback = await gateway.post("/feedback", { metric_name: "demonstration", inference_id: ids[1], value: "A demonstrated answer." })
    expect(feedback.status, JSON.stringify(feedback.body)).toBe(200)
    const demonstrated = await poll("the demonstration to be read", async () => {
      const answer = await gateway.post("/v1/optimization/dicl", {
        function_name: "answer",
        variant_name: "dicl",
        embedding_model: "small",
        inference_query: { filters: tagged, output_source: "demonstration" }
      })
      return answer.status === 200 ? answer.body.task_id as string : undefined
    })
    expect((await ended(demonstrated)).result.examples_written).toBe(1)
    const [only] = await nearest("answer", "First question?")
    expect(only.input).toEqual(userInput("A second question, longer?"))
    expect(only.output).toEqual(textOutput("A demonstrated answer."))
    expect(await count("answer")).toBe(1)
  })

  it("fails the task with the embedding provider's error, leaving the examples as they were", async () => {
    const before = await count("answer")
    expect(before).toBeGreaterThan(0)
    const taskId = await start({ function_name: "answer", variant_name: "dicl", embedding_model: "broken", dataset_name: "golden" })
    const task = await ended(taskId)
    expect(task.status).toBe("error")
    expect(task.error).toMatch(/the fake is failing on purpose/)
    expect(task.progress).toEqual({ embedded: 0, total: 3 })
    expect(task.result).toBeUndefined()
    expect(await count("answer")).toBe(before)
    expect(broken.requests.length).toBeGreaterThan(0)
  })

  it("answers 400 naming the field for a request that cannot make examples", async () => {
    const base = { function_name: "answer", variant_name: "dicl", embedding_model: "small", dataset_name: "golden" }
    await expectRefused({ ...base, function_name: "nope" }, /^function_name: unknown function "nope"/)
    await expectRefused({ ...base, variant_name: "nope" }, /^variant_name: .*"nope"/)
    const { embedding_model: _, ...noModel } = base
    await expectRefused(noModel, /^embedding_model: variant "dicl" configures no embedding model/)
    await expectRefused({ ...base, embedding_model: "not a model" }, /^embedding_model: /)
    await expectRefused({ ...base, embedding_model: "gateway::embedding_model_name::nope" }, /^embedding_model: unknown embedding model "nope"/)
    await expectRefused({ ...base, inference_query: {} }, /^dataset_name: give one source/)
    const { dataset_name: __, ...noSource } = base
    await expectRefused(noSource, /^dataset_name: give the examples' source/)
    await expectRefused({ ...base, dataset_name: "unknown_dataset" }, /^dataset_name: unknown dataset "unknown_dataset"/)
    await expectRefused({ ...base, dataset_name: "bad name!" }, /^dataset_name: /)
    await createDatapoints("unanswered", [{ type: "chat", function_name: "answer", input: userInput("?") }])
    await expectRefused({ ...base, dataset_name: "unanswered" }, /^dataset_name: dataset "unanswered" holds no live datapoint of function "answer" with an output/)
    await expectRefused({ ...noSource, inference_query: { filters: { type: "tag", key: "source", value: "nothing" } } }, /^inference_query: no stored inference/)
    await expectRefused({ ...noSource, inference_query: { filters: { type: "nope" } } }, /^inference_query\.filters/)
    await expectRefused({ ...noSource, inference_query: { filters: { type: "boolean_metric", metric_name: "nope", value: true } } }, /^inference_query\.filters/)
    await expectRefused({ ...noSource, inference_query: { output_source: "none" } }, /inference_query\.output_source/)
    await expectRefused({ ...base, batch_size: 0 }, /^batch_size/)
    await expectRefused({ ...base, max_concurrency: 1000 }, /^max_concurrency/)
    await expectRefused({ ...base, surprise: true }, /surprise: unknown field/)
  })

  it("answers 404 for a task that is not a DICL task", async () => {
    for (const id of ["nope", "0196b5c0-0000-7000-8000-000000000000"]) {
      const answer = await gateway.get(`/v1/optimization/dicl/${id}`)
      expect(answer.status).toBe(404)
      expect(answer.body.error).toMatch(/unknown DICL task/)
    }
  })
})

describe("DICL examples without a relational database", () => {
  let analytics: TestDatabase
  let gateway: RunningGateway

  beforeAll(async () => {
    analytics = await freshDatabase("postgres")
    gateway = await startGateway({
      config: config("http://127.0.0.1:9/v1/", "http://127.0.0.1:9/v1/"),
      files,
      env: { GATEWAY_ANALYTICS_DB_URL: analytics.url, GATEWAY_RELATIONAL_DB_URL: undefined, EMBED_KEY: key }
    })
  }, 60_000)

  afterAll(async () => {
    await gateway?.stop()
    await analytics?.drop()
  })

  it("answers 503 naming GATEWAY_RELATIONAL_DB_URL", async () => {
    const created = await gateway.post("/v1/optimization/dicl", { function_name: "answer", variant_name: "dicl", embedding_model: "small", dataset_name: "golden" })
    expect(created.status).toBe(503)
    expect(created.body.error).toMatch(/GATEWAY_RELATIONAL_DB_URL/)
    const read = await gateway.get("/v1/optimization/dicl/0196b5c0-0000-7000-8000-000000000000")
    expect(read.status).toBe(503)
    expect(read.body.error).toMatch(/GATEWAY_RELATIONAL_DB_URL/)
  })
})
