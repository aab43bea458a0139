/**
 * Rate limits over HTTP (issue 5, "Rate limiting"), on both bucket stores: Postgres (the
 * relational database) and Redis (GATEWAY_REDIS_URL, logical database 11 of the test Redis,
 * emptied before and after). What a client observes: how many calls a rule lets through per key,
 * per tag value, for every tagged request or for every request; priorities and the override of
 * `gateway::each` by a rule for one key; refill; token limits borrowing `max_tokens` up front and
 * settling the real usage (the dummy model uses 10 + 10 tokens); 429s with the rule, the scope
 * and what is available, and a Retry-After, which the gateway neither retries nor falls back
 * from; cache hits that take nothing; and OpenAI's shape under /openai/v1.
 *
 * Bucket state is shared within a suite, so every test uses keys or tag values of its own.
 */
import OpenAI from "openai"
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import {
  type Answer,
  type ApiKey,
  call,
  createKeys,
  insertKeys,
  dummyInference,
  pollUntil,
  psql,
  type RedisDatabase,
  redisDatabase,
  sleep
} from "../support/access.ts"
import { freshDatabase, type TestDatabase } from "../support/databases.ts"
import { type FakeOpenAi, startFakeOpenAi } from "../support/fakeOpenAi.ts"
import { type RunningGateway, startGateway } from "../support/gateway.ts"
import { observabilityToml, poll, queueStats, waitForInference } from "../support/observability.ts"

const redisIndex = 11
const backends = ["postgres", "redis"] as const
type Backend = typeof backends[number]

/** the rules of the main gateway; their indexes are the `rules[i]` of the messages */
const rules = (vip: string, restricted: string) => `
[[rate_limiting.rules]]            # 0: every key, 3 calls an hour
priority = 0
model_inferences_per_hour = 3
scope = [{ api_key_public_id = "gateway::each" }]

[[rate_limiting.rules]]            # 1: one key gets more
priority = 1
model_inferences_per_hour = 5
scope = [{ api_key_public_id = "${vip}" }]

[[rate_limiting.rules]]            # 2: one key gets less
priority = 1
model_inferences_per_hour = 1
scope = [{ api_key_public_id = "${restricted}" }]

[[rate_limiting.rules]]            # 3: one tag value
priority = 10
model_inferences_per_hour = 2
scope = [{ tag_key = "team", tag_value = "red" }]

[[rate_limiting.rules]]            # 4: each value of a tag
priority = 10
model_inferences_per_hour = 2
scope = [{ tag_key = "user", tag_value = "gateway::each" }]

[[rate_limiting.rules]]            # 5: every request carrying a tag
priority = 10
model_inferences_per_hour = 3
scope = [{ tag_key = "tenant", tag_value = "gateway::total" }]

[[rate_limiting.rules]]            # 6: refills at 1 a second
priority = 10
model_inferences_per_second = { capacity = 2, refill_rate = 1 }
scope = [{ tag_key = "refill", tag_value = "gateway::each" }]

[[rate_limiting.rules]]            # 7: tokens
priority = 10
tokens_per_hour = 100
scope = [{ tag_key = "tokens", tag_value = "gateway::each" }]

[[rate_limiting.rules]]            # 8: tokens, for the function whose first variant asks too many
priority = 10
tokens_per_hour = 200
scope = [{ tag_key = "guard", tag_value = "gateway::each" }]

[[rate_limiting.rules]]            # 9: one model call an hour
priority = 10
model_inferences_per_hour = 1
scope = [{ tag_key = "once", tag_value = "gateway::each" }]

[[rate_limiting.rules]]            # 10: one call a second
priority = 10
model_inferences_per_second = { capacity = 1, refill_rate = 1 }
scope = [{ tag_key = "retry", tag_value = "gateway::each" }]
`

/** a function whose variants and providers all reach the fake upstream, told apart by model name */
const upstream = (apiBase: string) => `
[models.pair]
routing = ["a", "b"]
[models.pair.providers.a]
type = "openai"
model_name = "gpt-a"
api_base = "${apiBase}"
api_key_location = "none"
[models.pair.providers.b]
type = "openai"
model_name = "gpt-b"
api_base = "${apiBase}"
api_key_location = "none"

[models.single]
routing = ["c"]
[models.single.providers.c]
type = "openai"
model_name = "gpt-small"
api_base = "${apiBase}"
api_key_location = "none"

[functions.guarded]
type = "chat"
[functions.guarded.variants.big]
type = "chat_completion"
model = "pair"
weight = 1000000
max_tokens = 500
retries = { num_retries = 10, max_delay_s = 1 }
[functions.guarded.variants.small]
type = "chat_completion"
model = "single"
weight = 0.000001
max_tokens = 10
`

