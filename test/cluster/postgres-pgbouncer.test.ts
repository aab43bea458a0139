/**
 * Postgres in production shapes (issue 38):
 * - through PgBouncer in transaction pooling mode (scripts/pgbouncer.ts, a server pool smaller
 *   than the gateway's, so server connections pass from client to client): the migrations, `--create-api-key` and a
 *   gateway whose relational and analytics databases both go through it; keys are checked,
 *   rate limits let exactly their count through, inferences and feedback are stored and read
 *   back. Two task services' `exclusive` sections behind a PgBouncer with a single server
 *   connection (every transaction on the same session, where a session lock would be
 *   re-entered) never overlap. (The whole durable task suite through PgBouncer:
 *   test/integration/tasks-pgboss.test.ts.)
 * - a Postgres restart under load, on a private cluster (scripts/postgresCluster.ts: the shared
 *   server serves the other tests): requests keep being answered while the server is down (keys
 *   from the cache, observability queued), every inference answered is stored once the server
 *   is back, and the gateway is never restarted. Meanwhile the connections the gateway holds,
 *   counted in `pg_stat_activity`, stay within `[postgres] connection_pool_size`.
 */
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Scope from "effect/Scope"
import { execFile } from "node:child_process"
import { promisify } from "node:util"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { makePgClient } from "../../layers/postgres/client.ts"
import { type PostgresCluster, startPostgresCluster } from "../../scripts/postgresCluster.ts"
import { type Answer, type ApiKey, call, createKey, dummyInference, insertKeys, withKey } from "../support/access.ts"
import { type RunningGateway, runGateway, startGateway } from "../support/gateway.ts"
import { waitForFeedback, waitForInferences } from "../support/observability.ts"
import { freshDatabaseBehindPgBouncer, type PooledDatabase } from "../support/pgbouncer.ts"
import { migrateDatabase, type OpenTasks, openTasks, type TasksService } from "../support/tasks.ts"

