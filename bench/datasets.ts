// `npm run bench:datasets`: datasets at scale, on ClickHouse and on Postgres. For each backend,
// a fresh database holding N stored inferences (100,000 by default), written straight through
// the stores' write path (what the write queue does), and a gateway process on it; then, timed
// over HTTP:
//   - from_inferences over all N (one query, paged inside the gateway): datapoints per second;
//   - export of that dataset as JSON Lines, and import of the file into another dataset:
//     datapoints per second each;
//   - list_datapoints with a tag filter (one every datapoint carries, so that the offsets reach
//     deep), limit 100, at offset 0 and at offset 0.9 N: p50 and p99;
//   - get_datapoints of 100 ids drawn at random: p50 and p99.
// Targets: creation >= 5,000 datapoints/s, listing p99 < 200 ms at offset 0.
//
// ClickHouse: the server GATEWAY_TEST_CLICKHOUSE_URL names, else a throwaway one
// (scripts/clickhouse.ts); Postgres: the machine's (scripts/postgres.ts). Each run takes
// databases of its own and drops them at the end.
//
// Options: --inferences N (default 100000), --samples S (requests per latency figure, default
// 100), --backend clickhouse|postgres (default both), --json (the figures as JSON too).
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Scope from "effect/Scope"
import { Pool } from "undici"
import { makeClickHouseStores } from "../layers/clickhouse/stores.ts"
import { makePostgresStores } from "../layers/postgres/stores.ts"
import { startClickHouse } from "../scripts/clickhouse.ts"
import { ensurePostgres } from "../scripts/postgres.ts"
import { uuidv7, uuidv7Timestamp } from "../src/ids.ts"
import type { StoredInference } from "../src/analytics/records.ts"
import type { AnalyticsStores } from "../layers/observability/stores.ts"
import { freshDatabase, type TestBackend } from "../test/support/databases.ts"
import { memoryOf, startProcess } from "./processes.ts"

const args = process.argv.slice(2)
const option = (name: string, fallback: number) => {
  const index = args.indexOf(`--${name}`)
  return index >= 0 ? Number(args[index + 1]) : fallback
}
const inferenceCount = option("inferences", 100_000)
const samples = option("samples", 100)
const backendIndex = args.indexOf("--backend")
const chosenBackends: ReadonlyArray<TestBackend> = backendIndex >= 0 ? [args[backendIndex + 1] as TestBackend] : ["clickhouse", "postgres"]
const deepOffset = Math.floor(inferenceCount * 0.9)
/** inferences written per statement */
const writeBatchSize = 5000

const config = `
[gateway.observability]
batch_writes = { flush_interval_ms = 100 }

[functions.bench]
type = "chat"
[functions.bench.variants.main]
type = "chat_completion"
model = "dummy::hello"
`

/** a stored chat inference of `bench`, of a plausible size (a short conversation, a one-line answer) */
const inferenceAt = (id: string, index: number): StoredInference => ({
  id,
  workspace: "default",
  timestamp: uuidv7Timestamp(id),
  functionName: "bench",
  functionType: "chat",
  variantName: "main",
  episodeId: id,
  input: {
    system: "You are a helpful assistant who answers in one sentence.",
    messages: [{ role: "user", content: [{ type: "text", text: `Question ${index}: what is the capital of country number ${index % 200}?` }] }]
  },
  output: [{ type: "text", text: `The capital of country number ${index % 200} is City ${index % 200}.` }],
  inferenceParams: { chat_completion: { temperature: 0.2, max_tokens: 100 } },
  processingTimeMs: 120,
  tags: { source: "bench", shard: String(index % 16) }
})

const openStores = async (backend: TestBackend, url: string) => {
  const scope = Effect.runSync(Scope.make())
  const make = backend === "clickhouse" ? makeClickHouseStores : makePostgresStores
  const stores: AnalyticsStores = await Effect.runPromise(Scope.provide(scope)(make(url)))
  return { stores, close: () => Effect.runPromise(Scope.close(scope, Exit.void)) }
}

