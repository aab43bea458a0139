// `npm run bench:startup`: how long the quickstart takes from spawn to its first HTTP 200 on
// GET /health, and its resident memory once idle. The quickstart's folder is copied to a
// temporary one with a free port, so that it runs next to another gateway on port 3000.
//
// Options: --runs N (default 20), --warmup N (runs not counted, default 2: the first run after
// an edit fills the compile cache), --entry <file> (default bin/start.mjs, as `npm start`; any
// entry taking the gateway's flags: bin/gateway.ts for the sources, dist/bin/gateway.mjs), --node-arg <arg> (repeatable: an option
// for node itself), --embedded (both databases on one embedded database, pglite://, created in
// the first warm-up start and reused: the time PGlite takes to open it is in the figure),
// --json (machine-readable output too).
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as net from "node:net"
import * as os from "node:os"
import * as path from "node:path"
import { memoryOf, root, ticksOf } from "./processes.ts"
import { freePort } from "../scripts/ports.ts"

const args = process.argv.slice(2)
const option = (name: string): string | undefined => {
  const index = args.indexOf(`--${name}`)
  return index >= 0 ? args[index + 1] : undefined
}
const runs = Number(option("runs") ?? 20)
const warmup = Number(option("warmup") ?? 2)
const entry = option("entry") ?? "bin/start.mjs"
const nodeArgs = args.flatMap((arg, index) => (args[index - 1] === "--node-arg" ? [arg] : []))
const embeddedFolder = args.includes("--embedded") ? fs.mkdtempSync(path.join(os.tmpdir(), "gateway-startup-pglite-")) : undefined
const databaseEnv = embeddedFolder === undefined
  ? {}
  : { GATEWAY_ANALYTICS_DB_URL: `pglite://${embeddedFolder}`, GATEWAY_RELATIONAL_DB_URL: `pglite://${embeddedFolder}` }
process.on("exit", () => embeddedFolder !== undefined && fs.rmSync(embeddedFolder, { recursive: true, force: true }))


/** the quickstart's folder, copied with its bind address on `port` */
const quickstartOn = (port: number) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "gateway-startup-"))
  fs.cpSync(path.join(root, "examples/quickstart"), dir, { recursive: true })
  const file = path.join(dir, "config.toml")
  fs.writeFileSync(file, fs.readFileSync(file, "utf8").replace(/bind_address = ".*"/, `bind_address = "127.0.0.1:${port}"`))
  return { dir, file }
}

/** resolves true once GET /health answers 200; false if the connection is refused or the answer is another */
const healthy = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = net.connect(port, "127.0.0.1")
    let answer = ""
    socket.on("connect", () => socket.write("GET /health HTTP/1.1\r\nhost: localhost\r\nconnection: close\r\n\r\n"))
    socket.on("data", (data) => {
      answer += data
      if (answer.includes("\r\n")) {
        socket.destroy()
        resolve(answer.startsWith("HTTP/1.1 200"))
      }
    })
    socket.on("error", () => resolve(false))
    socket.on("close", () => resolve(false))
  })

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

interface Run {
  readonly ms: number
  readonly rssMb: number
  /** CPU time the gateway used until then (less noisy than the wall time on a shared machine) */
  readonly cpuMs: number
}

/** one start: spawn, poll /health every 2 ms until 200, then the RSS after 1 s idle, then a graceful stop */
const once = async (): Promise<Run> => {
  const port = await freePort()
  const { dir, file } = quickstartOn(port)
  const started = performance.now()
  const child = spawn(process.execPath, [...nodeArgs, entry, "--config-file", file], {
    cwd: root,
    env: { ...process.env, ...databaseEnv },
    stdio: ["ignore", "ignore", "pipe"]
  })
  let stderr = ""
  child.stderr!.on("data", (data) => (stderr += data))
  let exited = false
  child.on("exit", () => (exited = true))
  try {
    while (!(await healthy(port))) {
      if (exited) throw new Error(`the gateway exited before answering:\n${stderr}`)
      await pause(2)
    }
    const ms = performance.now() - started
    const cpuMs = ticksOf(child.pid!) * 10
    await pause(1000)
    return { ms, cpuMs, rssMb: memoryOf(child.pid!, "VmRSS") / 1024 / 1024 }
  } finally {
    // SIGTERM, as a user stops it: the gateway exits normally (and writes a compile cache if it keeps one)
    child.kill("SIGTERM")
    const killer = setTimeout(() => child.kill("SIGKILL"), 5000)
    await new Promise((resolve) => (exited ? resolve(undefined) : child.once("exit", resolve)))
    clearTimeout(killer)
    fs.rmSync(dir, { recursive: true, force: true })
  }
}

const quantile = (sorted: ReadonlyArray<number>, q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]

for (let i = 0; i < warmup; i++) await once()
const results: Array<Run> = []
for (let i = 0; i < runs; i++) results.push(await once())
const times = results.map((run) => run.ms).sort((a, b) => a - b)
const cpu = results.map((run) => run.cpuMs).sort((a, b) => a - b)
const rss = results.map((run) => run.rssMb).sort((a, b) => a - b)
const summary = {
  entry,
  nodeArgs,
  runs,
  medianMs: Math.round(quantile(times, 0.5)),
  p90Ms: Math.round(quantile(times, 0.9)),
  minMs: Math.round(times[0]),
  cpuMedianMs: quantile(cpu, 0.5),
  idleRssMb: Math.round(quantile(rss, 0.5))
}
console.log(
  `start-up of ${[...nodeArgs, entry].join(" ")} (quickstart${embeddedFolder === undefined ? "" : ", embedded database"}, ${runs} runs): median ${summary.medianMs} ms, p90 ${summary.p90Ms} ms, ` +
    `min ${summary.minMs} ms; CPU median ${summary.cpuMedianMs} ms; idle RSS ${summary.idleRssMb} MB`
)
if (args.includes("--json")) console.log(JSON.stringify(summary))
