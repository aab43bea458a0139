// `npm run bench`: the gateway's overhead on POST /inference with a templated function (and
// on the same call through POST /openai/v1/chat/completions), against a reference
// pass-through proxy, all in front of the same fake upstream.
// Prints added latency p50/p99 at concurrency 1 (minus the upstream called directly) and
// requests per second at saturation, side by side, from one run, with the CPU time each
// request cost the server process and, with observability on, the database (Linux /proc).
//
// With observability on, the same gateway is measured again storing into ClickHouse and into
// Postgres (started here as for the tests), to compare with the figures with it off, and
// storing into Postgres with the durable write queue (`[gateway.observability.durable_queue]`,
// fsync "batch", in a temporary folder), to compare with Postgres without it
// (--durable-queue-only: those three gateways alone, without streams).
//
// Options: --requests N (latency samples, default 5000), --duration S (throughput seconds,
// default 10), --rounds R (rounds, default 3: the targets take turns, for latency and for
// throughput, where each reports its median, so that a burst of noise on the machine does
// not decide), --connections
// C (default 64), --no-observability (skip the database runs), --traces (also measure the
// gateway exporting a trace of every request to a fake OTLP collector), --json
// (machine-readable output too).
//
// Then streamed answers (`stream: true`) on /inference and on the OpenAI route, against the
// proxy passing the upstream's stream through (the upstream speaks OpenAI's SSE framing; see
// bench/upstream.ts): requests per second with 8 chunks sent at once (as the plain case, with
// the CPU per request), the added time to the first text chunk at concurrency 1 with 64
// chunks 5 ms apart (the first `data:` event carrying text, minus the upstream's own, called
// directly), and, with that stream held open N times at once for the throughput's duration,
// the server's CPU per stream and its peak RSS (sampled from /proc), with its idle RSS after
// start-up. Options: --no-streaming (skip this part), --stream-requests N (first-chunk samples
// per target, default 100), --streams N (streams open at once, default 256), --streaming-only
// (this part alone). --gateway-node-arg X (repeatable): a Node option for the gateway only.
//
// --workers-scenario: instead of all that, the plain /inference throughput with 1 worker and
// with 2 (`--workers 2`, balanced by the kernel and by the primary), with the CPU per request
// of all the gateway's processes (bench/workers.ts).
// --governance-scenario: instead of all that, /inference with authentication off, on with a
// workspace's key, and with a budget on that workspace (counters in Postgres, then in Redis):
// what the workspace check and the budget reservation cost per request (bench/governance.ts).
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import autocannon from "autocannon"
import { Pool } from "undici"
import { startClickHouse } from "../scripts/clickhouse.ts"
import { memoryOf, startProcess, ticksOf } from "./processes.ts"
import { measureFirstText, measureOpenStreams, measureStreamedThroughput, type StreamTarget } from "./streaming.ts"
import {
  gatewayBody,
  openAiRouteBody,
  plainRoutes,
  streamedGatewayBody,
  streamedOpenAiRouteBody,
  streamedUpstreamBody,
  upstreamBody,
  writeGatewayFiles
} from "./scenario.ts"
import { ensurePostgres } from "../scripts/postgres.ts"
import { measureWorkers } from "./workers.ts"
import { measureGovernance } from "./governance.ts"
import { ensureRedis } from "../scripts/redis.ts"
import { freshDatabase, type TestDatabase } from "../test/support/databases.ts"

const args = process.argv.slice(2)
const option = (name: string, fallback: number) => {
  const index = args.indexOf(`--${name}`)
  return index >= 0 ? Number(args[index + 1]) : fallback
}
const samples = option("requests", 5000)
const duration = option("duration", 10)
const rounds = option("rounds", 3)
const connections = option("connections", 64)
const streamSamples = option("stream-requests", 100)
const openStreams = option("streams", 256)

const durableQueueTarget = "gateway + pg + durable"
/** `--durable-queue-only`: the gateway alone, storing in Postgres, and storing in Postgres with the durable queue (no streams) */
const durableQueueOnly = args.includes("--durable-queue-only")

/** starts a process and resolves with the first match of `pattern` in its output */
const start = (command: ReadonlyArray<string>, pattern: RegExp, env: Record<string, string> = {}) =>
  startProcess(command, pattern, { env }).then((started) => started.match)

