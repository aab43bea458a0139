// `npm run bench:import-tensorzero`: `gateway import-tensorzero` from a TensorZero Postgres
// holding N chat inferences (1,000,000 by default), each with its payloads and one model
// inference (test/support/tensorzeroPostgres.ts `seedManyInferences`), into a fresh Postgres
// database (and, with --clickhouse, a fresh ClickHouse one). The import runs as a child process
// whose resident memory is sampled from /proc every 200 ms; printed: rows written (inferences +
// model inferences), wall time, rows per second for each stream (the importer's own last
// progress line) and overall, the child's peak RSS and its CPU time.
//
// Options: --rows N (default 1000000), --source <url> (a source seeded by an earlier run: kept,
// not seeded again; the seeded source is dropped at the end unless --keep-source),
// --clickhouse (also into ClickHouse: the server GATEWAY_TEST_CLICKHOUSE_URL names, else a
// throwaway one), --no-postgres (ClickHouse alone), --node-arg X (repeatable: a Node option for
// the importer, e.g. --cpu-prof), --json.
import { spawn } from "node:child_process"
import { startClickHouse } from "../scripts/clickhouse.ts"
import { ensurePostgres } from "../scripts/postgres.ts"
import { freshDatabase, type TestBackend, type TestDatabase } from "../test/support/databases.ts"
import { createTensorZeroPostgres, seedManyInferences } from "../test/support/tensorzeroPostgres.ts"
import { memoryOf, root, ticksOf } from "./processes.ts"

const args = process.argv.slice(2)
const valueOf = (name: string) => {
  const index = args.indexOf(`--${name}`)
  return index >= 0 ? args[index + 1] : undefined
}
const rows = Number(valueOf("rows") ?? 1_000_000)
const nodeArgs = args.flatMap((arg, index) => (arg === "--node-arg" ? [args[index + 1]] : []))
const backends: ReadonlyArray<TestBackend> = [
  ...(args.includes("--no-postgres") ? [] : ["postgres" as const]),
  ...(args.includes("--clickhouse") ? ["clickhouse" as const] : [])
]

const megabytes = (bytes: number) => `${Math.round(bytes / 1024 / 1024)} MB`
const number = (value: number) => Math.round(value).toLocaleString("en-US")

interface Measured {
  readonly backend: TestBackend
  readonly written: Readonly<Record<string, number>>
  readonly seconds: number
  /** rows per second of each stream, as the importer reported it at the stream's end */
  readonly streamRates: Readonly<Record<string, number>>
  readonly peakRssBytes: number
  readonly cpuSeconds: number
}

/** `import-tensorzero --from source --to destination` as a child, its memory sampled meanwhile */
const runImport = (source: string, destination: TestDatabase) =>
  new Promise<Measured>((resolve, reject) => {
    const started = performance.now()
    const child = spawn(process.execPath, [...nodeArgs, "bin/gateway.ts", "import-tensorzero", "--from", source, "--to", destination.url], {
      cwd: root,
      env: { ...process.env, GATEWAY_ANALYTICS_DB_URL: "", GATEWAY_RELATIONAL_DB_URL: "" },
      stdio: ["ignore", "pipe", "pipe"]
    })
    let output = ""
    child.stdout.on("data", (data: Buffer) => (output += data))
    child.stderr.on("data", (data: Buffer) => (output += data))
    let peakRssBytes = 0
    let ticks = 0
    const sample = () => {
      // VmHWM is the kernel's own peak: nothing is missed between samples
      peakRssBytes = Math.max(peakRssBytes, memoryOf(child.pid!, "VmHWM"), memoryOf(child.pid!, "VmRSS"))
      ticks = Math.max(ticks, ticksOf(child.pid!))
    }
    const sampler = setInterval(sample, 200)
    child.on("exit", (code) => {
      clearInterval(sampler)
      const seconds = (performance.now() - started) / 1000
      if (code !== 0) return reject(new Error(`import-tensorzero exited with ${code}:\n${output.slice(-5000)}`))
      // the summary table: `<stream>  <read>  <written>  <skipped>`
      const written: Record<string, number> = {}
      for (const match of output.matchAll(/^(\w+)\s+([\d,]+)\s+([\d,]+)\s+([\d,]+)$/gm)) written[match[1]] = Number(match[3].replaceAll(",", ""))
      const streamRates: Record<string, number> = {}
      for (const match of output.matchAll(/^(\w+): .* ([\d,]+) rows\/s/gm)) streamRates[match[1]] = Number(match[2].replaceAll(",", ""))
      resolve({ backend: destination.backend, written, seconds, streamRates, peakRssBytes, cpuSeconds: ticks / 100 })
    })
    // a sample just before the end: the last one may be 200 ms old
    child.stdout.on("end", sample)
  })

const main = async () => {
  process.env.GATEWAY_TEST_POSTGRES_URL ??= await ensurePostgres()
  let stopClickHouse: (() => Promise<void>) | undefined
  if (backends.includes("clickhouse") && !process.env.GATEWAY_TEST_CLICKHOUSE_URL) {
    const server = await startClickHouse()
    stopClickHouse = server.stop
    process.env.GATEWAY_TEST_CLICKHOUSE_URL = server.url
  }
  let source = valueOf("source")
  let seeded: TestDatabase | undefined
  if (source === undefined) {
    seeded = await freshDatabase("postgres")
    source = seeded.url
    const seedingStarted = performance.now()
    await createTensorZeroPostgres(seeded)
    await seedManyInferences(seeded.url, rows)
    console.log(`source ${seeded.url}: ${number(rows)} inferences seeded in ${((performance.now() - seedingStarted) / 1000).toFixed(1)} s`)
  }
  const results: Array<Measured> = []
  for (const backend of backends) {
    const destination = await freshDatabase(backend)
    try {
      const measured = await runImport(source, destination)
      results.push(measured)
      const total = (measured.written.inferences ?? 0) + (measured.written.model_inferences ?? 0)
      console.log(
        `into ${backend}: ${number(measured.written.inferences ?? 0)} inferences + ${number(measured.written.model_inferences ?? 0)} model inferences = ${number(total)} rows ` +
          `in ${measured.seconds.toFixed(1)} s: ${number(total / measured.seconds)} rows/s overall ` +
          `(inferences ${number(measured.streamRates.inferences ?? 0)} rows/s, model inferences ${number(measured.streamRates.model_inferences ?? 0)} rows/s); ` +
          `peak RSS ${megabytes(measured.peakRssBytes)}, CPU ${measured.cpuSeconds.toFixed(1)} s`
      )
    } finally {
      await destination.drop()
    }
  }
  if (seeded !== undefined && !args.includes("--keep-source")) await seeded.drop()
  await stopClickHouse?.()
  if (args.includes("--json")) console.log(JSON.stringify({ rows, results }))
  process.exit(0)
}

main().catch((error) => {
  console.error(error)
  process.exit(1)
})
