// `npm run bench:batch`: a large batch through the OpenAI Batch API (the local fake of
// test/support/fakeBatchOpenAi.ts: JSON Lines upload, batch object, output file), on ClickHouse
// and on Postgres (the relational database always Postgres). For each backend, a gateway
// process on fresh databases; then, timed over HTTP:
//   - POST /batch_inference of N inputs (10,000 by default) of a function with a user template:
//     validation, rendering, the upload and the batch's creation, and its rows stored;
//   - the first GET /batch_inference/{id} that finds the batch finished: the output file
//     downloaded and parsed, every result stored as an inference and a model inference, and the
//     N inferences answered;
//   - then 4 concurrent GET /batch_inference/{id} of the completed batch (each the whole list,
//     read back from the database), their time and the gateway's resident memory at most meanwhile;
//   - meanwhile, GET /status over another connection, one after the other: the slowest answer
//     says how long the batch's work held the event loop at most.
// Targets: accepted in under 5 s; results stored in under 30 s.
//
// ClickHouse: the server GATEWAY_TEST_CLICKHOUSE_URL names, else a throwaway one
// (scripts/clickhouse.ts); Postgres: the machine's (scripts/postgres.ts).
//
// Options: --inputs N (default 10000), --backend clickhouse|postgres (default both), --json.
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { Pool } from "undici"
import { startClickHouse } from "../scripts/clickhouse.ts"
import { ensurePostgres } from "../scripts/postgres.ts"
import { openAiBatchGatewayConfig, startOpenAiBatchFake } from "../test/support/fakeBatchOpenAi.ts"
import { freshDatabase, type TestBackend } from "../test/support/databases.ts"
import { memoryOf, startProcess } from "./processes.ts"

const args = process.argv.slice(2)
const option = (name: string, fallback: number) => {
  const index = args.indexOf(`--${name}`)
  return index >= 0 ? Number(args[index + 1]) : fallback
}
const inputCount = option("inputs", 10_000)
const backendIndex = args.indexOf("--backend")
const chosenBackends: ReadonlyArray<TestBackend> = backendIndex >= 0 ? [args[backendIndex + 1] as TestBackend] : ["clickhouse", "postgres"]

const config = (providerToml: string) => `
[gateway]
max_request_body_bytes = 104857600
[gateway.batch]
poll_interval_s = 0
${providerToml}
[functions.summarize]
type = "chat"
user_schema = "user.json"
[functions.summarize.variants.main]
type = "chat_completion"
model = "batch_model"
user_template = "user.minijinja"
`

/** an input of a plausible size: a paragraph to summarise */
const inputAt = (index: number) => ({
  system: "You summarise customer feedback in one sentence.",
  messages: [{
    role: "user",
    content: [{
      type: "text",
      arguments: {
        ticket: `T-${index}`,
        text: `Customer ${index} wrote: the delivery of order ${index * 7} arrived two days late, the box was damaged, ` +
          "but support answered quickly and offered a discount on the next order, which they appreciated."
      }
    }]
  }]
})

const timed = async <A>(run: () => Promise<A>) => {
  const started = performance.now()
  const value = await run()
  return { value, seconds: (performance.now() - started) / 1000 }
}

/** the resident memory of `pid`, sampled every 20 ms until `stop` is called: its largest sample, in bytes */
const sampleRss = (pid: number) => {
  let largest = memoryOf(pid, "VmRSS")
  const timer = setInterval(() => {
    largest = Math.max(largest, memoryOf(pid, "VmRSS"))
  }, 20)
  return () => {
    clearInterval(timer)
    return Math.max(largest, memoryOf(pid, "VmRSS"))
  }
}

/** GET /status one after the other over its own connection until `stop` is called: the slowest answer, in ms */
const probeStatus = (url: string) => {
  const pool = new Pool(url, { connections: 1 })
  let running = true
  let slowest = 0
  const loop = (async () => {
    while (running) {
      const started = performance.now()
      const response = await pool.request({ method: "GET", path: "/status" })
      await response.body.text()
      slowest = Math.max(slowest, performance.now() - started)
    }
  })()
  return async () => {
    running = false
    await loop
    await pool.close()
    return slowest
  }
}

