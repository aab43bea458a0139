/**
 * Budgets (`[[rate_limiting.budgets]]`, docs/budgets.md) through a running gateway, the fake
 * OpenAI and one Postgres database (budget counters, stored inferences): a call reserves its
 * estimate before it runs and is charged its cost at its end; the call that would pass the
 * budget is refused with 429, Retry-After and the budget in the body on /inference, the OpenAI
 * chat and Responses routes and the Anthropic Messages route; a stream is charged its cost, a stream cut short by
 * the client at least its estimate, and stored with that cost; a cached answer costs nothing;
 * and the counter's spend equals the sum of the stored costs.
 *
 * The provider has no prices here (the per-model pricing shorthand fills them), so a call
 * reserves `default_cost` = 0.003; each answer costs 12 prompt tokens at 100 per million and 7
 * completion tokens at 0.0002 each, 0.0026, by the provider's `cost` rules. A budget of 0.01 a
 * day per value of the tag `team` lets three calls through (0.0078 spent), not a fourth
 * (0.0078 + 0.003 > 0.01).
 */
import * as http from "node:http"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { budgetCounterKey } from "../../src/budgets/budget.ts"
import { configuredBudget } from "../../src/config/budgets.ts"
import { pollUntil, psql } from "../support/access.ts"
import { freshDatabase, type TestDatabase } from "../support/databases.ts"
import { type FakeOpenAi, startFakeOpenAi, textStreamChunks } from "../support/fakeOpenAi.ts"
import { type RunningGateway, startGateway } from "../support/gateway.ts"
import { observabilityToml, waitForInference } from "../support/observability.ts"

const callCost = 12 * 100e-6 + 7 * 0.0002
const defaultCost = 0.003
const limit = 0.01

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
default_cost = ${defaultCost}

[[rate_limiting.budgets]]
scope = [{ tag_key = "team", tag_value = "gateway::each" }]
period = "day"
limit = ${limit}
`

let counter = 0
const fresh = (name: string) => `${name}-${++counter}-${Date.now().toString(36)}`

const inferenceBody = (team: string, extra: Record<string, unknown> = {}) => ({
  model_name: "upstream",
  input: { messages: [{ role: "user", content: "Hi" }] },
  tags: { team },
  ...extra
})

/** the next UTC midnight, as the 429's resets_at gives it */
const nextMidnight = () => {
  const now = new Date()
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1)).toISOString()
}

/** Starts a streamed inference and hangs up once the first piece of text has arrived. */
const streamThenHangUp = (gateway: RunningGateway, body: unknown) =>
  new Promise<void>((resolve, reject) => {
    const request = http.request(`${gateway.url}/inference`, { method: "POST", headers: { "content-type": "application/json" }, agent: false }, (response) => {
      if (response.statusCode !== 200) reject(new Error(`status ${response.statusCode}`))
      let text = ""
      response.setEncoding("utf8")
      response.on("data", (data: string) => {
        text += data
        if (text.includes(`"text":"`)) {
          request.destroy()
          resolve()
        }
      })
      response.on("end", () => reject(new Error(`the stream ended before the client hung up: ${text}`)))
    })
    request.on("error", () => {})
    request.end(JSON.stringify(body))
  })

