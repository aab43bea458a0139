/**
 * GEPA end to end over HTTP on a real gateway (Postgres as both databases), against a fake
 * OpenAI server whose models are deterministic by name: the task model repeats the word it is
 * asked for only when its system prompt holds the phrase MAGIC (which the initial template
 * lacks), the analyst says so, and the mutator proposes a template with the phrase. GEPA must
 * return a variant holding it, whose validation score beats the initial one, with statistics
 * that match the stored feedback; the task's inferences are tagged; the fake never sees more
 * than max_concurrency requests at once; a seed reproduces the split; a model that keeps
 * failing (three iterations in a row, or every iteration of a shorter run) ends the task in
 * error; a cancel stops a running task's model calls; the 400s; and 503 without a relational
 * database.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { freshDatabase, type TestDatabase } from "../support/databases.ts"
import { rawRequest, runGateway, type RunningGateway, startGateway } from "../support/gateway.ts"
import { gepaConfig as config, gepaFiles as files, type GepaFakeModels, startGepaFakeModels, wordDatapoints } from "../support/gepaFakes.ts"
import { listInferences, poll } from "../support/observability.ts"

const words = ["apple", "banana", "cherry", "damson", "elder", "fig"]

describe("GEPA over HTTP", () => {
  let database: TestDatabase
  let fake: GepaFakeModels
  let gateway: RunningGateway

  beforeAll(async () => {
    ;[database, fake] = await Promise.all([freshDatabase("postgres"), startGepaFakeModels()])
    gateway = await startGateway({
      config: config(fake.apiBase),
      files,
      env: { GATEWAY_ANALYTICS_DB_URL: database.url, GATEWAY_RELATIONAL_DB_URL: database.url }
    })
    const created = await gateway.post("/v1/datasets/words/datapoints", {
      datapoints: wordDatapoints(words)
    })
    expect(created.status, JSON.stringify(created.body)).toBe(200)
  }, 60_000)

  afterAll(async () => {
    await gateway?.stop()
    await fake?.close()
    await database?.drop()
  })

  const launch = async (body: Record<string, unknown>): Promise<string> => {
    const answer = await gateway.post("/v1/optimization/gepa", body)
    expect(answer.status, JSON.stringify(answer.body)).toBe(200)
    return answer.body.task_id
  }

  const ended = (taskId: string) =>
    poll(`GEPA task ${taskId} to end`, async () => {
      const answer = await gateway.get(`/v1/optimization/gepa/${taskId}`)
      expect(answer.status, JSON.stringify(answer.body)).toBe(200)
      return answer.body.status === "pending" ? undefined : answer.body
    }, { timeoutMs: 60_000, intervalMs: 250 })

  const base = { function_name: "echo", analysis_model: "analyst", mutation_model: "mutator", dataset_name: "words", evaluators: ["exact"] }

  it("finds a template with the phrase the task model needs, and reports statistics that match the stored feedback", async () => {
    fake.maxInFlight = 0
    const taskId = await launch({ ...base, initial_variants: ["base"], max_iterations: 2, seed: 7, max_concurrency: 2, variant_prefix: "evolved" })
    const done = await ended(taskId)
    expect(done.status, JSON.stringify(done)).toBe("completed")
    const names = Object.keys(done.variants)
    expect(names).toEqual(["evolved_1"])
    const variant = done.variants.evolved_1
    expect(variant).toMatchObject({ type: "chat_completion", model: "task" })
    expect(variant.templates.system.content).toContain("MAGIC")
    // the validation half of six datapoints
    expect(done.statistics.base.exact).toEqual({ mean: 0, stdev: 0, count: 3 })
    expect(done.statistics.evolved_1.exact).toEqual({ mean: 1, stdev: 0, count: 3 })
    expect(fake.maxInFlight).toBeLessThanOrEqual(2)
    expect(fake.maxInFlight).toBeGreaterThan(0)

    // every inference it made is stored, tagged with the task; the new variant's validation scores are its feedback
    const tagged = await poll("the task's inferences", async () => {
      const listed = await listInferences(gateway, {
        function_name: "echo",
        filters: { type: "tag", key: "gateway::optimization_task_id", value: taskId, comparison_operator: "=" },
        limit: 100
      })
      return listed.length >= 3 + 2 * 3 ? listed : undefined
    })
    const byVariant = (name: string) => tagged.filter((inference: any) => inference.variant_name === name)
    expect(byVariant("base").length).toBeGreaterThanOrEqual(3)
    expect(byVariant("evolved_1").length).toBeGreaterThanOrEqual(3)
    for (const inference of tagged) expect(inference.tags["gateway::gepa_iteration"]).toMatch(/^\d+$/)
    const analyses = await listInferences(gateway, {
      function_name: "gateway::optimization::gepa::analyze",
      filters: { type: "tag", key: "gateway::optimization_task_id", value: taskId, comparison_operator: "=" },
      limit: 100
    })
    expect(analyses.length).toBeGreaterThan(0)
    const validated = await poll("the new variant's feedback", async () => {
      const listed = await listInferences(gateway, {
        function_name: "echo",
        variant_name: "evolved_1",
        filters: {
          type: "and",
          children: [
            { type: "tag", key: "gateway::optimization_task_id", value: taskId, comparison_operator: "=" },
            { type: "boolean_metric", metric_name: "gateway::function_name::echo::evaluator_name::exact", value: true }
          ]
        },
        limit: 100
      })
      return listed.length >= 3 ? listed : undefined
    })
    expect(validated.length).toBeGreaterThanOrEqual(3)
  })

  it("exports the completed task's variants as configuration that a gateway loads and serves", async () => {
    const taskId = await launch({ ...base, initial_variants: ["base"], max_iterations: 1, seed: 7, variant_prefix: "exported" })
    expect((await ended(taskId)).status).toBe("completed")
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "gepa-export-"))
    try {
      const exported = await runGateway(["optimize", "export", taskId, "--dir", dir], { env: { GATEWAY_RELATIONAL_DB_URL: database.url } })
      expect(exported.code, exported.stderr).toBe(0)
      const written = exported.stdout.trim().split("\n")
      expect(written[0]).toBe(path.join(dir, "gateway.toml"))
      const exportedFiles = Object.fromEntries(written.slice(1).map((file) => [path.relative(dir, file), fs.readFileSync(file, "utf8")]))
      expect(Object.values(exportedFiles).join("")).toContain("MAGIC")
      const served = await startGateway({ config: config(fake.apiBase) + "\n" + fs.readFileSync(written[0], "utf8"), files: { ...files, ...exportedFiles } })
      try {
        const answer = await served.post("/inference", {
          function_name: "echo",
          variant_name: "exported_1",
          input: { messages: [{ role: "user", content: [{ type: "text", text: "Repeat: kiwi" }] }] }
        })
        expect(answer.status, JSON.stringify(answer.body)).toBe(200)
        expect(answer.body.content).toEqual([{ type: "text", text: "kiwi" }])
      } finally {
        await served.stop()
      }
      const unknown = await runGateway(["optimize", "export", "0196b5c0-0000-7000-8000-000000000000", "--dir", dir], { env: { GATEWAY_RELATIONAL_DB_URL: database.url } })
      expect(unknown.code).toBe(1)
      expect(unknown.stderr).toMatch(/unknown GEPA task/)
    } finally {
      fs.rmSync(dir, { recursive: true, force: true })
    }
  })

  it("splits and samples the same way for the same seed", async () => {
    const before = fake.calls.get("analyst") ?? 0
    const first = await ended(await launch({ ...base, initial_variants: ["base"], max_iterations: 1, seed: 11, variant_prefix: "again_a" }))
    const second = await ended(await launch({ ...base, initial_variants: ["base"], max_iterations: 1, seed: 11, variant_prefix: "again_b" }))
    expect(first.status).toBe("completed")
    expect(second.statistics.base).toEqual(first.statistics.base)
    expect(second.statistics.again_b_1).toEqual(first.statistics.again_a_1)
    // one iteration each, analysing the whole training half (three datapoints: fewer than batch_size)
    expect((fake.calls.get("analyst") ?? 0) - before).toBe(2 * 3)
  })

  it("ends in error when the mutation model keeps failing", async () => {
    fake.failing.add("mutator")
    const before = fake.calls.get("mutator") ?? 0
    try {
      const done = await ended(await launch({ ...base, initial_variants: ["base"], max_iterations: 5, seed: 3 }))
      expect(done).toEqual({ status: "error", error: expect.stringMatching(/the mutation model failed: .*mutator is down.*\(3 iterations in a row\)/) })
      // three iterations, each calling it twice (the built-in variant retries once); the task was not run again
      expect((fake.calls.get("mutator") ?? 0) - before).toBe(6)
    } finally {
      fake.failing.delete("mutator")
    }
  })

  it("ends in error when every inference of the initial variants fails", async () => {
    // words no earlier task asked for: their answers are not in the cache
    const created = await gateway.post("/v1/datasets/unseen/datapoints", {
      datapoints: wordDatapoints(["grape", "hazel"])
    })
    expect(created.status).toBe(200)
    fake.failing.add("task")
    const before = fake.calls.get("task") ?? 0
    try {
      const done = await ended(await launch({ ...base, dataset_name: "unseen", initial_variants: ["base"], max_iterations: 1 }))
      expect(done.status).toBe("error")
      expect(done.error).toMatch(/every inference of the initial variants failed.*task is down/)
      // the one validation datapoint, once: a hopeless start is not run again
      expect((fake.calls.get("task") ?? 0) - before).toBe(1)
    } finally {
      fake.failing.delete("task")
    }
  })

  it("ends in error with the model's failure when the mutation model failed on every iteration of a run shorter than three", async () => {
    fake.failing.add("mutator")
    try {
      const done = await ended(await launch({ ...base, initial_variants: ["base"], max_iterations: 2, seed: 5 }))
      expect(done).toEqual({ status: "error", error: expect.stringMatching(/^the mutation model failed: .*mutator is down.*\(on every one of the 2 iterations\)$/) })
    } finally {
      fake.failing.delete("mutator")
    }
  })

  it("cancels a running task: its status becomes error, cancelled, and no model call starts once the cancel answered", async () => {
    const modelCalls = () => [...fake.calls.values()].reduce((sum, count) => sum + count, 0)
    fake.delayMs = 400
    try {
      const before = modelCalls()
      const taskId = await launch({ ...base, initial_variants: ["base"], max_iterations: 50, batch_size: 2, seed: 13 })
      await poll("the task's first model calls", async () => (modelCalls() > before ? true : undefined), { timeoutMs: 30_000 })
      const cancelled = await rawRequest(`${gateway.url}/v1/optimization/gepa/${taskId}`, { method: "DELETE" })
      expect(cancelled.status, cancelled.text).toBe(200)
      expect(JSON.parse(cancelled.text)).toEqual({ status: "error", error: "cancelled" })
      // the calls in flight finish (or are cut off); none starts after them
      await poll("the calls in flight to end", async () => (fake.inFlight === 0 ? true : undefined), { timeoutMs: 10_000 })
      const settled = modelCalls()
      // longer than a call takes: one started meanwhile would be counted, and in flight
      await new Promise((resolve) => setTimeout(resolve, 3 * fake.delayMs))
      expect(modelCalls()).toBe(settled)
      expect(fake.inFlight).toBe(0)
      expect(await ended(taskId)).toEqual({ status: "error", error: "cancelled" })
    } finally {
      fake.delayMs = 20
    }
  })


  it("answers 400 naming the field for a request that cannot run", async () => {
    const refused = async (body: Record<string, unknown>, pattern: RegExp) => {
      const answer = await gateway.post("/v1/optimization/gepa", { ...base, max_iterations: 1, ...body })
      expect(answer.status, JSON.stringify(answer.body)).toBe(400)
      expect(answer.body.error).toMatch(pattern)
    }
    await refused({ function_name: "nope" }, /^function_name: unknown function "nope"/)
    await refused({ analysis_model: "nope" }, /^analysis_model: unknown model "nope"/)
    await refused({ mutation_model: "nope" }, /^mutation_model: unknown model "nope"/)
    await refused({ dataset_name: "missing" }, /^dataset_name: .*missing/)
    await refused({ train_dataset_name: "words" }, /^dataset_name: give dataset_name, or train_dataset_name with val_dataset_name, not both/)
    await refused({ dataset_name: undefined, train_dataset_name: "words" }, /^val_dataset_name: /)
    await refused({ dataset_name: undefined }, /^dataset_name: give dataset_name/)
    await refused({ evaluation_name: "nope" }, /^evaluators: give evaluators or evaluation_name/)
    await refused({ evaluators: undefined }, /^evaluators: give evaluators or evaluation_name/)
    await refused({ evaluators: ["nope"] }, /^evaluators\[0\]: function "echo" has no evaluator "nope"/)
    await refused({ initial_variants: ["plain"] }, /^initial_variants\[0\]: variant "plain" has no template/)
    await refused({ initial_variants: ["nope"] }, /^initial_variants\[0\]: function "echo" has no variant "nope"/)
    await refused({ max_iterations: 0 }, /max_iterations/)
    await refused({ batch_size: -1 }, /batch_size/)
    await refused({ max_concurrency: 0 }, /max_concurrency/)
  })

  it("answers 404 for an unknown task", async () => {
    for (const id of ["nope", "0196b5c0-0000-7000-8000-000000000000"]) {
      const answer = await gateway.get(`/v1/optimization/gepa/${id}`)
      expect(answer.status).toBe(404)
      expect(answer.body.error).toMatch(/unknown GEPA task/)
    }
  })
})

describe("GEPA without a relational database", () => {
  let analytics: TestDatabase
  let gateway: RunningGateway

  beforeAll(async () => {
    analytics = await freshDatabase("postgres")
    gateway = await startGateway({
      config: config("http://127.0.0.1:9/v1/"),
      files,
      env: { GATEWAY_ANALYTICS_DB_URL: analytics.url, GATEWAY_RELATIONAL_DB_URL: undefined }
    })
  }, 60_000)

  afterAll(async () => {
    await gateway?.stop()
    await analytics?.drop()
  })

  it("answers 503 naming GATEWAY_RELATIONAL_DB_URL", async () => {
    const launched = await gateway.post("/v1/optimization/gepa", {
      function_name: "echo",
      analysis_model: "analyst",
      mutation_model: "mutator",
      dataset_name: "words",
      evaluators: ["exact"],
      max_iterations: 1
    })
    expect(launched.status).toBe(503)
    expect(launched.body.error).toMatch(/GATEWAY_RELATIONAL_DB_URL/)
    const read = await gateway.get("/v1/optimization/gepa/0196b5c0-0000-7000-8000-000000000000")
    expect(read.status).toBe(503)
    expect(read.body.error).toMatch(/GATEWAY_RELATIONAL_DB_URL/)
  })
})
