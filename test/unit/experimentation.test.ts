/**
 * `[functions.<fn>.experimentation]` with `type = "static"` (and TensorZero's `uniform` and
 * `static_weights`): the configuration checked with the key path at fault, and the order of
 * variants an inference tries: candidates drawn by weight (statistically checked), then the
 * fallbacks in order, never a variant named in neither unless it is pinned. `type = "adaptive"`
 * (and `track_and_stop`): its settings with TensorZero's defaults, checked with the key path at
 * fault, and the order drawn with an experiment's probabilities (or uniformly before any).
 */
import * as Result from "effect/Result"
import { describe, expect, it } from "vitest"
import type { InferenceRequest } from "../../src/api/inference.ts"
import { ModelTable } from "../../src/inference/models.ts"
import { prepareInference } from "../../src/inference/prepare.ts"
import { seededRandom, variantOrder } from "../../src/inference/variantDraw.ts"
import { uuidv7 } from "../../src/ids.ts"
import { build, buildErrors, buildOk } from "./fixtures.ts"

const functionWith = (experimentation: string, weights = false) => `
[functions.draft]
type = "chat"
[functions.draft.variants.a]
type = "chat_completion"
model = "dummy::hello"
${weights ? "weight = 5" : ""}
[functions.draft.variants.b]
type = "chat_completion"
model = "dummy::hello"
[functions.draft.variants.c]
type = "chat_completion"
model = "dummy::hello"
[functions.draft.variants.spare]
type = "chat_completion"
model = "dummy::hello"
[functions.draft.variants.pinned_only]
type = "chat_completion"
model = "dummy::hello"

[functions.draft.experimentation]
${experimentation}
`

const firsts = (toml: string, n = 20_000) => {
  const fn = buildOk(toml).functions.get("draft")!
  const counts: Record<string, number> = {}
  for (let i = 0; i < n; i++) {
    const [first] = variantOrder(fn, seededRandom(`episode-${i}`))
    counts[first] = (counts[first] ?? 0) + 1
  }
  return counts
}

describe("static experimentation", () => {
  it("draws a table's candidates in proportion to their weights, and only them", () => {
    const n = 20_000
    const counts = firsts(functionWith(`type = "static"\ncandidate_variants = { a = 0.2, b = 0.8 }\nfallback_variants = ["spare"]`), n)
    expect(Object.keys(counts).sort()).toEqual(["a", "b"])
    expect(Math.abs(counts.a / n - 0.2)).toBeLessThan(0.02)
    expect(Math.abs(counts.b / n - 0.8)).toBeLessThan(0.02)
  })

  it("draws a list's candidates uniformly (TensorZero's `uniform`), ignoring the variants' weights", () => {
    const n = 30_000
    const counts = firsts(functionWith(`type = "uniform"\ncandidate_variants = ["a", "b", "c"]`, true), n)
    expect(Object.keys(counts).sort()).toEqual(["a", "b", "c"])
    for (const name of ["a", "b", "c"]) expect(Math.abs(counts[name] / n - 1 / 3)).toBeLessThan(0.02)
  })

  it("tries every candidate, then the fallbacks in order, and never a variant named in neither", () => {
    const fn = buildOk(functionWith(`type = "static_weights"\ncandidate_variants = { a = 1, b = 1 }\nfallback_variants = ["spare", "c"]`)).functions.get("draft")!
    for (let i = 0; i < 200; i++) {
      const order = variantOrder(fn, seededRandom(`episode-${i}`))
      expect([...order.slice(0, 2)].sort()).toEqual(["a", "b"])
      expect(order.slice(2)).toEqual(["spare", "c"])
    }
  })

  it("gives an inference its candidates then fallbacks to try, and a pinned variant alone even if it is in neither", () => {
    const config = buildOk(functionWith(`type = "static"\ncandidate_variants = ["b"]\nfallback_variants = ["c"]`))
    const models = new ModelTable(config)
    const request: InferenceRequest = { function_name: "draft", input: { messages: [{ role: "user", content: "hi" }] } }
    const prepared = Result.getOrThrow(prepareInference(request, config, models, Date.now()))
    expect(prepared.variants.map((variant) => variant.name)).toEqual(["b", "c"])
    const pinned = Result.getOrThrow(prepareInference({ ...request, variant_name: "pinned_only", episode_id: uuidv7(Date.now()) }, config, models, Date.now()))
    expect(pinned.variants.map((variant) => variant.name)).toEqual(["pinned_only"])
  })

  it("warns that the variants' weights are replaced", () => {
    const result = build(functionWith(`type = "static"\ncandidate_variants = ["a"]`, true), {})
    if ("errors" in result) throw new Error(result.errors.join("\n"))
    expect(result.warnings.some((warning) => warning.includes("functions.draft.experimentation") && warning.includes("weight"))).toBe(true)
  })

  it.each([
    [`type = "static"\ncandidate_variants = ["a", "nope"]`, "functions.draft.experimentation.candidate_variants[1]", `variant "nope" is not a variant of this function`],
    [`type = "static"\ncandidate_variants = { a = 1, ghost = 2 }`, "functions.draft.experimentation.candidate_variants.ghost", "is not a variant of this function"],
    [`type = "static"\ncandidate_variants = ["a"]\nfallback_variants = ["a"]`, "functions.draft.experimentation.fallback_variants[0]", "named twice"],
    [`type = "static"\ncandidate_variants = { a = 0, b = 0 }`, "functions.draft.experimentation.candidate_variants", "no candidate has a positive weight"],
    [`type = "static"\ncandidate_variants = { a = -1 }`, "functions.draft.experimentation.candidate_variants", ""],
    [`type = "static"`, "functions.draft.experimentation.candidate_variants", "missing field"],
    [`type = "static"\ncandidate_variants = ["a"]\nmetric = "x"`, "functions.draft.experimentation.metric", "unknown field"],
    [`type = "sometimes"\ncandidate_variants = ["a"]`, "functions.draft.experimentation.type", ""]
  ])("refuses %j naming the key path", (table, keyPath, message) => {
    const errors = buildErrors(functionWith(table))
    expect(errors.some((error) => error.includes(keyPath) && error.includes(message)), errors.join("\n")).toBe(true)
  })
})

