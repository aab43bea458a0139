/**
 * `gateway import-tensorzero --from <TensorZero's Postgres>` end to end, the primary path:
 * TensorZero's 2026 Postgres layout built in a real database (test/fixtures/tensorzero/
 * postgres-2026.sql) and filled with rows of every kind, imported by the command into each
 * backend, then used through this gateway's HTTP API with authentication on: TensorZero's own
 * key authenticates as issued (its disabled and expired keys and a case-changed one do not),
 * inferences read back with their model calls, feedback and renamed names, an imported inference
 * takes new feedback, the datasets list their live datapoints, an evaluation run over an
 * imported dataset works, GEPA launches on it, and an imported workflow evaluation episode pins
 * its run's variant.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { call } from "../support/access.ts"
import { freshDatabase, queryDatabase, type TestBackend, type TestDatabase } from "../support/databases.ts"
import { runGateway, type RunningGateway, startGateway } from "../support/gateway.ts"
import { gepaConfig, gepaFiles, type GepaFakeModels, startGepaFakeModels } from "../support/gepaFakes.ts"
import { poll } from "../support/observability.ts"
import { createTensorZeroPostgres, seedTensorZero, type TensorZeroManifest } from "../support/tensorzeroPostgres.ts"

const config = (apiBase: string) => `
${gepaConfig(apiBase)}

[gateway.auth]
enabled = true
cache_ttl_ms = 0

[metrics.haiku_rating]
type = "boolean"
optimize = "max"
level = "inference"

[functions.write_haiku]
type = "chat"
system_schema = "haiku_system.json"
[functions.write_haiku.variants.gpt_4o_mini]
type = "chat_completion"
model = "task"
system_template = "haiku_system.minijinja"
weight = 0
[functions.write_haiku.variants.other]
type = "chat_completion"
model = "task"
system_template = "haiku_system.minijinja"
weight = 1
[functions.write_haiku.evaluators.exact]
type = "exact_match"
`

const files = {
  ...gepaFiles,
  "haiku_system.json": JSON.stringify({ type: "object", properties: { topic: { type: "string" } } }),
  "haiku_system.minijinja": "You write haikus."
}

/** the events of a streamed evaluation run */
const runEvents = (text: string): Array<any> =>
  text.split("\n\n").filter((block) => block.trim() !== "").map((block) => JSON.parse(block.split("\n").find((line) => line.startsWith("data: "))!.slice(6)))

