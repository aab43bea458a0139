/**
 * Workspaces, the read side of batches, DICL, GEPA and the UI's Overview (issue 39), over HTTP
 * with two workspaces' keys on a gateway with authentication on, with ClickHouse and with
 * Postgres as the analytics database: another workspace's batch, DICL task and GEPA task answer
 * exactly as an unknown id (get, cancel, export, and the command line's export); DICL examples
 * of one variant written in two workspaces are read and replaced apart (a replace in B leaves A's
 * examples); the Overview of B does not count A's inferences.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type Answer, type ApiKey, call, createKey } from "../support/access.ts"
import { freshDatabase, queryDatabase, type TestDatabase } from "../support/databases.ts"
import { embeddingModelToml, type FakeEmbeddings, startFakeEmbeddings } from "../support/fakeEmbeddings.ts"
import { type RunningGateway, runGateway, startGateway } from "../support/gateway.ts"
import { gepaConfig, gepaFiles, type GepaFakeModels, startGepaFakeModels, wordDatapoints } from "../support/gepaFakes.ts"
import { backends, poll } from "../support/observability.ts"
import { type OpenStore, openStore, run } from "../support/storeFixtures.ts"

const embedKey = "sk-workspaces-test"

const config = (gepaApiBase: string, embeddings: string) => `
${gepaConfig(gepaApiBase)}
[gateway.auth]
enabled = true

[gateway.batch]
poll_interval_s = 0

${embeddingModelToml(embeddings)}

[models.text]
routing = ["dummy"]
[models.text.providers.dummy]
type = "dummy"
model_name = "hello"

[functions.answer]
type = "chat"
[functions.answer.variants.dicl]
type = "chat_completion"
model = "text"
`

const userInput = (text: string) => ({ messages: [{ role: "user", content: [{ type: "text", text }] }] })
const answerDatapoints = (texts: ReadonlyArray<string>) =>
  texts.map((text) => ({ type: "chat", function_name: "answer", input: userInput(text), output: [{ type: "text", text: `re: ${text}` }] }))

/** a random id of the shape of `id`'s (a UUID), which nothing has */
const randomUuid = () => crypto.randomUUID()

/** `cross` answers exactly as `unknown` does: same status, same body once each names its own id */
const expectSameAsUnknown = (cross: Answer, crossId: string, unknown: Answer, unknownId: string) => {
  expect(cross.status, cross.text).toBe(unknown.status)
  expect(cross.status).toBe(404)
  expect(cross.text.replaceAll(crossId, "<id>")).toBe(unknown.text.replaceAll(unknownId, "<id>"))
}

