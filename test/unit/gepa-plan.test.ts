/**
 * `planGepa` (src/optimization/gepa/plan.ts) against a configuration built from TOML: each 400
 * with the field it names, and the payload a valid request becomes (its defaults, the seed and
 * prefix used when the request gives none); `gepaUnrunnable`, what a configuration lacks to run
 * a queued payload.
 */
import { describe, expect, it } from "vitest"
import {
  defaultGepaBatchSize,
  defaultGepaConcurrency,
  defaultGepaDatapoints,
  type LaunchGepaRequest
} from "../../src/api/gepa.ts"
import * as Result from "effect/Result"
import { InvalidRequest } from "../../src/errors.ts"
import { gepaUnrunnable, type GepaPayload, planGepa } from "../../src/optimization/gepa/plan.ts"
import { buildOk } from "./fixtures.ts"

/**
 * `write`: a templated chat_completion variant (and a second one), one without templates, a
 * chain-of-thought one, a variant named like GEPA output (`tuned_12`), evaluators `exact` and
 * `judge`; `bare`: no optimizable variant; evaluations of each (and one of `write` without evaluators); a
 * configured model `analyst`.
 */
const toml = `
[models.analyst]
routing = ["d"]
[models.analyst.providers.d]
type = "dummy"
model_name = "hello"

[functions.write]
type = "chat"
[functions.write.variants.templated]
type = "chat_completion"
model = "dummy::hello"
system_template = "/cfg/system.minijinja"
[functions.write.variants.plain]
type = "chat_completion"
model = "dummy::hello"
[functions.write.variants.cot]
type = "experimental_chain_of_thought"
model = "dummy::hello"
system_template = "/cfg/system.minijinja"
[functions.write.variants.second]
type = "chat_completion"
model = "analyst"
system_template = "/cfg/second.minijinja"
[functions.write.variants.tuned_12]
type = "chat_completion"
model = "dummy::hello"
[functions.write.evaluators.exact]
type = "exact_match"
[functions.write.evaluators.judge]
type = "llm_judge"
output_type = "boolean"
[functions.write.evaluators.judge.variants.v]
model = "dummy::json"
system_instructions = "/cfg/judge.txt"
[functions.write.evaluators.scripted]
type = "typescript"

[functions.bare]
type = "chat"
[functions.bare.variants.plain]
type = "chat_completion"
model = "dummy::hello"
[functions.bare.variants.cot]
type = "experimental_chain_of_thought"
model = "dummy::hello"
system_template = "/cfg/system.minijinja"
[functions.bare.evaluators.exact]
type = "exact_match"

[evaluations.write_eval]
type = "inference"
function_name = "write"
[evaluations.write_eval.evaluators.same]
type = "exact_match"
[evaluations.write_eval.evaluators.also]
type = "exact_match"

[evaluations.empty_eval]
type = "inference"
function_name = "write"
evaluators = {}

[evaluations.bare_eval]
type = "inference"
function_name = "bare"
[evaluations.bare_eval.evaluators.same]
type = "exact_match"
`

const config = buildOk(toml, {
  files: { "/cfg/system.minijinja": "Be kind.", "/cfg/second.minijinja": "Be brief.", "/cfg/judge.txt": "Judge it." }
})

const seed = 1234
const defaultPrefix = "gepa_task7"

const valid: LaunchGepaRequest = {
  function_name: "write",
  analysis_model: "analyst",
  mutation_model: "dummy::hello",
  max_iterations: 4,
  dataset_name: "examples",
  evaluators: ["exact"]
}

const plan = (changes: Partial<Record<keyof LaunchGepaRequest, unknown>>) => {
  const request = { ...valid, ...changes } as Record<string, unknown>
  // a field set to undefined is a field left out
  for (const key of Object.keys(request)) if (request[key] === undefined) delete request[key]
  return planGepa(request as LaunchGepaRequest, config, seed, defaultPrefix)
}

const payloadOf = (changes: Partial<Record<keyof LaunchGepaRequest, unknown>>): GepaPayload => {
  const result = plan(changes)
  if (Result.isFailure(result)) throw new Error(`expected a plan, got: ${result.failure.message}`)
  return result.success
}

