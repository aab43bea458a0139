import * as Result from "effect/Result"
import { describe, expect, it } from "vitest"
import { type ChatCompletionVariant, type EvaluatorConfig, type GatewayConfig, variantModel } from "../../src/config/types.ts"
import { renderInput } from "../../src/inference/input.ts"
import { ModelTable } from "../../src/inference/models.ts"
import { prepareInference } from "../../src/inference/prepare.ts"
import { build, buildErrors, buildOk, configPath as F, functionOf } from "./fixtures.ts"

/** a chat function `write` and a json function `extract`, and a configured model for judges */
const base = `
[models.judge_model]
routing = ["d"]
[models.judge_model.providers.d]
type = "dummy"
model_name = "json"

[functions.write]
type = "chat"
[functions.write.variants.v]
type = "chat_completion"
model = "dummy::hello"

[functions.extract]
type = "json"
[functions.extract.variants.v]
type = "chat_completion"
model = "dummy::json"
`

const instructions = "Judge the haiku.\nKeep {{ x }} and {% if y %}this{% endif %} and {% endraw %} as written; {# not a comment #}\n"
const files = { "/cfg/judge.txt": instructions, "/cfg/strict.txt": "Be strict." }

const ok = (toml: string) => buildOk(base + toml, { files })
const errors = (toml: string) => buildErrors(base + toml, { files })

/** the error of `keyPath` among several, checked to be `<file>: <key.path>: <message>` */
const errorAt = (found: ReadonlyArray<string>, keyPath: string): string => {
  const error = found.find((line) => line.startsWith(`${F}: ${keyPath}: `))
  expect(error, `no error at ${keyPath} among:\n${found.join("\n")}`).toBeDefined()
  return error!.slice(`${F}: ${keyPath}: `.length)
}

const evaluatorOf = <T extends EvaluatorConfig["type"]>(
  evaluators: ReadonlyMap<string, EvaluatorConfig>,
  name: string,
  type: T
): Extract<EvaluatorConfig, { type: T }> => {
  const evaluator = evaluators.get(name)
  expect(evaluator?.type).toBe(type)
  return evaluator as Extract<EvaluatorConfig, { type: T }>
}

const judgeVariant = (owner: string, name = "v", extra = "") => `
[${owner}.evaluators.judge.variants.${name}]
model = "dummy::json"
system_instructions = "judge.txt"
${extra}
`

const judge = (owner: string, extra = "") => `
[${owner}.evaluators.judge]
type = "llm_judge"
output_type = "boolean"
${extra}
`

