/**
 * Observability conformance, parts 5 and 6 (spec 4.8, issue 3 "/health" and "Migrations"),
 * against ClickHouse and Postgres alike: /health per backend and when the database does not
 * answer; the gateway without GATEWAY_ANALYTICS_DB_URL; `gateway migrate` and
 * `--run-migrations-only` on fresh databases; `disable_automatic_migrations`.
 */
import { createClient } from "@clickhouse/client"
import { execFile } from "node:child_process"
import * as path from "node:path"
import { promisify } from "node:util"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { freshDatabase, type TestBackend, type TestDatabase } from "../support/databases.ts"
import { runGateway, type RunningGateway, startGateway, writeFiles } from "../support/gateway.ts"
import {
  backends,
  getInferences,
  observabilityToml,
  poll,
  queueStats,
  userInput,
  uuidV7Pattern,
  waitForFeedback,
  waitForInference
} from "../support/observability.ts"
import { startTcpProxy, type TcpProxy } from "../support/tcpProxy.ts"

const functions = `
[metrics.thumbs_up]
type = "boolean"
level = "inference"

[functions.chat]
type = "chat"
[functions.chat.variants.text]
type = "chat_completion"
model = "dummy::hello"
`

const config = (options: Parameters<typeof observabilityToml>[0] = {}) => `${observabilityToml(options)}\n${functions}`

/** the tables of a database, asked of the server directly */
const tablesOf = async (backend: TestBackend, database: TestDatabase): Promise<Array<string>> => {
  const url = new URL(database.url)
  if (backend === "clickhouse") {
    const client = createClient({ url: url.origin, username: decodeURIComponent(url.username) || "default", password: decodeURIComponent(url.password) })
    try {
      const result = await client.query({ query: `SHOW TABLES FROM ${database.name}`, format: "JSONEachRow" })
      return (await result.json<{ name: string }>()).map((row) => row.name).sort()
    } finally {
      await client.close()
    }
  }
  const { stdout } = await promisify(execFile)("psql", [
    "-h", url.hostname, "-p", url.port || "5432", "-U", decodeURIComponent(url.username) || "postgres", "-d", database.name,
    "-At", "-c", "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' ORDER BY table_name"
  ])
  return stdout.split("\n").filter((line) => line !== "").sort()
}

const inferenceTable = (backend: TestBackend) => (backend === "clickhouse" ? "ChatInference" : "chat_inference")

describe.each(backends)("observability on %s: /health", (backend) => {
  let database: TestDatabase
  let proxy: TcpProxy
  let gateway: RunningGateway

  beforeAll(async () => {
    database = await freshDatabase(backend)
    const url = new URL(database.url)
    proxy = await startTcpProxy({ host: url.hostname, port: Number(url.port || 5432) })
    gateway = await startGateway({ config: config(), env: { GATEWAY_ANALYTICS_DB_URL: proxy.urlFor(database.url) } })
  })
  afterAll(async () => {
    await gateway?.stop()
    await proxy?.close()
    await database?.drop()
  })

  it(`answers {"gateway":"ok","${backend}":"ok"} while the database answers`, async () => {
    const health = await gateway.get("/health")
    expect(health.status).toBe(200)
    expect(health.body).toEqual({ gateway: "ok", [backend]: "ok" })
    const status = await gateway.get("/status")
    expect(status.status).toBe(200)
    expect(status.body).toMatchObject({ status: "ok", observability: { backend, dropped: 0, rejected: 0 } })
  })

  it("answers 503 with an error while the database is cut off, and ok again once it is back", async () => {
    proxy.cut()
    try {
      const started = Date.now()
      const health = await gateway.get("/health")
      expect(health.status).toBe(503)
      expect(health.body.gateway).toBe("ok")
      expect(health.body[backend]).toBe("error")
      expect(typeof health.body.error).toBe("string")
      expect(health.body.error).toContain(backend)
      expect(Date.now() - started).toBeLessThan(5_000)
      // the gateway itself still serves
      const inference = await gateway.post("/inference", { function_name: "chat", input: userInput("during the cut") })
      expect(inference.status).toBe(200)
      // reads need the database: 503, not a crash
      const read = await gateway.post("/v1/inferences/get_inferences", { ids: [inference.body.inference_id] })
      expect(read.status).toBe(503)
      expect(typeof read.body.error).toBe("string")
    } finally {
      proxy.restore()
    }
    const healthy = await poll("/health to be ok again", async () => {
      const health = await gateway.get("/health")
      return health.status === 200 ? health.body : undefined
    })
    expect(healthy).toEqual({ gateway: "ok", [backend]: "ok" })
  })
})

