/**
 * Observability conformance, part 7 (issue 3 "Reliability tests"), against ClickHouse and
 * Postgres alike:
 * - the database cut off (through a TCP proxy) while inferences are served: every inference
 *   answers 200; once the database is back, every row that fit in the bounded queue is
 *   stored, and /status's `dropped` counts the rest;
 * - a graceful stop (SIGTERM) with requests in flight and rows queued: exit 0, no row lost.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { freshDatabase, type TestDatabase } from "../support/databases.ts"
import { type RunningGateway, startGateway } from "../support/gateway.ts"
import {
  backends,
  getInferences,
  listInferences,
  observabilityToml,
  poll,
  queueStats,
  userInput,
  waitForInference,
  waitForInferences
} from "../support/observability.ts"
import { startTcpProxy, type TcpProxy } from "../support/tcpProxy.ts"

const functions = `
[metrics.thumbs_up]
type = "boolean"
level = "inference"

[functions.chat]
type = "chat"
[functions.chat.variants.text]
type = "chat_completion"
model = "dummy::hello"

[functions.slow]
type = "chat"
[functions.slow.variants.slow]
type = "chat_completion"
model = "dummy::delay_500ms"
`

describe.each(backends)("observability on %s: the database goes away while inferences are served", (backend) => {
  const maxQueued = 20
  const sent = 60
  let database: TestDatabase
  let proxy: TcpProxy
  let gateway: RunningGateway

  beforeAll(async () => {
    database = await freshDatabase(backend)
    const url = new URL(database.url)
    proxy = await startTcpProxy({ host: url.hostname, port: Number(url.port || 5432) })
    gateway = await startGateway({
      config: `${observabilityToml({ flushIntervalMs: 20, maxQueued })}\n${functions}`,
      env: { GATEWAY_ANALYTICS_DB_URL: proxy.urlFor(database.url) }
    })
  })
  afterAll(async () => {
    await gateway?.stop()
    await proxy?.close()
    await database?.drop()
  })

  it(`every inference answers 200; after the outage the ${maxQueued} queued rows are stored and the drop counter accounts for the rest`, async () => {
    // the gateway writes through the proxy while the database is there
    const before = await gateway.post("/inference", { function_name: "chat", input: userInput("before"), tags: { phase: "before" } })
    expect(before.status).toBe(200)
    await waitForInference(gateway, before.body.inference_id)
    await poll("the queue to drain", async () => ((await queueStats(gateway)).queued === 0 ? true : undefined))
    const start = await queueStats(gateway)
    expect(start).toMatchObject({ backend, queued: 0, dropped: 0, rejected: 0 })

    proxy.cut()
    const ids: Array<string> = []
    try {
      for (let i = 0; i < sent; i++) {
        const began = Date.now()
        const body = { function_name: "chat", input: userInput(`during the outage ${i}`), tags: { phase: "outage", n: String(i) } }
        if (i % 10 === 9) {
          const streamed = await gateway.stream("/inference", { ...body, stream: true })
          expect(streamed.status, `inference ${i}`).toBe(200)
          expect(streamed.events.at(-1)).toBe("[DONE]")
          ids.push(streamed.events[0].inference_id)
        } else {
          const response = await gateway.post("/inference", body)
          expect(response.status, `inference ${i}: ${JSON.stringify(response.body)}`).toBe(200)
          ids.push(response.body.inference_id)
        }
        // the database being down does not slow an inference down
        expect(Date.now() - began, `inference ${i}`).toBeLessThan(1_000)
      }
      const during = await queueStats(gateway)
      expect(during.queued).toBe(maxQueued)
      expect(during.dropped).toBe(sent - maxQueued)
      expect(during.written).toBe(start.written)
      expect((await gateway.get("/health")).status).toBe(503)
      // the write is being retried, and logged
      await poll("a failed write attempt", async () => ((await queueStats(gateway)).failedAttempts > start.failedAttempts ? true : undefined))
      expect(gateway.log()).toContain("observability write failed")
    } finally {
      proxy.restore()
    }

    // the database is back: what was queued is written (the retry backoff is at most 5 s)
    const after = await poll("the queue to drain after the outage", async () => {
      const stats = await queueStats(gateway)
      return stats.queued === 0 ? stats : undefined
    }, { timeoutMs: 15_000 })
    expect(after.dropped).toBe(sent - maxQueued)
    expect(after.rejected).toBe(0)
    expect(after.written).toBe(start.written + maxQueued)
    expect(gateway.log()).toMatch(/dropped \d+ writes/)

    const stored = await listInferences(gateway, { filters: { type: "tag", key: "phase", value: "outage" }, limit: 1000 })
    expect(stored.length + after.dropped).toBe(sent)
    // the rows that fit are the first ones, in full
    expect(stored.map((inference) => inference.inference_id).sort()).toEqual(ids.slice(0, maxQueued).sort())
    const full = await getInferences(gateway, ids.slice(0, maxQueued), { include_model_inferences: true })
    expect(full).toHaveLength(maxQueued)
    for (const inference of full) {
      expect(inference.model_inferences).toHaveLength(1)
      expect(inference.output).toEqual([{ type: "text", text: "Hello from the dummy provider. This answer is always the same." }])
    }
    expect(await getInferences(gateway, ids.slice(maxQueued))).toEqual([])

    // and the gateway keeps storing
    const later = await gateway.post("/inference", { function_name: "chat", input: userInput("after"), tags: { phase: "after" } })
    await waitForInference(gateway, later.body.inference_id)
    expect((await gateway.get("/health")).body).toEqual({ gateway: "ok", [backend]: "ok" })
  })
})

describe.each(backends)("observability on %s: a graceful stop under load", (backend) => {
  let database: TestDatabase
  let reader: RunningGateway | undefined

  beforeAll(async () => {
    database = await freshDatabase(backend)
  })
  afterAll(async () => {
    await reader?.stop()
    await database?.drop()
  })

  it("SIGTERM with requests in flight and rows queued exits 0 and loses no row", async () => {
    // rows wait up to 5 s in the queue: at SIGTERM, every one of them is still queued
    const gateway = await startGateway({
      config: `${observabilityToml({ flushIntervalMs: 5_000 })}\n${functions}`,
      env: { GATEWAY_ANALYTICS_DB_URL: database.url }
    })
    let exited = false
    try {
      const quick = await Promise.all(Array.from({ length: 30 }, (_, i) =>
        gateway.post("/inference", { function_name: "chat", input: userInput(`queued ${i}`), tags: { load: "yes" } })))
      expect(quick.every((response) => response.status === 200)).toBe(true)
      const first = quick[0].body
      const feedback = await gateway.post("/feedback", { metric_name: "thumbs_up", inference_id: first.inference_id, value: true })
      expect(feedback.status).toBe(200)
      expect((await queueStats(gateway)).queued).toBe(31)

      // in flight at SIGTERM: slow inferences (half a second each), plain and streamed
      const inFlight = [
        ...Array.from({ length: 6 }, (_, i) =>
          gateway.post("/inference", { function_name: "slow", input: userInput(`in flight ${i}`), tags: { load: "yes" } })
            .then((response) => ({ status: response.status, id: response.body?.inference_id as string | undefined }))),
        ...Array.from({ length: 3 }, (_, i) =>
          gateway.stream("/inference", { function_name: "slow", input: userInput(`streamed ${i}`), stream: true, tags: { load: "yes" } })
            .then((response) => ({
              status: response.events.at(-1) === "[DONE]" ? response.status : -1,
              id: response.events[0]?.inference_id as string | undefined
            })))
      ].map((promise) => promise.catch((error: Error) => ({ status: 0, id: undefined, error: error.message })))
      await new Promise((resolve) => setTimeout(resolve, 150))

      const stopping = Date.now()
      const code = await gateway.stop("SIGTERM")
      exited = true
      expect(code).toBe(0)
      // no waiting for the 5 s flush interval
      expect(Date.now() - stopping).toBeLessThan(4_500)
      expect(gateway.log()).toMatch(/wrote \d+ queued units before stopping/)

      const finished = await Promise.all(inFlight)
      // the requests in flight were answered before the exit
      expect(finished.map((result) => result.status)).toEqual(finished.map(() => 200))

      // every row the gateway answered for is in the database, read by another gateway
      reader = await startGateway({
        config: `${observabilityToml()}\n${functions}`,
        env: { GATEWAY_ANALYTICS_DB_URL: database.url }
      })
      const answered = [...quick.map((response) => response.body.inference_id as string), ...finished.map((result) => result.id!)]
      expect(answered).toHaveLength(39)
      const stored = await getInferences(reader, answered, { include_feedback: true, include_model_inferences: true })
      expect(stored.map((inference) => inference.inference_id)).toEqual(answered)
      for (const inference of stored) expect(inference.model_inferences).toHaveLength(1)
      expect(stored[0].feedback.map((row: any) => row.feedback_id)).toEqual([feedback.body.feedback_id])
      const listed = await listInferences(reader, { filters: { type: "tag", key: "load", value: "yes" }, limit: 100 })
      expect(listed).toHaveLength(39)
    } finally {
      if (!exited) await gateway.stop("SIGKILL")
    }
  })

  it("SIGTERM while the database is down: the gateway waits for it (bounded) and exits 0 once the rows are written", async () => {
    const url = new URL(database.url)
    const proxy = await startTcpProxy({ host: url.hostname, port: Number(url.port || 5432) })
    const gateway = await startGateway({
      config: `${observabilityToml({ flushIntervalMs: 5_000 })}\n${functions}`,
      env: { GATEWAY_ANALYTICS_DB_URL: proxy.urlFor(database.url) }
    })
    let exited = false
    try {
      const responses = await Promise.all(Array.from({ length: 10 }, (_, i) =>
        gateway.post("/inference", { function_name: "chat", input: userInput(`down at stop ${i}`) })))
      expect(responses.every((response) => response.status === 200)).toBe(true)
      proxy.cut()
      const stopped = gateway.stop("SIGTERM")
      // the database comes back while the gateway is stopping
      await new Promise((resolve) => setTimeout(resolve, 700))
      proxy.restore()
      expect(await stopped).toBe(0)
      exited = true
      const ids = responses.map((response) => response.body.inference_id as string)
      reader ??= await startGateway({ config: `${observabilityToml()}\n${functions}`, env: { GATEWAY_ANALYTICS_DB_URL: database.url } })
      expect((await waitForInferences(reader, ids, { timeoutMs: 1_000 })).map((inference) => inference.inference_id)).toEqual(ids)
    } finally {
      if (!exited) await gateway.stop("SIGKILL")
      await proxy.close()
    }
  })
})
