// `npm run soak`: a few thousand mixed hostile and normal requests against one gateway that
// stores into a real Postgres (observability, API keys, rate limit buckets), for a bounded
// time, then checks what issue 10 asks of it:
//   - every normal request answered 200, and no request at all answered 5xx;
//   - the gateway's RSS, after the load and a garbage collection, within 100 MB of its start;
//   - the event loop never blocked more than 100 ms (perf_hooks.monitorEventLoopDelay, in the
//     gateway's own process: bench/soakProbe.ts);
//   - every inference that answered 200 stored (rows counted in Postgres);
//   - a pending batch read by storms of concurrent GETs polled the provider at most once per
//     `[gateway.batch] poll_interval_s` (issue 33).
// Issue 33 added to the mix: 10 MB bodies nested millions of levels deep (to the sign-in route
// without a key, to /inference, as an import line), messages of --large-mb to `dummy::echo_request_messages`
// (rows several times over the soak's 1 MiB max_row_bytes) with listings of every inference beside them, dataset imports (normal,
// a bad last line, a 20 MB line), configuration reloads alternating two files, and storms of
// reads of a pending batch.
// Exits 1 when a check fails. Options: --duration S (default 60), --requests N (default 4000),
// --concurrency C (default 16), --seed N, --large-mb M (the size of the large messages among
// the normal requests, default 2), --only REGEX / --skip REGEX (hostile scenarios whose
// name matches, or not: to find what a failed check comes from), --cpu-prof-dir DIR (the
// gateway writes a CPU profile there when it stops), --smaps (where the gateway's resident memory
// lies after the load: /proc/<pid>/smaps by kind and size), --errors (the first answer of each
// scenario and status that was not a 200).
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as http from "node:http"
import * as net from "node:net"
import * as os from "node:os"
import * as path from "node:path"
import { Agent, request } from "undici"
import { ensurePostgres } from "../scripts/postgres.ts"
import { openAiBatchGatewayConfig, startOpenAiBatchFake } from "../test/support/fakeBatchOpenAi.ts"
import { freshDatabase, queryDatabase, type TestDatabase } from "../test/support/databases.ts"
import { root, startProcess } from "./processes.ts"

const args = process.argv.slice(2)
const option = (name: string, fallback: number) => {
  const index = args.indexOf(`--${name}`)
  return index >= 0 ? Number(args[index + 1]) : fallback
}
const textOption = (name: string) => {
  const index = args.indexOf(`--${name}`)
  return index >= 0 ? args[index + 1] : undefined
}
const durationS = option("duration", 60)
const profileDir = textOption("cpu-prof-dir")
const largeMb = option("large-mb", 2)
const maxRequests = option("requests", 4000)
const concurrency = option("concurrency", 16)
let seed = option("seed", 42)

/** a small deterministic generator (mulberry32), so a failing run can be repeated */
const random = () => {
  seed = (seed + 0x6d2b79f5) | 0
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed)
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296
}

/** the least time between two polls of one batch (`[gateway.batch] poll_interval_s`) */
const batchPollIntervalS = 20

/** `generation`: a comment that makes each reload's file differ (the soak alternates two) */
const gatewayConfig = (upstream: string, batchModels: string, generation: number) => {
  const openai = (model: string, key = "none") =>
    `type = "openai"\nmodel_name = "${model}"\napi_base = "${upstream}/v1/"\napi_key_location = "${key}"`
  const withFallback = (name: string, key = "none") => `
[models.${name}]
routing = ["first", "fallback"]
[models.${name}.providers.first]
${openai(name, key)}
[models.${name}.providers.fallback]
${openai("ok")}

[functions.${name}]
type = "chat"
[functions.${name}.variants.main]
type = "chat_completion"
model = "${name}"
max_tokens = 100
`
  return `# generation ${generation}
[gateway]
auth.enabled = true
request_read_timeout_ms = 3000
global_outbound_http_timeout_ms = 10000
max_provider_response_bytes = 8388608

[gateway.observability]
batch_writes = { flush_interval_ms = 200 }
# rows over 1 MiB are cut: the echoes of large messages make such rows
max_row_bytes = 1048576

[gateway.batch]
poll_interval_s = ${batchPollIntervalS}

[[rate_limiting.rules]]
priority = 0
tokens_per_minute = 100000000
model_inferences_per_minute = 10000000
scope = [{ api_key_public_id = "gateway::each" }]

[metrics.good]
type = "boolean"
level = "inference"

[models.ok]
routing = ["upstream"]
[models.ok.providers.upstream]
${openai("ok")}

[models.redos]
routing = ["upstream"]
[models.redos.providers.upstream]
${openai("redos")}

[functions.chat]
type = "chat"
[functions.chat.variants.main]
type = "chat_completion"
model = "ok"
max_tokens = 100

[functions.templated]
type = "chat"
[functions.templated.variants.main]
type = "chat_completion"
model = "ok"
max_tokens = 100
templates.system.path = "system.minijinja"

[functions.batched]
type = "chat"
[functions.batched.variants.main]
type = "chat_completion"
model = "dummy::hello"

${batchModels}
[functions.pending_batch]
type = "chat"
[functions.pending_batch.variants.main]
type = "chat_completion"
model = "batch_model"

[functions.extract]
type = "json"
[functions.extract.variants.main]
type = "chat_completion"
model = "redos"
max_tokens = 100
json_mode = "off"
${withFallback("keyed", "dynamic::upstream_key")}
${withFallback("huge")}
${withFallback("no_newline")}
${withFallback("html")}
${withFallback("echo_key", "dynamic::upstream_key")}
`
}

