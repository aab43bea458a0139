/**
 * Hardening of rate limits (issue 10), over HTTP with real Postgres and Redis:
 * - a streamed inference cut short before the provider's usage arrived (the client hung up, or
 *   the provider died mid-way) is charged at least what it borrowed, or what it streamed when
 *   that is more: hanging up does not make streaming free;
 * - Postgres bucket rows are deleted once they have refilled to capacity (as Redis keys
 *   expire), while buckets still in use stay and limits keep applying; the sweep never breaks a
 *   request that races it.
 *
 * The upstream is the fake OpenAI server, which can stream a first piece and then hang or die.
 * Bucket state is shared within a suite, so every test uses tag values of its own.
 */
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Scope from "effect/Scope"
import * as http from "node:http"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { sweepBucketsEvery } from "../../layers/access.ts"
import { makeRelationalStore } from "../../layers/postgres/relational.ts"
import type { RelationalStore } from "../../src/relational.ts"
import { type Answer, call, pollUntil, psql, type RedisDatabase, redisDatabase, sleep } from "../support/access.ts"
import { freshDatabase, type TestDatabase } from "../support/databases.ts"
import { type FakeOpenAi, startFakeOpenAi, textStreamChunks } from "../support/fakeOpenAi.ts"
import { type RunningGateway, startGateway } from "../support/gateway.ts"

const redisIndex = 14
const backends = ["postgres", "redis"] as const

/** tokens a day: the bucket refills by about 0.01 a second, so its whole part holds still during a test */
const tokensPerDay = 1_000

const config = (apiBase: string) => `
[models.upstream]
routing = ["fake"]
[models.upstream.providers.fake]
type = "openai"
model_name = "gpt-fake"
api_base = "${apiBase}"
api_key_location = "none"

[[rate_limiting.rules]]            # 0: tokens, per value of the tag "cut"
priority = 0
tokens_per_day = ${tokensPerDay}
scope = [{ tag_key = "cut", tag_value = "gateway::each" }]

[[rate_limiting.rules]]            # 1: full again one second after use
priority = 0
model_inferences_per_second = { capacity = 2, refill_rate = 2 }
scope = [{ tag_key = "idle", tag_value = "gateway::each" }]

[[rate_limiting.rules]]            # 2: empty for an hour once used
priority = 0
model_inferences_per_hour = 2
scope = [{ tag_key = "busy", tag_value = "gateway::each" }]
`

let counter = 0
/** a tag value no other test uses */
const fresh = (name: string) => `${name}-${++counter}-${Date.now().toString(36)}`

const inferenceBody = (tags: Record<string, string>, maxTokens?: number, stream = false) => ({
  model_name: "upstream",
  input: { messages: [{ role: "user", content: "Hi" }] },
  tags,
  stream,
  ...(maxTokens === undefined ? {} : { params: { chat_completion: { max_tokens: maxTokens } } })
})

/**
 * Starts a streamed inference and hangs up once the first piece of text has arrived; resolves
 * with what had arrived by then.
 */
const streamThenHangUp = (gateway: RunningGateway, body: unknown) =>
  new Promise<string>((resolve, reject) => {
    const request = http.request(`${gateway.url}/inference`, { method: "POST", headers: { "content-type": "application/json" }, agent: false }, (response) => {
      if (response.statusCode !== 200) reject(new Error(`status ${response.statusCode}`))
      let text = ""
      response.setEncoding("utf8")
      response.on("data", (data: string) => {
        text += data
        if (text.includes(`"text":"`)) {
          request.destroy()
          resolve(text)
        }
      })
      response.on("end", () => reject(new Error(`the stream ended before the client hung up: ${text}`)))
    })
    request.on("error", () => {})
    request.end(JSON.stringify(body))
  })

/** an answer's chunks: a role chunk, then `text` in one piece; the usage would come last */
const pieces = (text: string) => textStreamChunks([text], { prompt_tokens: 3, completion_tokens: 4 })

