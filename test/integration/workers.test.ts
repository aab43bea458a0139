/**
 * `[gateway] workers` / `--workers` (issue 13, "Every core"): a primary process starts the
 * workers that share the port, replaces one that dies, keeps rate limits exact across them
 * (buckets in Postgres), drains them all on SIGTERM, and refuses to start when the
 * configuration is invalid or the port is taken. Real processes; which worker answered is
 * read from `GET /status` (`worker`: its pid), and the workers are the primary's children.
 */
import * as fs from "node:fs"
import * as http from "node:http"
import * as net from "node:net"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { call, createKey, dummyInference, pollUntil } from "../support/access.ts"
import { freshDatabase, type TestDatabase } from "../support/databases.ts"
import { rawRequest, type RunningGateway, runGateway, startGateway, writeFiles } from "../support/gateway.ts"
import { textCompletion } from "../support/fakeOpenAi.ts"

const workersArgs = ["--config-file", "config.toml", "--workers", "2"]

/** the parent pid of `pid`, from /proc */
const parentOf = (pid: number) => Number(fs.readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ")[1])

const listeningLines = (gateway: RunningGateway) => gateway.log().match(/Listening on http/g)?.length ?? 0

/** resolves once `count` workers said they listen in all (the harness resolves at the first) */
const untilListening = (gateway: RunningGateway, count: number) => pollUntil(async () => listeningLines(gateway), (lines) => lines >= count, 20_000)

/** which worker answers `GET /status` over a fresh connection */
const statusWorker = async (gateway: RunningGateway): Promise<number> => {
  const answer = await rawRequest(gateway.url + "/status")
  expect(answer.status).toBe(200)
  return JSON.parse(answer.text).worker
}

/** the workers seen answering `/status` over fresh connections, until `count` distinct ones are seen */
const workersAnswering = async (gateway: RunningGateway, count: number): Promise<Set<number>> => {
  const seen = new Set<number>()
  for (let attempt = 0; attempt < 400 && seen.size < count; attempt++) seen.add(await statusWorker(gateway))
  return seen
}

describe("two workers", () => {
  let gateway: RunningGateway
  beforeAll(async () => {
    gateway = await startGateway({ args: workersArgs })
    await untilListening(gateway, 2)
  })
  afterAll(async () => {
    await gateway?.stop()
  })

  it("answer on one port: /status names two distinct workers, both children of the primary, and both serve inferences", async () => {
    const workers = await workersAnswering(gateway, 2)
    expect(workers.size).toBe(2)
    for (const pid of workers) {
      expect(pid).not.toBe(gateway.process.pid)
      expect(parentOf(pid)).toBe(gateway.process.pid)
    }
    // each "Listening on" line names its worker and the one port
    expect(gateway.log()).toMatch(/starting 2 workers/)
    const lines = gateway.log().split("\n")
    expect(new Set(lines.filter((line) => line.includes("Listening on")).map((line) => /Listening on (\S+)/.exec(line)![1]))).toEqual(
      new Set([gateway.url])
    )
    expect(gateway.log()).toMatch(/worker: 1/)
    expect(gateway.log()).toMatch(/worker: 2/)
    const answers = await Promise.all(Array.from({ length: 10 }, () => call(gateway, "POST", "/inference", { body: dummyInference() })))
    expect(answers.map((answer) => answer.status)).toEqual(Array(10).fill(200))
  })

  it("give GET /metrics summed over both workers, whichever answers the scrape", async () => {
    const counted = async () => {
      const scrape = await rawRequest(gateway.url + "/metrics")
      expect(scrape.status).toBe(200)
      const line = scrape.text.split("\n").find((text) => text.startsWith(`gateway_http_requests_total{route="/inference",status="200"}`))
      return line === undefined ? 0 : Number(line.split(" ").at(-1))
    }
    const before = await counted()
    // fresh connections, spread by the kernel over both workers
    const answers = await Promise.all(Array.from({ length: 20 }, () => rawRequest(gateway.url + "/inference", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(dummyInference())
    })))
    expect(answers.map((answer) => answer.status)).toEqual(Array(20).fill(200))
    expect(new Set(await Promise.all(Array.from({ length: 6 }, () => counted())))).toEqual(new Set([before + 20]))
  })

  it("replace a killed worker while the other keeps answering", async () => {
    const before = await workersAnswering(gateway, 2)
    const [victim, survivor] = [...before]
    process.kill(victim, "SIGKILL")
    // the primary notices (the killed worker's socket is closed by then) and says what it does
    await pollUntil(async () => gateway.log(), (log) => log.includes(`(pid ${victim}) killed by SIGKILL: starting a new one in 100 ms`), 10_000)
    const listened = listeningLines(gateway)
    // until the replacement listens, every request succeeds: the survivor answers
    const answeredBy = new Set<number>()
    while (listeningLines(gateway) === listened) {
      answeredBy.add(await statusWorker(gateway))
      const inference = await call(gateway, "POST", "/inference", { body: dummyInference() })
      expect(inference.status).toBe(200)
    }
    expect(answeredBy.has(survivor)).toBe(true)
    expect(answeredBy.has(victim)).toBe(false)
    const after = await workersAnswering(gateway, 2)
    expect(after.size).toBe(2)
    expect(after.has(survivor)).toBe(true)
    expect(after.has(victim)).toBe(false)
    for (const pid of after) expect(parentOf(pid)).toBe(gateway.process.pid)
  })
})

