/**
 * A bucket store that stops answering (issue 5: "If the bucket store is unreachable, requests in
 * a rate-limited scope fail with 503 and a clear message (no silent bypass)"): the gateway reaches
 * Postgres or Redis (logical database 13 of the test Redis) through a TCP proxy that is cut after
 * start-up and restored later. Requests in a limited scope get a 503 naming the store, plain,
 * streamed or on the OpenAI endpoint, while a request no rule applies to still passes; once the
 * store is back, limited requests pass again. With authentication on, the key cache answers for
 * a key verified before while Postgres is out (issue 38: requests keep flowing across a
 * restart), and a key never seen gets a 503. A store that cannot be reached at start-up, or is
 * not configured, keeps the gateway from starting.
 */
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import {
  type Answer,
  type ApiKey,
  call,
  closedPort,
  createKey,
  dummyInference,
  pollUntil,
  type RedisDatabase,
  sleep,
  redisDatabase,
  redisServerUrl
} from "../support/access.ts"
import { freshDatabase, type TestDatabase } from "../support/databases.ts"
import { runGateway, type RunningGateway, startGateway, writeFiles } from "../support/gateway.ts"
import { startTcpProxy, type TcpProxy } from "../support/tcpProxy.ts"

const redisIndex = 13

const rules = `
[[rate_limiting.rules]]
priority = 0
model_inferences_per_hour = 1000
scope = [{ tag_key = "tenant", tag_value = "gateway::each" }]
`

const limitedBody = (stream = false) => dummyInference({ tags: { tenant: "acme" }, stream })
const openAiBody = {
  model: "gateway::model_name::dummy::hello",
  messages: [{ role: "user", content: "Hi" }],
  "gateway::tags": { tenant: "acme" }
}

/** a 503 naming the store */
const unavailable = (answer: Answer, backend: string, openai = false) => {
  expect(answer.status, answer.text).toBe(503)
  const message = openai ? answer.body.error.message : answer.body.error
  if (openai) expect(answer.body.error.type).toBe("service_unavailable_error")
  expect(message).toContain(`the rate limit store (${backend}) is unavailable, so rate-limited requests are refused`)
}

let database: TestDatabase
beforeAll(async () => {
  database = await freshDatabase("postgres")
})
afterAll(async () => {
  await database?.drop()
})

/** the behaviour every backend shares, once its store is cut */
const whileCut = async (gateway: RunningGateway, backend: string, key: ApiKey | undefined) => {
  // the store may take a moment to notice: until then nothing may pass unchecked either
  const { value: first } = await pollUntil(
    () => call(gateway, "POST", "/inference", { key, body: limitedBody() }),
    (answer) => answer.status !== 200,
    10_000
  )
  unavailable(first, backend)
  unavailable(await call(gateway, "POST", "/inference", { key, body: limitedBody(true) }), backend)
  unavailable(await call(gateway, "POST", "/openai/v1/chat/completions", { key, body: openAiBody }), backend, true)
  // no rule applies: the store is not asked
  const free = await call(gateway, "POST", "/inference", { key, body: dummyInference() })
  expect(free.status, free.text).toBe(200)
  const freeOpenAi = await call(gateway, "POST", "/openai/v1/chat/completions", {
    key,
    body: { model: "gateway::model_name::dummy::hello", messages: [{ role: "user", content: "Hi" }] }
  })
  expect(freeOpenAi.status, freeOpenAi.text).toBe(200)
}

describe("the Postgres bucket store goes down", () => {
  let proxy: TcpProxy
  let gateway: RunningGateway

  beforeAll(async () => {
    const url = new URL(database.url)
    proxy = await startTcpProxy({ host: url.hostname, port: Number(url.port || 5432) })
    // authentication off: only the rate limiter needs the database
    gateway = await startGateway({
      config: rules,
      env: { GATEWAY_RELATIONAL_DB_URL: proxy.urlFor(database.url), GATEWAY_REDIS_URL: undefined, GATEWAY_ANALYTICS_DB_URL: undefined }
    })
  })
  afterAll(async () => {
    await gateway?.stop()
    await proxy?.close()
  })

  it("limited requests get a 503 naming the store while requests no rule applies to pass; all pass again once it is back", async () => {
    expect((await call(gateway, "POST", "/inference", { body: limitedBody() })).status).toBe(200)
    proxy.cut()
    try {
      const started = Date.now()
      await whileCut(gateway, "postgres", undefined)
      expect(Date.now() - started).toBeLessThan(10_000)
    } finally {
      proxy.restore()
    }
    await pollUntil(() => call(gateway, "POST", "/inference", { body: limitedBody() }), (answer) => answer.status === 200, 10_000)
    expect(gateway.log()).not.toContain("request failed unexpectedly")
  })
})

