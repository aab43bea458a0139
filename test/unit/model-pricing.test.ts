/**
 * `pricing = {...}` on a model or a provider: expanded into the provider type's cost rules, then
 * applied to each codec's recorded raw answers (the fixtures the codec tests replay), whole and
 * streamed, with cache reads and writes priced as the provider reports them.
 */
import { readFileSync } from "node:fs"
import { describe, expect, it } from "vitest"
import type { ProviderConfig } from "../../src/config/types.ts"
import { costOfChunks, costOfResponse } from "../../src/inference/pricing.ts"
import { build, buildErrors, buildOk, configPath } from "./fixtures.ts"

const fixture = (path: string) => JSON.parse(readFileSync(new URL(`../../src/providers/${path}`, import.meta.url), "utf8"))
const wholeBody = (path: string) => JSON.stringify(fixture(path).body)
/** the `data:` payloads of a recorded SSE stream, as the runner keeps them as raw chunks */
const sseChunks = (path: string): ReadonlyArray<string> =>
  readFileSync(new URL(`../../src/providers/${path}`, import.meta.url), "utf8")
    .split("\n")
    .filter((line) => line.startsWith("data: ") && line !== "data: [DONE]")
    .map((line) => line.slice("data: ".length))

const pricing = "{ input_per_million = 2, output_per_million = 8, cache_read_per_million = 0.5, cache_write_per_million = 2.5 }"
const perM = (n: number) => n / 1e6

const providerOf = (table: string, modelPricing = pricing): ProviderConfig =>
  buildOk(`
[models.m]
routing = ["p"]
pricing = ${modelPricing}
[models.m.providers.p]
${table}
`).models.get("m")!.providers.get("p")!

