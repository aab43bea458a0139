/**
 * The model answer cache in Valkey/Redis (`[gateway.cache] backend = "valkey"`, TensorZero's
 * `[gateway.cache.valkey] ttl_s`), on the machine's real Redis (logical database 10). The
 * upstreams are fakes that count requests, so a hit is proven by the provider not being called.
 * The cache works with observability off (entries are Valkey's own), keeps each entry `ttl_s`
 * (Redis expires it), honours `max_age_s`, caches embeddings and streams (replayed in their
 * chunks), keeps answering while Redis is cut, and refuses to start when the configured backend
 * cannot be had.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import { createClient } from "redis"
import { closedPort, pollUntil, type RedisDatabase, redisDatabase, redisServerUrl, sleep } from "../support/access.ts"
import { freshDatabase } from "../support/databases.ts"
import { type FakeEmbeddings, startFakeEmbeddings } from "../support/fakeEmbeddings.ts"
import { type FakeOpenAi, startFakeOpenAi } from "../support/fakeOpenAi.ts"
import { type RunningGateway, runGateway, startGateway, writeFiles } from "../support/gateway.ts"
import { waitForInference } from "../support/observability.ts"
import { startTcpProxy, type TcpProxy } from "../support/tcpProxy.ts"

const redisIndex = 10
const ttlS = 3
const embedKey = "sk-embed-test"

const config = (apiBase: string, embeddingsBase: string) => `
[gateway.cache]
backend = "valkey"
[gateway.cache.valkey]
ttl_s = ${ttlS}

[models.fake]
routing = ["openai"]
[models.fake.providers.openai]
type = "openai"
model_name = "gpt-fake"
api_base = "${apiBase}"
api_key_location = "env::FAKE_OPENAI_KEY"

[embedding_models.small]
routing = ["main"]
[embedding_models.small.providers.main]
type = "openai"
model_name = "text-embedding-3-small"
api_base = "${embeddingsBase}"
api_key_location = "env::EMBED_KEY"

[functions.assistant]
type = "chat"
[functions.assistant.variants.openai]
type = "chat_completion"
model = "fake"
`

const zeroUsage = { input_tokens: 0, output_tokens: 0 }
let counter = 0
/** an input no other test uses, so that each test has cache keys of its own */
const freshInput = () => ({ messages: [{ role: "user", content: `question ${++counter} ${Date.now()}` }] })

