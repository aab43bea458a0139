/**
 * Variant sampling, pinning, episodes, fallbacks between variants and between providers,
 * and retries, over real HTTP with dummy models.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { v4 as uuidv4, v7 as uuidv7 } from "uuid"
import { dummyHelloText, dummyText, dummyThought } from "../../src/providers/dummy/index.ts"
import { type RunningGateway, startGateway } from "../support/gateway.ts"

const uuidV7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/
const hello = { messages: [{ role: "user", content: "Hello" }] }

const config = `
[functions.weighted]
type = "chat"
[functions.weighted.variants.heavy]
type = "chat_completion"
model = "dummy::hello"
weight = 0.8
[functions.weighted.variants.light]
type = "chat_completion"
model = "dummy::hello"
weight = 0.2
[functions.weighted.variants.dormant]
type = "chat_completion"
model = "dummy::reasoner"
weight = 0

# weights need not sum to 1
[functions.even]
type = "chat"
[functions.even.variants.left]
type = "chat_completion"
model = "dummy::hello"
weight = 3
[functions.even.variants.right]
type = "chat_completion"
model = "dummy::hello"
weight = 3

# no weights at all: every variant is sampled
[functions.unweighted]
type = "chat"
[functions.unweighted.variants.one]
type = "chat_completion"
model = "dummy::hello"
[functions.unweighted.variants.two]
type = "chat_completion"
model = "dummy::hello"

# experimentation: the candidate fails, the fallbacks are tried in order; \`unlisted\` is never sampled
[functions.experiment]
type = "chat"
[functions.experiment.variants.candidate]
type = "chat_completion"
model = "dummy::error"
[functions.experiment.variants.first_fallback]
type = "chat_completion"
model = "dummy::error"
[functions.experiment.variants.second_fallback]
type = "chat_completion"
model = "dummy::reasoner"
[functions.experiment.variants.unlisted]
type = "chat_completion"
model = "dummy::hello"
[functions.experiment.experimentation]
type = "static"
candidate_variants = ["candidate"]
fallback_variants = ["first_fallback", "second_fallback"]

[functions.fallback]
type = "chat"
[functions.fallback.variants.broken]
type = "chat_completion"
model = "dummy::error"
weight = 0.5
[functions.fallback.variants.healthy]
type = "chat_completion"
model = "dummy::reasoner"
weight = 0.5

[functions.all_fail]
type = "chat"
[functions.all_fail.variants.first]
type = "chat_completion"
model = "dummy::error"
weight = 1
[functions.all_fail.variants.second]
type = "chat_completion"
model = "broken_pair"
weight = 1

[functions.single_fail]
type = "chat"
[functions.single_fail.variants.only]
type = "chat_completion"
model = "dummy::error"

[models.with_backup]
routing = ["primary", "secondary"]
[models.with_backup.providers.primary]
type = "dummy"
model_name = "error"
[models.with_backup.providers.secondary]
type = "dummy"
model_name = "reasoner"

[functions.provider_fallback]
type = "chat"
[functions.provider_fallback.variants.only]
type = "chat_completion"
model = "with_backup"

[models.broken_pair]
routing = ["p1", "p2"]
[models.broken_pair.providers.p1]
type = "dummy"
model_name = "error"
[models.broken_pair.providers.p2]
type = "dummy"
model_name = "error"

[functions.providers_fail]
type = "chat"
[functions.providers_fail.variants.only]
type = "chat_completion"
model = "broken_pair"

[models.flaky_for_retries]
routing = ["flaky"]
[models.flaky_for_retries.providers.flaky]
type = "dummy"
model_name = "flaky"

[functions.retried]
type = "chat"
[functions.retried.variants.only]
type = "chat_completion"
model = "flaky_for_retries"
retries = { num_retries = 1, max_delay_s = 0.05 }

[models.flaky_without_retries]
routing = ["flaky"]
[models.flaky_without_retries.providers.flaky]
type = "dummy"
model_name = "flaky"

[functions.not_retried]
type = "chat"
[functions.not_retried.variants.only]
type = "chat_completion"
model = "flaky_without_retries"
`

/** the variant each of `bodies` was answered by, sent a few at a time */
const variantsOf = async (gateway: RunningGateway, bodies: ReadonlyArray<Record<string, unknown>>): Promise<Array<string>> => {
  const variants: Array<string> = []
  for (let start = 0; start < bodies.length; start += 25) {
    const responses = await Promise.all(bodies.slice(start, start + 25).map((body) => gateway.post("/inference", { input: hello, ...body })))
    for (const response of responses) {
      expect(response.status, JSON.stringify(response.body)).toBe(200)
      variants.push(response.body.variant_name)
    }
  }
  return variants
}