describe("pricing, expanded per provider type", () => {
  it("openai chat completions: prompt, completion, cached tokens at (cache_read - input); whole and streamed", () => {
    const provider = providerOf(`type = "openai"\nmodel_name = "gpt-4o-mini"`)
    expect(provider.prices).toEqual({ inputPerMillion: 2, outputPerMillion: 8, cacheReadPerMillion: 0.5, cacheWritePerMillion: 2.5 })
    expect(costOfResponse(provider.cost, wholeBody("openai/fixtures/responses/text.json")).cost).toBeCloseTo(perM(19 * 2 + 10 * 8), 12)
    const cached = fixture("openai/fixtures/responses/text.json").body
    cached.usage.prompt_tokens = 2000
    cached.usage.prompt_tokens_details.cached_tokens = 1500
    expect(costOfResponse(provider.cost, JSON.stringify(cached)).cost).toBeCloseTo(perM(500 * 2 + 1500 * 0.5 + 10 * 8), 12)
    expect(costOfChunks(provider.cost, sseChunks("openai/fixtures/streams/text.sse")).cost).toBeCloseTo(perM(14 * 2 + 6 * 8), 12)
  })

  it("openai with api_type = responses: the Responses API's usage, in the whole answer and in response.completed", () => {
    const provider = providerOf(`type = "openai"\nmodel_name = "gpt-5"\napi_type = "responses"`)
    expect(costOfResponse(provider.cost, wholeBody("openai/responses/fixtures/responses/text.json")).cost).toBeCloseTo(
      perM(176 * 2 + 1024 * 0.5 + 9 * 8),
      12
    )
    expect(costOfChunks(provider.cost, sseChunks("openai/responses/fixtures/streams/text.sse")).cost).toBeCloseTo(perM(37 * 2 + 11 * 8), 12)
  })

  it("anthropic: input, output, cache reads and cache writes apart; in a stream from message_start and message_delta", () => {
    const provider = providerOf(`type = "anthropic"\nmodel_name = "claude-sonnet-4-5"`)
    expect(costOfResponse(provider.cost, wholeBody("anthropic/fixtures/responses/cache-usage.json")).cost).toBeCloseTo(
      perM(8 * 2 + 5 * 8 + 3000 * 0.5 + 100 * 2.5),
      12
    )
    // message_start: input 25 (no cache), message_delta: output 15
    expect(costOfChunks(provider.cost, sseChunks("anthropic/fixtures/streams/text.sse")).cost).toBeCloseTo(perM(25 * 2 + 15 * 8), 12)
    const cachedStream = [
      JSON.stringify({ type: "message_start", message: { usage: { input_tokens: 4, cache_creation_input_tokens: 200, cache_read_input_tokens: 1000, output_tokens: 1 } } }),
      JSON.stringify({ type: "message_delta", delta: { stop_reason: "end_turn" }, usage: { input_tokens: 4, output_tokens: 30 } }),
      JSON.stringify({ type: "message_stop" })
    ]
    // the delta's own input_tokens is not counted twice: stream rules read message_start's
    expect(costOfChunks(provider.cost, cachedStream).cost).toBeCloseTo(perM(4 * 2 + 30 * 8 + 1000 * 0.5 + 200 * 2.5), 12)
  })

  it("gemini: prompt (cached content within it), candidates and thoughts as output; streams read the last usageMetadata", () => {
    const provider = providerOf(`type = "google_ai_studio_gemini"\nmodel_name = "gemini-2.5-flash"`)
    expect(costOfResponse(provider.cost, wholeBody("gemini/fixtures/responses/cached-usage.json")).cost).toBeCloseTo(
      perM(500 * 2 + 1500 * 0.5 + 10 * 8),
      12
    )
    expect(costOfResponse(provider.cost, wholeBody("gemini/fixtures/responses/thoughts.json")).cost).toBeCloseTo(perM(10 * 2 + 25 * 8), 12)
    expect(costOfChunks(provider.cost, sseChunks("gemini/fixtures/streams/text.sse")).cost).toBeCloseTo(perM(9 * 2 + 6 * 8), 12)
  })

  it("aws_bedrock: Converse usage, cache reads and writes apart; the stream's metadata event", () => {
    const provider = providerOf(`type = "aws_bedrock"\nmodel_id = "anthropic.claude-3-haiku"\nregion = "us-east-1"`)
    expect(costOfResponse(provider.cost, wholeBody("aws/fixtures/responses/bedrock-text.json")).cost).toBeCloseTo(
      perM(12 * 2 + 8 * 8 + 5 * 0.5),
      12
    )
    const payloads = (fixture("aws/fixtures/streams/bedrock-text.json").messages as ReadonlyArray<{ payload: unknown }>).map((message) =>
      JSON.stringify(message.payload)
    )
    expect(costOfChunks(provider.cost, payloads).cost).toBeCloseTo(perM(9 * 2 + 4 * 8 + 3 * 0.5), 12)
  })

  it("deepseek: prompt_cache_hit_tokens within prompt_tokens", () => {
    const provider = providerOf(`type = "deepseek"\nmodel_name = "deepseek-reasoner"`)
    const usage = fixture("deepseek/fixtures/responses/reasoning.json").body.usage
    expect(costOfResponse(provider.cost, wholeBody("deepseek/fixtures/responses/reasoning.json")).cost).toBeCloseTo(
      perM((usage.prompt_tokens - usage.prompt_cache_hit_tokens) * 2 + usage.prompt_cache_hit_tokens * 0.5 + usage.completion_tokens * 8),
      12
    )
  })

  it("mistral and the OpenAI-compatible members read the chat completions usage", () => {
    const provider = providerOf(`type = "mistral"\nmodel_name = "mistral-small-latest"`)
    expect(costOfChunks(provider.cost, sseChunks("mistral/fixtures/streams/text.sse")).cost).toBeCloseTo(perM(8 * 2 + 2 * 8), 12)
    const vllm = providerOf(`type = "vllm"\nmodel_name = "m"\napi_base = "http://127.0.0.1:1/v1"`)
    expect(costOfResponse(vllm.cost, wholeBody("openai/fixtures/responses/text.json")).cost).toBeCloseTo(perM(19 * 2 + 10 * 8), 12)
  })

  it("dummy: its whole answers' usage", () => {
    const provider = providerOf(`type = "dummy"\nmodel_name = "good"`)
    expect(costOfResponse(provider.cost, JSON.stringify({ output: [], usage: { input_tokens: 10, output_tokens: 1 } })).cost).toBeCloseTo(
      perM(10 * 2 + 8),
      12
    )
  })

  it("cache prices default to the input price: no discount rule, cache writes at the input price", () => {
    const provider = providerOf(`type = "anthropic"\nmodel_name = "c"`, "{ input_per_million = 3, output_per_million = 15 }")
    expect(costOfResponse(provider.cost, wholeBody("anthropic/fixtures/responses/cache-usage.json")).cost).toBeCloseTo(
      perM((8 + 3000 + 100) * 3 + 5 * 15),
      12
    )
    const openai = providerOf(`type = "openai"\nmodel_name = "g"`, "{ input_per_million = 3, output_per_million = 15 }")
    expect(openai.cost!.map((rule) => rule.pointer)).toEqual(["/usage/prompt_tokens", "/usage/completion_tokens"])
  })
})