describe("the cache in valkey", () => {
  let redis: RedisDatabase
  let proxy: TcpProxy
  let fake: FakeOpenAi
  let embeddings: FakeEmbeddings
  let gateway: RunningGateway
  let inspector: ReturnType<typeof createClient>

  const infer = async (body: Record<string, unknown>) => {
    const response = await gateway.post("/inference", { function_name: "assistant", ...body })
    expect(response.status, JSON.stringify(response.body)).toBe(200)
    return response.body
  }
  const cacheKeys = () => inspector.keys("gateway:cache:*")
  /** entries are written in the background: wait until `count` of them are there */
  const entries = async (count: number) => (await pollUntil(cacheKeys, (keys) => keys.length >= count, 5_000)).value

  beforeAll(async () => {
    redis = await redisDatabase(redisIndex)
    const server = new URL(redisServerUrl)
    proxy = await startTcpProxy({ host: server.hostname, port: Number(server.port || 6379) })
    ;[fake, embeddings] = await Promise.all([startFakeOpenAi(), startFakeEmbeddings(embedKey)])
    inspector = createClient({ url: redis.url })
    await inspector.connect()
    gateway = await startGateway({
      config: config(fake.apiBase, embeddings.apiBase),
      // observability off: the cache must not need the analytics database
      env: { GATEWAY_REDIS_URL: proxy.urlFor(redis.url), GATEWAY_ANALYTICS_DB_URL: undefined, FAKE_OPENAI_KEY: "sk-fake", EMBED_KEY: embedKey }
    })
  })
  afterAll(async () => {
    await gateway?.stop()
    inspector?.destroy()
    await Promise.all([fake?.close(), embeddings?.close(), proxy?.close()])
    await redis?.close()
  })
  beforeEach(async () => {
    fake.reset()
    await redis.flush()
  })

  it("serves a second identical request from valkey, with observability off, and keeps each entry ttl_s", async () => {
    expect(gateway.log()).toContain(`cache: in valkey, entries kept ${ttlS} s`)
    const input = freshInput()
    const first = await infer({ input, cache_options: { enabled: "on" } })
    expect(fake.requests).toHaveLength(1)
    const [key] = await entries(1)
    expect(key).toMatch(/^gateway:cache:[0-9a-f]{64}$/)
    const ttl = await inspector.ttl(key!)
    expect(ttl).toBeGreaterThan(0)
    expect(ttl).toBeLessThanOrEqual(ttlS)

    const second = await infer({ input, cache_options: { enabled: "on" } })
    expect(fake.requests).toHaveLength(1)
    expect(second.content).toEqual(first.content)
    expect(second.usage).toEqual(zeroUsage)

    // the OpenAI-compatible route reads the same cache
    const openAi = await gateway.post("/openai/v1/chat/completions", {
      model: "gateway::function_name::assistant",
      messages: input.messages,
      "gateway::cache_options": { enabled: "on" }
    })
    expect(openAi.status, JSON.stringify(openAi.body)).toBe(200)
    expect(fake.requests).toHaveLength(1)
    expect(openAi.body.choices[0].message.content).toBe(first.content[0].text)

    // Redis expires the entry: then the provider is asked again
    await pollUntil(cacheKeys, (keys) => keys.length === 0, (ttlS + 2) * 1000)
    const third = await infer({ input, cache_options: { enabled: "on" } })
    expect(fake.requests).toHaveLength(2)
    expect(third.usage).not.toEqual(zeroUsage)
    // written again: waited for, so that the next test starts on an empty cache
    await entries(1)
  })

  it("does not serve an entry older than max_age_s, and writes none for read_only or off", async () => {
    const input = freshInput()
    await infer({ input, cache_options: { enabled: "read_only" } })
    await infer({ input, cache_options: { enabled: "off" } })
    await sleep(300)
    expect(await cacheKeys()).toEqual([])
    expect(fake.requests).toHaveLength(2)

    await infer({ input, cache_options: { enabled: "on" } })
    await entries(1)
    await sleep(1_100)
    const stale = await infer({ input, cache_options: { enabled: "on", max_age_s: 1 } })
    expect(fake.requests).toHaveLength(4)
    expect(stale.usage).not.toEqual(zeroUsage)
  })

  it("replays a streamed answer in the chunks it came in", async () => {
    const input = freshInput()
    const first = await gateway.stream("/inference", { function_name: "assistant", input, stream: true, cache_options: { enabled: "on" } })
    expect(first.status).toBe(200)
    expect(fake.requests).toHaveLength(1)
    await entries(1)
    const second = await gateway.stream("/inference", { function_name: "assistant", input, stream: true, cache_options: { enabled: "on" } })
    expect(second.status).toBe(200)
    expect(fake.requests).toHaveLength(1)
    const texts = (events: Array<any>) => events.filter((event) => event.content?.length > 0).map((event) => event.content[0].text)
    expect(texts(second.events)).toEqual(texts(first.events))
    expect(texts(first.events)).toEqual(["Hello", " from", " fake"])
  })

  it("caches embeddings in valkey too", async () => {
    const body = { model: "gateway::embedding_model_name::small", input: [`embed ${Date.now()}`], "gateway::cache_options": { enabled: "on" } }
    const first = await gateway.post("/openai/v1/embeddings", body)
    expect(first.status, JSON.stringify(first.body)).toBe(200)
    const [key] = await entries(1)
    expect(key).toMatch(/^gateway:cache:embedding:[0-9a-f]{64}$/)
    const before = embeddings.requests.length
    const second = await gateway.post("/openai/v1/embeddings", body)
    expect(second.status).toBe(200)
    expect(embeddings.requests.length).toBe(before)
    expect(second.body.data).toEqual(first.body.data)
  })

  it("keeps answering from the provider while valkey is cut, and uses the cache again once it is back", async () => {
    const input = freshInput()
    await infer({ input, cache_options: { enabled: "on" } })
    await entries(1)
    proxy.cut()
    try {
      for (let i = 0; i < 3; i++) {
        const answer = await infer({ input, cache_options: { enabled: "on" } })
        expect(answer.usage).not.toEqual(zeroUsage)
      }
      expect(fake.requests).toHaveLength(4)
    } finally {
      proxy.restore()
    }
    const { value: hit } = await pollUntil(() => infer({ input, cache_options: { enabled: "on" } }), (answer) => answer.usage.input_tokens === 0, 15_000)
    expect(hit.usage).toEqual(zeroUsage)
    expect(gateway.log()).toContain("cache lookup failed, calling the provider")
  })
})