const metrics = `
[metrics.thumbs]
type = "boolean"
level = "inference"
optimize = "max"
[metrics.latency]
type = "float"
level = "episode"
optimize = "min"
`

describe("adaptive experimentation: configuration", () => {
  it("takes TensorZero's defaults, and its name track_and_stop", () => {
    for (const type of ["adaptive", "track_and_stop"]) {
      const fn = buildOk(metrics + functionWith(`type = "${type}"\ncandidate_variants = ["a", "b"]\nfallback_variants = ["spare"]\nmetric = "thumbs"`)).functions.get("draft")!
      expect(fn.experimentation).toEqual({
        candidates: [{ name: "a", weight: 1 }, { name: "b", weight: 1 }],
        fallbacks: ["spare"],
        adaptive: { metric: "thumbs", epsilon: 0, delta: 0.05, minProb: 0, minSamplesPerVariant: 10, updatePeriodS: 300 }
      })
    }
  })

  it("takes every setting", () => {
    const fn = buildOk(metrics + functionWith(
      `type = "adaptive"\ncandidate_variants = ["a", "b", "c"]\nmetric = "latency"\nepsilon = 0.1\ndelta = 0.01\nmin_prob = 0.05\nmin_samples_per_variant = 3\nupdate_period_s = 0.5`
    )).functions.get("draft")!
    expect(fn.experimentation?.adaptive).toEqual({ metric: "latency", epsilon: 0.1, delta: 0.01, minProb: 0.05, minSamplesPerVariant: 3, updatePeriodS: 0.5 })
  })

  const at = "functions.draft.experimentation"
  it.each([
    [`type = "adaptive"\ncandidate_variants = ["a"]`, `${at}.metric`, "missing field"],
    [`type = "adaptive"\nmetric = "thumbs"`, `${at}.candidate_variants`, "missing field"],
    [`type = "adaptive"\ncandidate_variants = ["a"]\nmetric = "nope"`, `${at}.metric`, `metric "nope" is not defined under [metrics]`],
    [`type = "adaptive"\ncandidate_variants = []\nmetric = "thumbs"`, `${at}.candidate_variants`, "at least one"],
    [`type = "adaptive"\ncandidate_variants = { a = 1 }\nmetric = "thumbs"`, `${at}.candidate_variants`, "Expected array"],
    [`type = "adaptive"\ncandidate_variants = ["a", "ghost"]\nmetric = "thumbs"`, `${at}.candidate_variants[1]`, "is not a variant of this function"],
    [`type = "track_and_stop"\ncandidate_variants = ["a"]\nfallback_variants = ["a"]\nmetric = "thumbs"`, `${at}.fallback_variants[0]`, "named twice"],
    [`type = "adaptive"\ncandidate_variants = ["a", "b", "c"]\nmetric = "thumbs"\nmin_prob = 0.4`, `${at}.min_prob`, "at most 1 / 3"],
    [`type = "adaptive"\ncandidate_variants = ["a"]\nmetric = "thumbs"\nmin_prob = -0.1`, `${at}.min_prob`, ""],
    [`type = "adaptive"\ncandidate_variants = ["a"]\nmetric = "thumbs"\ndelta = 1`, `${at}.delta`, ""],
    [`type = "adaptive"\ncandidate_variants = ["a"]\nmetric = "thumbs"\ndelta = 0`, `${at}.delta`, ""],
    [`type = "adaptive"\ncandidate_variants = ["a"]\nmetric = "thumbs"\nepsilon = -1`, `${at}.epsilon`, ""],
    [`type = "adaptive"\ncandidate_variants = ["a"]\nmetric = "thumbs"\nmin_samples_per_variant = 0`, `${at}.min_samples_per_variant`, ""],
    [`type = "adaptive"\ncandidate_variants = ["a"]\nmetric = "thumbs"\nmin_samples_per_variant = 2.5`, `${at}.min_samples_per_variant`, ""],
    [`type = "adaptive"\ncandidate_variants = ["a"]\nmetric = "thumbs"\nupdate_period_s = 0`, `${at}.update_period_s`, ""],
    [`type = "adaptive"\ncandidate_variants = ["a"]\nmetric = "thumbs"\nweights = 1`, `${at}.weights`, "unknown field"],
    [`type = "static"\ncandidate_variants = ["a"]\nmetric = "thumbs"`, `${at}.metric`, "unknown field"]
  ])("refuses %j naming the key path", (table, keyPath, message) => {
    const errors = buildErrors(metrics + functionWith(table))
    expect(errors.some((error) => error.includes(keyPath) && error.includes(message)), errors.join("\n")).toBe(true)
  })

  it("takes an evaluator's metric", () => {
    const config = buildOk(functionWith(`type = "adaptive"\ncandidate_variants = ["a", "b"]\nmetric = "gateway::function_name::draft::evaluator_name::exact"`) + `
[functions.draft.evaluators.exact]
type = "exact_match"
`)
    expect(config.metrics.has(config.functions.get("draft")!.experimentation!.adaptive!.metric)).toBe(true)
  })
})

