/**
 * Costs: a provider's `cost` rules checked at start-up, and applied to raw responses (whole,
 * and streamed as OpenAI and Anthropic stream their usage).
 */
import { describe, expect, it } from "vitest"
import { type CostRule, costRule, type RawCostRule } from "../../src/inference/cost.ts"
import { costOfChunks, costOfResponse } from "../../src/inference/pricing.ts"
import { buildErrors, buildOk, configPath } from "./fixtures.ts"

const rules = (...raw: ReadonlyArray<RawCostRule>): ReadonlyArray<CostRule> =>
  raw.map((rule) => {
    const checked = costRule(rule)
    if ("field" in checked) throw new Error(checked.message)
    return checked
  })

const openAiPrices = rules(
  { pointer: "/usage/prompt_tokens", cost_per_million: 2, required: true },
  { pointer: "/usage/completion_tokens", cost_per_million: 8, required: true },
  // cached tokens are in prompt_tokens already: a discount
  { pointer: "/usage/prompt_tokens_details/cached_tokens", cost_per_million: -1.5 }
)

describe("the cost of a whole answer", () => {
  it("sums each pointer's number times its price, a negative price included", () => {
    const raw = JSON.stringify({ usage: { prompt_tokens: 1000, completion_tokens: 500, prompt_tokens_details: { cached_tokens: 400 } } })
    expect(costOfResponse(openAiPrices, raw).cost).toBeCloseTo((1000 * 2 + 500 * 8 - 400 * 1.5) / 1e6, 12)
  })

  it("skips an optional pointer that finds nothing", () => {
    const raw = JSON.stringify({ usage: { prompt_tokens: 1000, completion_tokens: 500 } })
    expect(costOfResponse(openAiPrices, raw)).toEqual({ cost: (1000 * 2 + 500 * 8) / 1e6, missing: [] })
  })

  it("is unknown when a required pointer finds no number, naming it", () => {
    const raw = JSON.stringify({ usage: { prompt_tokens: 1000, completion_tokens: "500" } })
    expect(costOfResponse(openAiPrices, raw)).toEqual({ cost: undefined, missing: ["/usage/completion_tokens"] })
  })

  it("is unknown when nothing is configured, no pointer finds anything, or the answer is not JSON", () => {
    expect(costOfResponse(undefined, "{}").cost).toBeUndefined()
    expect(costOfResponse([], "{}").cost).toBeUndefined()
    expect(costOfResponse(rules({ pointer: "/usage/images", cost_per_unit: 0.04 }), "{}")).toEqual({ cost: undefined, missing: [] })
    expect(costOfResponse(rules({ pointer: "/usage/images", cost_per_unit: 0.04 }), "not json").cost).toBeUndefined()
  })

  it("prices units: images, or an array's element", () => {
    const priced = rules({ pointer: "/usage/images", cost_per_unit: 0.04 }, { pointer: "/data/1/n", cost_per_unit: 1 })
    expect(costOfResponse(priced, JSON.stringify({ usage: { images: 3 }, data: [{ n: 100 }, { n: 2 }] })).cost).toBeCloseTo(2.12, 12)
  })

  it("reads escaped pointer tokens (~1 for /, ~0 for ~)", () => {
    const priced = rules({ pointer: "/usage/a~1b~0c", cost_per_unit: 2 })
    expect(costOfResponse(priced, JSON.stringify({ usage: { "a/b~c": 5 } })).cost).toBe(10)
  })
})

describe("the cost of a stream", () => {
  it("OpenAI: the usage of the last chunk that has it", () => {
    const chunks = [
      JSON.stringify({ choices: [{ delta: { content: "Hi" } }] }),
      JSON.stringify({ choices: [], usage: { prompt_tokens: 10, completion_tokens: 20 } })
    ]
    expect(costOfChunks(openAiPrices, chunks).cost).toBeCloseTo((10 * 2 + 20 * 8) / 1e6, 12)
  })

  it("Anthropic: input tokens from message_start, output tokens from the last message_delta", () => {
    const anthropic = rules(
      { pointer: "/message/usage/input_tokens", cost_per_million: 3, required: true },
      { pointer: "/usage/output_tokens", cost_per_million: 15, required: true },
      { pointer: "/message/usage/cache_read_input_tokens", cost_per_million: 0.3 }
    )
    const chunks = [
      JSON.stringify({ type: "message_start", message: { usage: { input_tokens: 100, output_tokens: 1, cache_read_input_tokens: 50 } } }),
      JSON.stringify({ type: "content_block_delta", delta: { type: "text_delta", text: "Hi" } }),
      JSON.stringify({ type: "message_delta", usage: { output_tokens: 30 } }),
      JSON.stringify({ type: "message_delta", usage: { output_tokens: 42 } }),
      JSON.stringify({ type: "message_stop" })
    ]
    expect(costOfChunks(anthropic, chunks).cost).toBeCloseTo((100 * 3 + 42 * 15 + 50 * 0.3) / 1e6, 12)
  })

  it("is unknown when a required pointer is in no chunk", () => {
    expect(costOfChunks(openAiPrices, [JSON.stringify({ choices: [] }), "not json"])).toEqual({
      cost: undefined,
      missing: ["/usage/prompt_tokens", "/usage/completion_tokens"]
    })
  })
})

describe("cost rules in the configuration", () => {
  const provider = (cost: string) => `
[models.m]
routing = ["p"]
[models.m.providers.p]
type = "dummy"
model_name = "hello"
cost = ${cost}
`

  it("are checked and kept on the provider (per million -> per unit)", () => {
    const config = buildOk(provider(`[{ pointer = "/usage/prompt_tokens", cost_per_million = 2, required = true }, { pointer = "/usage/images", cost_per_unit = -0.5 }]`))
    expect(config.models.get("m")!.providers.get("p")!.cost).toEqual([
      { pointer: "/usage/prompt_tokens", tokens: ["usage", "prompt_tokens"], perUnit: 2 / 1e6, required: true },
      { pointer: "/usage/images", tokens: ["usage", "images"], perUnit: -0.5, required: false }
    ])
  })

  it("refuse a pointer that is not a JSON Pointer, none or both prices, and unknown keys, naming the path", () => {
    expect(buildErrors(provider(`[{ pointer = "usage.prompt_tokens", cost_per_unit = 1 }]`))).toEqual([
      `${configPath}: models.m.providers.p.cost[0].pointer: "usage.prompt_tokens" is not a JSON Pointer to a field of the raw response (it must start with "/", e.g. "/usage/prompt_tokens")`
    ])
    expect(buildErrors(provider(`[{ pointer = "/a", cost_per_unit = 1, cost_per_million = 1 }, { pointer = "/b" }]`))).toEqual([
      `${configPath}: models.m.providers.p.cost[0].cost_per_million: give exactly one of cost_per_million and cost_per_unit`,
      `${configPath}: models.m.providers.p.cost[1].cost_per_million: give exactly one of cost_per_million and cost_per_unit`
    ])
    expect(buildErrors(provider(`[{ pointer = "/a", cost_per_unit = 1, price = 2 }]`))[0]).toMatch(/models\.m\.providers\.p\.cost\[0\]\.price: unknown field/)
  })
})