describe("Postgres goes down with authentication on", () => {
  let proxy: TcpProxy
  let gateway: RunningGateway
  let key: ApiKey

  beforeAll(async () => {
    key = await createKey(database.url)
    const url = new URL(database.url)
    proxy = await startTcpProxy({ host: url.hostname, port: Number(url.port || 5432) })
    gateway = await startGateway({
      config: `[gateway.auth]\nenabled = true\n${rules}`,
      env: { GATEWAY_RELATIONAL_DB_URL: proxy.urlFor(database.url), GATEWAY_REDIS_URL: undefined, GATEWAY_ANALYTICS_DB_URL: undefined }
    })
  })
  afterAll(async () => {
    await gateway?.stop()
    await proxy?.close()
  })

  it("a key verified before keeps working from the key cache while it is down, within the rate limits' 503s; a key never seen gets a 503 (never a 401, a 500 or a pass); all as before once it is back", async () => {
    const unseen = await createKey(database.url)
    expect((await call(gateway, "POST", "/inference", { key, body: limitedBody() })).status).toBe(200)
    proxy.cut()
    try {
      // past the key cache's lifetime (1 s): authentication asks the database again, which is out
      await sleep(1_500)
      await whileCut(gateway, "postgres", key)
      const stranger = await call(gateway, "POST", "/inference", { key: unseen, body: dummyInference() })
      expect(stranger.status, stranger.text).toBe(503)
      expect(stranger.body.error).toContain("cannot check the API key: the relational database is unavailable")
      const openAi = await call(gateway, "GET", "/openai/v1/models", { key: unseen })
      expect(openAi.status).toBe(503)
      expect(openAi.body.error.type).toBe("service_unavailable_error")
      expect((await call(gateway, "GET", "/status")).status).toBe(200)
    } finally {
      proxy.restore()
    }
    await pollUntil(() => call(gateway, "POST", "/inference", { key, body: limitedBody() }), (answer) => answer.status === 200, 10_000)
    expect((await call(gateway, "POST", "/inference", { key: unseen, body: limitedBody() })).status).toBe(200)
  })
})

describe("the Redis bucket store goes down", () => {
  let redis: RedisDatabase
  let proxy: TcpProxy
  let gateway: RunningGateway
  let key: ApiKey

  beforeAll(async () => {
    redis = await redisDatabase(redisIndex)
    key = await createKey(database.url)
    const server = new URL(redisServerUrl)
    proxy = await startTcpProxy({ host: server.hostname, port: Number(server.port || 6379) })
    // keys in Postgres, reached directly; buckets in Redis, through the proxy
    gateway = await startGateway({
      config: `[gateway.auth]\nenabled = true\n${rules}`,
      env: { GATEWAY_RELATIONAL_DB_URL: database.url, GATEWAY_REDIS_URL: proxy.urlFor(redis.url), GATEWAY_ANALYTICS_DB_URL: undefined }
    })
  })
  afterAll(async () => {
    await gateway?.stop()
    await proxy?.close()
    await redis?.close()
  })

  it("limited requests get a 503 naming the store while requests no rule applies to pass; all pass again once it is back", async () => {
    expect(gateway.log()).toContain("buckets in redis")
    expect((await call(gateway, "POST", "/inference", { key, body: limitedBody() })).status).toBe(200)
    expect((await redis.keys()).length).toBeGreaterThan(0)
    proxy.cut()
    try {
      const started = Date.now()
      await whileCut(gateway, "redis", key)
      // Redis fails fast: a command that cannot be sent fails at once, one without an answer within 2 s
      expect(Date.now() - started).toBeLessThan(6_000)
    } finally {
      proxy.restore()
    }
    // the client reconnects within a second or so
    const { elapsedMs } = await pollUntil(
      () => call(gateway, "POST", "/inference", { key, body: limitedBody() }),
      (answer) => answer.status === 200,
      10_000
    )
    expect(elapsedMs).toBeLessThan(5_000)
    expect(gateway.log()).not.toContain("request failed unexpectedly")
  })
})

describe("start-up with rate limit rules", () => {
  const start = (env: Record<string, string | undefined>) => {
    const dir = writeFiles({ "config.toml": rules })
    return runGateway(["--config-file", path.join(dir, "config.toml")], {
      env: { GATEWAY_BIND_ADDRESS: "127.0.0.1:0", GATEWAY_ANALYTICS_DB_URL: undefined, ...env },
      cwd: dir
    })
  }

  it("fails without a bucket store, naming GATEWAY_RELATIONAL_DB_URL", async () => {
    const result = await start({ GATEWAY_RELATIONAL_DB_URL: undefined, GATEWAY_REDIS_URL: undefined })
    expect(result.code).toBe(1)
    expect(result.stderr).toContain("[[rate_limiting.rules]] needs GATEWAY_RELATIONAL_DB_URL")
  })

  it("fails when the Postgres of the buckets does not answer", async () => {
    const port = await closedPort()
    const result = await start({ GATEWAY_RELATIONAL_DB_URL: `postgres://postgres@127.0.0.1:${port}/x`, GATEWAY_REDIS_URL: undefined })
    expect(result.code).toBe(1)
    expect(result.stderr).toContain("GATEWAY_RELATIONAL_DB_URL")
    expect(result.stderr).not.toContain("Listening on")
  })

  it("fails when Redis does not answer, naming GATEWAY_REDIS_URL", async () => {
    const port = await closedPort()
    const result = await start({ GATEWAY_RELATIONAL_DB_URL: undefined, GATEWAY_REDIS_URL: `redis://127.0.0.1:${port}/${redisIndex}` })
    expect(result.code).toBe(1)
    expect(result.stderr).toContain("GATEWAY_REDIS_URL")
    expect(result.stderr).not.toContain("Listening on")
  })
})
