import * as Result from "effect/Result"
import { describe, expect, it } from "vitest"
import type { Input } from "../../src/api/inference.ts"
import type { ChatCompletionVariant } from "../../src/config/types.ts"
import { renderInput } from "../../src/inference/input.ts"
import type { TemplateEngine } from "../../src/inference/templates.ts"
import {
  candidateProblem,
  candidateVariant,
  compileCandidate,
  type GepaCandidate,
  templatesOf
} from "../../src/optimization/gepa/candidates.ts"
import { buildOk, functionOf, json, variantOf } from "./fixtures.ts"

const toml = `
[gateway]
template_filesystem_access = true

[functions.qa]
type = "chat"
schemas.system.path = "schemas/system.json"
schemas.user.path = "schemas/user.json"

[functions.qa.variants.base]
type = "chat_completion"
model = "dummy::hello"
templates.system.path = "templates/system.minijinja"
templates.user.path = "templates/user.minijinja"
temperature = 0.3
max_tokens = 200
retries = { num_retries = 2, max_delay_s = 3 }
extra_headers = [{ name = "X-Team", value = "qa" }]

[functions.qa.evaluators.judge]
type = "llm_judge"
output_type = "boolean"
[functions.qa.evaluators.judge.variants.j]
model = "dummy::json"
system_instructions = "judge.txt"
`

const files = {
  "/cfg/schemas/system.json": json({ type: "object", properties: { persona: { type: "string" } }, required: ["persona"] }),
  "/cfg/schemas/user.json": json({ type: "object", properties: { question: { type: "string" } }, required: ["question"] }),
  "/cfg/templates/system.minijinja": `You are {{ persona }}. {% include "partials/rules.minijinja" %}`,
  "/cfg/templates/user.minijinja": "Question: {{ question }}",
  "/cfg/partials/rules.minijinja": "Answer in one sentence.",
  "/cfg/judge.txt": "Say whether {{ this }} is right. {% raw %}"
}

const config = buildOk(toml, { files })
const fn = functionOf(config, "qa")
const base = variantOf(config, "qa", "base") as ChatCompletionVariant

const input: Input = {
  system: { persona: "a librarian" },
  messages: [{ role: "user", content: [{ type: "text", arguments: { question: "Where are the maps?" } }] }]
}

const compiled = (candidate: GepaCandidate): TemplateEngine => {
  const result = compileCandidate(config.templates, "qa", candidate)
  if ("problem" in result) throw new Error(result.problem)
  return result.engine
}

describe("templatesOf", () => {
  it("gives the sources of a configured variant's templates, by name", () => {
    expect(templatesOf(config.templates, base)).toEqual({
      system: files["/cfg/templates/system.minijinja"],
      user: files["/cfg/templates/user.minijinja"]
    })
  })

  it("gives system_instructions as a template that renders them as written", () => {
    const judgeFn = [...config.functions.values()].find((f) => f.name.startsWith("gateway::llm_judge::"))!
    const judgeVariant = judgeFn.variants.get("j") as ChatCompletionVariant
    const templates = templatesOf(config.templates, judgeVariant)
    expect(Object.keys(templates)).toEqual(["system"])
    const candidate: GepaCandidate = { name: "c0", templates, iteration: 0 }
    const result = compileCandidate(config.templates, judgeFn.name, candidate)
    if ("problem" in result) throw new Error(result.problem)
    const variant = candidateVariant(judgeVariant, judgeFn.name, candidate)
    const engine = result.engine
    expect(engine.render(variant.templates.get("system")!, {})).toEqual({ text: files["/cfg/judge.txt"] })
  })
})