describe("the cache in valkey, with observability on", () => {
  it("marks the model inference of a hit cached, while the entries live in valkey", async () => {
    const [redis, database, fake, embeddings] = await Promise.all([
      redisDatabase(redisIndex + 5),
      freshDatabase("postgres"),
      startFakeOpenAi(),
      startFakeEmbeddings(embedKey)
    ])
    const inspector = createClient({ url: redis.url })
    await inspector.connect()
    const gateway = await startGateway({
      config: config(fake.apiBase, embeddings.apiBase),
      env: { GATEWAY_REDIS_URL: redis.url, GATEWAY_ANALYTICS_DB_URL: database.url, FAKE_OPENAI_KEY: "sk-fake", EMBED_KEY: embedKey }
    })
    try {
      const input = freshInput()
      const first = await gateway.post("/inference", { function_name: "assistant", input, cache_options: { enabled: "on" } })
      expect(first.status).toBe(200)
      await pollUntil(() => inspector.keys("gateway:cache:*"), (keys) => keys.length === 1, 5_000)
      const second = await gateway.post("/inference", { function_name: "assistant", input, cache_options: { enabled: "on" } })
      expect(second.body.usage).toEqual(zeroUsage)
      expect(fake.requests).toHaveLength(1)
      const stored = await waitForInference(gateway, second.body.inference_id, { include_model_inferences: true })
      expect(stored.model_inferences[0].cached).toBe(true)
    } finally {
      await gateway.stop()
      inspector.destroy()
      await Promise.all([fake.close(), embeddings.close(), database.drop()])
      await redis.close()
    }
  })
})

describe("a cache backend that cannot be had keeps the gateway from starting", () => {
  it("valkey without GATEWAY_REDIS_URL, valkey unreachable, or an analytics database of another kind", async () => {
    const database = await freshDatabase("postgres")
    const port = await closedPort()
    try {
      const cases: Array<[string, Record<string, string | undefined>, string]> = [
        [`[gateway.cache]\nbackend = "valkey"`, { GATEWAY_REDIS_URL: undefined, GATEWAY_VALKEY_URL: undefined }, `[gateway.cache] backend = "valkey" needs GATEWAY_REDIS_URL`],
        [`[gateway.cache]\nbackend = "valkey"`, { GATEWAY_REDIS_URL: `redis://127.0.0.1:${port}` }, "GATEWAY_REDIS_URL: redis connection failed"],
        [`[gateway.cache]\nbackend = "clickhouse"`, { GATEWAY_ANALYTICS_DB_URL: database.url }, `[gateway.cache] backend = "clickhouse", but GATEWAY_ANALYTICS_DB_URL names a postgres database`],
        [`[gateway.cache]\nbackend = "postgres"`, { GATEWAY_ANALYTICS_DB_URL: undefined }, `[gateway.cache] backend = "postgres" keeps the cache in the analytics database, but observability is off`],
        [`[gateway.cache.valkey]\nttl_s = 0`, {}, "gateway.cache.valkey.ttl_s"]
      ]
      for (const [toml, env, message] of cases) {
        const result = await runGatewayWith(toml, env)
        expect(result.code, result.stderr).not.toBe(0)
        expect(result.stderr + result.stdout).toContain(message)
      }
    } finally {
      await database.drop()
    }
  })
})

/** runs the gateway on `toml` until it exits (it must not start) */
const runGatewayWith = (toml: string, env: Record<string, string | undefined>) => {
  const dir = writeFiles({ "config.toml": toml })
  return runGateway(["--config-file", `${dir}/config.toml`], { env: { GATEWAY_BIND_ADDRESS: "127.0.0.1:0", ...env } })
}
