import * as Effect from "effect/Effect"
import { describe, expect, it } from "vitest"
import { InvalidRequest, RateLimited, ServiceUnavailable } from "../../src/errors.ts"
import type { ModelRequest } from "../../src/inference/types.ts"
import { StoreError } from "../../src/storeError.ts"
import { reserve, settle } from "../../src/ratelimit/limiter.ts"
import { applicableRules, describeLimit, jsonLength, plannedBuckets, type RateLimitRule } from "../../src/ratelimit/rules.ts"
import type { RateLimitBuckets, ConsumeResult } from "../../src/ratelimit/store.ts"
import type { BucketRequest } from "../../src/ratelimit/rules.ts"
import { buildErrors, buildOk, configPath } from "./fixtures.ts"

const rulesOf = (toml: string) => buildOk(toml).rateLimiting.rules

const rules = rulesOf(`
[[rate_limiting.rules]]
priority = 0
model_inferences_per_minute = 10
scope = [{ api_key_public_id = "gateway::each" }]

[[rate_limiting.rules]]
priority = 5
model_inferences_per_minute = { capacity = 100, refill_rate = 50 }
scope = [{ api_key_public_id = "aaaaaaaaaaaa" }]

[[rate_limiting.rules]]
priority = 0
tokens_per_hour = 1000
scope = [{ tag_key = "user", tag_value = "gateway::each" }]

[[rate_limiting.rules]]
priority = -1
model_inferences_per_second = 2
`)

describe("rate limit rules from the configuration", () => {
  it("turns a number into a bucket of that capacity refilled over the period, and a table into both", () => {
    expect(rules[0].limits).toEqual([{ resource: "model_inferences", period: "minute", capacity: 10, refillPerSecond: 10 / 60 }])
    expect(rules[1].limits).toEqual([{ resource: "model_inferences", period: "minute", capacity: 100, refillPerSecond: 50 / 60 }])
    expect(describeLimit(rules[1].limits[0])).toBe("100 model inferences (refilled at 50 per minute)")
    expect(describeLimit(rules[2].limits[0])).toBe("1000 tokens per hour")
  })

  it("gives a rule a stable id that changes with its definition", () => {
    const rule = (priority: number) => rulesOf(`[[rate_limiting.rules]]\npriority = ${priority}\nmodel_inferences_per_minute = 10\n`)[0]
    expect(rule(0).id).toMatch(/^[0-9a-f]{16}$/)
    expect(rule(0).id).toBe(rule(0).id)
    expect(rule(1).id).not.toBe(rule(0).id)
  })

  it("refuses a rule without limits, a bad public id and unknown keys, naming the path", () => {
    expect(buildErrors(`[[rate_limiting.rules]]\npriority = 0\n`)).toEqual([
      `${configPath}: rate_limiting.rules[0]: a rule needs at least one limit, such as model_inferences_per_minute, tokens_per_hour or cost_per_day`
    ])
    expect(buildErrors(`[[rate_limiting.rules]]\npriority = 0\ntokens_per_day = 5\nscope = [{ api_key_public_id = "short" }]\n`)).toEqual([
      `${configPath}: rate_limiting.rules[0].scope[0].api_key_public_id: expected a 12-character public id or "gateway::each", got "short"`
    ])
    expect(buildErrors(`[[rate_limiting.rules]]\npriority = 0\ntokens_per_fortnight = 5\n`)[0]).toMatch(/rate_limiting\.rules\[0\]\.tokens_per_fortnight: unknown field/)
  })
})

