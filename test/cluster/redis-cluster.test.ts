/**
 * Rate limits and the Valkey cache on a real Redis Cluster (three masters, each with a replica,
 * scripts/redisCluster.ts), through two gateway processes whose GATEWAY_REDIS_URL names one
 * node each (a master for one, a replica for the other): the gateways find the rest of the
 * cluster. A request's buckets and budget counters share one hash slot, so the all-or-nothing
 * scripts run on the cluster and the limits and budgets are exact across both processes; the cache's entries, spread over the
 * masters, are found from either gateway; and when the master holding the buckets dies, its
 * replica takes over and both gateways count again, without being restarted. A standalone
 * server is used as one, even when it refuses the INFO command that tells a cluster node.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type RedisCluster, type RedisServer, startRedisCluster, startRedisServer } from "../../scripts/redisCluster.ts"
import { type Answer, call, dummyInference, pollUntil } from "../support/access.ts"
import { type FakeOpenAi, startFakeOpenAi } from "../support/fakeOpenAi.ts"
import { type RunningGateway, startGateway } from "../support/gateway.ts"

/** any bucket key: they all carry the tag `{rl}`, so they all live in its slot */
const bucketSlotKey = "gateway:{rl}:"

const config = (apiBase: string) => `
[gateway.cache]
backend = "valkey"
[gateway.cache.valkey]
ttl_s = 60

[[rate_limiting.rules]]            # 0: 10 an hour per user
priority = 0
model_inferences_per_hour = 10
scope = [{ tag_key = "user", tag_value = "gateway::each" }]

[[rate_limiting.rules]]            # 1: the same priority: a request with both tags takes from both buckets
priority = 0
model_inferences_per_hour = 5
scope = [{ tag_key = "team", tag_value = "gateway::each" }]

[rate_limiting]
default_cost = 1                   # the dummy provider prices nothing: each call reserves and is charged 1

[[rate_limiting.budgets]]          # 3 a day per value of the tag "spend"
scope = [{ tag_key = "spend", tag_value = "gateway::each" }]
period = "day"
limit = 3

[models.fake]
routing = ["openai"]
[models.fake.providers.openai]
type = "openai"
model_name = "gpt-fake"
api_base = "${apiBase}"
api_key_location = "env::FAKE_OPENAI_KEY"

[functions.assistant]
type = "chat"
[functions.assistant.variants.openai]
type = "chat_completion"
model = "fake"
`

let run = 0
/** a tag value no earlier request used: fresh buckets */
const fresh = (name: string) => `${name}-${Date.now().toString(36)}-${run++}`

const count = (answers: ReadonlyArray<Answer>, status: number) => answers.filter((answer) => answer.status === status).length

/** every answer a 200 or a 429 naming `rule`, and how many of each */
const tally = (answers: ReadonlyArray<Answer>, rule: number) => {
  for (const answer of answers) {
    expect([200, 429], answer.text).toContain(answer.status)
    if (answer.status === 429) expect(answer.body.error).toContain(`rate_limiting.rules[${rule}]`)
  }
  return { passed: count(answers, 200), refused: count(answers, 429) }
}