describe("evaluators: each type, under a function", () => {
  const config = ok(`
[functions.write.evaluators.same]
type = "exact_match"
cutoff = 0.75

[functions.write.evaluators.polite]
type = "regex"
must_match = "\\\\bplease\\\\b"
must_not_match = "(?i)rude"

[functions.write.evaluators.only_not]
type = "regex"
must_not_match = "^$"

[functions.write.evaluators.weather]
type = "tool_use"
behavior = "any_of"
tools = ["get_weather", "get_time"]

[functions.write.evaluators.silent]
type = "tool_use"
behavior = "none"

[functions.write.evaluators.judge]
type = "llm_judge"
output_type = "float"
optimize = "min"
include = { reference_output = true }
input_format = "messages"
description = "how bad it is"
cutoff = 0.2
[functions.write.evaluators.judge.variants.v]
type = "chat_completion"
model = "judge_model"
system_instructions = "judge.txt"
temperature = 0.1
max_tokens = 200
seed = 7
json_mode = "tool"
retries = { num_retries = 2, max_delay_s = 3 }
timeouts = { non_streaming = { total_ms = 5000 } }
extra_body = [{ pointer = "/x", value = 1 }]
extra_headers = [{ name = "x-judge", value = "yes" }]
`)
  const evaluators = functionOf(config, "write").evaluators

  it("exact_match: boolean, maximised, with its cutoff and its metric under the function", () => {
    const same = evaluatorOf(evaluators, "same", "exact_match")
    expect(same).toMatchObject({
      name: "same",
      metricName: "gateway::function_name::write::evaluator_name::same",
      outputType: "boolean",
      optimize: "max",
      cutoff: 0.75
    })
  })

  it("regex: patterns compiled, matching anywhere in the text", () => {
    const polite = evaluatorOf(evaluators, "polite", "regex")
    expect(polite).toMatchObject({ outputType: "boolean", optimize: "max", cutoff: undefined })
    expect(polite.mustMatch?.source).toBe("\\bplease\\b")
    expect(polite.mustMatch?.test("could you please stop")).toBe(true)
    expect(polite.mustMatch?.test("pleased")).toBe(false)
    expect(polite.mustNotMatch?.test("that was RUDE")).toBe(true)
    expect(polite.mustNotMatch?.test("kind")).toBe(false)
    const onlyNot = evaluatorOf(evaluators, "only_not", "regex")
    expect(onlyNot.mustMatch).toBeUndefined()
    expect(onlyNot.mustNotMatch?.test("")).toBe(true)
  })

  it("tool_use: its behavior and tools", () => {
    expect(evaluatorOf(evaluators, "weather", "tool_use")).toMatchObject({
      behavior: "any_of",
      tools: ["get_weather", "get_time"],
      outputType: "boolean",
      optimize: "max"
    })
    expect(evaluatorOf(evaluators, "silent", "tool_use")).toMatchObject({ behavior: "none", tools: [] })
  })

  it("llm_judge: its settings, and a json function named after it", () => {
    expect(evaluatorOf(evaluators, "judge", "llm_judge")).toEqual({
      type: "llm_judge",
      name: "judge",
      metricName: "gateway::function_name::write::evaluator_name::judge",
      outputType: "float",
      optimize: "min",
      cutoff: 0.2,
      includeReferenceOutput: true,
      inputFormat: "messages",
      description: "how bad it is",
      judgeFunctionName: "gateway::llm_judge::write::judge"
    })
    const fn = functionOf(config, "gateway::llm_judge::write::judge")
    expect(fn).toMatchObject({ type: "json", tools: [], evaluators: new Map() })
    expect(fn.schemas.size).toBe(0)
    expect(fn.outputSchema!.validate({ thinking: "fine", score: 0.5 })).toBeUndefined()
    expect(fn.outputSchema!.validate({ thinking: "fine", score: true })).toBeDefined()
    expect(fn.outputSchema!.validate({ score: 1 })).toBeDefined()
    const variant = fn.variants.get("v") as ChatCompletionVariant
    expect(variant).toMatchObject({
      name: "v",
      type: "chat_completion",
      weight: 1,
      model: "judge_model",
      jsonMode: "tool",
      params: { temperature: 0.1, max_tokens: 200, seed: 7 },
      retries: { numRetries: 2, maxDelayS: 3 },
      timeouts: { non_streaming: { total_ms: 5000 } },
      extraBody: [{ pointer: "/x", value: 1 }],
      extraHeaders: [{ name: "x-judge", value: "yes" }]
    })
    expect([...variant.templates.keys()]).toEqual(["system"])
  })

  it("llm_judge defaults: optimize max, no reference output, serialized input, strict json mode", () => {
    const config = ok(judge("functions.write") + judgeVariant("functions.write"))
    expect(evaluatorOf(functionOf(config, "write").evaluators, "judge", "llm_judge")).toMatchObject({
      outputType: "boolean",
      optimize: "max",
      includeReferenceOutput: false,
      inputFormat: "serialized",
      description: undefined,
      cutoff: undefined
    })
    const fn = functionOf(config, "gateway::llm_judge::write::judge")
    expect(fn.outputSchema!.validate({ thinking: "t", score: false })).toBeUndefined()
    expect(fn.outputSchema!.validate({ thinking: "t", score: 1 })).toBeDefined()
    expect(fn.variants.get("v")).toMatchObject({ jsonMode: "strict", params: {}, retries: { numRetries: 0, maxDelayS: 10 } })
  })
})