/** the 400's message, checked to be a 400 naming `field` */
const refusal = (changes: Partial<Record<keyof LaunchGepaRequest, unknown>>, field: string): string => {
  const result = Result.merge(plan(changes))
  expect(result).toBeInstanceOf(InvalidRequest)
  const error = result as InvalidRequest
  expect(error.status).toBe(400)
  expect(error.message.startsWith(`${field}: `), error.message).toBe(true)
  return error.message
}

describe("planGepa: a valid request", () => {
  it("becomes a payload with the defaults, the given seed and the default prefix", () => {
    expect(payloadOf({})).toEqual({
      functionName: "write",
      evaluatorNames: ["exact"],
      evaluationName: undefined,
      datasets: { kind: "split", datasetName: "examples" },
      initialVariants: ["templated", "second"],
      analysisModel: "analyst",
      mutationModel: "dummy::hello",
      maxIterations: 4,
      batchSize: defaultGepaBatchSize,
      seed,
      maxConcurrency: defaultGepaConcurrency,
      maxDatapoints: defaultGepaDatapoints,
      includeInference: true,
      variantPrefix: defaultPrefix
    })
    expect([defaultGepaBatchSize, defaultGepaConcurrency, defaultGepaDatapoints]).toEqual([5, 10, 1000])
  })

  it("keeps what the request gives over the defaults", () => {
    const payload = payloadOf({
      batch_size: 3,
      max_concurrency: 2,
      max_datapoints: 50,
      include_inference_for_mutation: false,
      seed: 99,
      variant_prefix: "mine"
    })
    expect(payload).toMatchObject({ batchSize: 3, maxConcurrency: 2, maxDatapoints: 50, includeInference: false, seed: 99, variantPrefix: "mine" })
  })

  it("takes a seed of 0 as given, not as missing", () => {
    expect(payloadOf({ seed: 0 }).seed).toBe(0)
  })

  it("takes separate training and validation datasets", () => {
    expect(payloadOf({ dataset_name: undefined, train_dataset_name: "tr", val_dataset_name: "va" }).datasets)
      .toEqual({ kind: "separate", trainDatasetName: "tr", valDatasetName: "va" })
  })

  it("takes several evaluators in order, a repeated one once", () => {
    expect(payloadOf({ evaluators: ["judge", "exact", "judge"] }).evaluatorNames).toEqual(["judge", "exact"])
  })

  it("takes an evaluation's evaluators, and names the evaluation", () => {
    const payload = payloadOf({ evaluators: undefined, evaluation_name: "write_eval" })
    expect(payload.evaluationName).toBe("write_eval")
    expect(payload.evaluatorNames).toEqual(["same", "also"])
  })

  it("takes configured models and short-hands for both models", () => {
    expect(payloadOf({ analysis_model: "dummy::json", mutation_model: "analyst" })).toMatchObject({ analysisModel: "dummy::json", mutationModel: "analyst" })
  })

  it("starts from the named variants, a repeated one once, in order", () => {
    expect(payloadOf({ initial_variants: ["second", "templated", "second"] }).initialVariants).toEqual(["second", "templated"])
  })

  it("by default starts from every chat_completion variant with a template (not chain-of-thought, not template-less)", () => {
    expect(payloadOf({ initial_variants: undefined }).initialVariants).toEqual(["templated", "second"])
  })

  it("accepts a prefix that a configured variant merely starts with", () => {
    // tuned_12 is not `tuned_1_<digits>`, nor `tune_<digits>`, nor `tuned_x_<digits>`
    for (const prefix of ["tuned_1", "tune", "tuned_x", "a.b-c", "x".repeat(64)]) {
      expect(payloadOf({ variant_prefix: prefix }).variantPrefix).toBe(prefix)
    }
  })
})

