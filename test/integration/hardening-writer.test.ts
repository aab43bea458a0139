/**
 * Hardening (issue 10): the write queue never stops, never drops good rows for the wrong
 * reason, stays bounded in bytes, and feedback never answers 200 for what it could not queue.
 * Over HTTP, on a real database of each backend:
 * - inferences of megabytes each are all stored (batches are bounded by `batch_writes.max_bytes`,
 *   a larger unit is written alone);
 * - a row the database refuses (a CHECK constraint on Postgres, a column that takes no NULL on
 *   ClickHouse) is dropped alone, counted as `rejected`, and the queue goes on;
 * - the database cut off: past `max_queued_writes` feedback answers 503 (inferences still
 *   answer 200, their rows dropped and counted), past `max_queued_bytes` rows are dropped and
 *   counted; once it is back, what was queued is stored; SIGTERM with large rows queued exits 0
 *   once they are written;
 * - on Postgres, a database that is read-only for a while (25006, as after a failover) has its
 *   writes retried, not dropped: every row is stored, none rejected.
 */
import { execFile } from "node:child_process"
import { promisify } from "node:util"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { clickHouseCommand, freshDatabase, postgresCommand, queryDatabase, type TestDatabase } from "../support/databases.ts"
import { type RunningGateway, startGateway } from "../support/gateway.ts"
import { backends, getInferences, poll, queueStats, userInput, waitForFeedback, waitForInferences } from "../support/observability.ts"
import { startTcpProxy, type TcpProxy } from "../support/tcpProxy.ts"

const MiB = 1024 * 1024

const functions = `
[metrics.thumbs_up]
type = "boolean"
level = "inference"

[functions.chat]
type = "chat"
[functions.chat.variants.text]
type = "chat_completion"
model = "dummy::hello"

[functions.extract]
type = "json"
output_schema = "schemas/answer.json"
[functions.extract.variants.dummy]
type = "chat_completion"
model = "dummy::json"
`

const files = {
  "schemas/answer.json": JSON.stringify({ type: "object", properties: { answer: { type: "string" } }, required: ["answer"] })
}

const observability = (settings: string) => `
[gateway.observability]
${settings}
${functions}`

/** runs a statement in `database` (Postgres) */
const postgresStatement = async (database: TestDatabase, statement: string) => {
  const url = new URL(database.url)
  await promisify(execFile)("psql", [
    "-h", url.hostname, "-p", url.port || "5432", "-U", decodeURIComponent(url.username) || "postgres", "-d", database.name,
    "-v", "ON_ERROR_STOP=1", "-q", "-c", statement
  ])
}

/** how many of `ids` are stored in the chat (or json) inference table, asking the database itself */
const storedInferences = async (database: TestDatabase, ids: ReadonlyArray<string>, type: "chat" | "json" = "chat"): Promise<number> => {
  const list = ids.map((id) => `'${id}'`).join(", ")
  const [row] = database.backend === "postgres"
    ? await queryDatabase(database, `SELECT count(*)::int AS n FROM ${type}_inference WHERE id::text IN (${list})`)
    : await queryDatabase(database, `SELECT count(DISTINCT id) AS n FROM ${type === "chat" ? "Chat" : "Json"}Inference WHERE toString(id) IN (${list})`)
  return Number(row.n)
}

const until = <A>(gateway: RunningGateway, what: string, done: (stats: Awaited<ReturnType<typeof queueStats>>) => boolean, timeoutMs = 15_000) => {
  let last: unknown
  return poll(what, async () => {
    const stats = await queueStats(gateway)
    last = stats
    return done(stats) ? stats : undefined
  }, { timeoutMs, last: () => last })
}

/** an inference whose message is `size` characters */
const large = (size: number, tag: string) => ({ function_name: "chat", input: userInput(`${tag}:${"x".repeat(size)}`), tags: { phase: tag } })