describe("pricing in the configuration", () => {
  const table = (body: string) => `
[models.m]
routing = ["p"]
${body}
`
  it("a provider's pricing overrides its model's", () => {
    const config = buildOk(table(`pricing = { input_per_million = 1, output_per_million = 1 }
[models.m.providers.p]
type = "openai"
model_name = "g"
pricing = { input_per_million = 4, output_per_million = 16 }`))
    const provider = config.models.get("m")!.providers.get("p")!
    expect(provider.prices).toEqual({ inputPerMillion: 4, outputPerMillion: 16, cacheReadPerMillion: undefined, cacheWritePerMillion: undefined })
    expect(costOfResponse(provider.cost, wholeBody("openai/fixtures/responses/text.json")).cost).toBeCloseTo(perM(19 * 4 + 10 * 16), 12)
  })

  it("a provider's pricing alone prices it", () => {
    const provider = buildOk(table(`[models.m.providers.p]
type = "openai"
model_name = "g"
pricing = { input_per_million = 4, output_per_million = 16 }`)).models.get("m")!.providers.get("p")!
    expect(costOfResponse(provider.cost, wholeBody("openai/fixtures/responses/text.json")).cost).toBeCloseTo(perM(19 * 4 + 10 * 16), 12)
  })

  it("explicit cost rules win over pricing (the prices are kept for the budgets' estimate)", () => {
    const provider = buildOk(table(`pricing = { input_per_million = 1, output_per_million = 1 }
[models.m.providers.p]
type = "openai"
model_name = "g"
cost = [{ pointer = "/usage/total_tokens", cost_per_unit = 1 }]`)).models.get("m")!.providers.get("p")!
    expect(provider.cost!.map((rule) => rule.pointer)).toEqual(["/usage/total_tokens"])
    expect(provider.prices?.inputPerMillion).toBe(1)
  })

  it("refuses a type without built-in usage pointers, naming the field and saying to write cost rules", () => {
    expect(buildErrors(table(`pricing = { input_per_million = 1, output_per_million = 1 }
[models.m.providers.p]
type = "gateway"
gateway_url = "http://127.0.0.1:1"
model_name = "x"`))).toEqual([
      expect.stringMatching(
        new RegExp(`^${configPath}: models\\.m\\.pricing: provider "p": the gateway provider type has no built-in usage pointers .*write \`cost\` rules`)
      )
    ])
  })

  it("refuses a negative or missing price, and pricing on an embedding model, naming the field", () => {
    expect(buildErrors(table(`pricing = { input_per_million = -1, output_per_million = 1 }
[models.m.providers.p]
type = "openai"
model_name = "g"`)).join("\n")).toMatch(/models\.m\.pricing\.input_per_million/)
    expect(buildErrors(table(`[models.m.providers.p]
type = "openai"
model_name = "g"
pricing = { input_per_million = 1 }`)).join("\n")).toMatch(/models\.m\.providers\.p\.pricing\.output_per_million/)
    expect(buildErrors(`
[embedding_models.e]
routing = ["p"]
[embedding_models.e.providers.p]
type = "openai"
model_name = "text-embedding-3-small"
pricing = { input_per_million = 1, output_per_million = 1 }
`).join("\n")).toMatch(/embedding_models\.e\.providers\.p\.pricing: pricing applies to the providers of \[models\] only/)
  })

  it("warns when cache_write_per_million is given for a type that reports no cache writes", () => {
    const result = build(table(`pricing = { input_per_million = 1, output_per_million = 1, cache_write_per_million = 2 }
[models.m.providers.p]
type = "openai"
model_name = "g"`))
    expect("config" in result ? result.warnings : []).toEqual([
      expect.stringMatching(/models\.m\.providers\.p\.pricing: the openai provider type reports no cache writes/)
    ])
  })
})