const count = (values: ReadonlyArray<string>, value: string) => values.filter((v) => v === value).length

describe("routing between variants and providers", () => {
  let gateway: RunningGateway
  beforeAll(async () => {
    gateway = await startGateway({ config })
  })
  afterAll(async () => {
    await gateway?.stop()
  })

  const infer = (body: Record<string, unknown>) => gateway.post("/inference", { input: hello, ...body })

  describe("pinning with variant_name", () => {
    it("always uses the pinned variant", async () => {
      const variants = await variantsOf(gateway, Array.from({ length: 20 }, () => ({ function_name: "weighted", variant_name: "light" })))
      expect(new Set(variants)).toEqual(new Set(["light"]))
    })

    it("uses a weight-0 variant when pinned", async () => {
      const response = await infer({ function_name: "weighted", variant_name: "dormant" })
      expect(response.status).toBe(200)
      expect(response.body.variant_name).toBe("dormant")
      expect(response.body.content[0]).toEqual({ type: "thought", text: dummyThought, provider_type: "dummy" })
    })

    it("answers 404 naming an unknown variant", async () => {
      const response = await infer({ function_name: "weighted", variant_name: "missing" })
      expect(response.status).toBe(404)
      expect(response.body.error).toContain('"missing"')
      expect(response.body.error).toContain('"weighted"')
    })

    it("does not try other variants when the pinned one fails", async () => {
      const response = await infer({ function_name: "fallback", variant_name: "broken" })
      expect(response.status).toBe(502)
      expect(response.body.error).toContain("Error sending request to Dummy provider for model 'error'.")
    })

    it("refuses variant_name with model_name", async () => {
      const response = await infer({ model_name: "dummy::hello", variant_name: "dummy::hello" })
      expect(response.status).toBe(400)
      expect(response.body.error).toMatch(/variant_name/)
    })
  })

  describe("sampling by weight", () => {
    it("respects 0.8/0.2 over 200 fresh episodes, and never samples a weight-0 variant", async () => {
      const variants = await variantsOf(gateway, Array.from({ length: 200 }, () => ({ function_name: "weighted" })))
      const heavy = count(variants, "heavy")
      const light = count(variants, "light")
      expect(count(variants, "dormant")).toBe(0)
      expect(heavy + light).toBe(200)
      // expected 160 (sd ~5.7): anything within ~5 sd passes; uniform sampling would give ~100
      expect(heavy).toBeGreaterThanOrEqual(130)
      expect(heavy).toBeLessThanOrEqual(190)
    })

    it("normalises weights that do not sum to 1", async () => {
      const variants = await variantsOf(gateway, Array.from({ length: 100 }, () => ({ function_name: "even" })))
      // expected 50 (sd 5)
      expect(count(variants, "left")).toBeGreaterThanOrEqual(28)
      expect(count(variants, "left")).toBeLessThanOrEqual(72)
    })

    it("samples every variant when none has a weight", async () => {
      const variants = await variantsOf(gateway, Array.from({ length: 60 }, () => ({ function_name: "unweighted" })))
      expect(count(variants, "one")).toBeGreaterThan(0)
      expect(count(variants, "two")).toBeGreaterThan(0)
    })

    it("gives the same episode the same variant every time", async () => {
      const first = await Promise.all(Array.from({ length: 20 }, () => infer({ function_name: "even" })))
      const episodes = first.map((response) => [response.body.episode_id as string, response.body.variant_name as string] as const)
      // with 20 episodes at 50/50, both variants appear (the odds against are 1 in 500,000)
      expect(new Set(episodes.map(([, variant]) => variant))).toEqual(new Set(["left", "right"]))
      for (const [episodeId, variant] of episodes) {
        const again = await variantsOf(gateway, Array.from({ length: 5 }, () => ({ function_name: "even", episode_id: episodeId })))
        expect(again, `episode ${episodeId}`).toEqual(Array(5).fill(variant))
      }
    })

    it("gives a gateway-issued episode id sent by the client the same variant every time", async () => {
      const episodeId = uuidv7()
      const variants = await variantsOf(gateway, Array.from({ length: 10 }, () => ({ function_name: "weighted", episode_id: episodeId })))
      expect(new Set(variants).size).toBe(1)
    })
  })

  describe("episodes", () => {
    it("returns a new UUIDv7 episode_id when none (or null) is given", async () => {
      const [absent, nulled] = await Promise.all([infer({ function_name: "even" }), infer({ function_name: "even", episode_id: null })])
      expect(absent.body.episode_id).toMatch(uuidV7)
      expect(nulled.status).toBe(200)
      expect(nulled.body.episode_id).toMatch(uuidV7)
      expect(nulled.body.episode_id).not.toBe(absent.body.episode_id)
    })

    it("keeps a returned episode_id that is sent back, with a new inference_id", async () => {
      const first = await infer({ function_name: "even" })
      const second = await infer({ function_name: "even", episode_id: first.body.episode_id })
      expect(second.status).toBe(200)
      expect(second.body.episode_id).toBe(first.body.episode_id)
      expect(second.body.inference_id).not.toBe(first.body.inference_id)
      expect(second.body.inference_id).toMatch(uuidV7)
    })

    it("answers 400 naming episode_id when it is not a UUIDv7", async () => {
      for (const episodeId of [uuidv4(), "not-a-uuid", "", "01234567-89ab-7def-0123-456789abcdefg"]) {
        const response = await infer({ function_name: "even", episode_id: episodeId })
        expect(response.status, episodeId).toBe(400)
        expect(response.body.error).toMatch(/^episode_id: /)
      }
    })
  })

  describe("fallbacks", () => {
    it("falls back to the next variant when the sampled one fails", async () => {
      // half the episodes sample `broken` first: every one must still be answered by `healthy`
      const variants = await variantsOf(gateway, Array.from({ length: 40 }, () => ({ function_name: "fallback" })))
      expect(new Set(variants)).toEqual(new Set(["healthy"]))
    })

    it("with experimentation, tries the candidates and then the fallbacks in order, never an unlisted variant", async () => {
      const variants = await variantsOf(gateway, Array.from({ length: 20 }, () => ({ function_name: "experiment" })))
      expect(new Set(variants)).toEqual(new Set(["second_fallback"]))
      const pinned = await infer({ function_name: "experiment", variant_name: "unlisted" })
      expect(pinned.body.variant_name).toBe("unlisted")
    })

    it("answers 502 listing every variant when all fail", async () => {
      const response = await infer({ function_name: "all_fail" })
      expect(response.status).toBe(502)
      expect(Object.keys(response.body)).toEqual(["error"])
      expect(response.body.error).toContain('variant "first"')
      expect(response.body.error).toContain('variant "second"')
      expect(response.body.error).toContain('provider "p1"')
      expect(response.body.error).toContain('provider "p2"')
      expect(response.body.error).toContain("Error sending request to Dummy provider for model 'error'.")
    })

    it("answers a single failing variant with its own 502", async () => {
      const response = await infer({ function_name: "single_fail" })
      expect(response.status).toBe(502)
      expect(response.body.error).toMatch(/^every provider of model "dummy::error" failed/)
      expect(response.body.error).not.toContain("every variant failed")
    })

    it("falls back to the next provider of the model", async () => {
      const response = await infer({ function_name: "provider_fallback" })
      expect(response.status).toBe(200)
      expect(response.body.variant_name).toBe("only")
      // only the secondary (a reasoner) answers with a thought
      expect(response.body.content).toEqual([{ type: "thought", text: dummyThought, provider_type: "dummy" }, { type: "text", text: dummyText }])
    })

    it("answers 502 listing every provider when all providers of the model fail", async () => {
      const response = await infer({ function_name: "providers_fail" })
      expect(response.status).toBe(502)
      expect(response.body.error).toContain('model "broken_pair"')
      expect(response.body.error).toContain('provider "p1"')
      expect(response.body.error).toContain('provider "p2"')
    })
  })

  describe("retries", () => {
    it("a flaky model succeeds every time with one retry", async () => {
      for (let i = 0; i < 6; i++) {
        const response = await infer({ function_name: "retried" })
        expect(response.status, JSON.stringify(response.body)).toBe(200)
        expect(response.body.content).toEqual([{ type: "text", text: dummyHelloText }])
      }
    })

    it("without retries, the same flaky model fails every other time", async () => {
      const statuses: Array<number> = []
      for (let i = 0; i < 4; i++) statuses.push((await infer({ function_name: "not_retried" })).status)
      expect([[502, 200, 502, 200], [200, 502, 200, 502]]).toContainEqual(statuses)
    })
  })
})
