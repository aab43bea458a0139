// `npm run bench:compare -- --base <dir>`: this checkout's gateway against another checkout's
// (`<dir>`, with its node_modules), both running at once in front of the same fake upstream,
// measured in turns: each round runs every case against the base and then this checkout, so
// that a change in the machine's load during the run falls on both. For each case (plain
// `/inference`, plain OpenAI route, streamed `/inference` with 8 chunks, streamed OpenAI route)
// prints the median requests per second and server CPU per request of each, and the change.
// The ratio, not the absolute figures, is what this tells: `npm run bench` gives those.
//
// Options: --base DIR (required), --rounds N (default 6), --duration S (seconds per case and
// round, default 4), --connections C (default 64).
import * as path from "node:path"
import autocannon from "autocannon"
import { startProcess, ticksOf } from "./processes.ts"
import { gatewayBody, openAiRouteBody, streamedGatewayBody, streamedOpenAiRouteBody, writeGatewayFiles } from "./scenario.ts"

const args = process.argv.slice(2)
const option = (name: string) => {
  const index = args.indexOf(`--${name}`)
  return index >= 0 ? args[index + 1] : undefined
}
const base = option("base")
if (base === undefined) {
  console.error("usage: node bench/compare.ts --base <another checkout> [--rounds N] [--duration S] [--connections C]")
  process.exit(2)
}
const rounds = Number(option("rounds") ?? 6)
const duration = Number(option("duration") ?? 4)
const connections = Number(option("connections") ?? 64)

const cases = [
  { name: "/inference", path: "/inference", body: gatewayBody },
  { name: "OpenAI route", path: "/openai/v1/chat/completions", body: openAiRouteBody },
  { name: "/inference, streamed", path: "/inference", body: streamedGatewayBody("bench") },
  { name: "OpenAI route, streamed", path: "/openai/v1/chat/completions", body: streamedOpenAiRouteBody("bench") }
]

interface Sample {
  readonly rps: number
  readonly cpuUs: number
}

/** one load of `seconds` on a case: requests per second and the server's CPU per request */
const load = async (url: string, pid: number, testCase: (typeof cases)[number], seconds: number): Promise<Sample> => {
  const before = ticksOf(pid)
  const result = await autocannon({
    url: url + testCase.path,
    method: "POST",
    headers: { "content-type": "application/json" },
    body: testCase.body,
    connections,
    duration: seconds
  })
  if (result.non2xx > 0 || result.errors > 0) throw new Error(`${url}${testCase.path}: ${result.non2xx} non-2xx answers, ${result.errors} errors`)
  return { rps: result.requests.average, cpuUs: ((ticksOf(pid) - before) * 10_000) / result.requests.total }
}

const median = (values: ReadonlyArray<number>) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]
const change = (head: number, baseline: number) => `${head >= baseline ? "+" : ""}${((head / baseline - 1) * 100).toFixed(1)}%`

const main = async () => {
  const upstreamProcess = await startProcess(["bench/upstream.ts"], /^(\d+)$/m)
  const dir = writeGatewayFiles(`http://127.0.0.1:${upstreamProcess.match}`)
  const startGateway = (cwd: string | undefined) =>
    startProcess(["bin/start.mjs", "--config-file", path.join(dir, "config.toml")], /Listening on (http:\/\/[^\s"]+)/, {
      env: { GATEWAY_BIND_ADDRESS: "127.0.0.1:0" },
      cwd
    })
  const gateways = [
    { name: "base", started: await startGateway(path.resolve(base)) },
    { name: "this checkout", started: await startGateway(undefined) }
  ]
  const samples = gateways.map(() => cases.map((): Array<Sample> => []))
  // warm-up: every case on both, untimed
  for (const { started } of gateways) for (const testCase of cases) await load(started.match, started.pid, testCase, 2)
  for (let round = 0; round < rounds; round++) {
    for (const [caseIndex, testCase] of cases.entries()) {
      for (const [gatewayIndex, { started }] of gateways.entries()) {
        samples[gatewayIndex][caseIndex].push(await load(started.match, started.pid, testCase, duration))
      }
    }
  }
  console.log(`${rounds} rounds of ${duration} s per case, ${connections} connections; medians`)
  console.log(`${"".padEnd(24)}${"base req/s".padStart(12)}${"req/s".padStart(10)}${"change".padStart(9)}${"base CPU".padStart(11)}${"CPU".padStart(9)}${"change".padStart(9)}`)
  for (const [caseIndex, testCase] of cases.entries()) {
    const [before, after] = gateways.map((_, gatewayIndex) => samples[gatewayIndex][caseIndex])
    const rps = [median(before.map((sample) => sample.rps)), median(after.map((sample) => sample.rps))]
    const cpu = [median(before.map((sample) => sample.cpuUs)), median(after.map((sample) => sample.cpuUs))]
    console.log(
      `${testCase.name.padEnd(24)}${rps[0].toFixed(0).padStart(12)}${rps[1].toFixed(0).padStart(10)}${change(rps[1], rps[0]).padStart(9)}` +
        `${`${cpu[0].toFixed(0)} us`.padStart(11)}${`${cpu[1].toFixed(0)} us`.padStart(9)}${change(cpu[1], cpu[0]).padStart(9)}`
    )
  }
  process.exit(0)
}

main().catch((error) => {
  console.error(error)
  process.exit(1)
})