describe("planGepa: the function and the models", () => {
  it("refuses an unknown function", () => {
    expect(refusal({ function_name: "nope" }, "function_name")).toContain(`unknown function "nope"`)
  })

  it("refuses the gateway's own functions, though they are configured", () => {
    for (const name of ["gateway::optimization::gepa::analyze", "gateway::llm_judge::write::judge"]) {
      expect(config.functions.has(name)).toBe(true)
      expect(refusal({ function_name: name }, "function_name")).toContain(`unknown function "${name}"`)
    }
  })

  it("refuses a function without a variant to optimize when none is named", () => {
    expect(refusal({ function_name: "bare" }, "function_name")).toContain(`function "bare" has no chat_completion variant with a template`)
  })

  it("refuses an unknown analysis model, then an unknown mutation model", () => {
    expect(refusal({ analysis_model: "nobody" }, "analysis_model")).toContain(`unknown model "nobody"`)
    expect(refusal({ mutation_model: "nobody" }, "mutation_model")).toContain(`unknown model "nobody"`)
    expect(refusal({ mutation_model: "noprovider::x" }, "mutation_model")).toContain(`unknown model "noprovider::x"`)
  })

  it("refuses a short-hand whose name would make a URL elsewhere than its provider's (issue 33)", () => {
    const hostile = "gcp_vertex_gemini::projects/p/locations/127.0.0.1:8080#/publishers/google/models/m"
    expect(refusal({ analysis_model: hostile }, "analysis_model")).toContain(`location "127.0.0.1:8080#" is not a GCP location`)
    expect(refusal({ mutation_model: hostile }, "mutation_model")).toContain("names no model the gcp_vertex_gemini provider type can call")
  })
})

describe("planGepa: the datasets", () => {
  it("refuses dataset_name with the train/validation names", () => {
    expect(refusal({ train_dataset_name: "tr", val_dataset_name: "va" }, "dataset_name")).toContain("not both")
    expect(refusal({ train_dataset_name: "tr" }, "dataset_name")).toContain("not both")
  })

  it("refuses no dataset at all", () => {
    expect(refusal({ dataset_name: undefined }, "dataset_name")).toContain("give dataset_name, or train_dataset_name with val_dataset_name")
  })

  it("refuses a training dataset without a validation one, and the other way round", () => {
    refusal({ dataset_name: undefined, train_dataset_name: "tr" }, "val_dataset_name")
    refusal({ dataset_name: undefined, val_dataset_name: "va" }, "train_dataset_name")
  })

  it("refuses a bad dataset name in the field that holds it", () => {
    expect(refusal({ dataset_name: "a b" }, "dataset_name")).toContain(`"a b" is not a dataset name`)
    expect(refusal({ dataset_name: "..." }, "dataset_name")).toContain("is not a dataset name")
    expect(refusal({ dataset_name: undefined, train_dataset_name: "a/b", val_dataset_name: "va" }, "train_dataset_name")).toContain(`"a/b"`)
    expect(refusal({ dataset_name: undefined, train_dataset_name: "tr", val_dataset_name: "" }, "val_dataset_name")).toContain("is not a dataset name")
    // the message names the field once, not "dataset_name: " again inside
    expect(refusal({ dataset_name: undefined, train_dataset_name: "a/b", val_dataset_name: "va" }, "train_dataset_name"))
      .toMatch(/^train_dataset_name: "a\/b" is not a dataset name/)
  })
})

describe("planGepa: the evaluators", () => {
  it("refuses both evaluators and evaluation_name, and neither", () => {
    expect(refusal({ evaluation_name: "write_eval" }, "evaluators")).toContain("exactly one of the two")
    expect(refusal({ evaluators: undefined }, "evaluators")).toContain("exactly one of the two")
  })

  it("refuses an empty list of evaluators", () => {
    refusal({ evaluators: [] }, "evaluators")
  })

  it("refuses an unknown evaluator by its index, listing the function's", () => {
    const message = refusal({ evaluators: ["exact", "nope"] }, "evaluators[1]")
    expect(message).toContain(`function "write" has no evaluator "nope"`)
    expect(message).toContain("exact, judge, scripted")
  })

  it("refuses an unknown evaluation, and an evaluation of another function", () => {
    expect(refusal({ evaluators: undefined, evaluation_name: "nope" }, "evaluation_name")).toContain(`unknown evaluation "nope"`)
    expect(refusal({ evaluators: undefined, evaluation_name: "bare_eval" }, "evaluation_name"))
      .toContain(`evaluation "bare_eval" evaluates function "bare", not "write"`)
  })

  it("refuses a TypeScript evaluator (TensorZero's), which this gateway loads but does not run", () => {
    expect(refusal({ evaluators: ["exact", "scripted"] }, "evaluators")).toContain(`evaluator "scripted" is a TypeScript evaluator, which this gateway does not run`)
  })

  it("refuses an evaluation without evaluators", () => {
    expect(refusal({ evaluators: undefined, evaluation_name: "empty_eval" }, "evaluation_name")).toContain(`evaluation "empty_eval" has no evaluators`)
  })
})

