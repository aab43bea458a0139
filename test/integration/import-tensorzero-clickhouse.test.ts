/**
 * `gateway import-tensorzero --from <TensorZero's ClickHouse>` end to end: TensorZero's latest
 * ClickHouse schema built on the 18.16 server (test/fixtures/tensorzero/clickhouse-latest.sql,
 * with the types 18.16 lacks substituted) and filled with rows of every kind, imported by the
 * command into each backend, then read through this gateway's own HTTP API: the inferences with
 * their model calls and feedback, renamed reserved names, the datasets' live datapoints, an
 * imported inference taking new feedback, an imported workflow episode pinning its run's variant,
 * batches and DICL examples; run again, nothing doubles.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { freshDatabase, queryDatabase, type TestBackend, type TestDatabase } from "../support/databases.ts"
import { runGateway, type RunningGateway, startGateway } from "../support/gateway.ts"
import { getInferences, observabilityToml, poll } from "../support/observability.ts"
import { createTensorZeroClickHouse, evaluatorMetric, ids, seedTensorZeroClickHouse, type TensorZeroSeed } from "../support/tensorzeroClickHouse.ts"

const config = `
${observabilityToml()}

[metrics.task_success]
type = "boolean"
optimize = "max"
level = "inference"

[functions.weather_bot]
type = "chat"
[functions.weather_bot.variants.gpt4o_mini]
type = "chat_completion"
model = "dummy::good"
weight = 1
[functions.weather_bot.variants.claude]
type = "chat_completion"
model = "dummy::good"
weight = 0

[functions.draft_email]
type = "chat"
[functions.draft_email.variants.gpt4o_mini]
type = "chat_completion"
model = "dummy::good"
`

describe("import-tensorzero from TensorZero's ClickHouse", () => {
  let source: TestDatabase
  let seed: TensorZeroSeed

  beforeAll(async () => {
    source = await freshDatabase("clickhouse")
    await createTensorZeroClickHouse(source, "latest")
    seed = await seedTensorZeroClickHouse(source, "latest")
  }, 60_000)

  afterAll(async () => {
    await source?.drop()
  })

  it("a dry run reads and maps every stream and writes nothing", async () => {
    const result = await runGateway(["import-tensorzero", "--from", source.url, "--dry-run"], { timeoutMs: 60_000 })
    expect(result.code, result.stderr + result.stdout).toBe(0)
    expect(result.stdout).toContain("dry run: nothing is written")
    expect(result.stdout).toMatch(/^stream\s+read\s+would write\s+skipped$/m)
    expect(result.stdout).toMatch(new RegExp(`^inferences\\s+${seed.streams.inferences.length}\\s+${seed.streams.inferences.length}\\s+0$`, "m"))
  })

  describe.each<TestBackend>(["postgres", "pglite", "clickhouse"])("into %s", (backend) => {
    let destination: TestDatabase
    /** the relational database batches need: the destination, or a Postgres beside a ClickHouse one */
    let relational: TestDatabase
    let gateway: RunningGateway
    let firstRun: string

    beforeAll(async () => {
      destination = await freshDatabase(backend)
      relational = backend === "clickhouse" ? await freshDatabase("postgres") : destination
      const imported = await runGateway(["import-tensorzero", "--from", source.url, "--to", destination.url, "--page-rows", "3"], { timeoutMs: 90_000 })
      expect(imported.code, imported.stderr + imported.stdout).toBe(0)
      firstRun = imported.stdout
      gateway = await startGateway({ config, env: { GATEWAY_ANALYTICS_DB_URL: destination.url, GATEWAY_RELATIONAL_DB_URL: relational.url }, startTimeoutMs: 30_000 })
    }, 120_000)

    afterAll(async () => {
      await gateway?.stop()
      if (relational !== destination) await relational?.drop()
      await destination?.drop()
    })

    it("prints a summary of every stream: read, written, and each kind of skip with the rows skipped", () => {
      expect(firstRun).toMatch(new RegExp(`^inferences\\s+${seed.streams.inferences.length}\\s+${seed.streams.inferences.length}\\s+0$`, "m"))
      expect(firstRun).toMatch(new RegExp(`^feedback\\s+${seed.streams.feedback.length}\\s+${seed.streams.feedback.length}\\s+0$`, "m"))
      // the episode TensorZero deleted is not brought back
      expect(firstRun).toMatch(/^workflow_evaluation_episodes\s+2\s+1\s+1$/m)
      expect(firstRun).toContain(`workflow_evaluation_episodes: 1 × deleted in TensorZero`)
      expect(firstRun).toContain(ids.episodeWorkflowDeleted)
    })

    it("serves the inferences as TensorZero stored them, with their model calls and feedback, reserved names renamed", async () => {
      const wanted = [ids.chatPlain, ids.chatEvaluated, ids.judge, ids.chatImages]
      const [plain, evaluated, judge, images] = await getInferences(gateway, wanted, { include_feedback: true, include_model_inferences: true })
        .then((found) => wanted.map((id) => found.find((inference) => inference.inference_id === id)))
      expect(images.input.messages[0].content.slice(1)).toEqual([
        { type: "file", file_type: "url", url: "https://example.com/cat.png", mime_type: "image/png" },
        expect.objectContaining({ type: "file", storage_path: expect.objectContaining({ path: "observability/images/4f1c9e.jpg" }) })
      ])
      expect(plain).toMatchObject({ function_name: "draft_email", variant_name: "gpt4o_mini", episode_id: ids.episodePlain, tags: { user_id: "u-17" } })
      expect(plain.feedback.map((feedback: any) => [feedback.metric_name, feedback.value])).toEqual([
        ["task_success", true],
        ["demonstration", [{ type: "text", text: "Hi Ada, Friday 10:00 works. Best, Bob" }]]
      ])
      expect(plain.model_inferences.map((call: any) => call.model_inference_id)).toEqual([ids.modelPlain])
      expect(evaluated.tags["gateway::evaluation_run_id"]).toBe(ids.evaluationRun)
      expect(Object.keys(evaluated.tags).some((key) => key.startsWith("tensorzero::"))).toBe(false)
      expect(evaluated.feedback.map((feedback: any) => feedback.metric_name)).toContain(evaluatorMetric.replace("tensorzero::", "gateway::"))
      expect(judge.function_name).toBe("gateway::llm_judge::haiku_eval::exact_match")
    })

    it("lists TensorZero's evaluation run with its results and their scores", async () => {
      const answer = await gateway.get(`/v1/evaluations/runs/${ids.evaluationRun}`)
      expect(answer.status, JSON.stringify(answer.body)).toBe(200)
      expect(answer.body.run).toMatchObject({ run_id: ids.evaluationRun, function_name: "write_haiku", evaluation_name: "haiku_eval", status: "completed", datapoint_count: 1 })
      // the person's correction (0) is later than the judge's score (1): it wins
      expect(answer.body.results).toEqual([expect.objectContaining({ inference_id: ids.chatEvaluated, scores: { exact_match: false } })])
    })

    it("lists each dataset's live datapoints, in their latest version", async () => {
      const listed = await gateway.post("/v1/datasets/emails/list_datapoints", { limit: 10 })
      expect(listed.status, JSON.stringify(listed.body)).toBe(200)
      expect(listed.body.datapoints.map((datapoint: any) => datapoint.id)).toEqual([ids.datapointEdited])
      expect(listed.body.datapoints[0]).toMatchObject({ name: "friday_note", output: [{ type: "text", text: "Hi Ada, see you Friday at 10." }] })
      const weather = await gateway.post("/v1/datasets/weather/list_datapoints", { limit: 10 })
      expect(weather.body.datapoints).toEqual([])
    })

    it("takes new feedback on an imported inference", async () => {
      const sent = await gateway.post("/feedback", { inference_id: ids.chatTool, metric_name: "task_success", value: false })
      expect(sent.status, JSON.stringify(sent.body)).toBe(200)
      await poll("the new feedback", async () => {
        const [found] = await getInferences(gateway, [ids.chatTool], { include_feedback: true })
        return found.feedback.some((feedback: any) => feedback.feedback_id === sent.body.feedback_id) ? found : undefined
      })
    })

    it("pins the variant of an imported workflow evaluation run for a new inference of its episode", async () => {
      const answer = await gateway.post("/inference", {
        function_name: "weather_bot",
        episode_id: ids.episodeWorkflow,
        input: { messages: [{ role: "user", content: "Temperature in Porto?" }] }
      })
      expect(answer.status, JSON.stringify(answer.body)).toBe(200)
      expect(answer.body.variant_name).toBe("claude")
      const run = await gateway.get(`/workflow_evaluation_run/${ids.workflowRun}`)
      expect(run.status, JSON.stringify(run.body)).toBe(200)
    })

    it("keeps batches (one TensorZero had not finished stored as failed) and DICL examples", async () => {
      const batch = await gateway.get(`/batch_inference/${ids.batchCompleted}`)
      expect(batch.status, JSON.stringify(batch.body)).toBe(200)
      const failed = await gateway.get(`/batch_inference/${ids.batchFailed}`)
      expect(failed.status, JSON.stringify(failed.body)).toBe(200)
      expect(JSON.stringify(failed.body)).toContain("quota exceeded")
      const table = backend === "clickhouse" ? "DiclExample" : "dicl_example"
      const examples = await queryDatabase(destination, `SELECT ${backend === "clickhouse" ? "toString(id)" : "id::text"} AS id FROM ${table} ORDER BY id`)
      expect(examples.map((row) => row.id).sort()).toEqual([...seed.streams.dicl_examples].sort())
    })

    it("run again, reads from where it stopped and doubles nothing", async () => {
      const again = await runGateway(["import-tensorzero", "--from", source.url, "--to", destination.url], { timeoutMs: 90_000 })
      expect(again.code, again.stderr + again.stdout).toBe(0)
      const inferences = await getInferences(gateway, seed.streams.inferences)
      expect(inferences.map((inference) => inference.inference_id).sort()).toEqual([...seed.streams.inferences].sort())
      const table = backend === "clickhouse" ? "DiclExample FINAL" : "dicl_example"
      const [{ n }] = await queryDatabase(destination, `SELECT ${backend === "clickhouse" ? "toUInt32(count())" : "count(*)::int"} AS n FROM ${table}`)
      expect(Number(n)).toBe(2)
    })
  })
})