/** `count` inferences written through the store's write path, oldest first, a millisecond apart */
const storeInferences = async (stores: AnalyticsStores, count: number) => {
  const start = Date.now() - count - 60_000
  for (let offset = 0; offset < count; offset += writeBatchSize) {
    const inferences: Array<StoredInference> = []
    for (let index = offset; index < Math.min(count, offset + writeBatchSize); index++) inferences.push(inferenceAt(uuidv7(start + index), index))
    const batch = { inferences, modelInferences: [], feedback: [] }
    await Effect.runPromise(Effect.flatMap(Effect.fromResult(stores.database.encode(batch)), stores.database.write))
  }
}

const percentile = (sorted: ReadonlyArray<number>, p: number) => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]

interface Answer {
  readonly status: number
  readonly text: string
}

const call = async (pool: Pool, method: "GET" | "POST", path: string, body?: string, contentType = "application/json"): Promise<Answer> => {
  const response = await pool.request({
    method,
    path,
    headers: body === undefined ? {} : { "content-type": contentType },
    body,
    headersTimeout: 600_000,
    bodyTimeout: 600_000
  })
  return { status: response.statusCode, text: await response.body.text() }
}

const expectOk = (what: string, answer: Answer) => {
  if (answer.status !== 200) throw new Error(`${what}: ${answer.status} ${answer.text.slice(0, 500)}`)
  return answer.text
}

/** the milliseconds of `samples` sequential calls of `request`: p50 and p99 */
const latencies = async (request: () => Promise<Answer>, what: string) => {
  // a few to warm up the connection, the JIT and the database's caches
  for (let i = 0; i < 5; i++) expectOk(what, await request())
  const times: Array<number> = []
  for (let i = 0; i < samples; i++) {
    const started = performance.now()
    expectOk(what, await request())
    times.push(performance.now() - started)
  }
  times.sort((a, b) => a - b)
  return { p50: percentile(times, 0.5), p99: percentile(times, 0.99) }
}

const timed = async <A>(run: () => Promise<A>) => {
  const started = performance.now()
  const value = await run()
  return { value, seconds: (performance.now() - started) / 1000 }
}

interface Figures {
  readonly backend: TestBackend
  readonly storeSeconds: number
  readonly fromInferences: number
  readonly exportRate: number
  readonly exportBytes: number
  readonly importRate: number
  readonly listAtZero: { readonly p50: number; readonly p99: number }
  readonly listDeep: { readonly p50: number; readonly p99: number }
  readonly get100: { readonly p50: number; readonly p99: number }
  /** the gateway's resident memory at most (bytes): after from_inferences, after export, after import */
  readonly peakRss: { readonly created: number; readonly exported: number; readonly imported: number }
}