describe("adaptive experimentation: the order an inference tries", () => {
  const fn = buildOk(metrics + functionWith(`type = "adaptive"\ncandidate_variants = ["a", "b", "c"]\nfallback_variants = ["spare"]\nmetric = "thumbs"`)).functions.get("draft")!

  it("draws the candidates uniformly before any probabilities, then the fallbacks", () => {
    const n = 30_000
    const counts: Record<string, number> = {}
    for (let i = 0; i < n; i++) {
      const order = variantOrder(fn, seededRandom(`episode-${i}`))
      expect([...order.slice(0, 3)].sort()).toEqual(["a", "b", "c"])
      expect(order.slice(3)).toEqual(["spare"])
      counts[order[0]] = (counts[order[0]] ?? 0) + 1
    }
    for (const name of ["a", "b", "c"]) expect(Math.abs(counts[name] / n - 1 / 3)).toBeLessThan(0.02)
  })

  it("draws by the probabilities given, and tries a candidate at probability 0 after the others, before the fallbacks", () => {
    const n = 20_000
    const weights = [{ name: "a", weight: 0.7 }, { name: "b", weight: 0.3 }, { name: "c", weight: 0 }]
    const counts: Record<string, number> = {}
    for (let i = 0; i < n; i++) {
      const order = variantOrder(fn, seededRandom(`episode-${i}`), weights)
      expect(order.slice(2)).toEqual(["c", "spare"])
      counts[order[0]] = (counts[order[0]] ?? 0) + 1
    }
    expect(counts.c).toBeUndefined()
    expect(Math.abs(counts.a / n - 0.7)).toBeLessThan(0.02)
  })

  it("gives prepareInference's weights to adaptive functions, and a pinned variant wins over them", () => {
    const config = buildOk(metrics + functionWith(`type = "adaptive"\ncandidate_variants = ["a", "b"]\nmetric = "thumbs"`))
    const models = new ModelTable(config)
    const request: InferenceRequest = { function_name: "draft", input: { messages: [{ role: "user", content: "hi" }] } }
    const asked: Array<string> = []
    const weights = (functionName: string, episodeId: string) => {
      asked.push(`${functionName}:${episodeId}`)
      return [{ name: "a", weight: 0 }, { name: "b", weight: 1 }]
    }
    const episodeId = uuidv7(Date.now())
    const prepared = Result.getOrThrow(prepareInference({ ...request, episode_id: episodeId }, config, models, Date.now(), {}, weights))
    expect(prepared.variants.map((variant) => variant.name)).toEqual(["b", "a"])
    expect(asked).toEqual([`draft:${episodeId}`])
    const pinned = Result.getOrThrow(prepareInference({ ...request, variant_name: "a" }, config, models, Date.now(), {}, weights))
    expect(pinned.variants.map((variant) => variant.name)).toEqual(["a"])
  })
})
