// `node bench/profile.ts [--route inference|openai] [--stream] [--duration S] [--analytics-db URL] [--durable-queue FOLDER] [--budget redis|postgres]`:
// a CPU profile of the gateway under the benchmark's load (64 connections, the scenario of
// bench/scenario.ts; storing what it serves in the analytics database at URL when given, with
// the durable write queue in FOLDER when given),
// summed by function and by file, the top 40 of each by self time. Writes the .cpuprofile in
// the system's temporary folder and says where. For finding what a request spends its time on.
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import autocannon from "autocannon"
import { startProcess } from "./processes.ts"
import { budget, priced } from "./governance.ts"
import { redisUrl } from "../scripts/redis.ts"
import { ensurePostgres } from "../scripts/postgres.ts"
import { freshDatabase } from "../test/support/databases.ts"
import { gatewayBody, openAiRouteBody, streamedGatewayBody, streamedOpenAiRouteBody, writeGatewayFiles } from "./scenario.ts"

const args = process.argv.slice(2)
const option = (name: string) => {
  const index = args.indexOf(`--${name}`)
  return index >= 0 ? args[index + 1] : undefined
}
const openai = option("route") === "openai"
const stream = args.includes("--stream")
const duration = Number(option("duration") ?? 10)
const analyticsDb = option("analytics-db")
/**
 * `--budget redis|postgres`: a budget over every call, counted in the Redis at 127.0.0.1:6379
 * or in a fresh Postgres database (its reservation and settlement profiled)
 */
const budgetStore = option("budget")
const withBudget = budgetStore !== undefined
const emptyScopeBudget = budget.replace(/scope = \[[^\]]*\]\n/, "scope = []\n")

interface ProfileNode {
  readonly id: number
  readonly callFrame: { readonly functionName: string; readonly url: string; readonly lineNumber: number }
  readonly children?: ReadonlyArray<number>
}
interface Profile {
  readonly nodes: ReadonlyArray<ProfileNode>
  readonly samples: ReadonlyArray<number>
  readonly timeDeltas: ReadonlyArray<number>
}

const main = async () => {
  const upstream = await startProcess(["bench/upstream.ts"], /^(\d+)$/m)
  const durableQueue = option("durable-queue")
  const dir = writeGatewayFiles(
    `http://127.0.0.1:${upstream.match}`,
    (durableQueue === undefined ? "" : `[gateway.observability.durable_queue]\npath = ${JSON.stringify(durableQueue)}\n`) +
      (withBudget ? emptyScopeBudget : "")
  )
  // a budget needs the model's prices
  if (withBudget) fs.writeFileSync(path.join(dir, "config.toml"), priced(fs.readFileSync(path.join(dir, "config.toml"), "utf8")))
  if (budgetStore === "postgres") process.env.GATEWAY_TEST_POSTGRES_URL ??= await ensurePostgres()
  const budgetDatabase = budgetStore === "postgres" ? await freshDatabase("postgres") : undefined
  const profileDir = fs.mkdtempSync(path.join(os.tmpdir(), "gateway-profile-"))
  const gateway = await startProcess(["bin/gateway.ts", "--config-file", path.join(dir, "config.toml")], /Listening on (http:\/\/[^\s"]+)/, {
    env: {
      GATEWAY_BIND_ADDRESS: "127.0.0.1:0",
      ...(analyticsDb === undefined ? {} : { GATEWAY_ANALYTICS_DB_URL: analyticsDb }),
      ...(budgetStore === "redis" ? { GATEWAY_REDIS_URL: redisUrl } : {}),
      ...(budgetDatabase === undefined ? {} : { GATEWAY_RELATIONAL_DB_URL: budgetDatabase.url, GATEWAY_REDIS_URL: "" })
    },
    nodeArgs: ["--cpu-prof", `--cpu-prof-dir=${profileDir}`]
  })
  const body = openai ? (stream ? streamedOpenAiRouteBody("bench") : openAiRouteBody) : stream ? streamedGatewayBody("bench") : gatewayBody
  const url = gateway.match + (openai ? "/openai/v1/chat/completions" : "/inference")
  const result = await autocannon({ url, method: "POST", headers: { "content-type": "application/json" }, body, connections: 64, duration })
  console.log(`${result.requests.average.toFixed(0)} req/s, ${result.non2xx} non-2xx`)
  gateway.child.kill("SIGTERM")
  await new Promise((resolve) => gateway.child.once("exit", resolve))
  const file = fs.readdirSync(profileDir).find((name) => name.endsWith(".cpuprofile"))!
  const profile = JSON.parse(fs.readFileSync(path.join(profileDir, file), "utf8")) as Profile
  const byId = new Map(profile.nodes.map((node) => [node.id, node]))
  const selfUs = new Map<number, number>()
  profile.samples.forEach((id, i) => selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)))
  const total = [...selfUs.values()].reduce((a, b) => a + b, 0)
  const sum = (keyOf: (node: ProfileNode) => string) => {
    const sums = new Map<string, number>()
    for (const [id, us] of selfUs) {
      const key = keyOf(byId.get(id)!)
      sums.set(key, (sums.get(key) ?? 0) + us)
    }
    return [...sums].sort((a, b) => b[1] - a[1]).slice(0, 40)
  }
  const short = (url: string) => url.replace(/^file:\/\//, "").replace(/^.*node_modules\//, "~/").replace(process.cwd() + "/", "")
  console.log(`profile: ${path.join(profileDir, file)}; ${(total / 1e6).toFixed(1)} s sampled`)
  console.log("\nby file (self time):")
  for (const [key, us] of sum((node) => short(node.callFrame.url) || `(${node.callFrame.functionName})`)) console.log(`${((us / total) * 100).toFixed(1).padStart(5)}%  ${key}`)
  console.log("\nby function (self time):")
  for (const [key, us] of sum((node) => `${node.callFrame.functionName || "(anonymous)"} ${short(node.callFrame.url)}:${node.callFrame.lineNumber + 1}`)) {
    console.log(`${((us / total) * 100).toFixed(1).padStart(5)}%  ${key}`)
  }
  await budgetDatabase?.drop()
  process.exit(0)
}

main().catch((error) => {
  console.error(error)
  process.exit(1)
})