interface Figures {
  readonly backend: TestBackend
  readonly acceptSeconds: number
  /** while the batch was accepted, and while it was completed */
  readonly slowestStatusMs: readonly [number, number]
  readonly requestBytes: number
  readonly storeSeconds: number
  readonly answerBytes: number
  readonly peakRss: number
  /** 4 concurrent reads of the completed batch: seconds, the slowest GET /status meanwhile, the largest resident memory meanwhile */
  readonly rereadSeconds: number
  readonly rereadStatusMs: number
  readonly rereadRss: number
  readonly rereadRssBefore: number
}

const measureBackend = async (backend: TestBackend): Promise<Figures> => {
  const analytics = await freshDatabase(backend)
  const relational = backend === "postgres" ? analytics : await freshDatabase("postgres")
  const fake = await startOpenAiBatchFake()
  fake.pollsUntilDone = 0
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "gateway-bench-batch-"))
  const { toml, env } = openAiBatchGatewayConfig(fake)
  fs.writeFileSync(path.join(dir, "config.toml"), config(toml))
  fs.writeFileSync(path.join(dir, "user.json"), JSON.stringify({
    type: "object",
    properties: { ticket: { type: "string" }, text: { type: "string" } },
    required: ["ticket", "text"]
  }))
  fs.writeFileSync(path.join(dir, "user.minijinja"), "Ticket {{ ticket }}: {{ text }}\nSummarise it.")
  const gateway = await startProcess(["bin/start.mjs", "--config-file", path.join(dir, "config.toml")], /Listening on (http:\/\/[^\s"]+)/, {
    env: { ...env, GATEWAY_BIND_ADDRESS: "127.0.0.1:0", GATEWAY_ANALYTICS_DB_URL: analytics.url, GATEWAY_RELATIONAL_DB_URL: relational.url }
  })
  const pool = new Pool(gateway.match, { connections: 1 })
  const call = async (method: "GET" | "POST", route: string, body?: string) => {
    const response = await pool.request({
      method,
      path: route,
      headers: body === undefined ? {} : { "content-type": "application/json" },
      body,
      headersTimeout: 600_000,
      bodyTimeout: 600_000
    })
    const text = await response.body.text()
    if (response.statusCode !== 200) throw new Error(`${method} ${route}: ${response.statusCode} ${text.slice(0, 500)}`)
    return text
  }
  try {
    const body = JSON.stringify({ function_name: "summarize", inputs: Array.from({ length: inputCount }, (_, i) => inputAt(i)) })
    console.error(`${backend}: submitting ${inputCount} inputs (${(body.length / 1024 / 1024).toFixed(1)} MiB)`)
    const stopAcceptProbe = probeStatus(gateway.match)
    const accepted = await timed(async () => JSON.parse(await call("POST", "/batch_inference", body)))
    const slowestWhileAccepted = await stopAcceptProbe()
    const { batch_id, inference_ids } = accepted.value as { batch_id: string; inference_ids: Array<string> }
    if (inference_ids.length !== inputCount) throw new Error(`the batch has ${inference_ids.length} inferences, not ${inputCount}`)
    if (fake.batches[0]?.requests.length !== inputCount) throw new Error(`the provider received ${fake.batches[0]?.requests.length} requests`)

    console.error(`${backend}: completing it`)
    const stopCompleteProbe = probeStatus(gateway.match)
    const completed = await timed(async () => await call("GET", `/batch_inference/${batch_id}`))
    const slowestWhileCompleted = await stopCompleteProbe()
    const answer = JSON.parse(completed.value)
    if (answer.status !== "completed" || answer.inferences.length !== inputCount || answer.inferences.some((inference: any) => inference.content === undefined)) {
      throw new Error(`the batch did not complete with every answer: ${completed.value.slice(0, 300)}`)
    }
    const peakRss = memoryOf(gateway.pid, "VmHWM")

    console.error(`${backend}: reading it back 4 times at once`)
    const rereadPool = new Pool(gateway.match, { connections: 4 })
    const stopRereadProbe = probeStatus(gateway.match)
    const rereadRssBefore = memoryOf(gateway.pid, "VmRSS")
    const stopSampling = sampleRss(gateway.pid)
    const rereads = await timed(() =>
      Promise.all(Array.from({ length: 4 }, async () => {
        const response = await rereadPool.request({ method: "GET", path: `/batch_inference/${batch_id}`, headersTimeout: 600_000, bodyTimeout: 600_000 })
        const text = await response.body.text()
        if (response.statusCode !== 200 || text.length !== completed.value.length) throw new Error(`a read of the completed batch differs: ${response.statusCode} ${text.slice(0, 300)}`)
      })))
    const rereadRss = stopSampling()
    const rereadStatusMs = await stopRereadProbe()
    await rereadPool.close()
    return {
      backend,
      rereadSeconds: rereads.seconds,
      rereadStatusMs,
      rereadRss,
      rereadRssBefore,
      acceptSeconds: accepted.seconds,
      slowestStatusMs: [slowestWhileAccepted, slowestWhileCompleted],
      requestBytes: body.length,
      storeSeconds: completed.seconds,
      answerBytes: completed.value.length,
      peakRss
    }
  } finally {
    await pool.close()
    gateway.child.kill("SIGTERM")
    await fake.close()
    await analytics.drop()
    if (relational !== analytics) await relational.drop()
    fs.rmSync(dir, { recursive: true, force: true })
  }
}