describe.each(backends)("workspaces: batches, DICL, GEPA and the Overview on %s", (backend) => {
  let analytics: TestDatabase
  let relational: TestDatabase
  let gateway: RunningGateway
  let fake: GepaFakeModels
  let embeddings: FakeEmbeddings
  let opened: OpenStore
  let keyA: ApiKey
  let keyB: ApiKey

  beforeAll(async () => {
    ;[analytics, fake, embeddings] = await Promise.all([freshDatabase(backend), startGepaFakeModels(), startFakeEmbeddings(embedKey)])
    relational = backend === "postgres" ? analytics : await freshDatabase("postgres")
    // admins: the Overview and the UI's export are UI routes
    keyA = await createKey(relational.url, ["--admin", "--workspace", "team-a"])
    keyB = await createKey(relational.url, ["--admin", "--workspace", "team-b"])
    gateway = await startGateway({
      config: config(fake.apiBase, embeddings.apiBase),
      files: gepaFiles,
      env: { GATEWAY_ANALYTICS_DB_URL: analytics.url, GATEWAY_RELATIONAL_DB_URL: relational.url, EMBED_KEY: embedKey }
    })
    opened = await openStore(backend, analytics.url)
  }, 90_000)

  afterAll(async () => {
    await opened?.close()
    await gateway?.stop()
    await fake?.close()
    await embeddings?.close()
    await analytics?.drop()
    if (relational !== analytics) await relational?.drop()
  })

  const as = (key: ApiKey) => ({
    get: (route: string) => call(gateway, "GET", route, { key }),
    post: (route: string, body: unknown) => call(gateway, "POST", route, { key, body }),
    delete: (route: string) => call(gateway, "DELETE", route, { key })
  })

  const ok = (answer: Answer) => {
    expect(answer.status, answer.text).toBe(200)
    return answer.body
  }

  it("another workspace's batch is an unknown batch, on its status and on its inferences' route", async () => {
    const { batch_id: batchId, inference_ids: [inferenceId] } = ok(await as(keyA).post("/batch_inference", {
      function_name: "answer",
      inputs: [userInput("batched one"), userInput("batched two")]
    }))
    const mine = ok(await as(keyA).get(`/batch_inference/${batchId}`))
    expect(mine.status).toBe("completed")
    expect(ok(await as(keyA).get(`/batch_inference/${batchId}/inference/${inferenceId}`)).inferences).toHaveLength(1)

    const unknownId = randomUuid()
    expectSameAsUnknown(await as(keyB).get(`/batch_inference/${batchId}`), batchId, await as(keyB).get(`/batch_inference/${unknownId}`), unknownId)
    expectSameAsUnknown(
      await as(keyB).get(`/batch_inference/${batchId}/inference/${inferenceId}`),
      batchId,
      await as(keyB).get(`/batch_inference/${unknownId}/inference/${inferenceId}`),
      unknownId
    )
    // still A's, as it was
    expect(ok(await as(keyA).get(`/batch_inference/${batchId}`))).toEqual(mine)
  })

  it("DICL: each workspace has its own examples of a shared variant; a replace in B leaves A's; A's task is unknown to B", async () => {
    const diclTask = async (key: ApiKey, dataset: string) => {
      const taskId: string = ok(await as(key).post("/v1/optimization/dicl", {
        function_name: "answer",
        variant_name: "dicl",
        embedding_model: "small",
        dataset_name: dataset
      })).task_id
      const done = await poll(`DICL task ${taskId}`, async () => {
        const body = ok(await as(key).get(`/v1/optimization/dicl/${taskId}`))
        return body.status === "pending" ? undefined : body
      }, { timeoutMs: 30_000, intervalMs: 200 })
      expect(done.status, JSON.stringify(done)).toBe("completed")
      return taskId
    }
    ok(await as(keyA).post("/v1/datasets/dicl_a/datapoints", { datapoints: answerDatapoints(["a one", "a two"]) }))
    ok(await as(keyB).post("/v1/datasets/dicl_b/datapoints", { datapoints: answerDatapoints(["b one"]) }))
    const taskA = await diclTask(keyA, "dicl_a")
    expect(await run(opened.store.dicl.count("team-a", "answer", "dicl"))).toBe(2)
    // B replaces its examples twice: the second replace deletes B's first ones, never A's
    await diclTask(keyB, "dicl_b")
    await diclTask(keyB, "dicl_b")
    const table = backend === "clickhouse" ? "DiclExample" : "dicl_example"
    await poll("B's replaced examples to be deleted", async () => {
      const rows = await queryDatabase(analytics, `SELECT count(*) AS n FROM ${table} WHERE function_name = 'answer'`)
      return Number(rows[0].n) === 3 ? true : undefined
    }, { timeoutMs: 20_000 })
    expect(await run(opened.store.dicl.count("team-a", "answer", "dicl"))).toBe(2)
    expect(await run(opened.store.dicl.count("team-b", "answer", "dicl"))).toBe(1)
    expect(await run(opened.store.dicl.count("default", "answer", "dicl"))).toBe(0)

    const unknownId = randomUuid()
    expectSameAsUnknown(
      await as(keyB).get(`/v1/optimization/dicl/${taskA}`),
      taskA,
      await as(keyB).get(`/v1/optimization/dicl/${unknownId}`),
      unknownId
    )
    expect(ok(await as(keyA).get(`/v1/optimization/dicl/${taskA}`)).status).toBe("completed")
  })

  it("GEPA: another workspace's task is unknown to get, cancel and export (HTTP and command line), and is not cancelled", async () => {
    ok(await as(keyA).post("/v1/datasets/words/datapoints", { datapoints: wordDatapoints(["apple", "banana", "cherry", "damson"]) }))
    const taskId: string = ok(await as(keyA).post("/v1/optimization/gepa", {
      function_name: "echo",
      analysis_model: "analyst",
      mutation_model: "mutator",
      dataset_name: "words",
      evaluators: ["exact"],
      initial_variants: ["base"],
      max_iterations: 1,
      seed: 7
    })).task_id
    const unknownId = randomUuid()
    const b = as(keyB)
    expectSameAsUnknown(await b.get(`/v1/optimization/gepa/${taskId}`), taskId, await b.get(`/v1/optimization/gepa/${unknownId}`), unknownId)
    expectSameAsUnknown(await b.delete(`/v1/optimization/gepa/${taskId}`), taskId, await b.delete(`/v1/optimization/gepa/${unknownId}`), unknownId)

    // A's task runs on, uncancelled, to its end
    const done = await poll(`GEPA task ${taskId}`, async () => {
      const body = ok(await as(keyA).get(`/v1/optimization/gepa/${taskId}`))
      return body.status === "pending" ? undefined : body
    }, { timeoutMs: 60_000, intervalMs: 250 })
    expect(done.status, JSON.stringify(done)).toBe("completed")

    expectSameAsUnknown(
      await b.get(`/v1/ui/optimization/gepa/${taskId}/export`),
      taskId,
      await b.get(`/v1/ui/optimization/gepa/${unknownId}/export`),
      unknownId
    )
    expect(ok(await as(keyA).get(`/v1/ui/optimization/gepa/${taskId}/export`)).task_id).toBe(taskId)

    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "workspaces-export-"))
    try {
      // one at a time: each is a process of its own on a shared machine
      const exportAs = (id: string, ...workspace: Array<string>) =>
        runGateway(["optimize", "export", id, "--dir", dir, ...workspace], { env: { GATEWAY_RELATIONAL_DB_URL: relational.url }, timeoutMs: 60_000 })
      const fromB = await exportAs(taskId, "--workspace", "team-b")
      const unknown = await exportAs(unknownId, "--workspace", "team-b")
      const byDefault = await exportAs(taskId)
      const badName = await exportAs(taskId, "--workspace", "team a")
      const fromA = await exportAs(taskId, "--workspace", "team-a")
      expect(fromB.code).toBe(1)
      // the message, after the start-up's log lines
      const lastLine = (text: string) => text.trim().split("\n").at(-1)
      expect(lastLine(fromB.stderr)?.replaceAll(taskId, "<id>")).toBe(lastLine(unknown.stderr)?.replaceAll(unknownId, "<id>"))
      expect(fromB.stderr).toMatch(/unknown GEPA task/)
      expect(byDefault.code).toBe(1)
      expect(byDefault.stderr).toMatch(/unknown GEPA task/)
      expect(badName.code).toBe(1)
      expect(badName.stderr).toContain(`--workspace: "team a" is not a workspace name`)
      expect(fromA.code, fromA.stderr).toBe(0)
      expect(fromA.stdout.trim().split("\n")[0]).toBe(path.join(dir, "gateway.toml"))
    } finally {
      fs.rmSync(dir, { recursive: true, force: true })
    }
  }, 180_000)

  it("the Overview of B does not count A's inferences", async () => {
    ok(await as(keyA).post("/inference", { function_name: "answer", input: userInput("counted in A") }))
    const overviewOf = (key: ApiKey) => as(key).get("/v1/ui/overview?function_name=answer")
    const a = await poll("A's inferences in A's Overview", async () => {
      const body = ok(await overviewOf(keyA))
      return body.total_inferences >= 3 ? body : undefined
    })
    expect(a.series.length).toBeGreaterThan(0)
    const b = ok(await overviewOf(keyB))
    expect(b.total_inferences).toBe(0)
    expect(b.series).toEqual([])
    expect(b.models).toEqual([])
    const all = ok(await as(keyB).get("/v1/ui/overview"))
    expect(all.total_inferences).toBe(0)
    expect(all.functions.every((fn: any) => fn.inferences === 0)).toBe(true)
  })
})