describe.each(backends)("the write queue on %s: large rows, and rows the database refuses", (backend) => {
  let database: TestDatabase
  let gateway: RunningGateway

  beforeAll(async () => {
    database = await freshDatabase(backend)
    gateway = await startGateway({
      config: observability(`batch_writes = { flush_interval_ms = 100, max_bytes = ${MiB} }`),
      files,
      env: { GATEWAY_ANALYTICS_DB_URL: database.url }
    })
  })
  afterAll(async () => {
    await gateway?.stop()
    await database?.drop()
  })

  it("inferences of a megabyte each, sent at once, are all stored (each row larger than a batch is written alone)", async () => {
    const start = await queueStats(gateway)
    const responses = await Promise.all([
      ...Array.from({ length: 8 }, (_, i) => gateway.post("/inference", large(MiB, `large-${i}`))),
      ...Array.from({ length: 6 }, (_, i) => gateway.post("/inference", { function_name: "chat", input: userInput(`small ${i}`) }))
    ])
    expect(responses.map((response) => response.status)).toEqual(responses.map(() => 200))
    const ids = responses.map((response) => response.body.inference_id as string)
    const after = await until(gateway, "every row to be written", (stats) => stats.written >= start.written + ids.length)
    expect(after).toMatchObject({ queued: 0, queuedBytes: 0, rejected: start.rejected, dropped: 0 })
    expect(await storedInferences(database, ids)).toBe(ids.length)
    const [first] = await getInferences(gateway, [ids[0]])
    expect(first.input.messages[0].content).toHaveLength(MiB + "large-0:".length)
  })

  it("a row the database refuses is dropped alone and counted; the rows around it are stored, and the queue goes on", async () => {
    // the json table takes only numbers as the values of its tags
    if (backend === "postgres") {
      await postgresStatement(database, "ALTER TABLE json_inference ADD CONSTRAINT numeric_verdict CHECK (tags->>'verdict' ~ '^[0-9]+$') NOT VALID")
    } else {
      await clickHouseCommand(`ALTER TABLE ${database.name}.JsonInference MODIFY COLUMN tags.value Array(UInt8)`)
    }
    const start = await queueStats(gateway)
    const json = (verdict: string) => ({ function_name: "extract", input: userInput(`verdict ${verdict}`), tags: { verdict } })
    const [chat, refused, accepted] = await Promise.all([
      Promise.all(Array.from({ length: 3 }, (_, i) => gateway.post("/inference", { function_name: "chat", input: userInput(`around ${i}`) }))),
      Promise.all([gateway.post("/inference", json("refuse")), gateway.post("/inference", json("refuse too"))]),
      Promise.all([gateway.post("/inference", json("1")), gateway.stream("/inference", { ...json("2"), stream: true })])
    ])
    for (const response of [...chat, ...refused, ...accepted]) expect(response.status).toBe(200)
    const chatIds = chat.map((response) => response.body.inference_id as string)
    const acceptedIds = [accepted[0].body.inference_id as string, (accepted[1] as { events: Array<any> }).events[0].inference_id as string]
    const refusedIds = refused.map((response) => response.body.inference_id as string)

    const after = await until(gateway, "the batch to be written", (stats) => stats.written + stats.rejected >= start.written + start.rejected + 7)
    expect(after).toMatchObject({ queued: 0, written: start.written + 5, rejected: start.rejected + 2, dropped: 0 })
    // asked of the database itself: on ClickHouse the altered table no longer reads along with the others
    expect(await storedInferences(database, chatIds)).toBe(3)
    expect(await storedInferences(database, acceptedIds, "json")).toBe(2)
    expect(await storedInferences(database, refusedIds, "json")).toBe(0)
    expect(gateway.log()).toContain("the database refused a write, which is dropped")

    // later writes are stored
    const later = await gateway.post("/inference", { function_name: "chat", input: userInput("later") })
    await until(gateway, "a later write", (stats) => stats.written === start.written + 6)
    expect(await storedInferences(database, [later.body.inference_id])).toBe(1)
  })
})