describe("--bind-address with two workers", () => {
  it("gives both workers the flag's address over GATEWAY_BIND_ADDRESS (a taken port here), port 0 included", async () => {
    const blocker = net.createServer()
    await new Promise<void>((resolve) => blocker.listen(0, "127.0.0.1", resolve))
    const { port } = blocker.address() as net.AddressInfo
    const gateway = await startGateway({
      args: [...workersArgs, "--bind-address", "127.0.0.1:0"],
      env: { GATEWAY_BIND_ADDRESS: `127.0.0.1:${port}` }
    })
    try {
      await untilListening(gateway, 2)
      expect(gateway.url).not.toBe(`http://127.0.0.1:${port}`)
      const addresses = gateway.log().split("\n").filter((line) => line.includes("Listening on")).map((line) => /Listening on (\S+)/.exec(line)![1])
      expect(addresses).toEqual([gateway.url, gateway.url])
      expect((await workersAnswering(gateway, 2)).size).toBe(2)
    } finally {
      await gateway.stop()
      blocker.close()
    }
  })
})

describe("rate limits with buckets in Postgres", () => {
  let database: TestDatabase
  let gateway: RunningGateway
  beforeAll(async () => {
    database = await freshDatabase("postgres")
    gateway = await startGateway({
      config: `
[gateway.auth]
enabled = true

[[rate_limiting.rules]]
priority = 0
model_inferences_per_hour = 10
scope = [{ api_key_public_id = "gateway::each" }]
`,
      args: workersArgs,
      env: { GATEWAY_RELATIONAL_DB_URL: database.url, GATEWAY_ANALYTICS_DB_URL: undefined, GATEWAY_REDIS_URL: undefined }
    })
    await untilListening(gateway, 2)
  })
  afterAll(async () => {
    await gateway?.stop()
    await database?.drop()
  })

  it("stay exact across the workers: 30 parallel requests over fresh connections against a limit of 10 let exactly 10 through", async () => {
    expect(gateway.log()).toMatch(/buckets in postgres[^]*buckets in postgres/)
    const key = await createKey(database.url)
    const infer = () =>
      rawRequest(gateway.url + "/inference", {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${key.key}` },
        body: JSON.stringify(dummyInference())
      })
    const answers = await Promise.all(Array.from({ length: 30 }, infer))
    const statuses = answers.map((answer) => answer.status)
    expect(statuses.filter((status) => status === 200)).toHaveLength(10)
    expect(statuses.filter((status) => status === 429)).toHaveLength(20)
    expect((await infer()).status).toBe(429)
  })
})

/** an OpenAI-compatible upstream that holds every answer until `release()` */
const startHeldUpstream = async () => {
  const held: Array<http.ServerResponse> = []
  let released = false
  const answer = (response: http.ServerResponse) => {
    response.writeHead(200, { "content-type": "application/json" })
    response.end(JSON.stringify(textCompletion("drained")))
  }
  const server = http.createServer((request, response) => {
    request.resume()
    request.on("end", () => (released ? answer(response) : held.push(response)))
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  return {
    url: `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`,
    held: () => held.length,
    release: () => {
      released = true
      held.splice(0).forEach(answer)
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve()))
  }
}

/** a connection of its own (an agent with one kept-alive socket), to send several requests to one worker */
const connection = (url: string) => {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 })
  const request = (method: string, path: string, body?: string) =>
    new Promise<{ status: number; text: string }>((resolve, reject) => {
      const sent = http.request(url + path, { method, agent, headers: body === undefined ? {} : { "content-type": "application/json" } }, (response) => {
        let text = ""
        response.setEncoding("utf8")
        response.on("data", (data) => (text += data))
        response.on("end", () => resolve({ status: response.statusCode ?? 0, text }))
      })
      sent.on("error", reject)
      sent.end(body)
    })
  return { request, close: () => agent.destroy() }
}

describe("SIGTERM to the primary", () => {
  it("drains both workers: a request in flight on each completes, then the primary exits 0", async () => {
    const upstream = await startHeldUpstream()
    const gateway = await startGateway({
      config: `
[models.held]
routing = ["upstream"]

[models.held.providers.upstream]
type = "openai"
model_name = "held"
api_base = "${upstream.url}/v1/"
api_key_location = "none"
`,
      args: workersArgs
    })
    try {
      await untilListening(gateway, 2)
      // one kept-alive connection to each worker
      const byWorker = new Map<number, ReturnType<typeof connection>>()
      for (let attempt = 0; attempt < 400 && byWorker.size < 2; attempt++) {
        const candidate = connection(gateway.url)
        const worker = JSON.parse((await candidate.request("GET", "/status")).text).worker as number
        if (byWorker.has(worker)) candidate.close()
        else byWorker.set(worker, candidate)
      }
      expect(byWorker.size).toBe(2)
      const body = JSON.stringify({ model_name: "held", input: { messages: [{ role: "user", content: "hi" }] } })
      const inFlight = [...byWorker.values()].map((each) => each.request("POST", "/inference", body))
      await pollUntil(async () => upstream.held(), (held) => held === 2, 10_000)

      const exited = gateway.stop("SIGTERM")
      // both workers got the signal: each closes its listener, so that new connections are refused
      await pollUntil(
        () => rawRequest(gateway.url + "/status").then(() => "answered", (error) => String(error)),
        (outcome) => outcome.includes("ECONNREFUSED"),
        10_000
      )
      expect(upstream.held()).toBe(2)
      upstream.release()
      const answers = await Promise.all(inFlight)
      for (const answer of answers) {
        expect(answer.status, answer.text).toBe(200)
        expect(JSON.parse(answer.text).content).toEqual([{ type: "text", text: "drained" }])
      }
      expect(await exited).toBe(0)
      expect(gateway.log()).toMatch(/stopping: 2 workers drain their requests/)
      for (const pid of byWorker.keys()) expect(fs.existsSync(`/proc/${pid}`)).toBe(false)
      for (const each of byWorker.values()) each.close()
    } finally {
      gateway.process.kill("SIGKILL")
      await upstream.close()
    }
  })
})

describe("start-up failures with --workers 2", () => {
  it("an invalid configuration exits 1 with the same message as one process, before any worker starts", async () => {
    const dir = writeFiles({ "config.toml": "[gateway]\nworkers = 0\n" })
    const single = await runGateway(["--config-file", `${dir}/config.toml`])
    const workers = await runGateway(["--config-file", `${dir}/config.toml`, "--workers", "2"])
    expect(single.code).toBe(1)
    expect(workers.code).toBe(1)
    expect(workers.stderr).toContain("the configuration is invalid")
    expect(workers.stderr).toBe(single.stderr)
    expect(workers.stderr).not.toContain("starting 2 workers")
  })

  it("a port already taken exits non-zero with the reason instead of restarting workers forever", async () => {
    const taken = net.createServer()
    await new Promise<void>((resolve) => taken.listen(0, "127.0.0.1", resolve))
    const port = (taken.address() as net.AddressInfo).port
    try {
      const result = await runGateway(["--default-config", "--workers", "2"], { env: { GATEWAY_BIND_ADDRESS: `127.0.0.1:${port}` }, timeoutMs: 30_000 })
      expect(result.code).toBe(1)
      expect(result.stderr).toContain("cannot listen on the bind address")
      expect(result.stderr).toContain("EADDRINUSE")
      expect(result.stderr).toMatch(/worker \d \(pid \d+\) exited with code 1 before it listened: the gateway cannot start/)
    } finally {
      taken.close()
    }
  })

  it("--workers takes a positive integer or auto", async () => {
    const result = await runGateway(["--default-config", "--workers", "0"])
    expect(result.code).toBe(2)
    expect(result.stderr).toContain(`--workers expects a positive integer or auto, got "0"`)
  })
})
