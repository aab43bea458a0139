/**
 * `gateway import-tensorzero` killed midway (SIGKILL: a crash, no graceful stop), once during
 * the inferences and once during a later stream (the model inferences), then run again to the
 * end: every inference, model inference, feedback and datapoint is stored exactly once, in the
 * database and as the gateway's HTTP API serves them. The source is TensorZero's Postgres with
 * its seed of every kind and 20,000 more inferences, read in small pages so that a run takes
 * long enough to be killed midway (the last run, in the default pages: a run may page
 * differently from the one it resumes).
 */
import { type ChildProcess, spawn } from "node:child_process"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { freshDatabase, queryDatabase, type TestBackend, type TestDatabase } from "../support/databases.ts"
import { gatewayBin, repoRoot, runGateway, type RunningGateway, startGateway } from "../support/gateway.ts"
import { getInferences, listInferences, observabilityToml, poll } from "../support/observability.ts"
import { createTensorZeroPostgres, seedManyInferences, seedTensorZero, type TensorZeroManifest } from "../support/tensorzeroPostgres.ts"

const manyInferences = 20_000
const manyStart = Date.UTC(2026, 2, 20)

/** the id seedManyInferences gives its inference `g` (ten per millisecond from `manyStart`) */
const manyInferenceId = (g: number): string => {
  const hex = Math.floor(manyStart + g / 10).toString(16).padStart(12, "0") + "7000" + "8" + g.toString(16).padStart(15, "0")
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`
}

type Counted = "inferences" | "model_inferences" | "feedback" | "datapoints"

/** the tables each counted stream lands in, per destination engine */
const tables: Record<Counted, { readonly postgres: ReadonlyArray<string>; readonly clickhouse: ReadonlyArray<string> }> = {
  inferences: { postgres: ["chat_inference", "json_inference"], clickhouse: ["ChatInference", "JsonInference"] },
  model_inferences: { postgres: ["model_inference"], clickhouse: ["ModelInference"] },
  feedback: {
    postgres: ["boolean_metric_feedback", "float_metric_feedback", "comment_feedback", "demonstration_feedback"],
    clickhouse: ["BooleanMetricFeedback", "FloatMetricFeedback", "CommentFeedback", "DemonstrationFeedback"]
  },
  datapoints: { postgres: ["datapoint"], clickhouse: ["Datapoint"] }
}

/** rows stored for `stream` and how many distinct ids they hold (ClickHouse: as its reads see them, FINAL) */
const countRows = async (database: TestDatabase, stream: Counted): Promise<{ rows: number; ids: number }> => {
  const [row] = database.backend === "clickhouse"
    ? await queryDatabase(database, `SELECT count() AS rows, uniqExact(id) AS ids FROM (${tables[stream].clickhouse.map((table) => `SELECT id FROM ${table} FINAL`).join(" UNION ALL ")})`)
    : await queryDatabase(database, `SELECT count(*) AS rows, count(DISTINCT id) AS ids FROM (${tables[stream].postgres.map((table) => `SELECT id FROM ${table}`).join(" UNION ALL ")}) AS stored`)
  return { rows: Number(row.rows), ids: Number(row.ids) }
}

/** the streams with a saved position in the destination (none before the import has created its table) */
const savedStreams = async (database: TestDatabase): Promise<ReadonlyArray<string>> => {
  const clickHouse = database.backend === "clickhouse"
  const [created] = await queryDatabase(database, clickHouse
    ? "SELECT count() AS n FROM system.tables WHERE database = currentDatabase() AND name = 'TensorZeroImportPosition'"
    : "SELECT count(*) AS n FROM information_schema.tables WHERE table_name = 'tensorzero_import_position'")
  if (Number(created.n) === 0) return []
  const rows = await queryDatabase(database, clickHouse
    ? "SELECT DISTINCT stream FROM TensorZeroImportPosition"
    : "SELECT stream FROM tensorzero_import_position")
  return rows.map((row) => String(row.stream))
}

/** the `written` column of a summary line, per stream */
const writtenIn = (summary: string, stream: string): number => {
  const match = new RegExp(`^${stream}\\s+([\\d,]+)\\s+([\\d,]+)\\s+([\\d,]+)$`, "m").exec(summary)
  if (match === null) throw new Error(`no ${stream} line in the summary:\n${summary}`)
  return Number(match[2].replaceAll(",", ""))
}

/**
 * Starts the import into `to` in pages of `pageRows`, waits until `stream` has a saved position
 * (a page of it written), then kills the process with SIGKILL and waits for it to be gone.
 */
const killDuring = async (from: string, to: TestDatabase, stream: string, pageRows: number): Promise<void> => {
  const child: ChildProcess = spawn(process.execPath, [gatewayBin, "import-tensorzero", "--from", from, "--to", to.url, "--page-rows", String(pageRows)], {
    cwd: repoRoot,
    env: process.env,
    stdio: ["ignore", "pipe", "pipe"]
  })
  let output = ""
  child.stdout!.on("data", (data) => (output += data))
  child.stderr!.on("data", (data) => (output += data))
  let exitCode: number | null | undefined
  const gone = new Promise<void>((resolve) => child.on("exit", (code) => {
    exitCode = code
    resolve()
  }))
  try {
    await poll(`a saved position of ${stream}`, async () => {
      // a run that ended (or failed) before the position appeared can never be killed midway
      if (exitCode !== undefined) throw new Error(`the import exited (${exitCode}) before ${stream} had a position:\n${output}`)
      return (await savedStreams(to)).includes(stream) ? true : undefined
    }, { timeoutMs: 45_000, intervalMs: 20 })
  } finally {
    child.kill("SIGKILL")
    await gone
  }
  expect(exitCode, output).toBeNull()
}

describe("import-tensorzero killed midway, then run again", () => {
  let source: TestDatabase
  let manifest: TensorZeroManifest
  /** rows per stream an uninterrupted run writes (a dry run's summary) */
  let expected: Record<Counted, number>

  beforeAll(async () => {
    source = await freshDatabase("postgres")
    await createTensorZeroPostgres(source)
    manifest = await seedTensorZero(source.url)
    await seedManyInferences(source.url, manyInferences, manyStart)
    const dryRun = await runGateway(["import-tensorzero", "--from", source.url, "--dry-run"], { timeoutMs: 60_000 })
    expect(dryRun.code, dryRun.stderr + dryRun.stdout).toBe(0)
    expected = {
      inferences: writtenIn(dryRun.stdout, "inferences"),
      model_inferences: writtenIn(dryRun.stdout, "model_inferences"),
      feedback: writtenIn(dryRun.stdout, "feedback"),
      datapoints: writtenIn(dryRun.stdout, "datapoints")
    }
    // the bulk rows are among them (the seed's own include rows a run skips, each for its reason)
    expect(expected.inferences).toBeGreaterThan(manyInferences)
    expect(expected.model_inferences).toBeGreaterThan(manyInferences)
  }, 120_000)

  afterAll(async () => {
    await source?.drop()
  })

  describe.each<TestBackend>(["postgres", "clickhouse"])("into %s", (backend) => {
    let destination: TestDatabase
    let gateway: RunningGateway | undefined
    let lastRun: { code: number | null; stdout: string; stderr: string }

    beforeAll(async () => {
      destination = await freshDatabase(backend)
    }, 30_000)

    afterAll(async () => {
      await gateway?.stop()
      await destination?.drop()
    })

    it("killed during the inferences, it has written some of them but not all", async () => {
      await killDuring(source.url, destination, "inferences", 200)
      const stored = await countRows(destination, "inferences")
      expect(stored.ids).toBeGreaterThan(0)
      expect(stored.ids).toBeLessThan(expected.inferences)
      expect((await countRows(destination, "model_inferences")).rows).toBe(0)
    }, 60_000)

    it("run again and killed during the model inferences, it has written every inference once and some model inferences", async () => {
      await killDuring(source.url, destination, "model_inferences", 500)
      expect(await countRows(destination, "inferences")).toEqual({ rows: expected.inferences, ids: expected.inferences })
      const models = await countRows(destination, "model_inferences")
      expect(models.ids).toBeGreaterThan(0)
      expect(models.ids).toBeLessThan(expected.model_inferences)
    }, 60_000)

    it("run again to the end, it exits 0 with every stream done", async () => {
      lastRun = await runGateway(["import-tensorzero", "--from", source.url, "--to", destination.url], { timeoutMs: 60_000 })
      expect(lastRun.code, lastRun.stderr + lastRun.stdout).toBe(0)
      expect(lastRun.stdout).toMatch(/^stream\s+read\s+written\s+skipped$/m)
      expect(lastRun.stdout).toMatch(/^model_inferences\s/m)
      expect(lastRun.stdout).toMatch(/^feedback\s/m)
    }, 60_000)

    it("stores every inference, model inference, feedback and datapoint exactly once", async () => {
      expect(lastRun?.code).toBe(0)
      for (const stream of ["inferences", "model_inferences", "feedback", "datapoints"] as const) {
        expect({ stream, ...(await countRows(destination, stream)) }).toEqual({ stream, rows: expected[stream], ids: expected[stream] })
      }
    }, 30_000)

    it("serves each inference once, with its one model call, and each dataset's live datapoints once", async () => {
      expect(lastRun?.code).toBe(0)
      gateway = await startGateway({ config: observabilityToml(), env: { GATEWAY_ANALYTICS_DB_URL: destination.url }, startTimeoutMs: 30_000 })
      const many = [...Array.from({ length: 40 }, (_, index) => manyInferenceId(index * 500)), manyInferenceId(199), manyInferenceId(200), manyInferenceId(manyInferences - 1)]
      const { text, toolCall, evaluated, extraction, sameMillisecond } = manifest.inference
      const sample = [text, toolCall, evaluated, extraction, ...sameMillisecond, ...many]
      const found = await getInferences(gateway, sample, { include_model_inferences: true, include_feedback: true })
      expect(found.map((inference) => inference.inference_id).sort()).toEqual([...sample].sort())
      for (const inference of found.filter((inference) => many.includes(inference.inference_id))) {
        expect(inference.model_inferences, inference.inference_id).toHaveLength(1)
      }
      // the newest thousand, as a listing pages through them: no id twice
      const listed = await listInferences(gateway, { function_name: "write_haiku", limit: 1000 })
      expect(listed).toHaveLength(1000)
      expect(new Set(listed.map((inference) => inference.inference_id)).size).toBe(1000)
      expect(listed[0].inference_id).toBe(manyInferenceId(manyInferences - 1))
      // the inference with feedback written within one millisecond: each of its feedback once
      const [withFeedback] = await getInferences(gateway, [manifest.inference.sameMillisecond[0]], { include_feedback: true })
      const feedbackIds: Array<string> = withFeedback.feedback.map((feedback: any) => feedback.feedback_id)
      expect(new Set(feedbackIds).size).toBe(feedbackIds.length)
      expect(feedbackIds).toEqual(expect.arrayContaining([...manifest.feedback.sameMillisecond]))

      const haikus = await gateway.post("/v1/datasets/haikus/list_datapoints", { limit: 100 })
      expect(haikus.status, JSON.stringify(haikus.body)).toBe(200)
      expect(haikus.body.datapoints.map((datapoint: any) => datapoint.id).sort()).toEqual([manifest.datapoint.chat, manifest.datapoint.editedNew].sort())
      const entities = await gateway.post("/v1/datasets/entities/list_datapoints", { limit: 100 })
      expect(entities.status, JSON.stringify(entities.body)).toBe(200)
      expect(entities.body.datapoints.map((datapoint: any) => datapoint.id)).toEqual([manifest.datapoint.json])
    }, 60_000)
  })
})
