// The benchmark's workers scenario (`npm run bench -- --workers-scenario`, see bench/run.ts): the
// plain /inference throughput of the gateway with 1 worker (one process), and with 2 workers
// balanced by the kernel (SO_REUSEPORT, the default) and by the primary (Node's cluster
// round-robin), taking turns in rounds. The server's CPU per request is summed over the
// primary and its workers; the load generator's (this process) and the upstream's CPU per
// request are reported too, since on a small machine they share the cores with the workers.
// Each is measured with kept-alive connections, and with a new connection per request
// (`connection: close`), where the primary's round-robin hands every connection over.
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import autocannon from "autocannon"
import { startProcess, ticksOf } from "./processes.ts"

interface WorkersTarget {
  readonly name: string
  readonly args: ReadonlyArray<string>
  readonly env: Record<string, string>
}

const targets: ReadonlyArray<WorkersTarget> = [
  { name: "1 worker", args: [], env: {} },
  { name: "2 workers, SO_REUSEPORT", args: ["--workers", "2"], env: {} },
  { name: "2 workers, round-robin", args: ["--workers", "2"], env: { GATEWAY_WORKERS_BALANCING: "primary" } }
]

/** `pid` and its children (the workers), from /proc */
const processTree = (pid: number): Array<number> => {
  const children: Array<number> = []
  for (const entry of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue
    try {
      const parent = Number(fs.readFileSync(`/proc/${entry}/stat`, "utf8").split(") ")[1].split(" ")[1])
      if (parent === pid) children.push(Number(entry))
    } catch {
      // gone meanwhile
    }
  }
  return [pid, ...children]
}

const treeTicks = (pids: ReadonlyArray<number>) => pids.reduce((sum, pid) => sum + ticksOf(pid), 0)

interface WorkersRound {
  readonly rps: number
  readonly serverCpuUs: number
  readonly clientCpuUs: number
  readonly upstreamCpuUs: number
}

const measure = async (
  url: string,
  body: string,
  pids: ReadonlyArray<number>,
  upstreamPid: number,
  connections: number,
  duration: number,
  closeEach: boolean
): Promise<WorkersRound> => {
  const headers: Record<string, string> = { "content-type": "application/json", ...(closeEach ? { connection: "close" } : {}) }
  const options = { url: url + "/inference", method: "POST" as const, headers, body, connections }
  await autocannon({ ...options, duration: 2 })
  const server = treeTicks(pids)
  const client = process.cpuUsage()
  const upstream = ticksOf(upstreamPid)
  const result = await autocannon({ ...options, duration })
  if (result.non2xx > 0 || result.errors > 0) throw new Error(`${result.non2xx} non-2xx answers, ${result.errors} errors`)
  const clientUsage = process.cpuUsage(client)
  const perRequest = (ticks: number) => (ticks * 10_000) / result.requests.total
  return {
    rps: result.requests.average,
    serverCpuUs: perRequest(treeTicks(pids) - server),
    clientCpuUs: (clientUsage.user + clientUsage.system) / result.requests.total,
    upstreamCpuUs: perRequest(ticksOf(upstreamPid) - upstream)
  }
}

/** Starts each target's gateway, measures them in `rounds` taking turns, prints a table and returns the rows. */
export const measureWorkers = async (
  options: { configDir: string; body: string; upstreamPid: number; connections: number; duration: number; rounds: number }
) => {
  const started: Array<{ url: string; pids: Array<number> }> = []
  for (const target of targets) {
    const args = ["bin/start.mjs", "--config-file", path.join(options.configDir, "config.toml"), ...target.args]
    // with 2 workers, ready once both said they listen
    const listening = target.args.length === 0 ? /Listening on (http:\/\/[^\s"]+)/ : /Listening on (http:\/\/[^\s"]+)[^]*Listening on/
    const gateway = await startProcess(args, listening, { env: { GATEWAY_BIND_ADDRESS: "127.0.0.1:0", ...target.env } })
    started.push({ url: gateway.match, pids: processTree(gateway.pid) })
  }
  console.log(
    `\nworkers: /inference throughput with 1 and 2 workers (${options.connections} connections, ${options.rounds} rounds of ${options.duration} s, median); ` +
      `server CPU summed over the primary and its workers; the load generator and the upstream share the ${os.availableParallelism()} cores`
  )
  const loads = [false, true].flatMap((closeEach) => started.map((gateway, index) => ({ closeEach, gateway, target: targets[index] })))
  const rounds = loads.map((): Array<WorkersRound> => [])
  for (let round = 0; round < options.rounds; round++) {
    for (const [index, { closeEach, gateway }] of loads.entries()) {
      rounds[index].push(await measure(gateway.url, options.body, gateway.pids, options.upstreamPid, options.connections, options.duration, closeEach))
    }
  }
  const median = (values: Array<number>) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]
  const rows = loads.map(({ closeEach, target }, index) => ({
    name: `${target.name}${closeEach ? ", new conn." : ""}`,
    closeEach,
    rps: median(rounds[index].map((round) => round.rps)),
    serverCpuUs: median(rounds[index].map((round) => round.serverCpuUs)),
    clientCpuUs: median(rounds[index].map((round) => round.clientCpuUs)),
    upstreamCpuUs: median(rounds[index].map((round) => round.upstreamCpuUs))
  }))
  const us = (value: number) => `${Math.round(value)} us`
  console.log(`${"".padEnd(38)}${"req/s".padStart(10)}${"vs 1".padStart(8)}${"server CPU".padStart(12)}${"client CPU".padStart(12)}${"upstream CPU".padStart(14)}`)
  for (const row of rows) {
    console.log(
      `${row.name.padEnd(38)}${Math.round(row.rps).toString().padStart(10)}${`${(row.rps / rows[row.closeEach ? targets.length : 0].rps).toFixed(2)}x`.padStart(8)}${
        us(row.serverCpuUs).padStart(12)
      }${us(row.clientCpuUs).padStart(12)}${us(row.upstreamCpuUs).padStart(14)}`
    )
  }
  return rows
}