describe("evaluations", () => {
  it("builds [evaluations.<name>] of a function, with metric and judge names under the evaluation", () => {
    const config = ok(`
[evaluations.haiku]
type = "inference"
function_name = "write"
description = "haiku quality"
[evaluations.haiku.evaluators.same]
type = "exact_match"
${judge("evaluations.haiku")}
${judgeVariant("evaluations.haiku")}
`)
    const evaluation = config.evaluations.get("haiku")!
    expect(evaluation).toMatchObject({ name: "haiku", type: "inference", functionName: "write", description: "haiku quality" })
    expect(evaluatorOf(evaluation.evaluators, "same", "exact_match").metricName)
      .toBe("gateway::evaluation_name::haiku::evaluator_name::same")
    expect(evaluatorOf(evaluation.evaluators, "judge", "llm_judge").judgeFunctionName).toBe("gateway::llm_judge::haiku::judge")
    expect(functionOf(config, "gateway::llm_judge::haiku::judge").variants.get("v") && variantModel(functionOf(config, "gateway::llm_judge::haiku::judge").variants.get("v")!).model).toBe("dummy::json")
    // the function's own evaluators are not the evaluation's
    expect(functionOf(config, "write").evaluators.size).toBe(0)
  })

  it("accepts TensorZero's older type \"static\" as \"inference\", with a warning", () => {
    const result = build(base + `
[evaluations.old]
type = "static"
function_name = "extract"
evaluators.same = { type = "exact_match" }
`, { files })
    if ("errors" in result) throw new Error(result.errors.join("\n"))
    expect(result.config.evaluations.get("old")).toMatchObject({ type: "inference", functionName: "extract" })
    expect(result.warnings.some((warning) => warning.startsWith(`${F}: evaluations.old.type: `))).toBe(true)
  })

  it("refuses another type, an unknown function, a missing function_name, and a name with \"::\"", () => {
    const found = errors(`
[evaluations.a]
type = "workflow"
function_name = "write"
evaluators = {}

[evaluations.b]
type = "inference"
function_name = "nope"
evaluators = {}

[evaluations.c]
type = "inference"
evaluators = {}

[evaluations."d::e"]
type = "inference"
function_name = "write"
evaluators = {}
`)
    expect(errorAt(found, "evaluations.a.type")).toBeTruthy()
    expect(errorAt(found, "evaluations.b.function_name")).toBe(`function "nope" is not defined under [functions]`)
    expect(errorAt(found, "evaluations.c.function_name")).toBe("missing field")
    expect(errorAt(found, `evaluations."d::e"`)).toContain(`may not contain "::"`)
    expect(found).toHaveLength(4)
  })
})