interface Target {
  readonly name: string
  readonly url: string
  readonly path: string
  readonly body: string
  /** the server's process, whose CPU time is measured */
  readonly pid?: number
  /** the database it writes to, whose CPU time is measured too */
  readonly database?: "clickhouse" | "postgres"
  /** its streamed requests, when they are not /inference's or the OpenAI route's on `bench` */
  readonly streamed?: { readonly fastBody: string; readonly pacedBody: string }
}


const databaseCommands = { clickhouse: "clickhouse-server", postgres: "postgres" }

/** CPU ticks used so far by the processes of `database` (all of its server's processes) */
const databaseTicks = (database: "clickhouse" | "postgres"): number => {
  let ticks = 0
  for (const pid of fs.readdirSync("/proc").filter((entry) => /^\d+$/.test(entry))) {
    let command: string
    try {
      command = fs.readFileSync(`/proc/${pid}/cmdline`, "utf8")
    } catch {
      continue
    }
    if (command.split("\0")[0].endsWith(databaseCommands[database]) || command.startsWith(`${databaseCommands[database]}:`)) ticks += ticksOf(pid)
  }
  return ticks
}

const percentile = (sorted: ReadonlyArray<number>, p: number) => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]

/** latencies in ms of `count` sequential requests (concurrency 1), after a warm-up of `warmUp` */
const measureLatency = async (target: Target, count: number, warmUp: number): Promise<Array<number>> => {
  const pool = new Pool(target.url, { connections: 1 })
  const call = async () => {
    const response = await pool.request({ path: target.path, method: "POST", headers: { "content-type": "application/json" }, body: target.body })
    await response.body.arrayBuffer()
    if (response.statusCode !== 200) throw new Error(`${target.name} answered ${response.statusCode}`)
  }
  for (let i = 0; i < warmUp; i++) await call()
  const latencies: Array<number> = []
  for (let i = 0; i < count; i++) {
    const started = process.hrtime.bigint()
    await call()
    latencies.push(Number(process.hrtime.bigint() - started) / 1e6)
  }
  await pool.close()
  return latencies
}

/**
 * p50 and p99 of each target's latencies, measured in `rounds` in which the targets take turns
 * (as throughput is), so that a slower spell of the machine weighs on all of them alike.
 */
const measureLatencies = async (targets: ReadonlyArray<Target>, count: number) => {
  const samples: Array<Array<number>> = targets.map(() => [])
  const perRound = Math.ceil(count / rounds)
  for (let round = 0; round < rounds; round++) {
    for (const [index, target] of targets.entries()) {
      samples[index].push(...await measureLatency(target, perRound, round === 0 ? Math.min(1000, count) : 100))
    }
  }
  return samples.map((latencies) => {
    latencies.sort((a, b) => a - b)
    return { p50: percentile(latencies, 0.5), p99: percentile(latencies, 0.99) }
  })
}

interface Throughput {
  readonly rps: number
  /** CPU microseconds per request of the server process, and of the database */
  readonly serverCpuUs: number
  readonly databaseCpuUs: number
}

const measureThroughput = async (target: Target): Promise<Throughput> => {
  // warm-up, then the measured run
  await autocannon({ url: target.url + target.path, method: "POST", headers: { "content-type": "application/json" }, body: target.body, connections, duration: 2 })
  const serverBefore = target.pid === undefined ? 0 : ticksOf(target.pid)
  const databaseBefore = target.database === undefined ? 0 : databaseTicks(target.database)
  const result = await autocannon({
    url: target.url + target.path,
    method: "POST",
    headers: { "content-type": "application/json" },
    body: target.body,
    connections,
    duration
  })
  const perRequestUs = (ticks: number) => (ticks * 10_000) / result.requests.total
  const serverCpuUs = target.pid === undefined ? 0 : perRequestUs(ticksOf(target.pid) - serverBefore)
  const databaseCpuUs = target.database === undefined ? 0 : perRequestUs(databaseTicks(target.database) - databaseBefore)
  if (result.non2xx > 0 || result.errors > 0) throw new Error(`${target.name}: ${result.non2xx} non-2xx answers, ${result.errors} errors`)
  return { rps: result.requests.average, serverCpuUs, databaseCpuUs }
}