describe("applicableRules", () => {
  it("picks the rules that match with the highest priority", () => {
    const ids = (request: Parameters<typeof applicableRules>[1]) => applicableRules(rules, request).map((rule) => rule.index)
    // a key of its own with a higher priority overrides the each-rule
    expect(ids({ publicId: "aaaaaaaaaaaa", workspace: "default", tags: {} })).toEqual([1])
    // any other key: the each-rule and the tag rule share priority 0
    expect(ids({ publicId: "bbbbbbbbbbbb", workspace: "default", tags: { user: "ada" } })).toEqual([0, 2])
    // no key, no tag: only the catch-all rule
    expect(ids({ workspace: "default", tags: {} })).toEqual([3])
  })

  it("plans one bucket per key, per tag value, or one for all", () => {
    const total = rulesOf(`[[rate_limiting.rules]]\npriority = 0\nmodel_inferences_per_minute = 1\nscope = [{ tag_key = "team", tag_value = "gateway::total" }]\n`)
    const keyOf = (rule: RateLimitRule, request: Parameters<typeof plannedBuckets>[1]) => plannedBuckets([rule], request, 0)[0].request.key
    expect(keyOf(rules[0], { publicId: "bbbbbbbbbbbb", workspace: "default", tags: {} })).not.toBe(keyOf(rules[0], { publicId: "cccccccccccc", workspace: "default", tags: {} }))
    expect(keyOf(rules[2], { workspace: "default", tags: { user: "a" } })).not.toBe(keyOf(rules[2], { workspace: "default", tags: { user: "b" } }))
    expect(keyOf(total[0], { workspace: "default", tags: { team: "a" } })).toBe(keyOf(total[0], { workspace: "default", tags: { team: "b" } }))
    expect(plannedBuckets([rules[2]], { workspace: "default", tags: { user: "a" } }, 123)[0].request.amount).toBe(123)
    expect(plannedBuckets([rules[0]], { publicId: "x", workspace: "default", tags: {} }, 123)[0].request.amount).toBe(1)
  })

  it("scopes a rule to one workspace, or gives each workspace a bucket of its own", () => {
    const [named, each] = rulesOf(
      `[[rate_limiting.rules]]\npriority = 0\nmodel_inferences_per_minute = 1\nscope = [{ workspace = "acme" }]\n` +
        `[[rate_limiting.rules]]\npriority = 0\nmodel_inferences_per_minute = 1\nscope = [{ workspace = "gateway::each" }]\n`
    )
    const ids = (workspace: string) => applicableRules([named, each], { workspace, tags: {} }).map((rule) => rule.index)
    expect(ids("acme")).toEqual([0, 1])
    expect(ids("globex")).toEqual([1])
    const keyOf = (workspace: string) => plannedBuckets([each], { workspace, tags: {} }, 0)[0].request.key
    expect(keyOf("acme")).not.toBe(keyOf("globex"))
    expect(keyOf("acme")).toBe(keyOf("acme"))
    expect(buildErrors(`[[rate_limiting.rules]]\npriority = 0\ntokens_per_day = 5\nscope = [{ workspace = "a b" }]\n`)).toEqual([
      `${configPath}: rate_limiting.rules[0].scope[0].workspace: expected a workspace name (1 to 64 characters among letters, digits, \`_\`, \`-\` and \`.\`, not only dots) or "gateway::each", got "a b"`
    ])
  })
})

/** a store that records what it was asked and answers as told: the limiter's logic, not a database */
const recordingStore = (answer: (requests: ReadonlyArray<BucketRequest>) => ConsumeResult | StoreError) => {
  const consumed: Array<ReadonlyArray<BucketRequest>> = []
  const adjusted: Array<ReadonlyArray<BucketRequest>> = []
  const store: RateLimitBuckets = {
    backend: "postgres",
    consume: (requests) => {
      consumed.push(requests)
      const result = answer(requests)
      return result instanceof StoreError ? Effect.fail(result) : Effect.succeed(result)
    },
    adjust: (requests) => Effect.sync(() => void adjusted.push(requests))
  }
  return { store, consumed, adjusted }
}

const request = (maxTokens?: number): ModelRequest => ({
  system: "x".repeat(40),
  messages: [],
  params: maxTokens === undefined ? {} : { max_tokens: maxTokens },
  functionType: "chat",
  jsonMode: "off",
  providerTools: []
})

const run = <A, E>(effect: Effect.Effect<A, E>) => Effect.runPromise(Effect.result(effect))