describe("budgets, counted in Postgres", () => {
  let database: TestDatabase
  let fake: FakeOpenAi
  let gateway: RunningGateway

  beforeAll(async () => {
    ;[database, fake] = await Promise.all([freshDatabase("postgres"), startFakeOpenAi()])
    gateway = await startGateway({
      config: config(fake.apiBase),
      env: { GATEWAY_ANALYTICS_DB_URL: database.url, GATEWAY_RELATIONAL_DB_URL: database.url, GATEWAY_REDIS_URL: undefined }
    })
    expect(gateway.log()).toContain("budgets: 1 configured, run-time ones on, counted in postgres")
  })
  afterAll(async () => {
    await gateway?.stop()
    await fake?.close()
    await database?.drop()
  })

  /** the budget counter of `team`, read straight from its table */
  const spentOf = async (team: string) => {
    const budget = configuredBudget({ scope: [{ tag_key: "team", tag_value: "gateway::each" }], period: "day", limit })
    if ("path" in budget) throw new Error(budget.message)
    const key = budgetCounterKey(budget, { workspace: "default", tags: { team } })
    return Number(await psql(database.url, `SELECT coalesce(sum(spent), 0) FROM budget_spend WHERE key = '${key}'`))
  }

  /** the stored model inferences of `team`: their costs summed, and how many were cut short */
  const storedOf = async (team: string) => {
    const [sum, count, cutShort] = (await psql(
      database.url,
      `SELECT coalesce(sum(m.cost), 0), count(*), count(*) FILTER (WHERE c.tags->>'gateway::cut_short' = 'true')
       FROM model_inference m JOIN chat_inference c ON c.id = m.inference_id WHERE c.tags->>'team' = '${team}'`
    )).trim().split("|")
    return { sum: Number(sum), count: Number(count), cutShort: Number(cutShort) }
  }

  const expectRefusal = (status: number, headers: Headers, budget: unknown, team: string) => {
    expect(status).toBe(429)
    const retryAfter = Number(headers.get("retry-after"))
    const expected = Math.ceil((Date.parse(nextMidnight()) - Date.now()) / 1000)
    expect(retryAfter).toBeGreaterThan(0)
    expect(Math.abs(retryAfter - expected)).toBeLessThanOrEqual(5)
    expect(budget).toEqual({
      scope: { kind: "tag", value: `team=${team}` },
      period: "day",
      limit,
      spent: expect.closeTo(3 * callCost, 9),
      remaining: expect.closeTo(limit - 3 * callCost, 9),
      resets_at: nextMidnight()
    })
  }

  it("/inference: three calls fit, the fourth is refused with 429, Retry-After until midnight UTC and the budget; spend = stored costs", async () => {
    const team = fresh("native")
    for (let i = 0; i < 3; i++) {
      const answer = await gateway.post("/inference", inferenceBody(team))
      expect(answer.status, JSON.stringify(answer.body)).toBe(200)
      await waitForInference(gateway, answer.body.inference_id)
    }
    const refused = await fetch(`${gateway.url}/inference`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(inferenceBody(team))
    })
    const body = (await refused.json()) as any
    expectRefusal(refused.status, refused.headers, body.budget, team)
    expect(body.error).toContain("budget exceeded: tag:team=")
    expect(fake.requests.filter((request) => JSON.stringify(request.body).includes("Hi")).length).toBeGreaterThanOrEqual(3)
    await pollUntil(() => spentOf(team), (spent) => Math.abs(spent - 3 * callCost) < 1e-9, 5_000)
    const stored = await storedOf(team)
    expect(stored.count).toBe(3)
    expect(stored.sum).toBeCloseTo(await spentOf(team), 9)
    // the metrics: the share of the budget used, and the refusal
    const metrics = await (await fetch(`${gateway.url}/metrics`)).text()
    const label = `budget="tag:team=${team}/day"`
    const ratio = new RegExp(`gateway_budget_used_ratio\\{${label}\\} ([0-9.e-]+)`).exec(metrics)
    expect(Number(ratio?.[1])).toBeCloseTo((3 * callCost) / limit, 6)
    expect(metrics).toContain(`gateway_budget_refused_total{${label}} 1`)
    // 0.0078 of 0.01: 50% crossed once, then 80% when the third call reserved 0.003 (0.0082), not 100%
    const lines = (percent: number) => gateway.log().split("\n").filter((line) => line.includes(`budget tag:team=${team}/day: ${percent}% used`)).length
    expect([lines(50), lines(80), lines(100)]).toEqual([1, 1, 0])
  })

  it("/openai/v1/chat/completions: the 429 in OpenAI's shape, with the budget beside the error", async () => {
    const team = fresh("openai")
    const body = { model: "gateway::model_name::upstream", messages: [{ role: "user", content: "Hi" }], "gateway::tags": { team } }
    const post = () => fetch(`${gateway.url}/openai/v1/chat/completions`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) })
    for (let i = 0; i < 3; i++) expect((await post()).status).toBe(200)
    await pollUntil(() => spentOf(team), (spent) => Math.abs(spent - 3 * callCost) < 1e-9, 5_000)
    const refused = await post()
    const answer = (await refused.json()) as any
    expect(answer.error).toMatchObject({ type: "rate_limit_error", code: "rate_limit_exceeded", message: expect.stringContaining("budget exceeded") })
    expectRefusal(refused.status, refused.headers, answer.budget, team)
  })

  it("/anthropic/v1/messages: the 429 in Anthropic's shape, with the budget beside the error", async () => {
    const team = fresh("anthropic")
    const post = () =>
      fetch(`${gateway.url}/anthropic/v1/messages`, {
        method: "POST",
        headers: { "content-type": "application/json", "anthropic-version": "2023-06-01" },
        body: JSON.stringify({ model: "upstream", max_tokens: 100, messages: [{ role: "user", content: "Hi" }], "gateway::tags": { team } })
      })
    for (let i = 0; i < 3; i++) {
      const answer = await post()
      expect(answer.status, await answer.clone().text()).toBe(200)
    }
    await pollUntil(() => spentOf(team), (spent) => Math.abs(spent - 3 * callCost) < 1e-9, 5_000)
    const refused = await post()
    const answer = (await refused.json()) as any
    expect(answer).toMatchObject({ type: "error", error: { type: "rate_limit_error", message: expect.stringContaining("budget exceeded") } })
    expectRefusal(refused.status, refused.headers, answer.budget, team)
  })

  it("/openai/v1/responses: the 429 in OpenAI's shape, with the budget beside the error", async () => {
    const team = fresh("responses")
    const post = () =>
      fetch(`${gateway.url}/openai/v1/responses`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ model: "gateway::model_name::upstream", input: "Hi", metadata: { team } })
      })
    for (let i = 0; i < 3; i++) {
      const answer = await post()
      expect(answer.status, await answer.clone().text()).toBe(200)
    }
    await pollUntil(() => spentOf(team), (spent) => Math.abs(spent - 3 * callCost) < 1e-9, 5_000)
    const refused = await post()
    const answer = (await refused.json()) as any
    expect(answer.error).toMatchObject({ type: "rate_limit_error", code: "rate_limit_exceeded" })
    expectRefusal(refused.status, refused.headers, answer.budget, team)
  })

  it("a stream is charged its cost", async () => {
    const team = fresh("stream")
    fake.script.push({ kind: "stream", chunks: textStreamChunks(["Hello"]) })
    const streamed = await gateway.stream("/inference", inferenceBody(team, { stream: true }))
    expect(streamed.status).toBe(200)
    expect(streamed.raw).toContain("[DONE]")
    await pollUntil(() => spentOf(team), (spent) => Math.abs(spent - callCost) < 1e-9, 5_000)
    await pollUntil(() => storedOf(team), (stored) => stored.count === 1, 5_000)
    expect((await storedOf(team)).sum).toBeCloseTo(callCost, 9)
  })

  it("a stream the client cuts short is charged its estimate, and stored with that cost and the tag gateway::cut_short", async () => {
    const team = fresh("cut")
    fake.script.push({ kind: "stream", chunks: textStreamChunks(["x".repeat(200)]), hangAfter: 2 })
    await streamThenHangUp(gateway, inferenceBody(team, { stream: true }))
    await pollUntil(() => storedOf(team), (stored) => stored.count === 1, 5_000)
    expect(await storedOf(team)).toEqual({ sum: defaultCost, count: 1, cutShort: 1 })
    expect(await spentOf(team)).toBeCloseTo(defaultCost, 9)
    const output = await psql(
      database.url,
      `SELECT m.output::text FROM model_inference m JOIN chat_inference c ON c.id = m.inference_id WHERE c.tags->>'team' = '${team}'`
    )
    expect(output).toContain("x".repeat(50))
  })

  it("a cached answer costs nothing", async () => {
    const team = fresh("cache")
    const body = inferenceBody(team, { input: { messages: [{ role: "user", content: fresh("cache me") }] }, cache_options: { enabled: "on" } })
    const before = fake.requests.length
    const first = await gateway.post("/inference", body)
    expect(first.status).toBe(200)
    await waitForInference(gateway, first.body.inference_id)
    await pollUntil(() => spentOf(team), (spent) => Math.abs(spent - callCost) < 1e-9, 5_000)
    for (let i = 0; i < 5; i++) {
      const again = await gateway.post("/inference", body)
      expect(again.status).toBe(200)
      expect(again.body.usage.cost).toBe(0)
    }
    expect(fake.requests.length - before).toBe(1)
    expect(await spentOf(team)).toBeCloseTo(callCost, 9)
  })
})
