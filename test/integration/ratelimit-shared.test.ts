/**
 * Rate limits under concurrency and across gateway processes (issue 5: "two gateway processes
 * sharing one limit (together they never exceed it), concurrency (N parallel requests against a
 * limit of M let exactly M through)"), on both bucket stores: Postgres, and Redis (logical
 * database 12 of the test Redis, emptied before and after). Two real gateway processes share one
 * database (and one Redis); requests are fired at them in parallel over HTTP.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type Answer, type ApiKey, call, createKey, dummyInference, insertKeys, type RedisDatabase, redisDatabase } from "../support/access.ts"
import { freshDatabase, type TestDatabase } from "../support/databases.ts"
import { type RunningGateway, startGateway } from "../support/gateway.ts"

const redisIndex = 12
const backends = ["postgres", "redis"] as const

const config = `
[gateway.auth]
enabled = true

[[rate_limiting.rules]]            # 0: every key, 10 calls an hour
priority = 0
model_inferences_per_hour = 10
scope = [{ api_key_public_id = "gateway::each" }]

[[rate_limiting.rules]]            # 1: the same priority, so tagged requests take from both rules' buckets
priority = 0
model_inferences_per_hour = 5
scope = [{ tag_key = "pair", tag_value = "gateway::each" }]
`

const count = (answers: ReadonlyArray<Answer>, status: number) => answers.filter((answer) => answer.status === status).length

/** every answer a 200 or a 429 naming `rule`, and how many of each */
const tally = (answers: ReadonlyArray<Answer>, rule: number) => {
  for (const answer of answers) {
    expect([200, 429], answer.text).toContain(answer.status)
    if (answer.status === 429) {
      expect(answer.body.error).toContain(`rate_limiting.rules[${rule}]`)
      expect(answer.headers.get("retry-after")).toMatch(/^[1-9]\d*$/)
    }
  }
  return { passed: count(answers, 200), refused: count(answers, 429) }
}

describe.each(backends)("shared limits with buckets in %s", (backend) => {
  let database: TestDatabase
  let redis: RedisDatabase | undefined
  let first: RunningGateway
  let second: RunningGateway
  let keys: Array<ApiKey>

  beforeAll(async () => {
    database = await freshDatabase("postgres")
    redis = backend === "redis" ? await redisDatabase(redisIndex) : undefined
    // the command migrates the database; the other keys are written straight into it
    keys = [await createKey(database.url), ...(await insertKeys(database.url, 5))]
    const env = { GATEWAY_RELATIONAL_DB_URL: database.url, GATEWAY_REDIS_URL: redis?.url, GATEWAY_ANALYTICS_DB_URL: undefined }
    ;[first, second] = await Promise.all([startGateway({ config, env }), startGateway({ config, env })])
    expect(first.log()).toContain(`buckets in ${backend}`)
  })
  afterAll(async () => {
    await Promise.all([first?.stop(), second?.stop()])
    await redis?.close()
    await database?.drop()
  })

  const infer = (gateway: RunningGateway, key: ApiKey, tags?: Record<string, string>) =>
    call(gateway, "POST", "/inference", { key, body: dummyInference({ tags }) })

  it("30 parallel requests against a limit of 10 let exactly 10 through", async () => {
    const key = keys[0]
    const answers = await Promise.all(Array.from({ length: 30 }, () => infer(first, key)))
    expect(tally(answers, 0)).toEqual({ passed: 10, refused: 20 })
    expect((await infer(first, key)).status).toBe(429)
  })

  it("two processes sharing the buckets let exactly 10 through together, 15 parallel requests each", async () => {
    const key = keys[1]
    const answers = await Promise.all(Array.from({ length: 30 }, (_, i) => infer(i % 2 === 0 ? first : second, key)))
    expect(tally(answers, 0)).toEqual({ passed: 10, refused: 20 })
    // (each process on its own would have let 10 through: 20 together)
    expect((await infer(first, key)).status).toBe(429)
    expect((await infer(second, key)).status).toBe(429)
  })

  it("what one process let through counts in the other: 6 here, then 4 there, then none on either", async () => {
    const key = keys[2]
    const here = await Promise.all(Array.from({ length: 6 }, () => infer(first, key)))
    expect(tally(here, 0)).toEqual({ passed: 6, refused: 0 })
    const there = await Promise.all(Array.from({ length: 7 }, () => infer(second, key)))
    expect(tally(there, 0)).toEqual({ passed: 4, refused: 3 })
    const refused = await infer(first, key)
    expect(refused.status).toBe(429)
    expect(refused.body.error).toContain(`api_key_public_id=${key.publicId}: 0 of 10 model inferences per hour available`)
  })

  it("all or nothing under concurrency: of 20 parallel requests in two rules' scope (5 and 10), 5 pass, and only they took from the other bucket", async () => {
    const key = keys[3]
    const tags = { pair: `p-${Date.now()}` }
    const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => infer(i % 2 === 0 ? first : second, key, tags)))
    expect(tally(answers, 1)).toEqual({ passed: 5, refused: 15 })
    // the key's own bucket (10) gave 5: 5 more untagged calls pass, then none
    const untagged = await Promise.all(Array.from({ length: 8 }, (_, i) => infer(i % 2 === 0 ? first : second, key)))
    expect(tally(untagged, 0)).toEqual({ passed: 5, refused: 3 })
  })

  it("parallel requests of several keys on both processes: each key gets exactly its own 10", async () => {
    const [a, b] = [keys[4], keys[5]]
    const requests = Array.from({ length: 48 }, (_, i) => infer(i % 3 === 0 ? first : second, i % 2 === 0 ? a : b))
    const answers = await Promise.all(requests)
    const ofKey = (index: number) => answers.filter((_, i) => i % 2 === index)
    expect(tally(ofKey(0), 0)).toEqual({ passed: 10, refused: 14 })
    expect(tally(ofKey(1), 0)).toEqual({ passed: 10, refused: 14 })
  })
})