const measureBackend = async (backend: TestBackend): Promise<Figures> => {
  const database = await freshDatabase(backend)
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "gateway-bench-datasets-"))
  fs.writeFileSync(path.join(dir, "config.toml"), config)
  const gateway = await startProcess(["bin/start.mjs", "--config-file", path.join(dir, "config.toml")], /Listening on (http:\/\/[^\s"]+)/, {
    env: { GATEWAY_BIND_ADDRESS: "127.0.0.1:0", GATEWAY_ANALYTICS_DB_URL: database.url }
  })
  const pool = new Pool(gateway.match, { connections: 1 })
  const { stores, close } = await openStores(backend, database.url)
  try {
    console.error(`${backend}: storing ${inferenceCount} inferences`)
    const stored = await timed(() => storeInferences(stores, inferenceCount))

    console.error(`${backend}: from_inferences`)
    const created = await timed(async () =>
      JSON.parse(expectOk("from_inferences", await call(pool, "POST", "/v1/datasets/bench/from_inferences", JSON.stringify({
        type: "inference_query",
        function_name: "bench",
        limit: inferenceCount
      })))).ids as Array<string>
    )
    if (created.value.length !== inferenceCount) throw new Error(`from_inferences made ${created.value.length} datapoints, not ${inferenceCount}`)
    const peakCreated = memoryOf(gateway.pid, "VmHWM")

    console.error(`${backend}: export and import`)
    const exported = await timed(async () => expectOk("export", await call(pool, "GET", "/v1/datasets/bench/datapoints/export")))
    const lines = exported.value.split("\n").length - 1
    if (lines !== inferenceCount) throw new Error(`export wrote ${lines} lines, not ${inferenceCount}`)
    const peakExported = memoryOf(gateway.pid, "VmHWM")
    const imported = await timed(async () =>
      JSON.parse(expectOk("import", await call(pool, "POST", "/v1/datasets/bench_imported/datapoints/import", exported.value, "application/jsonl")))
        .ids as Array<string>
    )
    if (imported.value.length !== inferenceCount) throw new Error(`import made ${imported.value.length} datapoints, not ${inferenceCount}`)
    const peakImported = memoryOf(gateway.pid, "VmHWM")

    console.error(`${backend}: latencies`)
    const listAt = (offset: number) => () =>
      call(pool, "POST", "/v1/datasets/bench/list_datapoints", JSON.stringify({
        filter: { type: "tag", key: "source", value: "bench" },
        limit: 100,
        offset
      }))
    const listAtZero = await latencies(listAt(0), "list_datapoints at offset 0")
    const listDeep = await latencies(listAt(deepOffset), `list_datapoints at offset ${deepOffset}`)
    const ids = created.value
    const get100 = await latencies(() => {
      const chosen = Array.from({ length: 100 }, () => ids[Math.floor(Math.random() * ids.length)])
      return call(pool, "POST", "/v1/datasets/bench/get_datapoints", JSON.stringify({ ids: chosen }))
    }, "get_datapoints")
    return {
      backend,
      storeSeconds: stored.seconds,
      fromInferences: inferenceCount / created.seconds,
      exportRate: inferenceCount / exported.seconds,
      exportBytes: Buffer.byteLength(exported.value),
      importRate: inferenceCount / imported.seconds,
      listAtZero,
      listDeep,
      get100,
      peakRss: { created: peakCreated, exported: peakExported, imported: peakImported }
    }
  } finally {
    await pool.close()
    gateway.child.kill("SIGTERM")
    await close()
    await database.drop()
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
  if (chosenBackends.includes("postgres") && !process.env.GATEWAY_TEST_POSTGRES_URL) process.env.GATEWAY_TEST_POSTGRES_URL = await ensurePostgres()
  const results: Array<Figures> = []
  try {
    for (const backend of chosenBackends) results.push(await measureBackend(backend))
  } finally {
    await stopClickHouse?.()
  }
  const rate = (perSecond: number) => `${Math.round(perSecond).toLocaleString("en-US")} /s`
  const ms = (value: number) => `${value.toFixed(1)} ms`
  const rows: Array<[string, ...Array<string>]> = [
    ["", ...results.map((result) => result.backend)],
    [`inferences stored (write path, setup)`, ...results.map((result) => `${result.storeSeconds.toFixed(1)} s`)],
    [`from_inferences, ${inferenceCount} datapoints`, ...results.map((result) => rate(result.fromInferences))],
    [`export (JSON Lines)`, ...results.map((result) => `${rate(result.exportRate)}, ${(result.exportBytes / 1024 / 1024).toFixed(1)} MiB`)],
    [`import (JSON Lines)`, ...results.map((result) => rate(result.importRate))],
    [`list_datapoints, tag filter, limit 100, offset 0: p50 / p99`, ...results.map((result) => `${ms(result.listAtZero.p50)} / ${ms(result.listAtZero.p99)}`)],
    [`  at offset ${deepOffset}: p50 / p99`, ...results.map((result) => `${ms(result.listDeep.p50)} / ${ms(result.listDeep.p99)}`)],
    [`get_datapoints, 100 ids: p50 / p99`, ...results.map((result) => `${ms(result.get100.p50)} / ${ms(result.get100.p99)}`)],
    [
      `gateway peak resident memory after from_inferences / export / import`,
      ...results.map(({ peakRss }) => [peakRss.created, peakRss.exported, peakRss.imported].map((bytes) => Math.round(bytes / 1024 / 1024)).join(" / ") + " MiB")
    ]
  ]
  const widths = rows[0].map((_, column) => Math.max(...rows.map((row) => row[column].length)))
  console.log(`datasets at scale: ${inferenceCount} inferences, latencies over ${samples} sequential requests each`)
  for (const row of rows) console.log(row.map((cell, column) => column === 0 ? cell.padEnd(widths[column]) : cell.padStart(widths[column])).join("   "))
  console.log("targets: creation >= 5,000 datapoints/s; list_datapoints p99 < 200 ms at offset 0")
  if (args.includes("--json")) console.log(JSON.stringify(results))
}

await main()