let counter = 0
/** a tag value no other test uses */
const fresh = (name: string) => `${name}-${++counter}-${Date.now().toString(36)}`

/** the Retry-After of a 429, an integer number of seconds */
const retryAfter = (answer: Answer): number => {
  const header = answer.headers.get("retry-after")
  expect(header, answer.text).toMatch(/^[1-9]\d*$/)
  return Number(header)
}

/** checks a 429 in the native shape and returns its message */
const limited = (answer: Answer): string => {
  expect(answer.status, answer.text).toBe(429)
  expect(answer.body).toEqual({ error: expect.any(String) })
  retryAfter(answer)
  return answer.body.error
}

const statuses = (answers: ReadonlyArray<Answer>) => answers.map((answer) => answer.status)

describe.each(backends)("rate limits with buckets in %s", (backend: Backend) => {
  let database: TestDatabase
  let redis: RedisDatabase | undefined
  let fake: FakeOpenAi
  let gateway: RunningGateway
  let vip: ApiKey
  let restricted: ApiKey
  let env: Record<string, string | undefined>
  /** keys made in advance (in parallel), one or two per test */
  let pool: Array<ApiKey> = []
  const poolSize = 20
  const takeKeys = (count: number): Array<ApiKey> => {
    if (pool.length < count) throw new Error(`the key pool is used up: raise poolSize`)
    return pool.splice(0, count)
  }

  beforeAll(async () => {
    ;[database, fake] = await Promise.all([freshDatabase("postgres"), startFakeOpenAi()])
    redis = backend === "redis" ? await redisDatabase(redisIndex) : undefined
    env = {
      GATEWAY_RELATIONAL_DB_URL: database.url,
      GATEWAY_REDIS_URL: redis?.url,
      GATEWAY_ANALYTICS_DB_URL: undefined
    }
    ;[vip, restricted] = await createKeys(database.url, 2)
    pool = await insertKeys(database.url, poolSize)
    gateway = await startGateway({
      config: `[gateway.auth]\nenabled = true\n${upstream(fake.apiBase)}\n${rules(vip.publicId, restricted.publicId)}`,
      env
    })
  })
  afterAll(async () => {
    await gateway?.stop()
    await fake?.close()
    await redis?.close()
    await database?.drop()
  })
  beforeEach(() => fake.reset())

  const infer = (key: ApiKey, options: Parameters<typeof dummyInference>[0] = {}) =>
    call(gateway, "POST", "/inference", { key, body: dummyInference(options) })
  /** `count` calls one after the other */
  const inferTimes = async (count: number, key: ApiKey, options: Parameters<typeof dummyInference>[0] = {}) => {
    const answers: Array<Answer> = []
    for (let i = 0; i < count; i++) answers.push(await infer(key, options))
    return answers
  }

  it(`keeps its buckets in ${backend}`, async () => {
    expect(gateway.log()).toContain(`rate limiting: 11 rules, buckets in ${backend}`)
    const [key] = takeKeys(1)
    expect((await infer(key)).status).toBe(200)
    const rows = Number(await psql(database.url, "SELECT count(*) FROM rate_limit_buckets"))
    if (backend === "redis") {
      expect(rows).toBe(0)
      expect((await redis!.keys()).some((name) => name.startsWith("gateway:{rl}:"))).toBe(true)
    } else expect(rows).toBeGreaterThan(0)
  })

  describe("per key", () => {
    it("gateway::each lets exactly 3 calls through per key; the 4th gets a 429 naming the rule, the scope and what is available", async () => {
      const [key, other] = takeKeys(2)
      expect(statuses(await inferTimes(3, key))).toEqual([200, 200, 200])
      const refused = await infer(key)
      const message = limited(refused)
      // 3 an hour: one more in 1200 s
      const seconds = retryAfter(refused)
      expect(seconds).toBeGreaterThan(1_150)
      expect(seconds).toBeLessThanOrEqual(1_200)
      expect(message).toBe(
        `rate limit exceeded: rate_limiting.rules[0] (priority 0) for api_key_public_id=${key.publicId}: ` +
          `0 of 3 model inferences per hour available, this call needs 1, retry in ${seconds} s`
      )
      // a refused call took nothing, and a stream is refused before it starts, as a plain error
      const streamed = await infer(key, { stream: true })
      expect(streamed.status).toBe(429)
      expect(streamed.headers.get("content-type")).toContain("application/json")
      expect(streamed.body.error).toContain("0 of 3 model inferences per hour available")
      // another key has buckets of its own
      expect(statuses(await inferTimes(4, other))).toEqual([200, 200, 200, 429])
      // the secret is not part of any message
      expect(message).not.toContain(key.secret)
    })

    it("a rule for one key with a higher priority overrides gateway::each for it: more, or fewer", async () => {
      const more = await inferTimes(6, vip)
      expect(statuses(more)).toEqual([200, 200, 200, 200, 200, 429])
      expect(limited(more[5])).toContain(`rate_limiting.rules[1] (priority 1) for api_key_public_id=${vip.publicId}: 0 of 5 model inferences per hour`)
      const fewer = await inferTimes(2, restricted)
      expect(statuses(fewer)).toEqual([200, 429])
      expect(limited(fewer[1])).toContain(`rate_limiting.rules[2] (priority 1) for api_key_public_id=${restricted.publicId}: 0 of 1 model inferences per hour`)
      expect(retryAfter(fewer[1])).toBeGreaterThan(3_500)
    })
  })

  describe("per tag", () => {
    it("a concrete tag value has one bucket for every key, and overrides the key rule for the requests it covers", async () => {
      const [key, other] = takeKeys(2)
      expect(statuses(await inferTimes(2, key, { tags: { team: "red" } }))).toEqual([200, 200])
      const refused = await infer(other, { tags: { team: "red" } })
      expect(limited(refused)).toContain("rate_limiting.rules[3] (priority 10) for tag team=red: 0 of 2 model inferences per hour available")
      // another value is not in the rule: the key's own 3 an hour, untouched by the calls above
      expect(statuses(await inferTimes(4, key, { tags: { team: "blue" } }))).toEqual([200, 200, 200, 429])
    })

    it("gateway::each has one bucket per value of the tag", async () => {
      const [key] = takeKeys(1)
      const ada = fresh("ada")
      const first = await inferTimes(3, key, { tags: { user: ada } })
      expect(statuses(first)).toEqual([200, 200, 429])
      expect(limited(first[2])).toContain(`rate_limiting.rules[4] (priority 10) for tag user=${ada}: 0 of 2 model inferences per hour available`)
      expect(statuses(await inferTimes(3, key, { tags: { user: fresh("bob") } }))).toEqual([200, 200, 429])
    })

    it("gateway::total has one bucket for every request carrying the tag, whatever its value", async () => {
      const keys = takeKeys(2)
      const answers: Array<Answer> = []
      for (const [index, value] of ["a", "b", "c", "d"].entries()) answers.push(await infer(keys[index % 2], { tags: { tenant: value } }))
      expect(statuses(answers)).toEqual([200, 200, 200, 429])
      expect(limited(answers[3])).toContain("rate_limiting.rules[5] (priority 10) for every request tagged tenant: 0 of 3 model inferences per hour available")
    })

    it("a bucket refills at its rate: {capacity = 2, refill_rate = 1} per second", async () => {
      const [key] = takeKeys(1)
      const tags = { refill: fresh("r") }
      // three at once: two pass
      const burst = await Promise.all([infer(key, { tags }), infer(key, { tags }), infer(key, { tags })])
      expect(statuses(burst).sort()).toEqual([200, 200, 429])
      const refused = burst.find((answer) => answer.status === 429)!
      expect(retryAfter(refused)).toBe(1)
      expect(limited(refused)).toContain("0 of 2 model inferences (refilled at 1 per second) available, this call needs 1, retry in 1 s")
      await sleep(1_100)
      expect((await infer(key, { tags })).status).toBe(200)
      // one more second, one more call; not two
      await sleep(1_050)
      const after = await Promise.all([infer(key, { tags }), infer(key, { tags })])
      expect(statuses(after).sort()).toEqual([200, 429])
    })
  })

  describe("token limits", () => {
    it("a request in the scope of a token limit without max_tokens is a 400 naming max_tokens", async () => {
      const [key] = takeKeys(1)
      const answer = await infer(key, { tags: { tokens: fresh("t") } })
      expect(answer.status, answer.text).toBe(400)
      expect(answer.body.error).toBe(
        "max_tokens: rate_limiting.rules[7] limits tokens, so requests in its scope must set max_tokens (an estimate is borrowed up front)"
      )
    })

    it("max_tokens and the input's estimate are borrowed up front, and the real usage (20) is settled after, plain or streamed", async () => {
      const [key] = takeKeys(1)
      const tags = { tokens: fresh("t") }
      const first = await infer(key, { tags, maxTokens: 60 })
      expect(first.status, first.text).toBe(200)
      expect(first.body.usage).toEqual({ input_tokens: 10, output_tokens: 10 })
      // 60 + the estimate would not fit in what is left were the borrowed tokens not given back: once
      // the first call has settled, the same call passes
      await pollUntil(() => infer(key, { tags, maxTokens: 60 }), (answer) => answer.status === 200, 3_000)
      // 100 - 20 - 20 = 60 left, once the second call settled too: a third one does not fit
      const third = await pollUntil(
        () => infer(key, { tags, maxTokens: 60 }),
        (answer) => answer.status === 429 && answer.body.error.includes(" 60 of 100 tokens per hour available"),
        3_000
      )
      const needs = Number(/this call needs (\d+)/.exec(third.value.body.error)![1])
      expect(needs).toBeGreaterThan(60)
      expect(needs).toBeLessThan(100)
      expect(third.value.body.error).toContain(`rate_limiting.rules[7] (priority 10) for tag tokens=${tags.tokens}`)

      // a streamed call settles when its stream ends
      const streamed = await infer(key, { tags, maxTokens: 10, stream: true })
      expect(streamed.status).toBe(200)
      expect(streamed.text).toContain("data: [DONE]")
      await pollUntil(
        () => infer(key, { tags, maxTokens: 90 }),
        (answer) => answer.status === 429 && answer.body.error.includes(" 40 of 100 tokens per hour available"),
        3_000
      )
    })

    it("a call that needs more than the bucket ever holds is told so", async () => {
      const [key] = takeKeys(1)
      const answer = await infer(key, { tags: { tokens: fresh("t") }, maxTokens: 500 })
      expect(limited(answer)).toMatch(/100 of 100 tokens per hour available, this call needs \d+, more than the 100 it ever holds: lower max_tokens or raise the limit$/)
    })
  })

  describe("a 429 ends the inference", () => {
    const guarded = (key: ApiKey, tags?: Record<string, string>) =>
      call(gateway, "POST", "/inference", {
        key,
        body: { function_name: "guarded", input: { messages: [{ role: "user", content: "Hi" }] }, ...(tags === undefined ? {} : { tags }) }
      })
    const upstreamModels = () => fake.requests.map((request) => request.body.model)

    it("the control: without a limit, the first variant answers, and a failing provider falls back to the next", async () => {
      const [key] = takeKeys(1)
      expect((await guarded(key)).status).toBe(200)
      expect(upstreamModels()).toEqual(["gpt-a"])
      fake.script.push({ kind: "json", status: 500, body: { error: { message: "boom" } } })
      expect((await guarded(key)).status).toBe(200)
      expect(upstreamModels()).toEqual(["gpt-a", "gpt-a", "gpt-b"])
    })

    it("is not retried and does not fall back to the next variant, which would have fit the limit", async () => {
      const [key] = takeKeys(1)
      const started = Date.now()
      const answer = await guarded(key, { guard: fresh("g") })
      // the first variant asks for 500 tokens of a bucket of 200; the second asks for 10
      expect(limited(answer)).toContain("rate_limiting.rules[8] (priority 10)")
      expect(answer.body.error).toContain("more than the 200 it ever holds")
      expect(upstreamModels()).toEqual([])
      // no retry backoff either (10 retries, from 100 ms)
      expect(Date.now() - started).toBeLessThan(1_000)
    })

    it("is not retried, although a retry after the backoff would have found the bucket refilled", async () => {
      const [key] = takeKeys(1)
      const tags = { retry: fresh("r") }
      expect((await guarded(key, tags)).status).toBe(200)
      const started = Date.now()
      const answer = await guarded(key, tags)
      // the bucket holds one more call a second later; 10 retries from 100 ms, up to 1 s apart, would get it
      expect(limited(answer)).toContain("rate_limiting.rules[10] (priority 10)")
      expect(retryAfter(answer)).toBe(1)
      expect(Date.now() - started).toBeLessThan(1_000)
      expect(upstreamModels()).toEqual(["gpt-a"])
    })

    it("a limit reached at a fallback provider ends the inference with the 429, not with a provider or variant failure", async () => {
      const [key] = takeKeys(1)
      fake.script.push({ kind: "json", status: 500, body: { error: { message: "boom" } } })
      const answer = await guarded(key, { once: fresh("o") })
      // provider a took the one call of the hour and failed; provider b is refused
      expect(limited(answer)).toContain("rate_limiting.rules[9] (priority 10)")
      expect(upstreamModels()).toEqual(["gpt-a"])
    })
  })

  describe("the OpenAI endpoint", () => {
    it("answers a 429 in OpenAI's shape with Retry-After; the SDK raises RateLimitError", async () => {
      const [key] = takeKeys(1)
      const client = new OpenAI({ baseURL: `${gateway.url}/openai/v1`, apiKey: key.key, maxRetries: 0 })
      const request = { model: "gateway::model_name::dummy::hello", messages: [{ role: "user" as const, content: "Hi" }] }
      for (let i = 0; i < 3; i++) await client.chat.completions.create(request)
      const error = await client.chat.completions.create(request).then(() => undefined, (caught: unknown) => caught)
      expect(error).toBeInstanceOf(OpenAI.RateLimitError)
      const typed = error as InstanceType<typeof OpenAI.RateLimitError>
      expect(typed.status).toBe(429)
      expect(typed.type).toBe("rate_limit_error")
      expect(typed.message).toContain(`rate_limiting.rules[0] (priority 0) for api_key_public_id=${key.publicId}`)
      expect(typed.headers.get("retry-after")).toMatch(/^[1-9]\d*$/)

      const raw = await call(gateway, "POST", "/openai/v1/chat/completions", { key, body: { ...request, stream: true } })
      expect(raw.status).toBe(429)
      expect(raw.body).toEqual({ error: { message: expect.stringContaining("rate limit exceeded"), type: "rate_limit_error", param: null, code: "rate_limit_exceeded" } })
      retryAfter(raw)
    })
  })

  describe("rules of their own", () => {
    it("an empty scope limits every request, with or without a key", async () => {
      const own = await startGateway({
        config: `[[rate_limiting.rules]]\npriority = 0\nmodel_inferences_per_hour = 2\nscope = []\n`,
        env
      })
      try {
        const answers = [
          await call(own, "POST", "/inference", { body: dummyInference() }),
          await call(own, "POST", "/inference", { body: dummyInference({ tags: { any: "thing" } }) }),
          await call(own, "POST", "/openai/v1/chat/completions", {
            body: { model: "gateway::model_name::dummy::hello", messages: [{ role: "user", content: "Hi" }] }
          })
        ]
        expect(statuses(answers)).toEqual([200, 200, 429])
        expect(answers[2].body.error.message).toContain("rate_limiting.rules[0] (priority 0) for every request: 0 of 2 model inferences per hour")
      } finally {
        await own.stop()
      }
    })

    it("cache hits take nothing from the limits, and pass when the limit is reached", async () => {
      const own = await startGateway({
        config: `${observabilityToml()}\n[[rate_limiting.rules]]\npriority = 0\nmodel_inferences_per_hour = 2\nscope = [{ tag_key = "cache", tag_value = "gateway::each" }]\n`,
        env: { ...env, GATEWAY_ANALYTICS_DB_URL: database.url }
      })
      try {
        const tags = { cache: fresh("c") }
        const cached = (text: string) =>
          call(own, "POST", "/inference", { body: { ...dummyInference({ tags, text }), cache_options: { enabled: "on" } } })
        const first = await cached("the cached question")
        expect(first.status, first.text).toBe(200)
        await waitForInference(own, first.body.inference_id)
        await poll("the write queue to drain", async () => ((await queueStats(own)).queued === 0 ? true : undefined))
        for (let i = 0; i < 4; i++) {
          const hit = await cached("the cached question")
          expect(hit.status, hit.text).toBe(200)
          expect(hit.body.usage).toEqual({ input_tokens: 0, output_tokens: 0 })
        }
        expect((await cached("another question")).status).toBe(200)
        expect(limited(await cached("a third question"))).toContain("0 of 2 model inferences per hour available")
        const hit = await cached("the cached question")
        expect(hit.status, hit.text).toBe(200)
        expect(hit.body.usage).toEqual({ input_tokens: 0, output_tokens: 0 })
      } finally {
        await own.stop()
      }
    })
  })
})