describe("evaluators: validation", () => {
  it("refuses an unknown or missing type, unknown keys, a non-numeric cutoff and a name with \"::\"", () => {
    const found = errors(`
[functions.write.evaluators.a]
type = "bleu"
[functions.write.evaluators.b]
cutoff = 1
[functions.write.evaluators.c]
type = "exact_match"
threshold = 1
[functions.write.evaluators.d]
type = "exact_match"
cutoff = "high"
[functions.write.evaluators."e::f"]
type = "exact_match"
`)
    expect(errorAt(found, "functions.write.evaluators.a.type")).toBe(`unknown evaluator type "bleu" (known: exact_match, regex, tool_use, llm_judge, typescript)`)
    expect(errorAt(found, "functions.write.evaluators.b.type")).toBe("missing field")
    expect(errorAt(found, "functions.write.evaluators.c.threshold")).toBe("unknown field")
    expect(errorAt(found, "functions.write.evaluators.d.cutoff")).toBeTruthy()
    expect(errorAt(found, `functions.write.evaluators."e::f"`)).toContain(`may not contain "::"`)
    expect(found).toHaveLength(5)
  })

  it("regex: needs a pattern, and each must compile on RE2", () => {
    const found = errors(`
[functions.write.evaluators.none]
type = "regex"
[functions.write.evaluators.lookbehind]
type = "regex"
must_match = "(?<=a)b"
[functions.write.evaluators.unclosed]
type = "regex"
must_match = "ok"
must_not_match = "(open"
`)
    expect(errorAt(found, "functions.write.evaluators.none")).toBe("a regex evaluator needs must_match, must_not_match or both")
    expect(errorAt(found, "functions.write.evaluators.lookbehind.must_match")).toContain(`pattern "(?<=a)b" does not compile`)
    expect(errorAt(found, "functions.write.evaluators.unclosed.must_not_match")).toContain(`pattern "(open" does not compile`)
    expect(found).toHaveLength(3)
  })

  it("tool_use: tools for the listing behaviors only, an unknown behavior refused, chat functions only", () => {
    const found = errors(`
[functions.write.evaluators.a]
type = "tool_use"
behavior = "all_of"
[functions.write.evaluators.b]
type = "tool_use"
behavior = "none_of"
tools = []
[functions.write.evaluators.c]
type = "tool_use"
behavior = "any"
tools = ["t"]
[functions.write.evaluators.d]
type = "tool_use"
behavior = "some"
[functions.extract.evaluators.e]
type = "tool_use"
behavior = "any"

[evaluations.x]
type = "inference"
function_name = "extract"
evaluators.f = { type = "tool_use", behavior = "none" }
`)
    expect(errorAt(found, "functions.write.evaluators.a.tools")).toBe(`behavior "all_of" needs a non-empty list of tools`)
    expect(errorAt(found, "functions.write.evaluators.b.tools")).toBe(`behavior "none_of" needs a non-empty list of tools`)
    expect(errorAt(found, "functions.write.evaluators.c.tools")).toBe(`behavior "any" takes no tools`)
    expect(errorAt(found, "functions.write.evaluators.d.behavior")).toBeTruthy()
    expect(errorAt(found, "functions.extract.evaluators.e.type")).toContain("json functions do not call tools")
    expect(errorAt(found, "evaluations.x.evaluators.f.type")).toContain("json functions do not call tools")
    expect(found).toHaveLength(6)
  })

  it("llm_judge: the required fields, the variants' model, type and instructions file", () => {
    const found = errors(`
[functions.write.evaluators.a]
type = "llm_judge"
variants = {}
[functions.write.evaluators.b]
type = "llm_judge"
output_type = "boolean"
variants = {}
[functions.write.evaluators.c]
type = "llm_judge"
output_type = "boolean"
[functions.write.evaluators.c.variants.unknown_model]
model = "nowhere"
system_instructions = "judge.txt"
[functions.write.evaluators.c.variants.no_file]
model = "dummy::json"
system_instructions = "missing.txt"
[functions.write.evaluators.c.variants.cot]
type = "experimental_chain_of_thought"
model = "dummy::json"
system_instructions = "judge.txt"
[functions.write.evaluators.c.variants.bare]
system_instructions = "judge.txt"
user_template = "judge.txt"
`)
    expect(errorAt(found, "functions.write.evaluators.a.output_type")).toBe("missing field")
    expect(errorAt(found, "functions.write.evaluators.b.variants")).toBe("a judge needs at least one variant")
    expect(errorAt(found, "functions.write.evaluators.c.variants.unknown_model.model")).toContain(`unknown model "nowhere"`)
    expect(errorAt(found, "functions.write.evaluators.c.variants.no_file.system_instructions")).toBe("file not found: /cfg/missing.txt")
    expect(errorAt(found, "functions.write.evaluators.c.variants.cot.type")).toBe(
      `judge variant type "experimental_chain_of_thought" is not supported (supported: chat_completion, experimental_best_of_n_sampling, experimental_mixture_of_n_sampling, experimental_dynamic_in_context_learning)`
    )
    expect(errorAt(found, "functions.write.evaluators.c.variants.bare.model")).toBe("missing field")
    expect(errorAt(found, "functions.write.evaluators.c.variants.bare.user_template")).toBe("unknown field")
    expect(found).toHaveLength(7)
  })

  it("llm_judge weights: active or weight picks variants, the others weigh 0, one must be active", () => {
    const weights = (config: GatewayConfig, fn: string) =>
      Object.fromEntries([...functionOf(config, fn).variants].map(([name, variant]) => [name, variant.weight]))
    const all = ok(judge("functions.write") + judgeVariant("functions.write", "a") + judgeVariant("functions.write", "b"))
    expect(weights(all, "gateway::llm_judge::write::judge")).toEqual({ a: 1, b: 1 })
    const picked = ok(
      judge("functions.write") + judgeVariant("functions.write", "a", "active = true") + judgeVariant("functions.write", "b")
        + judgeVariant("functions.write", "c", "weight = 0.5") + judgeVariant("functions.write", "d", "active = false")
    )
    expect(weights(picked, "gateway::llm_judge::write::judge")).toEqual({ a: 1, b: 0, c: 0.5, d: 0 })

    const inactive = errors(
      judge("functions.write") + judgeVariant("functions.write", "a", "active = false") + judgeVariant("functions.write", "b")
    )
    expect(errorAt(inactive, "functions.write.evaluators.judge.variants")).toBe(
      "no variant is active: set active = true (or a positive weight) on one"
    )
    expect(inactive).toHaveLength(1)
    const both = errors(judge("functions.write") + judgeVariant("functions.write", "a", "active = true\nweight = 1"))
    expect(errorAt(both, "functions.write.evaluators.judge.variants.a.active")).toBe("give active or weight, not both")
    expect(both).toHaveLength(1)
  })

  it("llm_judge variants of the sampling types (TensorZero's judges take them): built over the judge's chat_completion variants", () => {
    const config = ok(
      judge("functions.write") + judgeVariant("functions.write", "a", "active = false") + judgeVariant("functions.write", "b", "active = false") + `
[functions.write.evaluators.judge.variants.best]
type = "experimental_best_of_n_sampling"
active = true
candidates = ["a", "b"]
[functions.write.evaluators.judge.variants.best.evaluator]
model = "dummy::json"
system_instructions = "strict.txt"
[functions.write.evaluators.judge.variants.mixed]
type = "experimental_mixture_of_n_sampling"
candidates = ["a", "b"]
[functions.write.evaluators.judge.variants.mixed.fuser]
model = "dummy::json"
system_instructions = "strict.txt"
`
    )
    const variants = functionOf(config, "gateway::llm_judge::write::judge").variants
    expect(Object.fromEntries([...variants].map(([name, variant]) => [name, [variant.type, variant.weight]]))).toEqual({
      a: ["chat_completion", 0],
      b: ["chat_completion", 0],
      best: ["experimental_best_of_n_sampling", 1],
      mixed: ["experimental_mixture_of_n_sampling", 0]
    })
    const unknownCandidate = errors(judge("functions.write") + judgeVariant("functions.write", "a") + `
[functions.write.evaluators.judge.variants.best]
type = "experimental_best_of_n_sampling"
candidates = ["a", "nope"]
[functions.write.evaluators.judge.variants.best.evaluator]
model = "dummy::json"
system_instructions = "strict.txt"
`)
    expect(unknownCandidate.join("\n")).toContain("nope")
  })

  it("refuses two judges with one function name: a function's and an evaluation's of the same name", () => {
    const found = errors(`
${judge("functions.write")}
${judgeVariant("functions.write")}
[evaluations.write]
type = "inference"
function_name = "write"
${judge("evaluations.write")}
${judgeVariant("evaluations.write")}
`)
    expect(errorAt(found, "evaluations.write.evaluators.judge")).toBe(
      `its judge function "gateway::llm_judge::write::judge" is also that of functions.write.evaluators.judge: rename one of the two evaluators`
    )
    expect(found).toHaveLength(1)
  })

  it("a judge's model needs its credential, reported at the evaluator's variant; an inactive one is not checked", () => {
    const models = `
[models.gpt]
routing = ["openai"]
[models.gpt.providers.openai]
type = "openai"
model_name = "gpt-4o-mini"
api_key_location = "env::MISSING_KEY"
`
    const found = errors(models + `
[functions.write.evaluators.judge]
type = "llm_judge"
output_type = "boolean"
[functions.write.evaluators.judge.variants.v]
model = "gpt"
system_instructions = "judge.txt"
[evaluations.e]
type = "inference"
function_name = "write"
[evaluations.e.evaluators.judge]
type = "llm_judge"
output_type = "float"
[evaluations.e.evaluators.judge.variants.v]
model = "gpt"
system_instructions = "judge.txt"
[evaluations.e.evaluators.judge.variants.off]
model = "gpt"
system_instructions = "judge.txt"
active = false
[evaluations.e.evaluators.judge.variants.on]
model = "dummy::json"
system_instructions = "judge.txt"
active = true
`)
    expect(errorAt(found, "functions.write.evaluators.judge.variants.v.model")).toContain("MISSING_KEY")
    // `v` weighs 0 there (another sets `active`), so only functions.write's is reported
    expect(found).toHaveLength(1)
    const evaluationOnly = errors(models + `
[evaluations.e]
type = "inference"
function_name = "write"
${judge("evaluations.e")}
[evaluations.e.evaluators.judge.variants.v]
model = "gpt"
system_instructions = "judge.txt"
`)
    expect(errorAt(evaluationOnly, "evaluations.e.evaluators.judge.variants.v.model")).toContain(
      `model "gpt" uses provider "openai", whose credential is missing`
    )
    expect(evaluationOnly).toHaveLength(1)
  })
})

describe("a judge's function", () => {
  const config = ok(judge("functions.write") + judgeVariant("functions.write"))
  const judgeName = "gateway::llm_judge::write::judge"

  it("sends its system_instructions as written, not as a template", () => {
    const fn = functionOf(config, judgeName)
    const rendered = renderInput(
      { messages: [{ role: "user", content: "the haiku" }] },
      fn,
      fn.variants.get("v") as ChatCompletionVariant,
      config.templates
    )
    expect(rendered).toEqual(Result.succeed({ system: instructions, messages: [{ role: "user", content: [{ type: "text", text: "the haiku" }] }] }))
  })

  it("can be called through /inference like any function", () => {
    const prepared = prepareInference(
      { function_name: judgeName, input: { messages: [{ role: "user", content: "the haiku" }] } },
      config,
      new ModelTable(config),
      Date.now()
    ).pipe(Result.getOrThrowWith((failure) => new Error(`not prepared: ${failure._tag}: ${failure.message}`)))
    expect(prepared.functionName).toBe(judgeName)
    expect(prepared.variants.map((variant) => variant.name)).toEqual(["v"])
    expect(prepared.outputSchema?.validate({ thinking: "t", score: true })).toBeUndefined()
  })
})