describe.each(backends)("the write queue on %s: the database cut off", (backend) => {
  const maxQueued = 4
  const maxQueuedBytes = 4 * MiB
  let database: TestDatabase
  let proxy: TcpProxy
  let gateway: RunningGateway

  beforeAll(async () => {
    database = await freshDatabase(backend)
    const url = new URL(database.url)
    proxy = await startTcpProxy({ host: url.hostname, port: Number(url.port || 5432) })
    gateway = await startGateway({
      config: observability(`
batch_writes = { flush_interval_ms = 50, max_bytes = ${MiB} }
max_queued_writes = ${maxQueued}
max_queued_bytes = ${maxQueuedBytes}`),
      files,
      env: { GATEWAY_ANALYTICS_DB_URL: proxy.urlFor(database.url) }
    })
  })
  afterAll(async () => {
    await gateway?.stop()
    await proxy?.close()
    await database?.drop()
  })

  /** inferences answered while the database is cut off */
  const infer = (count: number, tag: string) =>
    Promise.all(Array.from({ length: count }, async (_, i) => {
      const response = await gateway.post("/inference", { function_name: "chat", input: userInput(`${tag} ${i}`), tags: { phase: tag } })
      expect(response.status).toBe(200)
      return response.body.inference_id as string
    }))

  it("with the queue full, feedback answers 503 (inferences 200, their rows dropped); once it drains, feedback is stored", async () => {
    const start = await queueStats(gateway)
    proxy.cut()
    let queued: Array<string>
    try {
      queued = await infer(maxQueued, "fills the queue")
      await until(gateway, "the queue to be full", (stats) => stats.queued === maxQueued)
      // an inference still answers; its rows are dropped and counted
      await infer(1, "past the bound")
      const full = await until(gateway, "the drop to be counted", (stats) => stats.dropped === start.dropped + 1)
      expect(full.queued).toBe(maxQueued)

      const refused = await gateway.post("/feedback", { metric_name: "thumbs_up", inference_id: queued[0], value: true })
      expect(refused.status, JSON.stringify(refused.body)).toBe(503)
      expect(refused.body.error).toMatch(/write queue is full/)
      expect(refused.body).not.toHaveProperty("feedback_id")
      expect((await queueStats(gateway)).dropped).toBe(start.dropped + 2)
    } finally {
      proxy.restore()
    }

    await until(gateway, "the queue to drain", (stats) => stats.queued === 0)
    const accepted = await gateway.post("/feedback", { metric_name: "thumbs_up", inference_id: queued[0], value: true })
    expect(accepted.status, JSON.stringify(accepted.body)).toBe(200)
    const stored = await waitForFeedback(gateway, queued[0], (feedback) => feedback.length === 1)
    expect(stored.map((row) => row.feedback_id)).toEqual([accepted.body.feedback_id])
    expect(await storedInferences(database, queued)).toBe(maxQueued)
  })

  it("past max_queued_bytes rows are dropped and counted; what was queued is stored once the database is back", async () => {
    // the previous test's last write can be readable before the gateway has its answer (and counts it)
    const start = await until(gateway, "no write in flight", (stats) => stats.queued === 0)
    const size = 600_000 // a unit of about 1.8 MB: its message is in the input, the raw request and the model's input
    proxy.cut()
    let queued: Array<string>
    let dropped: Array<string>
    try {
      const first = await gateway.post("/inference", large(size, "bytes-0"))
      await until(gateway, "the first large row to be queued", (stats) => stats.queued === 1)
      const second = await gateway.post("/inference", large(size, "bytes-1"))
      await until(gateway, "the second large row to be queued", (stats) => stats.queued === 2)
      const past = await Promise.all([gateway.post("/inference", large(size, "bytes-2")), gateway.post("/inference", large(size, "bytes-3"))])
      for (const response of [first, second, ...past]) expect(response.status).toBe(200)
      // a small row still fits in what is left of the budget
      const [small] = await infer(1, "small")
      queued = [first.body.inference_id, second.body.inference_id, small]
      dropped = past.map((response) => response.body.inference_id)

      const during = await until(gateway, "the drops to be counted", (stats) => stats.dropped === start.dropped + 2 && stats.queued === 3)
      expect(during.queuedBytes).toBeGreaterThan(2 * 3 * size)
      expect(during.queuedBytes).toBeLessThanOrEqual(maxQueuedBytes)
      expect(during.written).toBe(start.written)
    } finally {
      proxy.restore()
    }

    const after = await until(gateway, "the queue to drain", (stats) => stats.queued === 0)
    expect(after).toMatchObject({ queuedBytes: 0, written: start.written + 3, rejected: start.rejected, dropped: start.dropped + 2 })
    expect(await storedInferences(database, queued)).toBe(3)
    expect(await storedInferences(database, dropped)).toBe(0)
  })

  it("SIGTERM with large rows queued and the database down: exits 0 once it is back and they are written", async () => {
    await until(gateway, "no write in flight", (stats) => stats.queued === 0)
    proxy.cut()
    const ids = [
      (await gateway.post("/inference", large(600_000, "stop-0"))).body.inference_id as string,
      (await gateway.post("/inference", large(600_000, "stop-1"))).body.inference_id as string,
      ...(await infer(1, "stop-small"))
    ]
    await until(gateway, "the rows to be queued", (stats) => stats.queued === 3)
    const stopped = gateway.stop("SIGTERM")
    await new Promise((resolve) => setTimeout(resolve, 500))
    proxy.restore()
    expect(await stopped).toBe(0)
    expect(gateway.log()).toContain("wrote 3 queued units before stopping")
    expect(await storedInferences(database, ids)).toBe(3)
  })
})