type Kind = "normal" | "hostile"
interface Outcome {
  readonly status: number
  /** the inference id of a 200 that must be stored */
  readonly stored?: string | undefined
  /** the gateway's error message, for the report */
  readonly error?: string | undefined
}
interface Scenario {
  readonly name: string
  readonly kind: Kind
  readonly weight: number
  readonly run: () => Promise<Outcome>
}

/** where a process's resident memory lies: the largest mappings, by kind, and by size */
const residentMemoryOf = (pid: number): string => {
  const maps = fs.readFileSync(`/proc/${pid}/smaps`, "utf8").split(/\n(?=[0-9a-f]+-[0-9a-f]+ )/)
  const sized = maps.map((m) => ({ head: m.split("\n")[0], kb: Number(/\nRss:\s+(\d+)/.exec(m)?.[1] ?? 0) })).sort((a, b) => b.kb - a.kb)
  const lines = sized.filter((m) => m.kb > 2048).slice(0, 30).map((m) => `${String(m.kb).padStart(8)} kB ${m.head}`)
  const kinds = new Map<string, number>()
  const sizes = new Map<number, [number, number]>()
  for (const m of sized) {
    const kind = m.head.includes("[heap]") ? "brk heap" : /\s\/\S+$/.test(m.head) ? "files" : "anonymous"
    kinds.set(kind, (kinds.get(kind) ?? 0) + m.kb)
    if (m.kb === 0) continue
    const bucket = 2 ** Math.ceil(Math.log2(m.kb))
    const [count, kb] = sizes.get(bucket) ?? [0, 0]
    sizes.set(bucket, [count + 1, kb + m.kb])
  }
  lines.push(`${[...kinds].map(([kind, kb]) => `${kind} ${(kb / 1024).toFixed(0)} MB`).join(", ")} in ${sized.length} mappings`)
  lines.push([...sizes].sort((a, b) => a[0] - b[0]).map(([bucket, [count, kb]]) => `<=${bucket} kB: ${count} (${(kb / 1024).toFixed(0)} MB)`).join(", "))
  return lines.join("\n")
}