const main = async () => {
  let stopClickHouse: (() => Promise<void>) | undefined
  if (chosenBackends.includes("clickhouse") && !process.env.GATEWAY_TEST_CLICKHOUSE_URL) {
    const server = await startClickHouse()
    stopClickHouse = server.stop
    process.env.GATEWAY_TEST_CLICKHOUSE_URL = server.url
  }
  process.env.GATEWAY_TEST_POSTGRES_URL ??= await ensurePostgres()
  const results: Array<Figures> = []
  try {
    for (const backend of chosenBackends) results.push(await measureBackend(backend))
  } finally {
    await stopClickHouse?.()
  }
  const mib = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MiB`
  const rows: Array<[string, ...Array<string>]> = [
    ["", ...results.map((result) => result.backend)],
    [`POST /batch_inference, ${inputCount} inputs: accepted in`, ...results.map((result) => `${result.acceptSeconds.toFixed(2)} s (${mib(result.requestBytes)})`)],
    ["first GET: results downloaded, stored and answered in", ...results.map((result) => `${result.storeSeconds.toFixed(2)} s (${mib(result.answerBytes)})`)],
    ["slowest GET /status meanwhile: accepting / completing", ...results.map(({ slowestStatusMs: [accepting, completing] }) => `${accepting.toFixed(0)} / ${completing.toFixed(0)} ms`)],
    ["gateway peak resident memory (accepting, completing)", ...results.map((result) => mib(result.peakRss))],
    ["4 concurrent reads of the completed batch in", ...results.map((result) => `${result.rereadSeconds.toFixed(2)} s`)],
    ["slowest GET /status meanwhile", ...results.map((result) => `${result.rereadStatusMs.toFixed(0)} ms`)],
    ["gateway resident memory before / at most meanwhile", ...results.map((result) => `${mib(result.rereadRssBefore)} / ${mib(result.rereadRss)}`)]
  ]
  const widths = rows[0].map((_, column) => Math.max(...rows.map((row) => row[column].length)))
  console.log(`batch inference at scale: ${inputCount} inputs through the OpenAI Batch API (local fake)`)
  for (const row of rows) console.log(row.map((cell, column) => column === 0 ? cell.padEnd(widths[column]) : cell.padStart(widths[column])).join("   "))
  console.log("targets: accepted in under 5 s; results stored in under 30 s")
  if (args.includes("--json")) console.log(JSON.stringify(results))
}

main().then(() => process.exit(0), (error) => {
  console.error(error)
  process.exit(1)
})
