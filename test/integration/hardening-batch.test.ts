/**
 * Hardening (issue 33, finding 8): reads of a batch neither multiply provider calls nor hold
 * the gateway. Over HTTP, two gateway processes on one real Postgres (analytics and relational)
 * and a fake OpenAI Batch API that records every request (test/support/fakeBatchOpenAi.ts):
 * - storms of concurrent reads of a pending batch, across both gateways, poll the provider at
 *   most once per `poll_interval_s` (the claim); of a batch the provider finished, one read
 *   polls and downloads its results, the others answer pending meanwhile; with
 *   `poll_interval_s = 0` the batch's lock alone keeps it to one poll and one download;
 * - a result file of 200 MB of junk fails the batch cleanly (no result could be read), read a
 *   line at a time: `/health` keeps answering meanwhile and the gateway's memory does not grow
 *   by the file's size;
 * - a completed batch of thousands of inferences, paged with `limit`/`after`, covers every
 *   inference exactly once in input order, and the whole list (written a page at a time)
 *   equals the pages put together.
 */
import * as fs from "node:fs"
import { Pool } from "undici"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { freshDatabase, type TestDatabase } from "../support/databases.ts"
import { type FakeOpenAiBatch, openAiBatchGatewayConfig, startOpenAiBatchFake } from "../support/fakeBatchOpenAi.ts"
import { type RunningGateway, startGateway } from "../support/gateway.ts"
import { observabilityToml } from "../support/observability.ts"

const MiB = 1024 * 1024

const config = (providerToml: string, pollIntervalS: number) => `
${observabilityToml()}
[gateway.batch]
poll_interval_s = ${pollIntervalS}
${providerToml}
[functions.ask]
type = "chat"
[functions.ask.variants.main]
type = "chat_completion"
model = "batch_model"

[functions.many]
type = "chat"
[functions.many.variants.dummy]
type = "chat_completion"
model = "dummy::hello"
`

const questions = (count: number, prefix = "question") =>
  Array.from({ length: count }, (_, i) => ({ messages: [{ role: "user", content: `${prefix} ${i}` }] }))

const submit = async (gateway: RunningGateway, functionName: string, count: number) => {
  const response = await gateway.post("/batch_inference", { function_name: functionName, inputs: questions(count) })
  expect(response.status, JSON.stringify(response.body)).toBe(200)
  return response.body as { batch_id: string; inference_ids: Array<string> }
}

/** what the provider was asked about batches: status requests and result file downloads */
const asked = (fake: FakeOpenAiBatch) => ({
  polls: fake.requests.filter((request) => request.method === "GET" && /\/batches\/[^/]+$/.test(request.path)).length,
  downloads: fake.requests.filter((request) => request.method === "GET" && /\/files\/[^/]+\/content$/.test(request.path)).length
})

/** `count` reads of the batch at once, spread over the gateways in turn */
const storm = (gateways: ReadonlyArray<RunningGateway>, batchId: string, count = 6) =>
  Promise.all(Array.from({ length: count }, (_, i) => gateways[i % gateways.length].get(`/batch_inference/${batchId}`)))

/** the resident memory of `pid` in bytes (Linux) */
const residentOf = (pid: number): number => Number(/^VmRSS:\s+(\d+) kB/m.exec(fs.readFileSync(`/proc/${pid}/status`, "utf8"))![1]) * 1024

/** the resident memory of `pid` sampled every 10 ms until stopped: the largest sample */
const sampleResident = (pid: number) => {
  let largest = residentOf(pid)
  const timer = setInterval(() => {
    largest = Math.max(largest, residentOf(pid))
  }, 10)
  return () => {
    clearInterval(timer)
    return Math.max(largest, residentOf(pid))
  }
}

/** GET /health one after the other over one connection until stopped: how many answered, all 200, and the slowest */
const probeHealth = (url: string) => {
  const pool = new Pool(url, { connections: 1 })
  let running = true
  let answered = 0
  let slowestMs = 0
  const statuses = new Set<number>()
  const loop = (async () => {
    while (running) {
      const started = performance.now()
      const response = await pool.request({ method: "GET", path: "/health" })
      await response.body.text()
      statuses.add(response.statusCode)
      answered++
      slowestMs = Math.max(slowestMs, performance.now() - started)
    }
  })()
  return async () => {
    running = false
    await loop
    await pool.close()
    return { answered, slowestMs, statuses: [...statuses] }
  }
}