describe("rate limits and the cache on a redis cluster", () => {
  let cluster: RedisCluster
  let fake: FakeOpenAi
  let gateways: Array<RunningGateway> = []

  const infer = (gateway: RunningGateway, tags: Record<string, string>) =>
    call(gateway, "POST", "/inference", { body: dummyInference({ tags }) })
  /** `total` requests spread over both gateways at once */
  const burst = (total: number, tags: Record<string, string>) =>
    Promise.all(Array.from({ length: total }, (_, i) => infer(gateways[i % 2]!, tags)))

  beforeAll(async () => {
    ;[cluster, fake] = await Promise.all([startRedisCluster(), startFakeOpenAi()])
    const [master] = cluster.urls
    const replica = (await cluster.nodes()).find((node) => node.role === "replica")!.url
    const env = (url: string) => ({
      GATEWAY_REDIS_URL: url,
      GATEWAY_ANALYTICS_DB_URL: undefined,
      GATEWAY_RELATIONAL_DB_URL: undefined,
      FAKE_OPENAI_KEY: "sk-fake"
    })
    gateways = await Promise.all([master!, replica].map((url) => startGateway({ config: config(fake.apiBase), env: env(url), startTimeoutMs: 30_000 })))
  })
  afterAll(async () => {
    await Promise.all(gateways.map((gateway) => gateway.stop()))
    await Promise.all([fake?.close(), cluster?.stop()])
  })

  it("finds the cluster from one node, whether a master or a replica", () => {
    for (const gateway of gateways) {
      expect(gateway.log()).toContain("redis: a cluster (3 masters)")
      expect(gateway.log()).toContain("buckets in redis")
      expect(gateway.log()).toContain("budgets: 1 configured, run-time ones off (no relational database), counted in redis")
      expect(gateway.log()).toContain("cache: in valkey")
    }
  })

  it("30 parallel requests over both gateways against a limit of 10 let exactly 10 through", async () => {
    const user = fresh("u")
    expect(tally(await burst(30, { user }), 0)).toEqual({ passed: 10, refused: 20 })
    for (const gateway of gateways) expect((await infer(gateway, { user })).status).toBe(429)
  })

  it("a request in two rules' scope takes from both buckets or neither: 5 of 20 pass, then 5 more without the second tag", async () => {
    const user = fresh("u")
    // braces in a tag value (a bucket's name) must not move its bucket to another slot
    expect(tally(await burst(20, { user, team: `{${fresh("t")}}` }), 1)).toEqual({ passed: 5, refused: 15 })
    // the user's own bucket (10) gave 5
    expect(tally(await burst(8, { user }), 0)).toEqual({ passed: 5, refused: 3 })
  })

  it("a budget's counter lives in the buckets' slot: 12 parallel calls over both gateways against a budget of 3 let exactly 3 through", async () => {
    // braces in the tag value (the counter's name) must not move it to another slot
    const answers = await burst(12, { spend: `{${fresh("s")}}` })
    for (const answer of answers) {
      expect([200, 429], answer.text).toContain(answer.status)
      if (answer.status === 429) expect(answer.body.budget).toMatchObject({ period: "day", limit: 3, spent: 3, remaining: 0 })
    }
    expect(count(answers, 200)).toBe(3)
  })

  it("an answer cached through one gateway is served from the cluster by the other", async () => {
    fake.reset()
    const input = { messages: [{ role: "user", content: `cluster question ${fresh("q")}` }] }
    const ask = (gateway: RunningGateway) =>
      call(gateway, "POST", "/inference", { body: { function_name: "assistant", input, cache_options: { enabled: "on" } } })
    const first = await ask(gateways[0]!)
    expect(first.status, first.text).toBe(200)
    expect(fake.requests).toHaveLength(1)
    // written in the background: wait until the other gateway finds it
    const { value: second } = await pollUntil(() => ask(gateways[1]!), (answer) => answer.status === 200 && answer.body.usage.input_tokens === 0, 5_000)
    expect(second.body.content).toEqual(first.body.content)
    expect(second.body.usage).toEqual({ input_tokens: 0, output_tokens: 0 })
    // the misses before the entry was there asked the provider; the hit did not
    const asked = fake.requests.length
    expect((await ask(gateways[1]!)).body.usage.input_tokens).toBe(0)
    expect(fake.requests).toHaveLength(asked)
  })

  it("when the master holding the buckets dies, its replica takes over and both gateways count exactly again, unrestarted", async () => {
    const dying = await cluster.masterOf(bucketSlotKey)
    const pids = gateways.map((gateway) => gateway.process.pid)
    cluster.kill(dying)
    const promoted = await cluster.waitUntilServing(bucketSlotKey)
    expect(promoted).not.toBe(dying)

    // until each gateway reads the new slot map, rate-limited requests are refused with a 503, never let through
    const during: Array<Answer> = []
    await pollUntil(async () => {
      const answers = await Promise.all(gateways.map((gateway) => infer(gateway, { user: fresh("probe") })))
      during.push(...answers)
      return answers
    }, (answers) => answers.every((answer) => answer.status === 200), 20_000)
    for (const answer of during) expect([200, 503], answer.text).toContain(answer.status)

    const user = fresh("u")
    expect(tally(await burst(30, { user }), 0)).toEqual({ passed: 10, refused: 20 })
    for (const gateway of gateways) expect((await infer(gateway, { user })).status).toBe(429)
    expect(gateways.map((gateway) => gateway.process.pid)).toEqual(pids)
    for (const gateway of gateways) expect(gateway.process.exitCode).toBeNull()
  })
})

describe("a standalone server that refuses INFO", () => {
  let server: RedisServer
  let gateway: RunningGateway

  beforeAll(async () => {
    server = await startRedisServer(["--rename-command", "INFO", ""])
    gateway = await startGateway({
      config: config("http://127.0.0.1:9/v1"),
      env: { GATEWAY_REDIS_URL: server.url, GATEWAY_ANALYTICS_DB_URL: undefined, GATEWAY_RELATIONAL_DB_URL: undefined, FAKE_OPENAI_KEY: "sk-fake" },
      startTimeoutMs: 30_000
    })
  })
  afterAll(async () => {
    await gateway?.stop()
    await server?.stop()
  })

  it("is used as a standalone server, as before: limits exact, no cluster", async () => {
    expect(gateway.log()).toContain("buckets in redis")
    expect(gateway.log()).not.toContain("a cluster")
    const tags = { user: fresh("u"), team: `{${fresh("t")}}` }
    const answers = await Promise.all(Array.from({ length: 12 }, () => call(gateway, "POST", "/inference", { body: dummyInference({ tags }) })))
    expect(tally(answers, 1)).toEqual({ passed: 5, refused: 7 })
  })
})