describe("observability disabled: GATEWAY_ANALYTICS_DB_URL unset", () => {
  let gateway: RunningGateway

  beforeAll(async () => {
    gateway = await startGateway({ config: config(), env: { GATEWAY_ANALYTICS_DB_URL: undefined } })
  })
  afterAll(async () => {
    await gateway?.stop()
  })

  it("inference works, streamed or not; /health is {\"gateway\":\"ok\"}; /status has no observability", async () => {
    const response = await gateway.post("/inference", { function_name: "chat", input: userInput("hi") })
    expect(response.status).toBe(200)
    expect(response.body.inference_id).toMatch(uuidV7Pattern)
    const streamed = await gateway.stream("/inference", { function_name: "chat", input: userInput("hi"), stream: true })
    expect(streamed.status).toBe(200)
    expect(streamed.events.at(-1)).toBe("[DONE]")
    const cached = await gateway.post("/inference", { function_name: "chat", input: userInput("hi"), cache_options: { enabled: "on" } })
    expect(cached.status).toBe(200)
    expect(cached.body.usage).toEqual({ input_tokens: 10, output_tokens: 10 })

    const health = await gateway.get("/health")
    expect(health.status).toBe(200)
    expect(health.body).toEqual({ gateway: "ok" })
    const status = await gateway.get("/status")
    expect(status.status).toBe(200)
    expect(status.body.status).toBe("ok")
    expect(status.body).not.toHaveProperty("observability")
  })

  it("feedback, get_inferences and list_inferences answer 503 naming GATEWAY_ANALYTICS_DB_URL", async () => {
    const inference = await gateway.post("/inference", { function_name: "chat", input: userInput("hi") })
    const requests: Array<[string, unknown]> = [
      ["/feedback", { metric_name: "thumbs_up", inference_id: inference.body.inference_id, value: true }],
      ["/feedback", { metric_name: "comment", episode_id: inference.body.episode_id, value: "nice" }],
      ["/v1/inferences/get_inferences", { ids: [inference.body.inference_id] }],
      ["/v1/inferences/list_inferences", {}],
      ["/v1/inferences/list_inferences", { function_name: "chat", limit: 5 }]
    ]
    for (const [route, body] of requests) {
      const response = await gateway.post(route, body)
      expect(response.status, `${route} ${JSON.stringify(body)}`).toBe(503)
      expect(response.body.error).toContain("GATEWAY_ANALYTICS_DB_URL")
    }
  })
})

describe("observability: start-up with a GATEWAY_ANALYTICS_DB_URL the gateway cannot use", () => {
  it("an unsupported URL scheme is a start-up error naming the variable", async () => {
    const dir = writeFiles({ "config.toml": config() })
    for (const url of ["mysql://root@127.0.0.1:3306/db", "clickhouse.example.com:8123", "ftp://x"]) {
      const result = await runGateway(["--config-file", path.join(dir, "config.toml")], { env: { GATEWAY_ANALYTICS_DB_URL: url } })
      expect(result.code, url).toBe(1)
      expect(result.stderr).toContain("GATEWAY_ANALYTICS_DB_URL")
      expect(result.stderr).not.toContain("Listening on")
    }
    const migrate = await runGateway(["migrate"], { env: { GATEWAY_ANALYTICS_DB_URL: "mysql://root@127.0.0.1:3306/db" } })
    expect(migrate.code).toBe(1)
    expect(migrate.stderr).toContain("GATEWAY_ANALYTICS_DB_URL")
  })
})

