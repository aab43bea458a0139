/**
 * Issue 38: nothing the gateway answered for is lost when it is killed. A gateway with
 * `[gateway.observability.durable_queue]` serves 16 clients (inference, streamed for half of
 * them, then feedback on it) while its database is reachable, then while it is not (a TCP proxy
 * in front of it, cut: rows pile up in the queue), and is killed with SIGKILL under that load.
 * Another gateway process started on the same folder writes what the dead one had answered for:
 * every inference answered 200 (a stream: answered to its `[DONE]`) and every feedback answered
 * 200 is then in the database exactly once (counted by id), with its model call, and the folder
 * is empty once the second gateway stops. Then the bound: with the database cut, a log past its
 * `max_bytes` drops writes (counted in /status) and feedback answers 503, until the database is
 * back and the log written.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { freshDatabase, queryDatabase, type TestDatabase } from "../support/databases.ts"
import { type RunningGateway, startGateway } from "../support/gateway.ts"
import { poll } from "../support/observability.ts"
import { startTcpProxy, type TcpProxy } from "../support/tcpProxy.ts"

const clients = 16

const configIn = (folder: string, durableSettings = "") => `
[gateway.observability]
batch_writes = { flush_interval_ms = 50 }
durable_queue = { path = ${JSON.stringify(folder)}${durableSettings} }

[functions.notes]
type = "chat"
[functions.notes.variants.echo]
type = "chat_completion"
model = "dummy::echo_request_messages"

[metrics.liked]
type = "boolean"
optimize = "max"
level = "inference"
`

/** what the clients were answered 200 for */
interface Answered {
  readonly inferences: Array<string>
  readonly feedback: Array<string>
}

/** one inference (streamed or whole) and feedback on it, until `running()` is false or the gateway is gone */
const client = async (gateway: RunningGateway, streamed: boolean, answered: Answered, running: () => boolean) => {
  for (let turn = 0; running(); turn++) {
    try {
      const input = { messages: [{ role: "user", content: `client turn ${turn}` }] }
      let inferenceId: string | undefined
      if (streamed) {
        const streamedAnswer = await gateway.stream("/inference", { function_name: "notes", input, stream: true })
        const first = streamedAnswer.events[0]
        if (streamedAnswer.status === 200 && streamedAnswer.events.at(-1) === "[DONE]") inferenceId = first.inference_id
      } else {
        const whole = await gateway.post("/inference", { function_name: "notes", input })
        if (whole.status === 200) inferenceId = whole.body.inference_id
      }
      if (inferenceId === undefined) continue
      answered.inferences.push(inferenceId)
      const feedback = await gateway.post("/feedback", { metric_name: "liked", inference_id: inferenceId, value: true })
      if (feedback.status === 200) answered.feedback.push(feedback.body.feedback_id)
    } catch {
      return // the gateway was killed
    }
  }
}

/** the tables counted, by backend */
const tables = {
  postgres: { inferences: "chat_inference", calls: "model_inference", feedback: "boolean_metric_feedback" },
  clickhouse: { inferences: "ChatInference", calls: "ModelInference", feedback: "BooleanMetricFeedback" }
} as const

/**
 * How many times each of `ids` is stored in `table`. On ClickHouse, as the gateway reads them
 * (FINAL: a ReplacingMergeTree keeps one row per key, and every read of the gateway takes one);
 * on Postgres, the rows themselves (the id is the primary key).
 */
const storedCounts = async (database: TestDatabase, table: string, column: string, ids: ReadonlyArray<string>) => {
  const rows = database.backend === "clickhouse"
    ? await queryDatabase(database, `SELECT toString(${column}) AS id, count() AS n FROM ${table} FINAL WHERE toString(${column}) IN (${ids.map((id) => `'${id}'`).join(",")}) GROUP BY ${column}`)
    : await queryDatabase(database, `SELECT ${column}::text AS id, count(*)::int AS n FROM ${table} WHERE ${column} = ANY('{${ids.join(",")}}'::uuid[]) GROUP BY ${column}`)
  return new Map(rows.map((row) => [String(row.id), Number(row.n)]))
}