describe("the write queue on postgres: a database that is read-only for a while", () => {
  let database: TestDatabase
  let gateway: RunningGateway

  /** sets the database read-only or not for new sessions, and ends the gateway's sessions so that it reconnects */
  const readOnly = async (on: boolean) => {
    await postgresCommand(`ALTER DATABASE ${database.name} SET default_transaction_read_only = ${on ? "on" : "off"}`)
    await postgresCommand(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '${database.name}'`)
  }

  beforeAll(async () => {
    database = await freshDatabase("postgres")
    gateway = await startGateway({
      config: observability("batch_writes = { flush_interval_ms = 50 }"),
      files,
      env: { GATEWAY_ANALYTICS_DB_URL: database.url }
    })
  })
  afterAll(async () => {
    await gateway?.stop()
    await database?.drop()
  })

  it("writes refused for a reason that is not the rows' (25006) are retried, not dropped: every row is stored", async () => {
    const before = await gateway.post("/inference", { function_name: "chat", input: userInput("before") })
    await waitForInferences(gateway, [before.body.inference_id])
    const start = await queueStats(gateway)

    await readOnly(true)
    let ids: Array<string>
    let feedbackId: string
    try {
      const responses = await Promise.all(Array.from({ length: 5 }, (_, i) =>
        gateway.post("/inference", { function_name: "chat", input: userInput(`read-only ${i}`) })))
      ids = responses.map((response) => response.body.inference_id)
      const feedback = await gateway.post("/feedback", { metric_name: "thumbs_up", inference_id: ids[0], value: false })
      expect(feedback.status, JSON.stringify(feedback.body)).toBe(200)
      feedbackId = feedback.body.feedback_id
      // more failed tries than the 3 after which such rows used to be dropped
      const during = await until(gateway, "several failed tries", (stats) => stats.failedAttempts >= start.failedAttempts + 5)
      expect(during).toMatchObject({ queued: 6, rejected: start.rejected, written: start.written })
      expect(gateway.log()).toContain("read-only transaction")
    } finally {
      await readOnly(false)
    }

    const after = await until(gateway, "the queue to drain", (stats) => stats.queued === 0)
    expect(after).toMatchObject({ written: start.written + 6, rejected: start.rejected, dropped: 0 })
    expect((await waitForInferences(gateway, ids)).map((inference) => inference.inference_id)).toEqual(ids)
    const stored = await waitForFeedback(gateway, ids[0], (feedback) => feedback.length === 1)
    expect(stored.map((row) => row.feedback_id)).toEqual([feedbackId])
  })
})
