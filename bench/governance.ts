// The benchmark's governance scenario (`npm run bench -- --governance-scenario`, see bench/run.ts):
// what issue 39 adds to a request's path, on /inference with the plain call: the gateway with
// authentication off; with it on and a key of a workspace (the key checked from its cache, the
// caller built, the workspace stamped); and with, in addition, a budget on that workspace, its
// counter kept in Postgres and then in Redis (one reservation before each call, one settlement
// after it). The targets take turns in rounds; the server's CPU per request is the gateway's
// process alone (the databases' CPU is reported beside it).
import * as fs from "node:fs"
import * as path from "node:path"
import { spawnSync } from "node:child_process"
import autocannon from "autocannon"
import { startProcess, ticksOf } from "./processes.ts"
import { writeGatewayFiles } from "./scenario.ts"
import { freshDatabase, type TestDatabase } from "../test/support/databases.ts"
import { ensurePostgres } from "../scripts/postgres.ts"

const workspace = "bench-team"

/** the model's prices, so a budget's estimate and settlement have a cost to count */
export const priced = (config: string) =>
  config.replace(
    `[models.bench_model]\nrouting = ["upstream"]\n`,
    `[models.bench_model]\nrouting = ["upstream"]\npricing = { input_per_million = 1.0, output_per_million = 2.0 }\n`
  )

const authOn = `[gateway.auth]\nenabled = true\n\n`
/** a budget no run of the bench reaches: every call reserves and settles, none is refused */
export const budget = `[[rate_limiting.budgets]]\nscope = [{ workspace = "${workspace}" }]\nperiod = "month"\nlimit = 1000000000\n\n`

interface GovernanceTarget {
  readonly name: string
  readonly gatewaySection: string
  readonly withKey: boolean
  readonly redis: boolean
}

const targets: ReadonlyArray<GovernanceTarget> = [
  { name: "auth off", gatewaySection: "", withKey: false, redis: false },
  { name: "auth on, workspace key", gatewaySection: authOn, withKey: true, redis: false },
  { name: "+ budget (Postgres)", gatewaySection: authOn + budget, withKey: true, redis: false },
  { name: "+ budget (Redis)", gatewaySection: authOn + budget, withKey: true, redis: true }
]

/** `gateway --create-api-key --workspace bench-team` against `databaseUrl`: the key's text */
const createKey = (databaseUrl: string): string => {
  const made = spawnSync(process.execPath, ["bin/start.mjs", "--create-api-key", "--workspace", workspace], {
    env: { ...process.env, GATEWAY_RELATIONAL_DB_URL: databaseUrl },
    encoding: "utf8"
  })
  if (made.status !== 0) throw new Error(`--create-api-key failed: ${made.stderr}`)
  return made.stdout.trim()
}

interface Round {
  readonly rps: number
  readonly serverCpuUs: number
}

const measure = async (url: string, body: string, key: string | undefined, pid: number, connections: number, duration: number): Promise<Round> => {
  const headers: Record<string, string> = { "content-type": "application/json", ...(key === undefined ? {} : { authorization: `Bearer ${key}` }) }
  const options = { url: url + "/inference", method: "POST" as const, headers, body, connections }
  await autocannon({ ...options, duration: 2 })
  const before = ticksOf(pid)
  const result = await autocannon({ ...options, duration })
  if (result.non2xx > 0 || result.errors > 0) throw new Error(`${result.non2xx} non-2xx answers, ${result.errors} errors`)
  return { rps: result.requests.average, serverCpuUs: (ticksOf(pid) - before) * 10_000 / result.requests.total }
}

/** Starts each target's gateway, measures them in `rounds` taking turns, prints a table and returns the rows. */
export const measureGovernance = async (
  options: { upstream: string; body: string; connections: number; duration: number; rounds: number; redisUrl: string }
) => {
  process.env.GATEWAY_TEST_POSTGRES_URL ??= await ensurePostgres()
  const databases: Array<TestDatabase> = []
  const dirs: Array<string> = []
  const started: Array<{ url: string; pid: number; key: string | undefined }> = []
  for (const target of targets) {
    const dir = writeGatewayFiles(options.upstream, target.gatewaySection)
    fs.writeFileSync(path.join(dir, "config.toml"), priced(fs.readFileSync(path.join(dir, "config.toml"), "utf8")))
    dirs.push(dir)
    const env: Record<string, string> = { GATEWAY_BIND_ADDRESS: "127.0.0.1:0" }
    let key: string | undefined
    if (target.withKey) {
      const database = await freshDatabase("postgres")
      databases.push(database)
      env.GATEWAY_RELATIONAL_DB_URL = database.url
      key = createKey(database.url)
    }
    if (target.redis) env.GATEWAY_REDIS_URL = options.redisUrl
    const gateway = await startProcess(["bin/start.mjs", "--config-file", path.join(dir, "config.toml")], /Listening on (http:\/\/[^\s"]+)/, { env })
    started.push({ url: gateway.match, pid: gateway.pid, key })
  }
  console.log(
    `\ngovernance: /inference throughput (${options.connections} connections, ${options.rounds} rounds of ${options.duration} s, median), ` +
      "server CPU per request of the gateway's process"
  )
  const rounds = targets.map((): Array<Round> => [])
  for (let round = 0; round < options.rounds; round++) {
    for (const [index, gateway] of started.entries()) {
      rounds[index].push(await measure(gateway.url, options.body, gateway.key, gateway.pid, options.connections, options.duration))
    }
  }
  const median = (values: Array<number>) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]
  const rows = targets.map((target, index) => ({
    name: target.name,
    rps: median(rounds[index].map((round) => round.rps)),
    serverCpuUs: median(rounds[index].map((round) => round.serverCpuUs))
  }))
  const change = (a: number, b: number) => `${a >= b ? "+" : ""}${(((a - b) / b) * 100).toFixed(1)}%`
  // authentication against none; each budget against authentication alone
  const against = (index: number) => (index === 0 ? "" : index === 1 ? `${change(rows[1].serverCpuUs, rows[0].serverCpuUs)} vs auth off` : `${change(rows[index].serverCpuUs, rows[1].serverCpuUs)} vs auth on`)
  console.log(`${"".padEnd(28)}${"req/s".padStart(10)}${"server CPU".padStart(12)}${"CPU change".padStart(22)}`)
  for (const [index, row] of rows.entries()) {
    console.log(
      `${row.name.padEnd(28)}${Math.round(row.rps).toString().padStart(10)}${`${Math.round(row.serverCpuUs)} us`.padStart(12)}${against(index).padStart(22)}`
    )
  }
  for (const database of databases) await database.drop()
  for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true })
  return rows
}