describe.each(backends)("observability on %s: migrations", (backend) => {
  const databases: Array<TestDatabase> = []
  const gateways: Array<RunningGateway> = []
  const fresh = async () => {
    const database = await freshDatabase(backend)
    databases.push(database)
    return database
  }
  const start = async (database: TestDatabase, options: Parameters<typeof observabilityToml>[0] = {}) => {
    const gateway = await startGateway({ config: config(options), env: { GATEWAY_ANALYTICS_DB_URL: database.url } })
    gateways.push(gateway)
    return gateway
  }

  afterAll(async () => {
    await Promise.all(gateways.map((gateway) => gateway.stop()))
    await Promise.all(databases.map((database) => database.drop()))
  })

  /** a gateway that does not migrate stores and reads on `database`: inference, feedback, get and list */
  const storesAndReads = async (database: TestDatabase) => {
    const gateway = await start(database, { disableMigrations: true })
    expect(gateway.log()).not.toContain("applied migrations")
    const response = await gateway.post("/inference", { function_name: "chat", input: userInput("after migrate"), tags: { m: "1" } })
    expect(response.status).toBe(200)
    const feedback = await gateway.post("/feedback", { metric_name: "thumbs_up", inference_id: response.body.inference_id, value: true })
    expect(feedback.status, JSON.stringify(feedback.body)).toBe(200)
    const rows = await waitForFeedback(gateway, response.body.inference_id, (found) => found.length === 1)
    expect(rows[0]).toMatchObject({ metric_name: "thumbs_up", value: true })
    const listed = await gateway.post("/v1/inferences/list_inferences", { function_name: "chat", filters: { type: "tag", key: "m", value: "1" } })
    expect(listed.status).toBe(200)
    expect(listed.body.inferences.map((inference: any) => inference.inference_id)).toEqual([response.body.inference_id])
    expect(await gateway.get("/health")).toMatchObject({ status: 200, body: { gateway: "ok", [backend]: "ok" } })
    expect((await queueStats(gateway)).rejected).toBe(0)
  }

  it("`gateway migrate` creates what the gateway needs, exits 0, and applies nothing the second time", async () => {
    const database = await fresh()
    expect(await tablesOf(backend, database)).toEqual([])
    const dir = writeFiles({ "config.toml": config() })
    const args = ["migrate", "--config-file", path.join(dir, "config.toml")]
    const first = await runGateway(args, { env: { GATEWAY_ANALYTICS_DB_URL: database.url } })
    expect(first.code, first.stderr).toBe(0)
    expect(first.stderr).toContain(`${backend}: applied migrations 0001_observability_tables`)
    expect(first.stderr).not.toContain("Listening on")
    const tables = await tablesOf(backend, database)
    expect(tables).toContain(inferenceTable(backend))
    expect(tables.length).toBeGreaterThan(5)

    const second = await runGateway(args, { env: { GATEWAY_ANALYTICS_DB_URL: database.url } })
    expect(second.code, second.stderr).toBe(0)
    expect(second.stderr).toContain(`${backend}: the database is up to date`)
    expect(second.stderr).not.toContain("applied migrations")
    expect(await tablesOf(backend, database)).toEqual(tables)

    await storesAndReads(database)
  })

  it("`--run-migrations-only` (with or without a configuration) migrates a fresh database and exits 0", async () => {
    const database = await fresh()
    const first = await runGateway(["--run-migrations-only"], { env: { GATEWAY_ANALYTICS_DB_URL: database.url } })
    expect(first.code, first.stderr).toBe(0)
    expect(first.stderr).toContain(`${backend}: applied migrations 0001_observability_tables`)
    expect(await tablesOf(backend, database)).toContain(inferenceTable(backend))

    const dir = writeFiles({ "config.toml": config() })
    const second = await runGateway(["--run-migrations-only", "--config-file", path.join(dir, "config.toml")], {
      env: { GATEWAY_ANALYTICS_DB_URL: database.url }
    })
    expect(second.code, second.stderr).toBe(0)
    expect(second.stderr).toContain(`${backend}: the database is up to date`)

    await storesAndReads(database)
  })

  it("a gateway migrates a fresh database at start-up, and a second start finds it up to date", async () => {
    const database = await fresh()
    const first = await start(database)
    expect(first.log()).toContain(`${backend}: applied migrations 0001_observability_tables`)
    const response = await first.post("/inference", { function_name: "chat", input: userInput("auto") })
    await waitForInference(first, response.body.inference_id)
    const second = await start(database)
    expect(second.log()).toContain(`${backend}: the database is up to date`)
    expect(await getInferences(second, [response.body.inference_id])).toHaveLength(1)
  })

  it("with disable_automatic_migrations = true on an empty database no table is created, and inferences still answer 200", async () => {
    const database = await fresh()
    const gateway = await start(database, { disableMigrations: true })
    expect(gateway.log()).not.toContain("applied migrations")
    for (let i = 0; i < 3; i++) {
      const response = await gateway.post("/inference", { function_name: "chat", input: userInput(`no tables ${i}`) })
      expect(response.status).toBe(200)
    }
    const streamed = await gateway.stream("/inference", { function_name: "chat", input: userInput("no tables"), stream: true })
    expect(streamed.status).toBe(200)
    // the writes fail, and that shows in the counters
    const stats = await poll("a failed write to be counted", async () => {
      const current = await queueStats(gateway)
      return current.failedAttempts > 0 ? current : undefined
    })
    expect(stats.written).toBe(0)
    expect(await tablesOf(backend, database)).toEqual([])
  })
})
