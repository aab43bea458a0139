/**
 * A budget holds across gateways (issue 39): two gateway processes on one Postgres database
 * (the budget counters there, then in Redis: logical database 8 of the test Redis), a fake
 * OpenAI answering with a fixed usage priced by `cost` rules, and 150 concurrent requests split
 * across both. The estimate (`default_cost`) equals a call's cost, so exactly
 * floor(limit / cost) calls fit: no more pass under concurrency, the settled spend stays within
 * the limit, and the sum of the stored inferences' costs equals the counter's spend.
 */
import { createClient } from "redis"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { counterPrefix } from "../../layers/redis/budgetCounters.ts"
import { budgetCounterKey } from "../../src/budgets/budget.ts"
import { configuredBudget } from "../../src/config/budgets.ts"
import { pollUntil, psql, type RedisDatabase, redisDatabase } from "../support/access.ts"
import { freshDatabase, type TestDatabase } from "../support/databases.ts"
import { type FakeOpenAi, startFakeOpenAi } from "../support/fakeOpenAi.ts"
import { type RunningGateway, startGateway } from "../support/gateway.ts"
import { observabilityToml } from "../support/observability.ts"

const redisIndex = 8
const backends = ["postgres", "redis"] as const

/** the fake's usage (12 prompt, 7 completion tokens) by the cost rules below */
const callCost = 12 * 100e-6 + 7 * 0.0002
const limit = 0.1
const fits = Math.floor(limit / callCost)
const requests = 150

const config = (apiBase: string) => `
${observabilityToml()}
[models.upstream]
routing = ["p"]
[models.upstream.providers.p]
type = "openai"
model_name = "gpt-upstream"
api_base = "${apiBase}"
api_key_location = "none"
cost = [
  { pointer = "/usage/prompt_tokens", cost_per_million = 100, required = true },
  { pointer = "/usage/completion_tokens", cost_per_unit = 0.0002, required = true },
]

[rate_limiting]
default_cost = ${callCost}

[[rate_limiting.budgets]]
scope = [{ tag_key = "team", tag_value = "gateway::each" }]
period = "total"
limit = ${limit}
`

describe.each(backends)("a budget shared by two gateways, counted in %s", (backend) => {
  let database: TestDatabase
  let redis: RedisDatabase | undefined
  let fake: FakeOpenAi
  let first: RunningGateway
  let second: RunningGateway

  beforeAll(async () => {
    ;[database, fake] = await Promise.all([freshDatabase("postgres"), startFakeOpenAi()])
    redis = backend === "redis" ? await redisDatabase(redisIndex) : undefined
    const env = { GATEWAY_RELATIONAL_DB_URL: database.url, GATEWAY_ANALYTICS_DB_URL: database.url, GATEWAY_REDIS_URL: redis?.url }
    // one first, so that it migrates the database alone
    first = await startGateway({ config: config(fake.apiBase), env })
    second = await startGateway({ config: config(fake.apiBase), env })
    expect(first.log()).toContain(`counted in ${backend}`)
  }, 60_000)
  afterAll(async () => {
    await Promise.all([first?.stop(), second?.stop()])
    await fake?.close()
    await redis?.close()
    await database?.drop()
  })

  const counterKey = (team: string) => {
    const budget = configuredBudget({ scope: [{ tag_key: "team", tag_value: "gateway::each" }], period: "total", limit })
    if ("path" in budget) throw new Error(budget.message)
    return budgetCounterKey(budget, { workspace: "default", tags: { team } })
  }

  /** the counter's spend, read where it is kept */
  const spentOf = async (team: string): Promise<number> => {
    if (redis === undefined) return Number(await psql(database.url, `SELECT coalesce(sum(spent), 0) FROM budget_spend WHERE key = '${counterKey(team)}'`))
    const client = createClient({ url: redis.url })
    await client.connect()
    try {
      return Number(await client.get(`${counterPrefix}${counterKey(team)}:total`) ?? 0)
    } finally {
      client.destroy()
    }
  }

  const storedOf = async (team: string) => {
    const [sum, count] = (await psql(
      database.url,
      `SELECT coalesce(sum(m.cost), 0), count(*) FROM model_inference m JOIN chat_inference c ON c.id = m.inference_id WHERE c.tags->>'team' = '${team}'`
    )).trim().split("|")
    return { sum: Number(sum), count: Number(count) }
  }

  it(`${requests} concurrent requests across both let exactly ${fits} through; the spend stays within the limit and equals the stored costs`, async () => {
    const team = `two-${backend}-${Date.now().toString(36)}`
    const body = JSON.stringify({ model_name: "upstream", input: { messages: [{ role: "user", content: "Hi" }] }, tags: { team } })
    const answers = await Promise.all(Array.from({ length: requests }, async (_, i) => {
      const response = await fetch(`${(i % 2 === 0 ? first : second).url}/inference`, { method: "POST", headers: { "content-type": "application/json" }, body })
      return { status: response.status, body: (await response.json()) as any }
    }))
    for (const answer of answers) {
      expect([200, 429], JSON.stringify(answer.body)).toContain(answer.status)
      if (answer.status === 429) expect(answer.body.budget).toMatchObject({ period: "total", limit, resets_at: null })
    }
    expect(answers.filter((answer) => answer.status === 200).length).toBe(fits)
    const { value: spent } = await pollUntil(() => spentOf(team), (value) => Math.abs(value - fits * callCost) < 1e-9, 10_000)
    // passed by at most one in-flight call's estimate
    expect(spent).toBeLessThanOrEqual(limit + callCost)
    const { value: stored } = await pollUntil(() => storedOf(team), (found) => found.count === fits, 10_000)
    expect(stored.sum).toBeCloseTo(spent, 9)
    // each threshold crossed is logged once, by the one gateway whose charge crossed it (100% is never reached: 0.0988 of 0.1)
    const logs = first.log() + second.log()
    const lines = (percent: number) => logs.split("\n").filter((line) => line.includes(`budget tag:team=${team}/total: ${percent}% used`)).length
    expect([lines(50), lines(80), lines(100)]).toEqual([1, 1, 0])
  }, 60_000)
})