/** one query's rows as psql prints them; the query on standard input, as long as it likes */
const psql = async (url: string, query: string): Promise<string> => {
  const running = promisify(execFile)("psql", [url, "-v", "ON_ERROR_STOP=1", "-At"])
  running.child.stdin!.end(query)
  return (await running).stdout.trim()
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

const observability = `
[gateway.observability]
batch_writes = { flush_interval_ms = 20 }
`

describe("the gateway through PgBouncer in transaction pooling mode", () => {
  let database: PooledDatabase
  let gateway: RunningGateway
  let limited: ApiKey
  let free: ApiKey

  beforeAll(async () => {
    // 3 server connections for a gateway that opens up to 20: each transaction may land on any of them
    database = await freshDatabaseBehindPgBouncer({ poolSize: 3 })
    const migrated = await runGateway(["--run-postgres-migrations"], { env: { GATEWAY_RELATIONAL_DB_URL: database.url } })
    expect(migrated.code, migrated.stderr).toBe(0)
    limited = await createKey(database.url)
    ;[free] = await insertKeys(database.url, 1)
    gateway = await startGateway({
      config: `
[gateway.auth]
enabled = true
${observability}
[[rate_limiting.rules]]
priority = 0
model_inferences_per_hour = 10
scope = [{ api_key_public_id = "${limited.publicId}" }]
`,
      env: { GATEWAY_RELATIONAL_DB_URL: database.url, GATEWAY_ANALYTICS_DB_URL: database.url }
    })
  }, 60_000)

  afterAll(async () => {
    await gateway?.stop()
    await database?.drop()
  })

  it("checks keys: none or a wrong one is a 401, a key made by --create-api-key works", async () => {
    expect((await call(gateway, "POST", "/inference", { body: dummyInference() })).status).toBe(401)
    const wrong = `sk-gw-${limited.publicId}-${"x".repeat(48)}`
    expect((await call(gateway, "POST", "/inference", { key: wrong, body: dummyInference() })).status).toBe(401)
    const answer = await call(gateway, "POST", "/inference", { key: free, body: dummyInference() })
    expect(answer.status, answer.text).toBe(200)
  })

  it("lets exactly 10 of 30 parallel requests through a limit of 10", async () => {
    const answers = await Promise.all(Array.from({ length: 30 }, () => call(gateway, "POST", "/inference", { key: limited, body: dummyInference() })))
    for (const answer of answers) expect([200, 429], answer.text).toContain(answer.status)
    expect(answers.filter((answer) => answer.status === 200)).toHaveLength(10)
  })

  it("stores inferences and feedback and reads them back, without a failed write", async () => {
    // in parallel with reads, so that the pools' connections (and PgBouncer's few) are all in use
    const [answers, reads] = await Promise.all([
      Promise.all(Array.from({ length: 40 }, (_, i) =>
        call(gateway, "POST", "/inference", { key: free, body: dummyInference({ text: `through the pooler ${i}` }) }))),
      Promise.all(Array.from({ length: 10 }, () => call(gateway, "POST", "/v1/inferences/list_inferences", { key: free, body: { limit: 10 } })))
    ])
    for (const answer of [...answers, ...reads]) expect(answer.status, answer.text).toBe(200)
    const ids = answers.map((answer) => answer.body.inference_id as string)
    const authed = withKey(gateway, free)
    const stored = await waitForInferences(authed, ids)
    expect(stored.map((inference) => inference.inference_id)).toEqual(ids)
    const feedback = await call(gateway, "POST", "/feedback", { key: free, body: { metric_name: "comment", inference_id: ids[0], value: "pooled" } })
    expect(feedback.status, feedback.text).toBe(200)
    const [comment] = await waitForFeedback(authed, ids[0], (rows) => rows.length === 1)
    expect(comment.value).toBe("pooled")
    // counted in the database itself, reached straight
    expect(await psql(database.direct.url, `SELECT count(*) FROM chat_inference WHERE id IN (${ids.map((id) => `'${id}'`).join(", ")})`)).toBe("40")
    // every batch went in at its first attempt (the log tells each failed one): none failed on a session it assumed
    expect(gateway.log()).not.toContain("observability write failed")
  })
})

describe("durable tasks' exclusive sections through a PgBouncer with one server connection", () => {
  let database: PooledDatabase
  let first: OpenTasks
  let second: OpenTasks

  beforeAll(async () => {
    // every client's transactions run on the same server session: a session lock would be re-entered by the other process
    database = await freshDatabaseBehindPgBouncer({ poolSize: 1 })
    await migrateDatabase(database.url)
    first = await openTasks(database.url)
    second = await openTasks(database.url)
  }, 60_000)

  afterAll(async () => {
    await first?.close()
    await second?.close()
    await database?.drop()
  })

  it("never overlap between two instances, tryExclusive included", async () => {
    const section = (tasks: TasksService) =>
      Effect.runPromise(tasks.exclusive("pooled", Effect.gen(function*() {
        const start = Date.now()
        yield* Effect.sleep(300)
        return { start, end: Date.now() }
      })))
    const [a, b] = await Promise.all([section(first.tasks), section(second.tasks)])
    expect(a.start < b.end && b.start < a.end).toBe(false)
    let released = 0
    const held = Effect.runPromise(first.tasks.exclusive("tried", Effect.sleep(800).pipe(Effect.andThen(Effect.sync(() => (released = Date.now()))))))
    await sleep(300)
    // PgBouncer's one server connection is the holder's until its section ends: the try waits for it, then
    // finds the key free (with more server connections it answers none at once: test/integration/tasks-pgboss.test.ts)
    const tried = await Effect.runPromise(second.tasks.tryExclusive("tried", Effect.sync(() => Date.now())))
    await held
    if (tried._tag === "Some") expect(tried.value).toBeGreaterThanOrEqual(released)
    expect((await Effect.runPromise(second.tasks.tryExclusive("tried", Effect.succeed(1))))._tag).toBe("Some")
  })
})

describe("a Postgres restart under load", () => {
  const poolSize = 10
  let cluster: PostgresCluster
  let gateway: RunningGateway
  let key: ApiKey

  beforeAll(async () => {
    cluster = await startPostgresCluster()
    key = await createKey(cluster.url)
    gateway = await startGateway({
      config: `
[gateway.auth]
enabled = true
${observability}
[postgres]
connection_pool_size = ${poolSize}
`,
      env: { GATEWAY_RELATIONAL_DB_URL: cluster.url, GATEWAY_ANALYTICS_DB_URL: cluster.url }
    })
  }, 60_000)

  afterAll(async () => {
    await gateway?.stop()
    await cluster?.stop()
  })

  /** the gateway's connections to the cluster now (every pool's: application names llm-gateway*), asked on a connection of the test's own */
  const gatewayConnections = async (scope: Scope.Scope) => {
    const sql = await Effect.runPromise(Scope.provide(scope)(makePgClient(cluster.url, { maxConnections: 1, applicationName: "connection-count" })))
    return () =>
      Effect.runPromise(sql<{ count: number }>`SELECT count(*)::int AS count FROM pg_stat_activity WHERE application_name LIKE 'llm-gateway%'`)
        .then(([row]) => row.count)
  }

  /** `requests` run `concurrency` at a time until `stop` says so; their answers */
  const load = (concurrency: number, request: () => Promise<Answer>, stop: () => boolean) => {
    const answers: Array<Answer> = []
    const worker = async () => {
      while (!stop()) answers.push(await request())
    }
    return Promise.all(Array.from({ length: concurrency }, worker)).then(() => answers)
  }

  it("keeps its connections within connection_pool_size under concurrent inferences and reads", async () => {
    let done = false
    const running = Promise.all([
      load(8, () => call(gateway, "POST", "/inference", { key, body: dummyInference() }), () => done),
      // the reads take connections of the analytics pool for as long as they run
      load(8, () => call(gateway, "POST", "/v1/inferences/list_inferences", { key, body: { limit: 100 } }), () => done)
    ])
    const counts: Array<number> = []
    const scope = Effect.runSync(Scope.make())
    try {
      const count = await gatewayConnections(scope)
      const deadline = Date.now() + 3_000
      while (Date.now() < deadline) {
        counts.push(await count())
        await sleep(20)
      }
    } finally {
      done = true
      await Effect.runPromise(Scope.close(scope, Exit.void))
    }
    const [inferences, reads] = await running
    for (const answer of [...inferences, ...reads]) expect(answer.status, answer.text).toBe(200)
    console.log(`gateway connections seen: at most ${Math.max(...counts)} (${counts.length} samples), ${inferences.length} inferences, ${reads.length} reads`)
    expect(Math.max(...counts)).toBeGreaterThan(1)
    expect(Math.max(...counts)).toBeLessThanOrEqual(poolSize)
  })

  it("answers every inference while the server stops and starts again, and stores each once it is back", async () => {
    let done = false
    const running = load(4, () => call(gateway, "POST", "/inference", { key, body: dummyInference({ text: "restart" }) }), () => done)
    await sleep(500)
    await cluster.stopServer()
    // longer than the key cache's lifetime (1 s): keys are checked against a database that is down
    await sleep(2_500)
    await cluster.startServer()
    await sleep(500)
    done = true
    const answers = await running
    expect(answers.length).toBeGreaterThan(20)
    for (const answer of answers) expect(answer.status, answer.text).toBe(200)
    const ids = answers.map((answer) => answer.body.inference_id as string)
    const count = () => psql(cluster.url, `SELECT count(*) FROM chat_inference WHERE id IN (${ids.map((id) => `'${id}'`).join(", ")})`)
    const deadline = Date.now() + 30_000
    while (Number(await count()) < ids.length && Date.now() < deadline) await sleep(200)
    expect(Number(await count())).toBe(ids.length)
    console.log(`across the restart: ${answers.length} inferences answered 200, ${ids.length} stored`)
    // the same process throughout
    expect(gateway.process.exitCode).toBeNull()
    expect((await call(gateway, "POST", "/inference", { key, body: dummyInference() })).status).toBe(200)
  }, 60_000)
})