describe.each(["postgres", "clickhouse"] as const)("the durable write queue, on %s", (backend) => {
  let database: TestDatabase
  let proxy: TcpProxy
  let folder: string
  const gateways: Array<RunningGateway> = []

  beforeAll(async () => {
    database = await freshDatabase(backend)
    const url = new URL(database.url)
    proxy = await startTcpProxy({ host: url.hostname, port: Number(url.port || (backend === "postgres" ? 5432 : 8123)) })
    folder = fs.mkdtempSync(path.join(process.env.GATEWAY_TEST_SCRATCH ?? os.tmpdir(), "durable-queue-"))
  })
  afterAll(async () => {
    for (const gateway of gateways) if (gateway.process.exitCode === null) gateway.process.kill("SIGKILL")
    await proxy?.close()
    await database?.drop()
    if (folder !== undefined) fs.rmSync(folder, { recursive: true, force: true })
  })

  const start = async (durableSettings = "") => {
    const gateway = await startGateway({ config: configIn(folder, durableSettings), env: { GATEWAY_ANALYTICS_DB_URL: proxy.urlFor(database.url) } })
    gateways.push(gateway)
    return gateway
  }

  it("stores every inference and feedback answered 200 exactly once after a SIGKILL under load", async () => {
    const began = Date.now()
    const phases: Array<string> = []
    const phase = (name: string) => phases.push(`${name} ${((Date.now() - began) / 1000).toFixed(1)} s`)
    const killed = await start()
    phase("started")
    const answered: Answered = { inferences: [], feedback: [] }
    let running = true
    const load = Array.from({ length: clients }, (_, index) => client(killed, index % 2 === 1, answered, () => running))

    // some written while the database answers, then more piled up in the queue while it does not
    await poll("answers while the database is up", async () => (answered.feedback.length >= 100 ? true : undefined), { timeoutMs: 20_000 })
    proxy.cut()
    phase("cut")
    const beforeCut = answered.feedback.length
    await poll("answers while the database is down", async () => (answered.feedback.length >= beforeCut + 100 ? true : undefined), { timeoutMs: 20_000 })
    killed.process.kill("SIGKILL")
    phase("killed")
    await new Promise((resolve) => killed.process.once("exit", resolve))
    running = false
    await Promise.all(load)
    expect(fs.readdirSync(folder).some((name) => name.endsWith(".log")), "the killed gateway's log is left").toBe(true)

    // the database back, another process on the same folder writes what the dead one answered for
    proxy.restore()
    const next = await start()
    phase("restarted")
    const inferences = [...new Set(answered.inferences)]
    const feedback = [...new Set(answered.feedback)]
    expect(inferences).toHaveLength(answered.inferences.length)
    let missing = {}
    const stored = await poll("every answered inference and feedback stored", async () => {
      const counts = {
        inferences: await storedCounts(database, tables[backend].inferences, "id", inferences),
        calls: await storedCounts(database, tables[backend].calls, "inference_id", inferences),
        feedback: await storedCounts(database, tables[backend].feedback, "id", feedback)
      }
      missing = {
        inferences: inferences.length - counts.inferences.size,
        calls: inferences.length - counts.calls.size,
        feedback: feedback.length - counts.feedback.size
      }
      return counts.inferences.size === inferences.length && counts.calls.size === inferences.length && counts.feedback.size === feedback.length
        ? counts
        : undefined
    }, { timeoutMs: 30_000, intervalMs: 250, last: () => ({ answered: { inferences: inferences.length, feedback: feedback.length }, missing }) })
    expect([...stored.inferences.values()].every((count) => count === 1)).toBe(true)
    expect([...stored.calls.values()].every((count) => count === 1)).toBe(true)
    expect([...stored.feedback.values()].every((count) => count === 1)).toBe(true)
    console.info(`durable queue on ${backend}: ${inferences.length} inferences and ${feedback.length} feedback answered 200, ${beforeCut} feedback before the cut; all stored once (${phases.join(", ")}, stored ${((Date.now() - began) / 1000).toFixed(1)} s)`)

    // the replayed log is gone; the second gateway's own goes as it stops with everything written
    // the rows are visible a moment before the replay says it is done
    await poll("the replay's report", async () => (/wrote \d+ units left in the durable queue of a stopped process/.test(next.log()) ? true : undefined))
    expect(await next.stop()).toBe(0)
    expect(fs.readdirSync(folder)).toEqual([])
  }, 120_000)

  it("is bounded in bytes like the queue: past max_bytes, writes are dropped and counted and feedback answers 503, until the log is written", async () => {
    const gateway = await start(", max_bytes = 16384, segment_bytes = 4096")
    proxy.cut()
    const input = { messages: [{ role: "user", content: "fill the log" }] }
    // an inference kept (queued, in the log), then others until the log is full: they are dropped and counted
    const kept = await gateway.post("/inference", { function_name: "notes", input })
    expect(kept.status).toBe(200)
    for (let attempt = 0; attempt < 200; attempt++) {
      expect((await gateway.post("/inference", { function_name: "notes", input })).status).toBe(200)
      if ((await gateway.get("/status")).body.observability.dropped > 0) break
    }
    expect((await gateway.get("/status")).body.observability.dropped).toBeGreaterThan(0)
    // feedback, smaller, may still fit in what is left: until it does not
    let refused = await gateway.post("/feedback", { metric_name: "liked", inference_id: kept.body.inference_id, value: true })
    for (let attempt = 0; attempt < 100 && refused.status === 200; attempt++) {
      refused = await gateway.post("/feedback", { metric_name: "liked", inference_id: kept.body.inference_id, value: true })
    }
    expect(refused.status).toBe(503)
    expect(refused.body.error).toMatch(/the write queue is full/)

    // the database back, the log is written and takes feedback again
    proxy.restore()
    await poll("feedback taken again", async () => {
      const feedback = await gateway.post("/feedback", { metric_name: "liked", inference_id: kept.body.inference_id, value: true })
      return feedback.status === 200 ? true : undefined
    }, { timeoutMs: 20_000, intervalMs: 200 })
    expect(await gateway.stop()).toBe(0)
    expect(fs.readdirSync(folder)).toEqual([])
  }, 60_000)
})