/** `--gateway-node-arg X` (repeatable): Node's options for the gateway's processes only (V8's heap sizing, say) */
const gatewayNodeArgs = args.flatMap((arg, index) => (args[index - 1] === "--gateway-node-arg" ? [arg] : []))

const startGateway = (dir: string, env: Record<string, string> = {}) =>
  startProcess(["bin/start.mjs", "--config-file", path.join(dir, "config.toml")], /Listening on (http:\/\/[^\s"]+)/, {
    env: { GATEWAY_BIND_ADDRESS: "127.0.0.1:0", ...env },
    nodeArgs: gatewayNodeArgs
  })

interface Row {
  readonly name: string
  readonly p50: number
  readonly p99: number
  readonly rps: number
  readonly serverCpuUs: number
  readonly databaseCpuUs: number
}

const megabytes = (bytes: number) => (bytes === 0 ? "" : `${Math.round(bytes / 1024 / 1024)} MB`)

/**
 * The streamed scenarios on the reference proxy, the gateway's /inference and its OpenAI
 * route (`targets`, in that order), each in rounds in which the targets take turns; prints
 * their tables and returns their figures.
 */
const measureStreaming = async (upstream: string, upstreamPid: number, targets: ReadonlyArray<Target>, idleRss: ReadonlyMap<number | undefined, number>) => {
  const streamTargets: Array<StreamTarget> = targets.map((target) => {
    const fields = { name: target.name, url: target.url, path: target.path, pid: target.pid }
    if (target.streamed !== undefined) return { ...fields, ...target.streamed }
    if (target.path === "/inference") return { ...fields, fastBody: streamedGatewayBody("bench"), pacedBody: streamedGatewayBody("bench_paced") }
    if (target.path.startsWith("/openai/")) return { ...fields, fastBody: streamedOpenAiRouteBody("bench"), pacedBody: streamedOpenAiRouteBody("bench_paced") }
    return { ...fields, fastBody: streamedUpstreamBody("bench-model"), pacedBody: streamedUpstreamBody("bench-model-paced") }
  })
  const direct: StreamTarget = {
    name: "upstream (direct)",
    url: upstream,
    path: "/v1/chat/completions",
    fastBody: streamedUpstreamBody("bench-model"),
    pacedBody: streamedUpstreamBody("bench-model-paced")
  }
  console.log(
    `\nstreamed: throughput with 8 chunks at once (${connections} connections, ${rounds} rounds of ${duration} s, median), ` +
      `then with 64 chunks 5 ms apart: time to the first text chunk at concurrency 1 (${streamSamples} requests each, in ${rounds} rounds), ` +
      `and ${openStreams} streams open at once (${rounds} rounds of ${duration} s; CPU per stream median, RSS highest)`
  )
  const throughputs = streamTargets.map((): Array<{ rps: number; serverCpuUs: number }> => [])
  for (let round = 0; round < rounds; round++) {
    for (const [index, target] of streamTargets.entries()) throughputs[index].push(await measureStreamedThroughput(target, connections, duration))
  }
  const [base, ...firstTexts] = await measureFirstText([direct, ...streamTargets], streamSamples, rounds)
  const open = streamTargets.map((): Array<{ completed: number; serverCpuUs: number; peakRss: number; upstreamCpuUs: number; clientCpuUs: number; streamP50: number }> => [])
  for (let round = 0; round < rounds; round++) {
    for (const [index, target] of streamTargets.entries()) open[index].push(await measureOpenStreams(target, openStreams, duration, upstreamPid))
  }
  const median = (values: Array<number>) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]
  const rows = streamTargets.map((target, index) => ({
    name: target.name === "gateway" ? "gateway, /inference" : target.name,
    rps: median(throughputs[index].map((round) => round.rps)),
    serverCpuUs: median(throughputs[index].map((round) => round.serverCpuUs)),
    firstTextP50: firstTexts[index].p50 - base.p50,
    firstTextP99: firstTexts[index].p99 - base.p99,
    streamsCompleted: median(open[index].map((round) => round.completed)),
    cpuPerStreamUs: median(open[index].map((round) => round.serverCpuUs)),
    peakRss: Math.max(...open[index].map((round) => round.peakRss)),
    upstreamCpuPerStreamUs: median(open[index].map((round) => round.upstreamCpuUs)),
    clientCpuPerStreamUs: median(open[index].map((round) => round.clientCpuUs)),
    openStreamP50: median(open[index].map((round) => round.streamP50)),
    idleRss: idleRss.get(target.pid) ?? 0
  }))
  const reference = rows[0].rps
  const us = (value: number) => (value === 0 ? "" : `${Math.round(value)} us`)
  console.log(`upstream alone: first text chunk p50 ${base.p50.toFixed(3)} ms, p99 ${base.p99.toFixed(3)} ms`)
  console.log(`${"".padEnd(22)}${"req/s".padStart(10)}${"of proxy".padStart(10)}${"server CPU".padStart(12)}`)
  for (const row of rows) {
    console.log(
      `${row.name.padEnd(22)}${Math.round(row.rps).toString().padStart(10)}${`${Math.round((row.rps / reference) * 100)}%`.padStart(10)}${
        us(row.serverCpuUs).padStart(12)
      }`
    )
  }
  console.log(
    `${"".padEnd(22)}${"1st text p50".padStart(14)}${"1st text p99".padStart(14)}${"streams".padStart(9)}${"CPU/stream".padStart(12)}${
      "RSS peak".padStart(10)
    }${"RSS idle".padStart(10)}`
  )
  for (const row of rows) {
    console.log(
      `${row.name.padEnd(22)}${`${row.firstTextP50.toFixed(3)} ms`.padStart(14)}${`${row.firstTextP99.toFixed(3)} ms`.padStart(14)}${
        row.streamsCompleted.toString().padStart(9)
      }${us(row.cpuPerStreamUs).padStart(12)}${megabytes(row.peakRss).padStart(10)}${megabytes(row.idleRss).padStart(10)}`
    )
  }
  console.log(
    `CPU per stream (${openStreams} open) of the upstream: ${rows.map((row) => `${row.name} ${us(row.upstreamCpuPerStreamUs)}`).join(", ")}; ` +
      `of this client: ${rows.map((row) => `${row.name} ${us(row.clientCpuPerStreamUs)}`).join(", ")}; ` +
      `a stream's duration p50 (its pace alone: about 320 ms): ${rows.map((row) => `${row.name} ${Math.round(row.openStreamP50)} ms`).join(", ")}`
  )
  const servers = [...new Set(targets.map((target) => target.pid))].filter((pid): pid is number => pid !== undefined)
  console.log(
    `RSS at most over the whole run (VmHWM): ${
      servers.map((pid) => `${targets.find((target) => target.pid === pid)!.name} ${megabytes(memoryOf(pid, "VmHWM"))}`).join(", ")
    }`
  )
  return { base, rows }
}