describe.each(backends)("rate limits with buckets in %s", (backend) => {
  let database: TestDatabase
  let redis: RedisDatabase | undefined
  let fake: FakeOpenAi
  let gateway: RunningGateway

  beforeAll(async () => {
    ;[database, fake] = await Promise.all([freshDatabase("postgres"), startFakeOpenAi()])
    redis = backend === "redis" ? await redisDatabase(redisIndex) : undefined
    gateway = await startGateway({
      config: config(fake.apiBase),
      env: { GATEWAY_RELATIONAL_DB_URL: database.url, GATEWAY_REDIS_URL: redis?.url, GATEWAY_ANALYTICS_DB_URL: undefined }
    })
  })
  afterAll(async () => {
    await gateway?.stop()
    await fake?.close()
    await redis?.close()
    await database?.drop()
  })

  const infer = (tags: Record<string, string>, maxTokens?: number) =>
    call(gateway, "POST", "/inference", { body: inferenceBody(tags, maxTokens) })

  /** a call too big for the bucket (refused, so it takes nothing): what it says is available, and what it needed */
  const probe = async (tags: Record<string, string>) => {
    const answer: Answer = await infer(tags, 5_000)
    expect(answer.status, answer.text).toBe(429)
    const match = / (\d+) of 1000 tokens per day available, this call needs (\d+),/.exec(answer.body.error)
    expect(match, answer.body.error).not.toBeNull()
    return { available: Number(match![1]), inputTokens: Number(match![2]) - 5_000 }
  }

  describe("a stream cut short", () => {
    it("by the client, once 400 characters (about 100 tokens) were streamed, is charged the input and those 100 tokens, not 0", async () => {
      const tags = { cut: fresh("hangup") }
      const { available, inputTokens } = await probe(tags)
      expect(available).toBe(tokensPerDay)
      // max_tokens 5: far less than what the provider streams before the client leaves
      fake.script.push({ kind: "stream", chunks: pieces("x".repeat(400)), hangAfter: 2 })
      const received = await streamThenHangUp(gateway, inferenceBody(tags, 5, true))
      expect(received).toContain("x".repeat(40))
      // settled once the gateway saw the client go: input + 100, more than the input + 5 borrowed
      const settled = tokensPerDay - (inputTokens + 100)
      await pollUntil(() => probe(tags), (seen) => seen.available === settled, 5_000)
      // and the bucket charges it: a call needing more than what is left is refused, one that fits passes
      const fits = await infer(tags, settled - inputTokens)
      expect(fits.status, fits.text).toBe(200)
    })

    it("by the client, after less than it borrowed, keeps what it borrowed (max_tokens and the input)", async () => {
      const tags = { cut: fresh("short") }
      const { inputTokens } = await probe(tags)
      const aborted = fake.aborted()
      fake.script.push({ kind: "stream", chunks: pieces("Hello"), hangAfter: 2 })
      await streamThenHangUp(gateway, inferenceBody(tags, 200, true))
      // the gateway let go of the upstream: the stream is over, and its settlement under way
      await pollUntil(async () => fake.aborted(), (count) => count > aborted, 5_000)
      await sleep(500)
      expect((await probe(tags)).available).toBe(tokensPerDay - (inputTokens + 200))
    })

    it("by the provider dying mid-way, after 400 characters, is charged those too", async () => {
      const tags = { cut: fresh("died") }
      const { inputTokens } = await probe(tags)
      fake.script.push({ kind: "stream", chunks: pieces("y".repeat(400)), chunkDelayMs: 100, destroyAfter: 2 })
      const streamed = await gateway.stream("/inference", inferenceBody(tags, 5, true))
      expect(streamed.status).toBe(200)
      expect(streamed.raw).toContain("y".repeat(40))
      expect(streamed.events.at(-1)).toEqual({ error: expect.any(String) })
      await pollUntil(() => probe(tags), (seen) => seen.available === tokensPerDay - (inputTokens + 100), 5_000)
    })

    it("the control: a stream that finishes is charged the usage the provider reported (3 + 4)", async () => {
      const tags = { cut: fresh("whole") }
      fake.script.push({ kind: "stream", chunks: pieces("z".repeat(400)) })
      const streamed = await gateway.stream("/inference", inferenceBody(tags, 5, true))
      expect(streamed.status).toBe(200)
      expect(streamed.raw).toContain("[DONE]")
      await pollUntil(() => probe(tags), (seen) => seen.available === tokensPerDay - 7, 5_000)
    })
  })

  if (backend !== "postgres") return

  describe("idle buckets in Postgres", () => {
    const rows = async (period: "second" | "hour") =>
      Number(await psql(database.url, `SELECT count(*) FROM rate_limit_buckets WHERE key LIKE '%:model_inferences:${period}:%'`))

    it("are deleted once full again, while a bucket in use stays, and limits apply as before", async () => {
      const idle = { idle: fresh("idle") }
      const busy = { busy: fresh("busy") }
      const statuses = async (tags: Record<string, string>, count: number) => {
        const answers: Array<number> = []
        for (let i = 0; i < count; i++) answers.push((await infer(tags)).status)
        return answers
      }
      expect(await statuses(idle, 3)).toEqual([200, 200, 429])
      expect(await statuses(busy, 3)).toEqual([200, 200, 429])
      expect(await rows("second")).toBe(1)
      expect(await rows("hour")).toBe(1)

      // the gateway sweeps every minute: here a sweeper of the test's own, every 100 ms, on the same database
      const scope = Effect.runSync(Scope.make())
      try {
        const store: RelationalStore = await Effect.runPromise(Scope.provide(scope)(makeRelationalStore(database.url)))
        Effect.runFork(Scope.provide(scope)(Effect.forkScoped(sweepBucketsEvery(store.buckets.sweep!, 100))))
        // the idle bucket is full again a second after its last use: then its row goes
        await pollUntil(() => rows("second"), (count) => count === 0, 5_000)
        expect(await rows("hour")).toBe(1)
        // the busy bucket still refuses; the idle one starts full again, and still holds 2
        const refused = await infer(busy)
        expect(refused.status).toBe(429)
        expect(refused.body.error).toContain("0 of 2 model inferences per hour available")
        expect(await statuses(idle, 3)).toEqual([200, 200, 429])
        expect(await rows("second")).toBe(1)
      } finally {
        await Effect.runPromise(Scope.close(scope, Exit.void))
      }
    })

    it("are swept while requests take from them, and no request fails for it", async () => {
      const scope = Effect.runSync(Scope.make())
      try {
        const store = await Effect.runPromise(Scope.provide(scope)(makeRelationalStore(database.url)))
        const { consume, sweep } = store.buckets
        // buckets that refill within a millisecond: full again, so swept, almost as soon as used
        const keys = Array.from({ length: 8 }, (_, i) => `race:${fresh("k")}:${i}`)
        const bucket = (key: string) => ({ key, capacity: 1_000, refillPerSecond: 1_000_000, amount: 1 })
        let sweeping = true
        let swept = 0
        const sweeper = (async () => {
          while (sweeping) swept += await Effect.runPromise(sweep!)
        })()
        const results = await Promise.all(Array.from({ length: 400 }, (_, i) =>
          Effect.runPromise(Effect.result(consume([bucket(keys[i % 8]), bucket(keys[(i + 3) % 8])])))))
        sweeping = false
        await sweeper
        const failures = results.filter((result) => result._tag === "Failure")
        expect(failures, JSON.stringify(failures.slice(0, 3))).toEqual([])
        expect(results.every((result) => result._tag === "Success" && result.success.ok)).toBe(true)
        expect(swept).toBeGreaterThan(0)
      } finally {
        await Effect.runPromise(Scope.close(scope, Exit.void))
      }
    })
  })
})
