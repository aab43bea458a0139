/**
 * Costs (issue 12) through a running gateway and the fake OpenAI, on both observability
 * backends: a provider's `cost` rules price each model call from its raw usage; the cost is
 * returned as `usage.cost` on /inference (whole and streamed) and `usage.gateway_cost` on the
 * OpenAI route (null when not configured or not reported), stored with the model inference and
 * read back; and a `cost_per_hour` rate limit refuses calls once the budget is spent.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import { freshDatabase, type TestDatabase } from "../support/databases.ts"
import { type FakeOpenAi, startFakeOpenAi } from "../support/fakeOpenAi.ts"
import { type RunningGateway, startGateway } from "../support/gateway.ts"
import { backends, observabilityToml, waitForInference } from "../support/observability.ts"

/** 12 prompt tokens at 100 per million, 7 completion tokens at 0.0002 each: 0.0026 */
const fullCost = 12 * 100e-6 + 7 * 0.0002
/** with 4 of the prompt tokens read from the cache at a discount of 0.00005 each */
const cachedCost = fullCost - 4 * 0.00005

const provider = (model: string, apiBase: string, cost: string) => `
[models.${model}]
routing = ["p"]
[models.${model}.providers.p]
type = "openai"
model_name = "gpt-${model}"
api_base = "${apiBase}"
api_key_location = "env::FAKE_OPENAI_KEY"
${cost}
`

const prices = `cost = [
  { pointer = "/usage/prompt_tokens", cost_per_million = 100, required = true },
  { pointer = "/usage/completion_tokens", cost_per_unit = 0.0002, required = true },
  { pointer = "/usage/prompt_tokens_details/cached_tokens", cost_per_unit = -0.00005 },
]`

const config = (apiBase: string) => `
${observabilityToml()}
${provider("priced", apiBase, prices)}
${provider("unpriced", apiBase, "")}
${provider("listed", apiBase, "")}
pricing = { input_per_million = 100, output_per_million = 200, cache_read_per_million = 25 }
${provider("needy", apiBase, `cost = [{ pointer = "/usage/images", cost_per_unit = 1, required = true }, { pointer = "/usage/prompt_tokens", cost_per_unit = 1 }]`)}

[rate_limiting]
default_cost = 0.001
[[rate_limiting.rules]]
always = true
cost_per_hour = 0.005
scope = [{ tag_key = "budget", tag_value = "gateway::each" }]

[functions.chat]
type = "chat"
[functions.chat.variants.v]
type = "chat_completion"
model = "priced"
`

/** \`pricing\` on the model "listed": 12 prompt tokens at 100 per million, 7 completion tokens at 200 per million */
const listedCost = (12 * 100 + 7 * 200) / 1e6
/** with 4 of the prompt tokens read from the cache at 25 per million */
const listedCachedCost = (8 * 100 + 4 * 25 + 7 * 200) / 1e6

const input = { messages: [{ role: "user", content: "hi" }] }

const pricedAnswer = {
  kind: "json" as const,
  body: {
    id: "chatcmpl-1",
    object: "chat.completion",
    created: 1,
    model: "gpt-priced",
    choices: [{ index: 0, message: { role: "assistant", content: "Hello" }, finish_reason: "stop" }],
    usage: { prompt_tokens: 12, completion_tokens: 7, total_tokens: 19, prompt_tokens_details: { cached_tokens: 4 } }
  }
}

let counter = 0
const fresh = (name: string) => `${name}-${++counter}-${Date.now().toString(36)}`