describe("planGepa: the initial variants", () => {
  it("refuses an empty list", () => {
    refusal({ initial_variants: [] }, "initial_variants")
  })

  it("refuses an unknown variant by its index", () => {
    expect(refusal({ initial_variants: ["templated", "nope"] }, "initial_variants[1]")).toContain(`function "write" has no variant "nope"`)
  })

  it("refuses a chain-of-thought variant, though it has a template", () => {
    expect(refusal({ initial_variants: ["cot"] }, "initial_variants[0]")).toContain("experimental_chain_of_thought")
  })

  it("refuses a variant without a template", () => {
    expect(refusal({ initial_variants: ["second", "plain"] }, "initial_variants[1]")).toContain(`variant "plain" has no template`)
  })

  it("names the variants of a function with none to optimize when they are given", () => {
    expect(refusal({ function_name: "bare", initial_variants: ["plain"] }, "initial_variants[0]")).toContain("no template")
  })
})

describe("planGepa: the variant prefix", () => {
  it("refuses a prefix with other characters, an empty one and one over 64 characters", () => {
    for (const prefix of ["", "a b", "a::b", "é", "x".repeat(65)]) refusal({ variant_prefix: prefix }, "variant_prefix")
  })

  it("checks the default prefix as a given one", () => {
    const result = Result.merge(planGepa(valid, config, seed, "bad prefix"))
    expect(result).toBeInstanceOf(InvalidRequest)
    expect((result as InvalidRequest).message.startsWith("variant_prefix: ")).toBe(true)
  })

  it("refuses a prefix whose new variants would be named like a configured variant", () => {
    expect(refusal({ variant_prefix: "tuned" }, "variant_prefix")).toContain(`"tuned_12"`)
    const result = Result.merge(planGepa(valid, config, seed, "tuned"))
    expect((result as InvalidRequest).message).toContain(`"tuned_12"`)
  })
})

describe("gepaUnrunnable: what another gateway's configuration lacks to run a queued task", () => {
  const payload = payloadOf({ evaluators: ["exact", "judge"] })

  it("is nothing on the configuration that planned the task", () => {
    expect(gepaUnrunnable(config, payload)).toBeUndefined()
    expect(gepaUnrunnable(config, payloadOf({ evaluators: undefined, evaluation_name: "write_eval" }))).toBeUndefined()
  })

  it("names the function, evaluator, evaluation, variant or model the configuration lacks", () => {
    expect(gepaUnrunnable(config, { ...payload, functionName: "gone" })).toBe(`function "gone" is not configured`)
    expect(gepaUnrunnable(config, { ...payload, evaluatorNames: ["exact", "gone"] })).toBe(`function "write" lacks one of the evaluators "exact", "gone"`)
    expect(gepaUnrunnable(config, { ...payload, evaluationName: "gone", evaluatorNames: ["same"] }))
      .toBe(`evaluation "gone" or one of its evaluators "same" is not configured`)
    expect(gepaUnrunnable(config, { ...payload, initialVariants: ["templated", "gone"] })).toBe(`function "write" has no chat_completion variant "gone"`)
    expect(gepaUnrunnable(config, { ...payload, initialVariants: ["cot"] })).toBe(`function "write" has no chat_completion variant "cot"`)
    expect(gepaUnrunnable(config, { ...payload, mutationModel: "gone" })).toBe(`model "gone" is not configured`)
  })
})
