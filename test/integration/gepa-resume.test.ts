/**
 * A GEPA task survives its gateway: the process running it is killed (SIGKILL) after some
 * iterations were checkpointed, a second gateway on the same databases takes the task up once
 * its heartbeat lapsed, resumes from the last completed iteration (its log says so) and
 * completes it with the result an uninterrupted run of the same seed gives.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { freshDatabase, type TestDatabase } from "../support/databases.ts"
import { type RunningGateway, startGateway } from "../support/gateway.ts"
import { poll } from "../support/observability.ts"
import { gepaConfig, gepaFiles, type GepaFakeModels, startGepaFakeModels, wordDatapoints } from "../support/gepaFakes.ts"

describe("a GEPA task whose gateway is killed", () => {
  let database: TestDatabase
  let fake: GepaFakeModels
  let first: RunningGateway
  let second: RunningGateway | undefined

  beforeAll(async () => {
    ;[database, fake] = await Promise.all([freshDatabase("postgres"), startGepaFakeModels()])
    first = await startGateway({
      config: gepaConfig(fake.apiBase),
      files: gepaFiles,
      env: { GATEWAY_ANALYTICS_DB_URL: database.url, GATEWAY_RELATIONAL_DB_URL: database.url }
    })
    const created = await first.post("/v1/datasets/words/datapoints", { datapoints: wordDatapoints(["apple", "banana", "cherry", "damson", "elder", "fig"]) })
    expect(created.status, JSON.stringify(created.body)).toBe(200)
  }, 60_000)

  afterAll(async () => {
    await first?.stop("SIGKILL")
    await second?.stop()
    await fake?.close()
    await database?.drop()
  })

  it("is resumed by another gateway from its last checkpoint and completes", async () => {
    fake.delayMs = 150
    const launched = await first.post("/v1/optimization/gepa", {
      function_name: "echo",
      analysis_model: "analyst",
      mutation_model: "mutator",
      dataset_name: "words",
      evaluators: ["exact"],
      initial_variants: ["base"],
      max_iterations: 4,
      seed: 7,
      max_concurrency: 2,
      variant_prefix: "survivor"
    })
    expect(launched.status, JSON.stringify(launched.body)).toBe(200)
    const taskId: string = launched.body.task_id
    // past the first iteration: the initial evaluation and iteration 1 are checkpointed
    await poll("the task's second iteration", async () => {
      const answer = await first.get(`/v1/optimization/gepa/${taskId}`)
      return answer.body.status === "pending" && answer.body.progress.current_iteration >= 2 ? answer.body : undefined
    }, { timeoutMs: 30_000, intervalMs: 50 })
    first.process.kill("SIGKILL")

    fake.delayMs = 10
    second = await startGateway({
      config: gepaConfig(fake.apiBase),
      files: gepaFiles,
      env: { GATEWAY_ANALYTICS_DB_URL: database.url, GATEWAY_RELATIONAL_DB_URL: database.url }
    })
    const done = await poll("the task to complete on the second gateway", async () => {
      const answer = await second!.get(`/v1/optimization/gepa/${taskId}`)
      return answer.body.status === "pending" ? undefined : answer.body
    }, { timeoutMs: 60_000, intervalMs: 250 })
    expect(done.status, JSON.stringify(done)).toBe("completed")
    expect(second.log()).toMatch(new RegExp(`gepa: task ${taskId} resumes after iteration [1-9]`))
    expect(Object.keys(done.variants)).toEqual(["survivor_1"])
    expect(done.variants.survivor_1.templates.system.content).toContain("MAGIC")
    expect(done.statistics.base.exact).toEqual({ mean: 0, stdev: 0, count: 3 })
    expect(done.statistics.survivor_1.exact).toEqual({ mean: 1, stdev: 0, count: 3 })
  }, 120_000)
})