describe("import-tensorzero from TensorZero's Postgres", () => {
  let source: TestDatabase
  let manifest: TensorZeroManifest
  let fake: GepaFakeModels

  beforeAll(async () => {
    ;[source, fake] = await Promise.all([freshDatabase("postgres"), startGepaFakeModels()])
    await createTensorZeroPostgres(source)
    manifest = await seedTensorZero(source.url)
  }, 60_000)

  afterAll(async () => {
    await fake?.close()
    await source?.drop()
  })

  it("a dry run maps every stream and reports what it would skip, writing nothing", async () => {
    const result = await runGateway(["import-tensorzero", "--from", source.url, "--dry-run"], { timeoutMs: 60_000 })
    expect(result.code, result.stderr + result.stdout).toBe(0)
    expect(result.stdout).toMatch(/^stream\s+read\s+would write\s+skipped$/m)
    expect(result.stdout).toMatch(new RegExp(`^api_keys\\s+${manifest.keys.length}\\s+${manifest.keys.length}\\s+0$`, "m"))
    expect(result.stdout).toContain("dicl_examples: 1 × input is not JSON")
    expect(result.stdout).toContain(manifest.dicl.garbageInput)
    expect(result.stdout).toContain("inferences: 1 × payload dropped by TensorZero's retention")
    for (const id of manifest.unreadable) expect(result.stdout).toContain(id)
  })

  it("with --strict, stops at the first row it cannot import, naming it", async () => {
    const result = await runGateway(["import-tensorzero", "--from", source.url, "--dry-run", "--strict"], { timeoutMs: 60_000 })
    expect(result.code).toBe(1)
    expect(result.stderr + result.stdout).toMatch(/--strict: \w+ row [0-9a-f-]{36}/)
  })

  describe.each<TestBackend>(["postgres", "pglite", "clickhouse"])("into %s", (backend) => {
    let destination: TestDatabase
    let relational: TestDatabase
    let gateway: RunningGateway
    let imported: string
    const key = () => manifest.keys[0].key
    const post = (route: string, body: unknown) => call(gateway, "POST", route, { key: key(), body })
    const get = (route: string) => call(gateway, "GET", route, { key: key() })

    beforeAll(async () => {
      destination = await freshDatabase(backend)
      relational = backend === "clickhouse" ? await freshDatabase("postgres") : destination
      const env = backend === "clickhouse" ? { GATEWAY_RELATIONAL_DB_URL: relational.url } : {}
      const result = await runGateway(["import-tensorzero", "--from", source.url, "--to", destination.url], { env, timeoutMs: 90_000 })
      expect(result.code, result.stderr + result.stdout).toBe(0)
      imported = result.stdout
      gateway = await startGateway({
        config: config(fake.apiBase),
        files,
        env: { GATEWAY_ANALYTICS_DB_URL: destination.url, GATEWAY_RELATIONAL_DB_URL: relational.url },
        startTimeoutMs: 30_000
      })
    }, 120_000)

    afterAll(async () => {
      await gateway?.stop()
      if (relational !== destination) await relational?.drop()
      await destination?.drop()
    })

    it("authenticates TensorZero's key exactly as issued; its disabled and expired keys and a case-changed one stay refused", async () => {
      expect(imported).toMatch(new RegExp(`^api_keys\\s+${manifest.keys.length}\\s+${manifest.keys.length}\\s+0$`, "m"))
      expect((await get("/v1/datasets")).status).toBe(200)
      for (const seeded of manifest.keys.filter((seeded) => seeded.state !== "active")) {
        expect((await call(gateway, "GET", "/v1/datasets", { key: seeded.key })).status, seeded.state).toBe(401)
      }
      const swapped = key().replace(manifest.keys[0].publicId, manifest.keys[0].publicId.replace(/[a-zA-Z]/, (letter) =>
        letter === letter.toLowerCase() ? letter.toUpperCase() : letter.toLowerCase()))
      expect(swapped).not.toBe(key())
      expect((await call(gateway, "GET", "/v1/datasets", { key: swapped })).status).toBe(401)
      expect((await call(gateway, "GET", "/v1/datasets", { key: key().replace("sk-t0-", "sk-gw-") })).status).toBe(401)
    })

    it("reads the inferences back with their model calls, feedback and the key that made them, names renamed", async () => {
      const wanted = [manifest.inference.text, manifest.inference.evaluated, manifest.inference.judge, manifest.inference.toolCall]
      const answer = await post("/v1/inferences/get_inferences", { ids: wanted, include_feedback: true, include_model_inferences: true })
      expect(answer.status, answer.text).toBe(200)
      const [text, evaluated, judge, toolCall] = wanted.map((id) => answer.body.inferences.find((inference: any) => inference.inference_id === id))
      expect(text).toMatchObject({
        function_name: "write_haiku",
        variant_name: "gpt_4o_mini",
        input: { system: { topic: "artificial intelligence" }, messages: [{ role: "user", content: [{ type: "text", text: "Write a haiku about artificial intelligence." }] }] },
        output: [{ type: "text", text: "Silent circuits hum\nthoughts unfold in rows of light\nmachines dream of spring" }],
        tags: { "gateway::api_key_public_id": manifest.keys[0].publicId }
      })
      expect(text.model_inferences).toHaveLength(1)
      expect(text.feedback.map((feedback: any) => [feedback.feedback_id, feedback.value])).toContainEqual([manifest.feedback.booleanOnInference, true])
      expect(evaluated.tags).toMatchObject({ "gateway::evaluation_run_id": expect.any(String), "gateway::evaluation_name": "haiku_eval", "gateway::dataset_name": "haikus" })
      expect(evaluated.feedback.some((feedback: any) => feedback.metric_name.startsWith("gateway::evaluation_name::haiku_eval::evaluator_name::"))).toBe(true)
      expect(judge.function_name).toMatch(/^gateway::llm_judge::haiku_eval::/)
      expect(toolCall.output.map((block: any) => block.type)).toEqual(["thought", "tool_call"])
    })

    it("takes new feedback on an imported inference", async () => {
      const sent = await post("/feedback", { inference_id: manifest.inference.text, metric_name: "haiku_rating", value: false })
      expect(sent.status, sent.text).toBe(200)
      await poll("the new feedback", async () => {
        const answer = await post("/v1/inferences/get_inferences", { ids: [manifest.inference.text], include_feedback: true })
        return answer.body.inferences[0].feedback.some((feedback: any) => feedback.feedback_id === sent.body.feedback_id) ? true : undefined
      })
    })

    it("lists a dataset's live datapoints only, and runs an evaluation over them", async () => {
      const listed = await post("/v1/datasets/haikus/list_datapoints", { limit: 20 })
      expect(listed.status, listed.text).toBe(200)
      const live = [manifest.datapoint.chat, manifest.datapoint.editedNew].sort()
      expect(listed.body.datapoints.map((datapoint: any) => datapoint.id).sort()).toEqual(live)
      const stale = await post("/v1/datasets/haikus/get_datapoints", { ids: [manifest.datapoint.stale, manifest.datapoint.editedOld] })
      expect(stale.status, stale.text).toBe(200)
      expect(stale.body.datapoints.every((datapoint: any) => datapoint.staled_at !== null && datapoint.staled_at !== undefined)).toBe(true)

      const run = await post("/v1/evaluations/run", { function_name: "write_haiku", dataset_name: "haikus", evaluator_names: ["exact"], variant_name: "other" })
      expect(run.status, run.text).toBe(200)
      const events = runEvents(run.text)
      expect(events.find((event) => event.type === "start").datapoint_count).toBe(2)
      expect(events.filter((event) => event.type === "result").map((event) => event.datapoint_id).sort()).toEqual(live)
    })

    it("lists TensorZero's evaluation run with its results and scores", async () => {
      const answer = await get(`/v1/evaluations/runs/${manifest.evaluationRun}`)
      expect(answer.status, answer.text).toBe(200)
      expect(answer.body.run).toMatchObject({
        run_id: manifest.evaluationRun,
        function_name: "write_haiku",
        variant_name: "gpt_4o_mini",
        dataset_name: "haikus",
        evaluation_name: "haiku_eval",
        status: "completed",
        datapoint_count: 1
      })
      expect(answer.body.results).toEqual([
        expect.objectContaining({ datapoint_id: manifest.datapoint.chat, inference_id: manifest.inference.evaluated, scores: expect.any(Object) })
      ])
      expect(Object.keys(answer.body.results[0].scores).length).toBeGreaterThan(0)
    })

    it("launches GEPA on an imported dataset", async () => {
      const launched = await post("/v1/optimization/gepa", {
        function_name: "write_haiku",
        dataset_name: "haikus",
        evaluators: ["exact"],
        analysis_model: "analyst",
        mutation_model: "mutator",
        initial_variants: ["other"],
        max_iterations: 1,
        seed: 3
      })
      expect(launched.status, launched.text).toBe(200)
      const ended = await poll("the GEPA task to end", async () => {
        const task = await get(`/v1/optimization/gepa/${launched.body.task_id}`)
        return task.body.status === "pending" ? undefined : task.body
      }, { timeoutMs: 60_000, intervalMs: 250 })
      expect(ended.status, JSON.stringify(ended)).toBe("completed")
    })

    it("pins the variant of an imported workflow evaluation run for a new inference of its episode", async () => {
      const answer = await post("/inference", {
        function_name: "write_haiku",
        episode_id: manifest.episode.workflow[0],
        input: { messages: [{ role: "user", content: "A haiku about hops." }] }
      })
      expect(answer.status, answer.text).toBe(200)
      expect(answer.body.variant_name).toBe("gpt_4o_mini")
    })

    it("keeps the DICL examples that could be read, each once after a second run", async () => {
      const again = await runGateway(["import-tensorzero", "--from", source.url, "--to", destination.url], {
        env: backend === "clickhouse" ? { GATEWAY_RELATIONAL_DB_URL: relational.url } : {},
        timeoutMs: 90_000
      })
      expect(again.code, again.stderr + again.stdout).toBe(0)
      const table = backend === "clickhouse" ? "DiclExample FINAL" : "dicl_example"
      const rows = await queryDatabase(destination, `SELECT ${backend === "clickhouse" ? "toString(id)" : "id::text"} AS id FROM ${table}`)
      const expected = manifest.dicl.examples.filter((id) => id !== manifest.dicl.garbageInput).sort()
      expect(rows.map((row) => row.id).sort()).toEqual(expected)
    })
  })
})