describe("batch reads across two gateways (poll_interval_s = 600)", () => {
  let database: TestDatabase
  let fake: FakeOpenAiBatch
  let first: RunningGateway
  let second: RunningGateway

  beforeAll(async () => {
    database = await freshDatabase("postgres")
    fake = await startOpenAiBatchFake()
    const { toml, env } = openAiBatchGatewayConfig(fake)
    const start = () =>
      startGateway({ config: config(toml, 600), env: { ...env, GATEWAY_ANALYTICS_DB_URL: database.url, GATEWAY_RELATIONAL_DB_URL: database.url } })
    // one after the other: the first applies the migrations
    first = await start()
    second = await start()
  }, 60_000)

  afterAll(async () => {
    await Promise.all([first?.stop(), second?.stop()])
    await fake?.close()
    await database?.drop()
  })

  it("storms of reads of a pending batch across both gateways poll the provider once per interval, not once per read", async () => {
    fake.reset()
    fake.pollsUntilDone = 1000
    const { batch_id } = await submit(first, "ask", 3)
    for (let round = 0; round < 3; round++) {
      const reads = await storm([first, second], batch_id)
      for (const read of reads) expect(read.body).toEqual({ status: "pending" })
    }
    expect(asked(fake)).toEqual({ polls: 1, downloads: 0 })
  })

  it("of a batch the provider finished, one read polls and downloads its results, the others answer pending meanwhile; then all answer completed", async () => {
    fake.reset()
    fake.pollsUntilDone = 0
    // the poll that finds it finished is slow: the other reads come while it runs
    fake.pollDelayMs = 1000
    const { batch_id, inference_ids } = await submit(second, "ask", 4)
    const reads = await storm([first, second], batch_id)
    const statuses = reads.map((read) => read.body.status).sort()
    expect(statuses).toEqual(["completed", "pending", "pending", "pending", "pending", "pending"])
    expect(asked(fake)).toEqual({ polls: 1, downloads: 1 })
    for (const gateway of [first, second]) {
      const read = await gateway.get(`/batch_inference/${batch_id}`)
      expect(read.body.status).toBe("completed")
      expect(read.body.inferences.map((inference: any) => inference.inference_id)).toEqual(inference_ids)
    }
    expect(asked(fake)).toEqual({ polls: 1, downloads: 1 })
  })

  it("a result file of 200 MB of junk fails the batch cleanly, read a line at a time: /health answers meanwhile, memory does not grow by the file", async () => {
    fake.reset()
    fake.pollsUntilDone = 0
    // junk lines, then one line of 50 MB that starts like JSON and never ends (past the 32 MiB bound on a line)
    const junk = Buffer.alloc(200 * MiB, "this is not a result of the batch, nor JSON at all: 0123456789 abcdefghijklmnopqrstuvwxyz\n")
    junk.fill("{", 150 * MiB)
    fake.outputFile = junk
    const { batch_id, inference_ids } = await submit(first, "ask", 2)
    const rssBefore = residentOf(first.process.pid!)
    const stopSampling = sampleResident(first.process.pid!)
    const stopProbe = probeHealth(first.url)
    const read = await first.get(`/batch_inference/${batch_id}`)
    const probe = await stopProbe()
    const peak = stopSampling()
    expect(read.status, JSON.stringify(read.body)).toBe(200)
    expect(read.body).toEqual({ status: "failed", error: "the provider's batch completed without any result" })
    expect(asked(fake)).toEqual({ polls: 1, downloads: 1 })
    // the gateway kept answering while it read the file (before: one 6.6 s stall); a generous bound for a loaded machine
    expect(probe.statuses).toEqual([200])
    expect(probe.answered).toBeGreaterThan(5)
    expect(probe.slowestMs).toBeLessThan(2000)
    // never the file whole (before: 825 MB resident for a file of 200 MB)
    expect(peak - rssBefore).toBeLessThan(150 * MiB)
    // failed for good: read again from the database, the provider not asked
    expect((await second.get(`/batch_inference/${batch_id}/inference/${inference_ids[0]}`)).body).toEqual(read.body)
    expect(asked(fake)).toEqual({ polls: 1, downloads: 1 })
    fake.outputFile = undefined
    // and batches go on
    fake.pollsUntilDone = 0
    const next = await submit(first, "ask", 2)
    expect((await first.get(`/batch_inference/${next.batch_id}`)).body.status).toBe("completed")
  }, 60_000)

  it("pages a completed batch of 2,500 inferences with limit and after, every inference once in input order; the whole list is the pages put together", async () => {
    const { batch_id, inference_ids } = await submit(first, "many", 2500)
    const whole = await first.get(`/batch_inference/${batch_id}`)
    expect(whole.status).toBe(200)
    expect(whole.headers.get("content-type")).toBe("application/json")
    expect(whole.body.status).toBe("completed")
    expect(whole.body.batch_id).toBe(batch_id)
    expect(Object.keys(whole.body).sort()).toEqual(["batch_id", "inferences", "status"])
    expect(whole.body.inferences.map((inference: any) => inference.inference_id)).toEqual(inference_ids)
    for (const inference of whole.body.inferences) expect(inference.content).toEqual(expect.any(Array))

    const pages: Array<any> = []
    let after: string | null = null
    do {
      const read: { status: number; body: any } = await second.get(`/batch_inference/${batch_id}?limit=700${after === null ? "" : `&after=${after}`}`)
      expect(read.status, JSON.stringify(read.body).slice(0, 300)).toBe(200)
      expect(read.body.inferences.length).toBeLessThanOrEqual(700)
      pages.push(read.body)
      after = read.body.next_after
      if (after !== null) expect(after).toBe(read.body.inferences.at(-1).inference_id)
    } while (after !== null)
    expect(pages.map((page) => page.inferences.length)).toEqual([700, 700, 700, 400])
    expect(pages.flatMap((page) => page.inferences)).toEqual(whole.body.inferences)

    // the rest after an inference, whole; a page of exactly what is left ends the paging
    const rest = await first.get(`/batch_inference/${batch_id}?after=${inference_ids[2099]}`)
    expect(rest.body.inferences).toEqual(whole.body.inferences.slice(2100))
    const last = await first.get(`/batch_inference/${batch_id}?after=${inference_ids[2099]}&limit=400`)
    expect(last.body).toEqual({ status: "completed", batch_id, inferences: whole.body.inferences.slice(2100), next_after: null })
    expect((await first.get(`/batch_inference/${batch_id}?after=${inference_ids[2499]}&limit=5`)).body.inferences).toEqual([])
  }, 60_000)

  it("refuses paging it cannot follow with 400 naming the parameter; a pending batch answers pending whatever the paging", async () => {
    const { batch_id } = await submit(first, "many", 3)
    await first.get(`/batch_inference/${batch_id}`)
    for (const [query, named] of [["limit=0", "limit"], ["limit=1001", "limit"], ["limit=ten", "limit"], ["after=nope", "after"], [`after=${batch_id}`, "after"]]) {
      const read = await first.get(`/batch_inference/${batch_id}?${query}`)
      expect(read.status, query).toBe(400)
      expect(read.body.error).toMatch(new RegExp(`^${named}: `))
    }
    fake.reset()
    fake.pollsUntilDone = 1000
    const pending = await submit(second, "ask", 2)
    expect((await first.get(`/batch_inference/${pending.batch_id}?limit=1`)).body).toEqual({ status: "pending" })
  })
})