const main = async () => {
  const upstreamProcess = await startProcess(["bench/upstream.ts"], /^(\d+)$/m)
  const upstream = `http://127.0.0.1:${upstreamProcess.match}`
  const proxy = await startProcess(["bench/proxy.ts", upstream], /^(\d+)$/m)
  const gatewayDir = writeGatewayFiles(upstream)
  const tracedDir = writeGatewayFiles(upstream, "[gateway.export.otlp.traces]\nenabled = true\n")
  if (args.includes("--governance-scenario")) {
    const rows = await measureGovernance({ upstream, body: gatewayBody, connections, duration, rounds, redisUrl: await ensureRedis() })
    if (args.includes("--json")) console.log(JSON.stringify({ governance: rows }))
    process.exit(0)
  }
  if (args.includes("--workers-scenario")) {
    const rows = await measureWorkers({ configDir: gatewayDir, body: gatewayBody, upstreamPid: upstreamProcess.pid, connections, duration, rounds })
    if (args.includes("--json")) console.log(JSON.stringify({ workers: rows }))
    process.exit(0)
  }

  const direct: Target = { name: "upstream (direct)", url: upstream, path: "/v1/chat/completions", body: upstreamBody }
  const gateways: Array<{ name: string; env: Record<string, string>; database?: "clickhouse" | "postgres"; traces?: boolean; dir?: string }> = [
    { name: "gateway", env: {} }
  ]
  if (args.includes("--traces")) {
    const collectorPort = await start(["bench/collector.ts"], /^(\d+)$/m)
    gateways.push({ name: "gateway + traces", env: { OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${collectorPort}` }, traces: true })
  }
  const cleanups: Array<() => Promise<void>> = []
  if (!args.includes("--no-observability")) {
    if (!durableQueueOnly) {
      const clickhouse = await startClickHouse()
      cleanups.push(clickhouse.stop)
      process.env.GATEWAY_TEST_CLICKHOUSE_URL = clickhouse.url
    }
    process.env.GATEWAY_TEST_POSTGRES_URL = await ensurePostgres()
    for (const backend of durableQueueOnly ? ["postgres" as const] : ["clickhouse", "postgres"] as const) {
      const database: TestDatabase = await freshDatabase(backend)
      cleanups.unshift(database.drop)
      gateways.push({ name: `gateway + ${backend}`, env: { GATEWAY_ANALYTICS_DB_URL: database.url }, database: backend })
    }
    // the durable write queue: its log in a temporary folder (of this machine's disk, as a deployment's would be)
    const durableFolder = fs.mkdtempSync(path.join(os.tmpdir(), "bench-durable-queue-"))
    const durableDir = writeGatewayFiles(upstream, `[gateway.observability.durable_queue]\npath = ${JSON.stringify(durableFolder)}\n`)
    cleanups.unshift(() => Promise.resolve([durableFolder, durableDir].forEach((dir) => fs.rmSync(dir, { recursive: true, force: true }))))
    const durableDatabase = await freshDatabase("postgres")
    cleanups.unshift(durableDatabase.drop)
    gateways.push({ name: durableQueueTarget, env: { GATEWAY_ANALYTICS_DB_URL: durableDatabase.url }, database: "postgres", dir: durableDir })
    // the embedded database runs in the gateway's process: its CPU is the gateway's
    if (!durableQueueOnly) {
      const embedded = fs.mkdtempSync(path.join(os.tmpdir(), "bench-pglite-"))
      cleanups.unshift(() => Promise.resolve(fs.rmSync(embedded, { recursive: true, force: true })))
      gateways.push({ name: "gateway + embedded (pglite)", env: { GATEWAY_ANALYTICS_DB_URL: `pglite://${embedded}` } })
    }
  }

  console.log(
    `latency at concurrency 1 (${samples} requests each, in ${rounds} rounds), then throughput (${connections} connections, ${rounds} rounds of ${duration} s, median)`
  )
  const targets: Array<Target> = [{ name: "reference proxy", url: `http://127.0.0.1:${proxy.match}`, path: "/", body: upstreamBody, pid: proxy.pid }]
  for (const gateway of gateways) {
    const started = await startGateway(gateway.dir ?? (gateway.traces === true ? tracedDir : gatewayDir), gateway.env)
    targets.push({ name: gateway.name, url: started.match, path: "/inference", body: gatewayBody, pid: started.pid, database: gateway.database })
    if (gateway.name === "gateway" && !durableQueueOnly) {
      targets.push({ name: "gateway, OpenAI route", url: started.match, path: "/openai/v1/chat/completions", body: openAiRouteBody, pid: started.pid })
      for (const route of plainRoutes) {
        targets.push({
          name: route.name,
          url: started.match,
          path: route.path,
          body: route.body("bench_model", false),
          pid: started.pid,
          streamed: { fastBody: route.body("bench_model", true), pacedBody: route.body("bench_paced_model", true) }
        })
      }
    }
  }
  // the streamed scenarios: the proxy, /inference, the OpenAI route and the plain calls of the three chat-style routes
  const streamedTargets = 3 + plainRoutes.length
  // resident memory of each server after start-up, before any load
  await new Promise((resolve) => setTimeout(resolve, 500))
  const idleRss = new Map(targets.map((target) => [target.pid, target.pid === undefined ? 0 : memoryOf(target.pid, "VmRSS")]))
  if (args.includes("--streaming-only")) {
    const streamed = await measureStreaming(upstream, upstreamProcess.pid, targets.slice(0, streamedTargets), idleRss)
    if (args.includes("--json")) console.log(JSON.stringify({ streamed }))
    process.exit(0)
  }
  const [base, ...latencies] = await measureLatencies([direct, ...targets], samples)
  const throughputs: Array<Array<Throughput>> = targets.map(() => [])
  for (let round = 0; round < rounds; round++) {
    for (const [index, target] of targets.entries()) throughputs[index].push(await measureThroughput(target))
  }
  const median = (values: Array<number>) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]
  const rows: Array<Row> = targets.map((target, index) => ({
    name: target.name,
    p50: latencies[index].p50 - base.p50,
    p99: latencies[index].p99 - base.p99,
    rps: median(throughputs[index].map((round) => round.rps)),
    serverCpuUs: median(throughputs[index].map((round) => round.serverCpuUs)),
    databaseCpuUs: median(throughputs[index].map((round) => round.databaseCpuUs))
  }))

  const reference = rows[0].rps
  const off = rows[1]
  console.log(`\nupstream alone: p50 ${base.p50.toFixed(3)} ms, p99 ${base.p99.toFixed(3)} ms`)
  console.log(
    `${"".padEnd(22)}${"added p50".padStart(12)}${"added p99".padStart(12)}${"req/s".padStart(10)}${"of proxy".padStart(10)}${
      "server CPU".padStart(12)
    }${"db CPU".padStart(10)}`
  )
  const us = (value: number) => (value === 0 ? "" : `${Math.round(value)} us`)
  for (const row of rows) {
    console.log(
      `${row.name.padEnd(22)}${`${row.p50.toFixed(3)} ms`.padStart(12)}${`${row.p99.toFixed(3)} ms`.padStart(12)}${
        Math.round(row.rps).toString().padStart(10)
      }${`${Math.round((row.rps / reference) * 100)}%`.padStart(10)}${us(row.serverCpuUs).padStart(12)}${us(row.databaseCpuUs).padStart(10)}`
    )
  }
  const change = (a: number, b: number) => `${a >= b ? "+" : ""}${(((a - b) / b) * 100).toFixed(1)}%`
  for (const row of rows.slice(2)) {
    console.log(
      `${row.name} vs gateway: latency p50 ${change(row.p50 + base.p50, off.p50 + base.p50)}, req/s ${change(row.rps, off.rps)}, ` +
        `server CPU per request ${change(row.serverCpuUs, off.serverCpuUs)}` +
        (row.databaseCpuUs === 0 ? "" : `, CPU per request with the database's ${change(row.serverCpuUs + row.databaseCpuUs, off.serverCpuUs)}`)
    )
  }
  // the durable write queue's cost: against the same gateway storing in Postgres without it
  const durable = rows.find((row) => row.name === durableQueueTarget)
  const postgres = rows.find((row) => row.name === "gateway + postgres")
  if (durable !== undefined && postgres !== undefined) {
    console.log(
      `durable queue vs gateway + postgres: added p50 ${(durable.p50 - postgres.p50).toFixed(3)} ms, ` +
        `server CPU per request ${change(durable.serverCpuUs, postgres.serverCpuUs)} (${Math.round(durable.serverCpuUs - postgres.serverCpuUs)} us), ` +
        `req/s ${change(durable.rps, postgres.rps)}`
    )
  }
  // the issue-37 surfaces against the chat route on the same plain call
  const plainChat = rows.find((row) => row.name === plainRoutes[0].name)
  for (const row of rows.filter((each) => plainRoutes.slice(1).some((route) => route.name === each.name))) {
    if (plainChat === undefined) break
    console.log(`${row.name} vs ${plainChat.name}: req/s ${change(row.rps, plainChat.rps)}, server CPU per request ${change(row.serverCpuUs, plainChat.serverCpuUs)}`)
  }
  const streamed = args.includes("--no-streaming") || durableQueueOnly ? undefined : await measureStreaming(upstream, upstreamProcess.pid, targets.slice(0, streamedTargets), idleRss)
  if (args.includes("--json")) console.log(JSON.stringify({ base, rows, ...(streamed === undefined ? {} : { streamed }) }))
  for (const cleanup of cleanups) await cleanup()
  for (const dir of [gatewayDir, tracedDir]) fs.rmSync(dir, { recursive: true, force: true })
  process.exit(0)
}

main().catch((error) => {
  console.error(error)
  process.exit(1)
})