describe("candidateVariant and compileCandidate", () => {
  const candidate: GepaCandidate = {
    name: "gepa-1-0",
    parent: "base",
    iteration: 1,
    templates: {
      system: `You are {{ persona }}, terse. {% include "partials/rules.minijinja" %}`,
      user: "Q: {{ question }}\nA:"
    }
  }

  it("run the base variant's model and settings with the candidate's templates", () => {
    const variant = candidateVariant(base, "qa", candidate)
    expect(variant.name).toBe("gepa-1-0")
    expect(variant.type).toBe("chat_completion")
    expect(variant.weight).toBe(0)
    expect(variant.model).toBe(base.model)
    expect(variant.params).toEqual({ temperature: 0.3, max_tokens: 200 })
    expect(variant.retries).toEqual({ numRetries: 2, maxDelayS: 3 })
    expect(variant.extraHeaders).toEqual([{ name: "X-Team", value: "qa" }])
    expect(variant.jsonMode).toBe(base.jsonMode)
    expect([...variant.templates.keys()].sort()).toEqual(["system", "user"])
  })

  it("render the candidate's text through the compiled engine, includes of configured files resolved", () => {
    const engine = compiled(candidate)
    const variant = candidateVariant(base, "qa", candidate)
    const rendered = renderInput(input, fn, variant, engine).pipe(Result.getOrThrowWith((problem) => new Error(`${problem.path}: ${problem.message}`)))
    expect(rendered.system).toBe("You are a librarian, terse. Answer in one sentence.")
    expect(rendered.messages).toEqual([{ role: "user", content: [{ type: "text", text: "Q: Where are the maps?\nA:" }] }])
    // the configured variant still renders its own templates, in the new engine and in the configuration's
    for (const engineUsed of [engine, config.templates]) {
      const original = renderInput(input, fn, base, engineUsed).pipe(Result.getOrThrowWith((problem) => new Error(`${problem.path}: ${problem.message}`)))
      expect(original.system).toBe("You are a librarian. Answer in one sentence.")
    }
  })

  it("keeps candidates apart: each engine renders its own candidate", () => {
    const other: GepaCandidate = { name: "gepa-1-1", iteration: 1, templates: { system: "Other {{ persona }}", user: "{{ question }}" } }
    const engine = compiled(other)
    const rendered = renderInput(input, fn, candidateVariant(base, "qa", other), engine).pipe(Result.getOrThrowWith((problem) => new Error(`${problem.path}: ${problem.message}`)))
    expect(rendered.system).toBe("Other a librarian")
  })

  it("report a syntax error naming the template", () => {
    const result = compileCandidate(config.templates, "qa", { name: "bad", iteration: 2, templates: { system: "Hi {{ persona ", user: "{{ question }}" } })
    expect(result).toHaveProperty("problem")
    const problem = (result as { problem: string }).problem
    expect(problem).toContain("template \"system\" of candidate \"bad\"")
    expect(problem).toContain("syntax error")
  })
})

describe("candidateProblem", () => {
  const check = (candidate: GepaCandidate, inputs: ReadonlyArray<Input> = [input]) =>
    candidateProblem(fn, candidate, candidateVariant(base, "qa", candidate), compiled(candidate), inputs)

  it("accepts a candidate whose templates render every sample input", () => {
    expect(check({ name: "ok", iteration: 1, templates: { system: "Be {{ persona }}.", user: "{{ question }}" } })).toBeUndefined()
  })

  it("refuses a candidate without a template for one of the function's schemas", () => {
    const problem = check({ name: "nouser", iteration: 1, templates: { system: "Be {{ persona }}." } })
    expect(problem).toContain("\"user\"")
  })

  it("refuses a template that uses a variable the input lacks, naming the template and the input", () => {
    const problem = check({ name: "typo", iteration: 1, templates: { system: "Be {{ persona }}.", user: "{{ question }} ({{ topic }})" } }, [
      input,
      { ...input, messages: [{ role: "user", content: [{ type: "text", arguments: { question: "Second?" } }] }] }
    ])
    expect(problem).toContain("sample input 1")
    expect(problem).toContain("input.messages[0].content[0].arguments")
    expect(problem).toContain("template \"user\"")
  })

  it("checks every sample input, not only the first", () => {
    const candidate: GepaCandidate = { name: "cond", iteration: 1, templates: { system: "Be {{ persona }}.", user: "{% if question == 'x' %}{{ missing }}{% endif %}{{ question }}" } }
    const second: Input = { ...input, messages: [{ role: "user", content: [{ type: "text", arguments: { question: "x" } }] }] }
    expect(check(candidate, [input])).toBeUndefined()
    expect(check(candidate, [input, second])).toContain("sample input 2")
  })
})