describe.each(backends)("costs, stored on %s", (backend) => {
  let analytics: TestDatabase
  let relational: TestDatabase | undefined
  let fake: FakeOpenAi
  let gateway: RunningGateway

  beforeAll(async () => {
    ;[analytics, fake] = await Promise.all([freshDatabase(backend), startFakeOpenAi()])
    // the rate limit buckets live in Postgres: the analytics database itself on the Postgres run
    relational = backend === "clickhouse" ? await freshDatabase("postgres") : undefined
    gateway = await startGateway({
      config: config(fake.apiBase),
      env: {
        GATEWAY_ANALYTICS_DB_URL: analytics.url,
        GATEWAY_RELATIONAL_DB_URL: (relational ?? analytics).url,
        FAKE_OPENAI_KEY: "sk-fake"
      }
    })
  })
  afterAll(async () => {
    await gateway?.stop()
    await fake?.close()
    await relational?.drop()
    await analytics?.drop()
  })
  beforeEach(() => fake.reset())

  const storedCall = async (inferenceId: string) => {
    const stored = await waitForInference(gateway, inferenceId, { include_model_inferences: true })
    expect(stored.model_inferences).toHaveLength(1)
    return stored.model_inferences[0]
  }

  it("/inference: usage.cost from the raw usage, a negative price for cached tokens; stored and read back", async () => {
    fake.script.push(pricedAnswer)
    const response = await gateway.post("/inference", { function_name: "chat", input })
    expect(response.status, JSON.stringify(response.body)).toBe(200)
    expect(response.body.usage.input_tokens).toBe(12)
    expect(response.body.usage.cost).toBeCloseTo(cachedCost, 12)
    const call = await storedCall(response.body.inference_id)
    expect(call.cost).toBeCloseTo(cachedCost, 12)
    // the openai codec may or may not report prompt-cache reads yet: stored as it reports them
    expect([null, 4]).toContain(call.cached_input_tokens)
  })

  it("/inference streamed: the final chunk's usage has the cost, stored too", async () => {
    const { status, events } = await gateway.stream("/inference", { function_name: "chat", input, stream: true })
    expect(status).toBe(200)
    const final = events.at(-2)
    expect(final.usage.cost).toBeCloseTo(fullCost, 12)
    const call = await storedCall(final.inference_id)
    expect(call.cost).toBeCloseTo(fullCost, 12)
  })

  it("a cached answer costs 0", async () => {
    const cachedInput = { messages: [{ role: "user", content: fresh("cache me") }] }
    const first = await gateway.post("/inference", { function_name: "chat", input: cachedInput, cache_options: { enabled: "on" } })
    expect(first.body.usage.cost).toBeCloseTo(fullCost, 12)
    await storedCall(first.body.inference_id)
    const again = await gateway.post("/inference", { function_name: "chat", input: cachedInput, cache_options: { enabled: "on" } })
    expect(again.status).toBe(200)
    expect(again.body.usage).toEqual({ input_tokens: 0, output_tokens: 0, cost: 0 })
    expect(fake.requests).toHaveLength(1)
    const call = await storedCall(again.body.inference_id)
    expect(call.cached).toBe(true)
    expect(call.cost).toBe(0)
  })

  it("the OpenAI route: usage.gateway_cost, null without rules or when a required pointer finds nothing", async () => {
    const priced = await gateway.post("/openai/v1/chat/completions", { model: "gateway::model_name::priced", messages: input.messages })
    expect(priced.status, JSON.stringify(priced.body)).toBe(200)
    expect(priced.body.usage.gateway_cost).toBeCloseTo(fullCost, 12)

    const unpriced = await gateway.post("/openai/v1/chat/completions", { model: "gateway::model_name::unpriced", messages: input.messages })
    expect(unpriced.body.usage.gateway_cost).toBeNull()
    const needy = await gateway.post("/openai/v1/chat/completions", { model: "gateway::model_name::needy", messages: input.messages })
    expect(needy.status).toBe(200)
    expect(needy.body.usage.gateway_cost).toBeNull()
    expect((await storedCall(needy.body.id)).cost).toBeNull()
    expect(gateway.log()).toContain(`the required cost pointer(s) /usage/images found no number in the raw response`)

    const inference = await gateway.post("/inference", { model_name: "unpriced", input })
    expect(inference.body.usage).toEqual({ input_tokens: 12, output_tokens: 7 })

    const { events } = await gateway.stream("/openai/v1/chat/completions", {
      model: "gateway::model_name::priced",
      messages: input.messages,
      stream: true,
      stream_options: { include_usage: true }
    })
    expect(events.at(-2).usage.gateway_cost).toBeCloseTo(fullCost, 12)
  })

  it("a model's pricing: the stored cost of whole and streamed calls, cache reads at their price, a cache hit 0", async () => {
    fake.script.push({ ...pricedAnswer, body: { ...pricedAnswer.body, model: "gpt-listed" } })
    const whole = await gateway.post("/inference", { model_name: "listed", input })
    expect(whole.status, JSON.stringify(whole.body)).toBe(200)
    expect(whole.body.usage.cost).toBeCloseTo(listedCachedCost, 12)
    expect((await storedCall(whole.body.inference_id)).cost).toBeCloseTo(listedCachedCost, 12)

    const { status, events } = await gateway.stream("/inference", { model_name: "listed", input, stream: true })
    expect(status).toBe(200)
    const final = events.at(-2)
    expect(final.usage.cost).toBeCloseTo(listedCost, 12)
    expect((await storedCall(final.inference_id)).cost).toBeCloseTo(listedCost, 12)

    const cachedInput = { messages: [{ role: "user", content: fresh("cache my pricing") }] }
    const first = await gateway.post("/inference", { model_name: "listed", input: cachedInput, cache_options: { enabled: "on" } })
    expect((await storedCall(first.body.inference_id)).cost).toBeCloseTo(listedCost, 12)
    const again = await gateway.post("/inference", { model_name: "listed", input: cachedInput, cache_options: { enabled: "on" } })
    expect(again.body.usage.cost).toBe(0)
    const call = await storedCall(again.body.inference_id)
    expect(call.cached).toBe(true)
    expect(call.cost).toBe(0)
  })

  it("cost_per_hour: calls pass while the budget lasts, then a 429; another tag value has its own budget", async () => {
    const budget = fresh("b")
    const statuses: Array<number> = []
    let refused: { status: number; body: any; headers: Headers } | undefined
    for (let i = 0; i < 4 && refused === undefined; i++) {
      const response = await gateway.post("/inference", { function_name: "chat", input, tags: { budget } })
      statuses.push(response.status)
      if (response.status === 429) refused = response
      // the cost is settled in the background once the call answered
      await new Promise((resolve) => setTimeout(resolve, 150))
    }
    // 0.005 holds one call of 0.0026 and the start of another (a budget below zero refuses)
    expect(statuses).toEqual([200, 200, 429])
    expect(refused!.body.error).toContain("cost")
    expect(Number(refused!.headers.get("retry-after"))).toBeGreaterThan(0)
    const other = await gateway.post("/inference", { function_name: "chat", input, tags: { budget: fresh("b") } })
    expect(other.status).toBe(200)
  })
})