const main = async () => {
  process.env.GATEWAY_TEST_POSTGRES_URL = await ensurePostgres()
  const analytics: TestDatabase = await freshDatabase("postgres")
  const relational: TestDatabase = await freshDatabase("postgres")
  const upstreamPort = (await startProcess(["bench/soakUpstream.ts"], /^(\d+)$/m)).match
  const upstream = `http://127.0.0.1:${upstreamPort}`
  // OpenAI's Batch API whose batches stay pending: the reads of one are the storms' target
  const batchFake = await startOpenAiBatchFake()
  batchFake.pollsUntilDone = Number.MAX_SAFE_INTEGER
  const batchGateway = openAiBatchGatewayConfig(batchFake)
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "gateway-soak-"))
  const configFile = path.join(dir, "config.toml")
  let generation = 0
  fs.writeFileSync(configFile, gatewayConfig(upstream, batchGateway.toml, generation))
  fs.writeFileSync(path.join(dir, "system.minijinja"), "You are a helpful assistant. Style: {{ style }}")
  const env = { GATEWAY_ANALYTICS_DB_URL: analytics.url, GATEWAY_RELATIONAL_DB_URL: relational.url, ...batchGateway.env }
  execFileSync(process.execPath, ["bin/gateway.ts", "--run-migrations-only"], { cwd: root, env: { ...process.env, ...env } })
  const apiKey = execFileSync(process.execPath, ["bin/gateway.ts", "--create-api-key"], { cwd: root, env: { ...process.env, ...env } })
    .toString().trim()
  // the operator's: configuration reloads
  const adminKey = execFileSync(process.execPath, ["bin/gateway.ts", "--create-api-key", "--admin"], { cwd: root, env: { ...process.env, ...env } })
    .toString().trim()
  const probeFile = path.join(dir, "probe.json")
  const gateway = await startProcess(
    ["bin/gateway.ts", "--config-file", configFile],
    /Listening on (http:\/\/[^\s"]+)/,
    {
      // glibc's allocator as docs/running.md recommends it for production: with its
      // default, the heap keeps the peak of the large bodies the attacks send (+140 MB measured)
      env: { ...env, GATEWAY_BIND_ADDRESS: "127.0.0.1:0", GATEWAY_SOAK_PROBE_FILE: probeFile, MALLOC_MMAP_THRESHOLD_: "131072" },
      nodeArgs: ["--expose-gc", "--import", path.join(root, "bench/soakProbe.ts"), ...(profileDir === undefined ? [] : ["--cpu-prof", `--cpu-prof-dir=${profileDir}`])]
    }
  )
  const base = gateway.match
  const { port } = new URL(base)
  interface Probe {
    readonly maxDelayMs: number
    readonly p99DelayMs: number
    readonly rss: number
    readonly peakRss: number
    readonly heapUsed: number
    readonly heapTotal: number
    readonly external: number
    readonly arrayBuffers: number
    readonly v8PhysicalHeap: number
    readonly v8Malloced: number
  }
  const probe = () => JSON.parse(fs.readFileSync(probeFile, "utf8")) as Probe
  /** a fresh measuring period, after a garbage collection */
  const resetProbe = async () => {
    gateway.child.kill("SIGUSR2")
    await new Promise((resolve) => setTimeout(resolve, 500))
    return probe()
  }

  const agent = new Agent({ connections: concurrency * 2, keepAliveTimeout: 10_000 })
  // failed authentications come from another address, as an attacker's would
  const strangers = new Agent({ connections: 8, connect: { localAddress: "127.0.0.2" } })
  const auth = { authorization: `Bearer ${apiKey}`, "content-type": "application/json" }

  const post = async (route: string, body: unknown, options: { headers?: Record<string, string>; dispatcher?: Agent } = {}) => {
    const response = await request(base + route, {
      method: "POST",
      headers: options.headers ?? auth,
      body: typeof body === "string" ? body : JSON.stringify(body),
      dispatcher: options.dispatcher ?? agent
    })
    const text = await response.body.text()
    let json: any
    try {
      json = JSON.parse(text)
    } catch {
      json = undefined
    }
    return { status: response.statusCode, json, text }
  }
  const inference = async (body: Record<string, unknown>, options?: { headers?: Record<string, string>; dispatcher?: Agent }): Promise<Outcome> => {
    const answer = await post("/inference", body, options)
    if (body.stream === true && answer.status === 200) {
      const first = answer.text.split("\n\n").find((event) => event.startsWith("data: {"))
      return { status: 200, stored: first === undefined ? undefined : JSON.parse(first.slice(6)).inference_id }
    }
    return {
      status: answer.status,
      stored: answer.status === 200 ? answer.json?.inference_id : undefined,
      error: answer.status === 200 ? undefined : answer.text.slice(0, 200)
    }
  }
  const user = (text: string) => ({ messages: [{ role: "user", content: text }] })
  const answered: Array<string> = []

  // as JSON text: JSON.stringify itself runs out of stack on 20 000 levels
  const nested = (depth: number): string => `${"[".repeat(depth)}"deep"${"]".repeat(depth)}`
  const notFilter = (depth: number): unknown => {
    let filter: unknown = { type: "tag", key: "k", value: "v" }
    for (let i = 0; i < depth; i++) filter = { type: "not", child: filter }
    return filter
  }
  const manyProperties = Object.fromEntries(Array.from({ length: 15_000 }, (_, i) => [`p${i}`, { type: "string" }]))
  const largeMessage = "lorem ipsum ".repeat(Math.round((largeMb * 2 ** 20) / 12))
  let schemaCounter = 0

  /** a streamed request whose client hangs up after the first event */
  const abandonedStream = () =>
    new Promise<Outcome>((resolve) => {
      const req = http.request(`${base}/inference`, { method: "POST", headers: auth, agent: false }, (res) => {
        res.once("data", () => {
          req.destroy()
          resolve({ status: res.statusCode ?? 0 })
        })
        res.once("end", () => resolve({ status: res.statusCode ?? 0 }))
      })
      req.on("error", () => {})
      req.end(JSON.stringify({ function_name: "chat", stream: true, input: user("stream, then I leave") }))
    })

  /** headers and part of a body, then nothing: the gateway must cut it (request_read_timeout_ms) */
  const stalledUpload = () =>
    new Promise<Outcome>((resolve) => {
      const socket = net.connect(Number(port), "127.0.0.1")
      let answer = ""
      socket.on("data", (data) => (answer += data))
      socket.on("error", () => {})
      socket.on("close", () => {
        clearTimeout(giveUp)
        const status = Number(/^HTTP\/1\.1 (\d+)/.exec(answer)?.[1] ?? 0)
        resolve({ status })
      })
      const giveUp = setTimeout(() => socket.destroy(), 10_000)
      socket.write(
        `POST /inference HTTP/1.1\r\nhost: 127.0.0.1\r\nauthorization: Bearer ${apiKey}\r\ncontent-type: application/json\r\n` +
          `content-length: 4000000\r\n\r\n{"function_name":"chat","input":{"messages":[{"role":"user","content":"${"z".repeat(1_000_000)}`
      )
    })

  const randomKey = () => {
    const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789"
    const pick = (n: number) => Array.from({ length: n }, () => alphabet[Math.floor(random() * alphabet.length)]).join("")
    return `sk-gw-${pick(12)}-${pick(48)}`
  }

  const get = async (route: string) => {
    const response = await request(base + route, { method: "GET", headers: auth, dispatcher: agent })
    return { status: response.statusCode, text: await response.body.text() }
  }
  // a completed batch of 1,000 inferences (the dummy provider's), read whole and a page at a time in the mix
  const batchSize = 1000
  const submitted = await post("/batch_inference", { function_name: "batched", inputs: Array.from({ length: batchSize }, (_, i) => user(`batch ${i}`)) })
  if (submitted.status !== 200) throw new Error(`the soak's batch was refused: ${submitted.text.slice(0, 300)}`)
  const batchId: string = submitted.json.batch_id
  const batchInferenceIds: ReadonlyArray<string> = submitted.json.inference_ids
  if ((await get(`/batch_inference/${batchId}`)).status !== 200) throw new Error("the soak's batch could not be read")
  /** a read of the batch, checked: every inference asked for, in order */
  const batchRead = async (query: string, expected: ReadonlyArray<string>): Promise<Outcome> => {
    const answer = await get(`/batch_inference/${batchId}${query}`)
    if (answer.status !== 200) return { status: answer.status, error: answer.text.slice(0, 200) }
    const ids = (JSON.parse(answer.text).inferences as Array<{ inference_id: string }>).map((inference) => inference.inference_id)
    return ids.length === expected.length && ids.every((id, i) => id === expected[i])
      ? { status: 200 }
      : { status: 0, error: `the batch read ${query} answered ${ids.length} inferences, not the ${expected.length} asked` }
  }

  // ---- issue 33's attacks and their normal counterparts
  const tenMb = 10 * 2 ** 20
  /** a body of about `bytes` whose `prefix` opens a value nested as deep as the bytes allow (never closed: the scan must stop first) */
  const nestedBody = (prefix: string, bytes: number) => prefix + "[".repeat(bytes - prefix.length)
  const importDatapoints = async (text: string) => {
    const response = await request(`${base}/v1/datasets/soak_import/datapoints/import`, {
      method: "POST",
      headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/jsonl" },
      body: text,
      dispatcher: agent
    })
    return { status: response.statusCode, text: await response.body.text() }
  }
  const datapointLine = (text: string) => JSON.stringify({ type: "chat", function_name: "chat", input: user(text) })
  // its row, and its model call's, are over max_row_bytes several times over (the echo doubles it)
  const echoMessage = "e".repeat(Math.round(largeMb * 2 ** 20))
  /** another generation of the configuration file (a comment apart), then a reload of it */
  const reload = async (): Promise<Outcome> => {
    fs.writeFileSync(configFile, gatewayConfig(upstream, batchGateway.toml, ++generation))
    const answer = await post("/internal/config/reload", {}, { headers: { authorization: `Bearer ${adminKey}`, "content-type": "application/json" } })
    return { status: answer.status, error: answer.status === 200 ? undefined : answer.text.slice(0, 200) }
  }
  // a batch the provider keeps pending: storms of reads must poll it at most once per interval
  const pending = await post("/batch_inference", { function_name: "pending_batch", inputs: [user("one"), user("two")] })
  if (pending.status !== 200) throw new Error(`the soak's pending batch was refused: ${pending.text.slice(0, 300)}`)
  const pendingBatchId: string = pending.json.batch_id
  const pollsOf = () => batchFake.requests.filter((seen) => seen.method === "GET" && /\/batches\/[^/]+$/.test(seen.path)).length
  const pollsBefore = pollsOf()
  const batchStartedAt = Date.now()
  const readStorm = async (): Promise<Outcome> => {
    const answers = await Promise.all(Array.from({ length: 6 }, () => get(`/batch_inference/${pendingBatchId}`)))
    const wrong = answers.find((answer) => answer.status !== 200 || JSON.parse(answer.text).status !== "pending")
    return wrong === undefined ? { status: 200 } : { status: wrong.status === 200 ? 0 : wrong.status, error: wrong.text.slice(0, 200) }
  }

  const allScenarios: ReadonlyArray<Scenario> = [
    // ---- normal traffic
    { name: "chat", kind: "normal", weight: 20, run: () => inference({ function_name: "chat", input: user("hello"), tags: { soak: "1" } }) },
    { name: "chat streamed", kind: "normal", weight: 8, run: () => inference({ function_name: "chat", stream: true, input: user("stream") }) },
    {
      name: "templated",
      kind: "normal",
      weight: 8,
      run: () => inference({ function_name: "templated", input: { system: { style: "brief" }, messages: [{ role: "user", content: "hi" }] } })
    },
    {
      name: "json with output_schema",
      kind: "normal",
      weight: 6,
      run: () =>
        inference({
          function_name: "extract",
          input: user("extract"),
          output_schema: { type: "object", properties: { answer: { type: "string", pattern: "^a+!$" } }, required: ["answer"] }
        })
    },
    {
      name: "openai route",
      kind: "normal",
      weight: 6,
      run: async () => {
        const answer = await post("/openai/v1/chat/completions", { model: "gateway::function_name::chat", messages: [{ role: "user", content: "hi" }] })
        return { status: answer.status, stored: answer.status === 200 ? answer.json?.id : undefined }
      }
    },
    {
      name: "feedback",
      kind: "normal",
      weight: 5,
      run: async () => {
        const target = answered[Math.floor(random() * answered.length)]
        if (target === undefined) return inference({ function_name: "chat", input: user("warm") })
        return { status: (await post("/feedback", { metric_name: "good", inference_id: target, value: true })).status }
      }
    },
    { name: `batch read whole (${batchSize} inferences)`, kind: "normal", weight: 0.5, run: () => batchRead("", batchInferenceIds) },
    {
      name: "batch read, a page",
      kind: "normal",
      weight: 1,
      run: () => {
        const at = Math.floor(random() * batchSize)
        return batchRead(`?limit=100&after=${batchInferenceIds[at]}`, batchInferenceIds.slice(at + 1, at + 101))
      }
    },
    // every function's, the rows cut down by the stored-row bound among them
    { name: "list every inference", kind: "normal", weight: 1, run: async () => ({ status: (await post("/v1/inferences/list_inferences", { limit: 20 })).status }) },
    {
      name: "import 20 datapoints",
      kind: "normal",
      weight: 1,
      run: async () => ({ status: (await importDatapoints(Array.from({ length: 20 }, (_, i) => datapointLine(`datapoint ${i}`)).join("\n"))).status })
    },
    { name: "configuration reload", kind: "normal", weight: 0.3, run: reload },
    { name: "6 reads of a pending batch at once", kind: "normal", weight: 1, run: readStorm },
    { name: "list inferences", kind: "normal", weight: 3, run: async () => ({ status: (await post("/v1/inferences/list_inferences", { function_name: "chat", limit: 5 })).status }) },
    { name: `${largeMb} MB message`, kind: "normal", weight: 0.3, run: () => inference({ function_name: "chat", input: user(largeMessage) }) },
    { name: "dynamic credential", kind: "normal", weight: 3, run: () => inference({ function_name: "keyed", input: user("hi"), credentials: { upstream_key: "good-key" } }) },
    // ---- hostile
    {
      name: "template arguments 20 000 deep",
      kind: "hostile",
      weight: 2,
      run: async () => {
        const body = `{"function_name":"templated","input":{"system":{"style":${nested(20_000)}},"messages":[]}}`
        return { status: (await post("/inference", body)).status }
      }
    },
    {
      name: "catastrophic pattern",
      kind: "hostile",
      weight: 2,
      run: () =>
        inference({
          function_name: "extract",
          input: user("extract"),
          output_schema: { type: "object", properties: { answer: { type: "string", pattern: "^(a|a)+$" } } }
        })
    },
    {
      name: "15 000-property schema",
      kind: "hostile",
      weight: 1,
      run: () => inference({ function_name: "extract", input: user("extract"), output_schema: { type: "object", properties: manyProperties } })
    },
    {
      name: "distinct schemas",
      kind: "hostile",
      weight: 3,
      run: () =>
        inference({
          function_name: "extract",
          input: user("extract"),
          output_schema: { type: "object", properties: { [`field_${schemaCounter++}`]: { type: "string" } } }
        })
    },
    { name: "body over the limit", kind: "hostile", weight: 0.2, run: async () => ({ status: (await post("/inference", { function_name: "chat", input: user("x".repeat(11 << 20)) })).status }) },
    { name: "stream abandoned", kind: "hostile", weight: 3, run: abandonedStream },
    { name: "bogus dynamic credential, cache on", kind: "hostile", weight: 2, run: () => inference({ function_name: "keyed", input: user("hi"), credentials: { upstream_key: "bogus" }, cache_options: { enabled: "on" } }) },
    { name: "provider body without end", kind: "hostile", weight: 0.5, run: () => inference({ function_name: "huge", input: user("hi") }) },
    { name: "provider SSE without newline", kind: "hostile", weight: 0.5, run: () => inference({ function_name: "no_newline", stream: true, input: user("hi") }) },
    { name: "provider html stream", kind: "hostile", weight: 2, run: () => inference({ function_name: "html", stream: true, input: user("hi") }) },
    { name: "provider echoes the key", kind: "hostile", weight: 2, run: async () => {
      const outcome = await post("/inference", { function_name: "echo_key", input: user("hi"), credentials: { upstream_key: "sk-secret-soak" } })
      if (outcome.text.includes("sk-secret-soak")) throw new Error("the provider's credential reached the client")
      return { status: outcome.status, stored: outcome.status === 200 ? outcome.json?.inference_id : undefined }
    } },
    { name: "stalled upload", kind: "hostile", weight: 0.3, run: stalledUpload },
    { name: "random API key", kind: "hostile", weight: 5, run: () => inference({ function_name: "chat", input: user("hi") }, { headers: { ...auth, authorization: `Bearer ${randomKey()}` }, dispatcher: strangers }) },
    { name: "filter 3 000 deep", kind: "hostile", weight: 1, run: async () => ({ status: (await post("/v1/inferences/list_inferences", { filters: notFilter(3_000) })).status }) },
    {
      name: "filter with 30 000 children",
      kind: "hostile",
      weight: 0.5,
      run: async () => ({
        status: (await post("/v1/inferences/list_inferences", {
          filters: { type: "or", children: Array.from({ length: 30_000 }, (_, i) => ({ type: "tag", key: "k", value: String(i) })) }
        })).status
      })
    },
    { name: "NUL in a filter", kind: "hostile", weight: 1, run: async () => ({ status: (await post("/v1/inferences/list_inferences", { filters: { type: "tag", key: "k", value: "a\u0000b" } })).status }) },
    { name: "CR/LF in extra_headers", kind: "hostile", weight: 1, run: () => inference({ function_name: "chat", input: user("hi"), extra_headers: [{ name: "X-A", value: "1\r\nX-Injected: 2" }] }) },
    { name: "host in extra_headers", kind: "hostile", weight: 1, run: () => inference({ function_name: "chat", input: user("hi"), extra_headers: [{ name: "host", value: "elsewhere" }] }) },
    { name: "extra_body through a string", kind: "hostile", weight: 1, run: () => inference({ function_name: "chat", input: user("hi"), extra_body: [{ pointer: "/model/x", value: 1 }] }) },
    {
      name: "10 000 unknown fields on the OpenAI route",
      kind: "hostile",
      weight: 1,
      run: async () => {
        const body: Record<string, unknown> = { model: "gateway::function_name::chat", messages: [{ role: "user", content: "hi" }], "forged\nline": 1 }
        for (let i = 0; i < 10_000; i++) body[`unknown_${i}`] = i
        const answer = await post("/openai/v1/chat/completions", body)
        return { status: answer.status, stored: answer.status === 200 ? answer.json?.id : undefined }
      }
    },
    {
      name: "sign-in nested 10 MB deep, no key",
      kind: "hostile",
      weight: 0.3,
      run: async () => ({ status: (await post("/v1/ui/session", nestedBody(`{"api_key":`, tenMb), { headers: { "content-type": "application/json" }, dispatcher: strangers })).status })
    },
    { name: "inference nested 10 MB deep", kind: "hostile", weight: 0.3, run: async () => ({ status: (await post("/inference", nestedBody(`{"function_name":"chat","input":{"system":`, tenMb))).status }) },
    { name: "import line nested 4 MB deep", kind: "hostile", weight: 0.3, run: async () => ({ status: (await importDatapoints(nestedBody(`{"type":"chat","function_name":"chat","input":`, 4 * 2 ** 20))).status }) },
    { name: `${largeMb} MB message to dummy::echo_request_messages, rows over max_row_bytes`, kind: "hostile", weight: 0.3, run: () => inference({ model_name: "dummy::echo_request_messages", input: user(echoMessage), params: { chat_completion: { max_tokens: 100 } } }) },
    {
      name: "import of 20 MB, its last line bad",
      kind: "hostile",
      weight: 0.3,
      run: async () => {
        const line = datapointLine("x".repeat(2000))
        const lines = Array.from({ length: Math.round((20 * 2 ** 20) / line.length) }, () => line)
        lines.push(`{"type":"chat","function_name":"chat","input":`)
        return { status: (await importDatapoints(lines.join("\n"))).status }
      }
    },
    { name: "import of one 20 MB line", kind: "hostile", weight: 0.2, run: async () => ({ status: (await importDatapoints(datapointLine("y".repeat(20 * 2 ** 20)))).status }) },
    { name: "malformed JSON", kind: "hostile", weight: 1, run: async () => ({ status: (await post("/inference", "{\"function_name\": ")).status }) },
    { name: "health without a key", kind: "hostile", weight: 1, run: async () => ({ status: (await request(`${base}/health`, { dispatcher: strangers })).statusCode }) }
  ]
  const only = textOption("only")
  const skip = textOption("skip")
  const scenarios = allScenarios.filter((scenario) =>
    scenario.kind === "normal" ||
    ((only === undefined || new RegExp(only).test(scenario.name)) && (skip === undefined || !new RegExp(skip).test(scenario.name)))
  )
  const totalWeight = scenarios.reduce((sum, scenario) => sum + scenario.weight, 0)
  const pick = () => {
    let at = random() * totalWeight
    for (const scenario of scenarios) if ((at -= scenario.weight) < 0) return scenario
    return scenarios[0]
  }

  // warm-up: a few normal requests, then the measuring period starts
  for (let i = 0; i < 50; i++) await scenarios[i % 3].run()
  const start = await resetProbe()
  console.log(`gateway ${base}, RSS at start ${(start.rss / 2 ** 20).toFixed(0)} MB; ${concurrency} clients for at most ${durationS} s or ${maxRequests} requests`)

  const tally = new Map<string, Map<number | string, number>>()
  /** the first answer of each scenario and status that was not a 200, shown with --errors */
  const firstErrors = new Map<string, string>()
  const problems: Array<string> = []
  let sent = 0
  const deadline = Date.now() + durationS * 1000
  const client = async () => {
    while (sent < maxRequests && Date.now() < deadline) {
      sent++
      const scenario = pick()
      let outcome: Outcome | undefined
      let status: number | string
      try {
        outcome = await scenario.run()
        status = outcome.status
      } catch (error) {
        status = `error: ${(error as Error).message.slice(0, 80)}`
      }
      const counts = tally.get(scenario.name) ?? new Map()
      counts.set(status, (counts.get(status) ?? 0) + 1)
      tally.set(scenario.name, counts)
      if (outcome?.error !== undefined && !firstErrors.has(`${scenario.name}: ${status}`)) firstErrors.set(`${scenario.name}: ${status}`, outcome.error)
      if (scenario.kind === "normal" && status !== 200 && problems.length < 20) problems.push(`${scenario.name} answered ${status}${outcome?.error === undefined ? "" : ` (${outcome.error})`}`)
      if (typeof status === "number" && status >= 500 && problems.length < 20) problems.push(`${scenario.name} answered ${status}`)
      if (typeof status === "string" && scenario.kind === "normal" && problems.length < 20) problems.push(`${scenario.name}: ${status}`)
      if (outcome?.stored !== undefined) answered.push(outcome.stored)
    }
  }
  const began = Date.now()
  await Promise.all(Array.from({ length: concurrency }, client))
  const elapsedS = (Date.now() - began) / 1000
  const during = probe()

  console.log(`\n${sent} requests in ${elapsedS.toFixed(1)} s (${(sent / elapsedS).toFixed(0)} req/s)`)
  for (const scenario of scenarios) {
    const counts = tally.get(scenario.name)
    if (counts === undefined) continue
    console.log(`  ${scenario.kind.padEnd(8)}${scenario.name.padEnd(42)}${[...counts].map(([status, n]) => `${status}: ${n}`).join(", ")}`)
    if (args.includes("--errors")) for (const status of counts.keys()) {
      const error = firstErrors.get(`${scenario.name}: ${status}`)
      if (error !== undefined) console.log(`          ${status}: ${error}`)
    }
  }

  // every inference that answered 200 is stored once the queue has drained
  const expected = new Set(answered)
  // the database holds this run's rows only
  const countStored = async () => {
    const rows = await queryDatabase(analytics, "SELECT id::text AS id FROM chat_inference UNION ALL SELECT id::text FROM json_inference")
    const found = new Set(rows.map((row) => String(row.id)))
    let count = 0
    for (const id of expected) if (found.has(id)) count++
    return count
  }
  // (large rows take the database a while: wait as long as the count keeps rising)
  let stored = 0
  for (let lastRise = Date.now(); Date.now() - lastRise < 15_000;) {
    const count = await countStored()
    if (count > stored) lastRise = Date.now()
    stored = count
    if (stored >= expected.size) break
    await new Promise((resolve) => setTimeout(resolve, 500))
  }
  // the probe's last-resort collection gives V8's spare pages back; what else is freed may take a while
  let after = await resetProbe()
  for (let i = 0; i < 4 && after.rss - start.rss > 100 * 2 ** 20; i++) {
    await new Promise((resolve) => setTimeout(resolve, 5000))
    after = await resetProbe()
    console.log(`  after ${5 * (i + 1)} s idle: ${(after.rss / 2 ** 20).toFixed(0)} MB`)
  }

  const mb = (bytes: number) => `${(bytes / 2 ** 20).toFixed(0)} MB`
  const memory = (at: Probe) =>
    `RSS ${mb(at.rss)}, V8 heap ${mb(at.heapUsed)} used of ${mb(at.heapTotal)} (${mb(at.v8PhysicalHeap)} resident, ${
      mb(at.v8Malloced)
    } malloced by V8), external ${mb(at.external)} (array buffers ${mb(at.arrayBuffers)})`
  if (args.includes("--smaps")) console.log(residentMemoryOf(gateway.child.pid!))
  console.log(`\nmemory at the start: ${memory(start)}\nmemory after the load: ${memory(after)}`)
  const rssGrowth = after.rss - start.rss
  const checks = [
    { name: "every normal request answered 200, none 5xx", ok: problems.length === 0, detail: problems.join("; ") || "yes" },
    { name: "RSS after the load within 100 MB of the start", ok: rssGrowth <= 100 * 2 ** 20, detail: `${mb(start.rss)} -> ${mb(after.rss)} (peak ${mb(during.peakRss)})` },
    { name: "event loop never blocked more than 100 ms", ok: during.maxDelayMs <= 100, detail: `max ${during.maxDelayMs.toFixed(1)} ms, p99 ${during.p99DelayMs.toFixed(1)} ms` },
    { name: "every inference that answered 200 stored", ok: stored === expected.size, detail: `${stored} of ${expected.size}` },
    {
      name: "the pending batch polled at most once per poll_interval_s",
      ok: pollsOf() - pollsBefore <= Math.floor((Date.now() - batchStartedAt) / (batchPollIntervalS * 1000)) + 1,
      detail: `${pollsOf() - pollsBefore} polls in ${((Date.now() - batchStartedAt) / 1000).toFixed(0)} s`
    }
  ]
  if (gateway.child.exitCode !== null) checks.push({ name: "gateway alive", ok: false, detail: gateway.output().slice(-2000) })
  console.log("")
  for (const check of checks) console.log(`${check.ok ? "ok  " : "FAIL"} ${check.name}: ${check.detail}`)
  gateway.child.kill("SIGTERM")
  await new Promise((resolve) => gateway.child.once("exit", resolve))
  await agent.close()
  await strangers.close()
  await batchFake.close()
  await analytics.drop()
  await relational.drop()
  fs.rmSync(dir, { recursive: true, force: true })
  process.exit(checks.every((check) => check.ok) ? 0 : 1)
}

main().catch((error) => {
  console.error(error)
  process.exit(1)
})