describe("batch reads across two gateways (poll_interval_s = 0: every read may poll, one at a time)", () => {
  let database: TestDatabase
  let fake: FakeOpenAiBatch
  let gateways: Array<RunningGateway> = []

  beforeAll(async () => {
    database = await freshDatabase("postgres")
    fake = await startOpenAiBatchFake()
    const { toml, env } = openAiBatchGatewayConfig(fake)
    const start = () =>
      startGateway({ config: config(toml, 0), env: { ...env, GATEWAY_ANALYTICS_DB_URL: database.url, GATEWAY_RELATIONAL_DB_URL: database.url } })
    gateways = [await start(), await start()]
  }, 60_000)

  afterAll(async () => {
    await Promise.all(gateways.map((gateway) => gateway.stop()))
    await fake?.close()
    await database?.drop()
  })

  it("6 reads at once of a finished batch: one poll and one download, the batch's lock taken by one read, the others answering pending", async () => {
    fake.pollsUntilDone = 0
    fake.pollDelayMs = 1000
    const { batch_id } = await submit(gateways[0], "ask", 4)
    const reads = await storm(gateways, batch_id)
    expect(reads.map((read) => read.body.status).sort()).toEqual(["completed", "pending", "pending", "pending", "pending", "pending"])
    expect(asked(fake)).toEqual({ polls: 1, downloads: 1 })
    expect(fake.maxConcurrentPolls).toBe(1)
  })
})