describe("reserve and settle", () => {
  const tokenRules = rulesOf(`[[rate_limiting.rules]]\npriority = 0\ntokens_per_minute = 1000\nmodel_inferences_per_minute = 5\n`)

  it("needs max_tokens under a token limit", async () => {
    const { store } = recordingStore(() => ({ ok: true }))
    const result = await run(reserve({ rules: tokenRules, store }, { workspace: "default", tags: {} }, request()))
    expect(result._tag).toBe("Failure")
    expect((result as any).failure).toBeInstanceOf(InvalidRequest)
    expect((result as any).failure.message).toMatch(/^max_tokens: rate_limiting\.rules\[0\] limits tokens/)
  })

  it("borrows the input estimate plus max_tokens, then settles the difference", async () => {
    const { store, consumed, adjusted } = recordingStore(() => ({ ok: true }))
    const result = await run(reserve({ rules: tokenRules, store }, { workspace: "default", tags: {} }, request(100)))
    const promptTokens = Math.ceil(("x".repeat(40) + "[]").length / 4)
    expect(consumed[0].map((bucket) => bucket.amount)).toEqual([1, promptTokens + 100])
    await Effect.runPromise(settle((result as any).success, { input_tokens: 10, output_tokens: 10 }))
    expect(adjusted[0].map((bucket) => bucket.amount)).toEqual([20 - (promptTokens + 100)])
  })

  it("answers 429 naming the rule, the scope and what is left, with a retry time", async () => {
    const { store } = recordingStore(() => ({ ok: false, index: 0, available: 0.4, retryAfterS: 6.2 }))
    const result = await run(reserve({ rules, store }, { publicId: "bbbbbbbbbbbb", workspace: "default", tags: {} }, request()))
    const failure = (result as any).failure
    expect(failure).toBeInstanceOf(RateLimited)
    expect(failure.retryAfterS).toBe(7)
    expect(failure.message).toBe(
      "rate limit exceeded: rate_limiting.rules[0] (priority 0) for api_key_public_id=bbbbbbbbbbbb: 0 of 10 model inferences per minute available, this call needs 1, retry in 7 s"
    )
  })

  it("answers 503 when the store does not answer, and passes requests no rule covers without asking it", async () => {
    const keyRules = rules.slice(0, 2)
    const { store, consumed } = recordingStore(() => new StoreError({ message: "connect ECONNREFUSED" }))
    const down = await run(reserve({ rules: keyRules, store }, { publicId: "bbbbbbbbbbbb", workspace: "default", tags: {} }, request()))
    expect((down as any).failure).toBeInstanceOf(ServiceUnavailable)
    expect((down as any).failure.message).toMatch(/rate limit store \(postgres\) is unavailable.*ECONNREFUSED/)
    const free = await run(reserve({ rules: keyRules, store }, { workspace: "default", tags: {} }, request()))
    expect(free._tag).toBe("Success")
    expect((free as any).success).toBeUndefined()
    expect(consumed).toHaveLength(1)
  })
})

describe("cost limits", () => {
  const costRules = rulesOf(`
[rate_limiting]
default_cost = 0.25
[[rate_limiting.rules]]
always = true
cost_per_day = 10
tokens_per_day = 100000
`)

  it("read cost_per_<period> and default_cost from the configuration", () => {
    expect(costRules[0].limits).toContainEqual({ resource: "cost", period: "day", capacity: 10, refillPerSecond: 10 / 86_400 })
    expect(describeLimit(costRules[0].limits.find((limit) => limit.resource === "cost")!)).toBe("10 cost per day")
    expect(buildOk(`[rate_limiting]\ndefault_cost = 0.25\n`).rateLimiting.defaultCost).toBe(0.25)
    expect(buildOk(``).rateLimiting.defaultCost).toBe(0)
    expect(buildErrors(`[rate_limiting]\ndefault_cost = -1\n`)[0]).toMatch(/rate_limiting\.default_cost: /)
  })

  it("borrow default_cost up front, then settle with the call's cost, default_cost when it reported none, nothing when it failed", async () => {
    const limits = (store: RateLimitBuckets) => ({ rules: costRules, store, defaultCost: 0.25 })
    const { store, consumed, adjusted } = recordingStore(() => ({ ok: true }))
    const reserved = async () => (await run(reserve(limits(store), { workspace: "default", tags: {} }, request(10))) as any).success
    const first = await reserved()
    // the buckets: tokens then cost, in the rule's order of limits
    expect(consumed[0].map((bucket) => bucket.amount).at(-1)).toBe(0.25)
    await Effect.runPromise(settle(first, { input_tokens: 1, output_tokens: 1 }, 1.5))
    expect(adjusted.at(-1)!.at(-1)!.amount).toBe(1.25)
    const second = await reserved()
    await Effect.runPromise(settle(second, { input_tokens: 1, output_tokens: 1 }, undefined))
    // reported none: charged default_cost, which was borrowed already (no adjustment of the cost bucket)
    expect(adjusted.flat().filter((bucket) => bucket.key.includes(":cost:"))).toHaveLength(1)
    const third = await reserved()
    await Effect.runPromise(settle(third, undefined))
    expect(adjusted.at(-1)!.at(-1)!.amount).toBe(-0.25)
  })
})

describe("jsonLength (the prompt's size for the token estimate)", () => {
  it("is the length of the JSON text, without making it, for values without escapes", () => {
    const values: ReadonlyArray<unknown> = [
      "plain",
      [],
      {},
      [1, 2.5, -3, true, false, null],
      { role: "user", content: [{ type: "text", text: "hello there" }, { type: "tool_call", arguments: { a: [1, { b: null }] } }] },
      [{ role: "assistant", content: "x".repeat(10_000) }]
    ]
    for (const value of values) expect(jsonLength(value)).toBe(JSON.stringify(value).length)
  })

  it("leaves out keys whose value is undefined, as JSON does", () => {
    expect(jsonLength({ a: 1, b: undefined })).toBe(JSON.stringify({ a: 1, b: undefined }).length)
  })
})
