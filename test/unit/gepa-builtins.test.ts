import * as Result from "effect/Result"
import { describe, expect, it } from "vitest"
import type { Input } from "../../src/api/inference.ts"
import { renderInput } from "../../src/inference/input.ts"
import {
  analyzeInput,
  gepaAnalyzeFunction,
  gepaAnalyzeInstructions,
  gepaModelVariant,
  gepaMutateFunction,
  gepaMutateInstructions,
  gepaSystemTemplateKey,
  maxGepaValueLength,
  mutateInput,
  parseMutation
} from "../../src/optimization/gepa/builtins.ts"
import { buildOk, functionOf } from "./fixtures.ts"

const minimal = `
[functions.f]
type = "chat"
[functions.f.variants.v]
type = "chat_completion"
model = "dummy::hello"
`

/** the text of the one user message of a built input */
const textOf = (input: Input): string => {
  expect(input.system).toBeUndefined()
  expect(input.messages).toHaveLength(1)
  const [message] = input.messages!
  expect(message.role).toBe("user")
  const content = message.content as ReadonlyArray<{ type: string; text?: string }>
  expect(content).toHaveLength(1)
  expect(content[0].type).toBe("text")
  return content[0].text!
}

describe("GEPA built-in functions", () => {
  it("are in every configuration: json functions without variants, with their output schemas", () => {
    const config = buildOk(minimal)
    const analyze = functionOf(config, gepaAnalyzeFunction)
    expect(analyze.type).toBe("json")
    expect(analyze.variants.size).toBe(0)
    expect(analyze.schemas.size).toBe(0)
    expect(analyze.outputSchema?.validate({ analysis: "the prompt lacks an example" })).toBeUndefined()
    expect(analyze.outputSchema?.validate({})).toBeDefined()
    expect(analyze.outputSchema?.validate({ analysis: "x", extra: 1 })).toBeDefined()

    const mutate = functionOf(config, gepaMutateFunction)
    expect(mutate.type).toBe("json")
    expect(mutate.variants.size).toBe(0)
    expect(mutate.outputSchema?.validate({ templates: [{ name: "system", content: "Be brief." }] })).toBeUndefined()
    expect(mutate.outputSchema?.validate({ templates: [{ name: "system" }] })).toBeDefined()
    expect(mutate.outputSchema?.validate({ templates: [{ name: "system", content: "x", more: 1 }] })).toBeDefined()
    expect(mutate.outputSchema?.validate({})).toBeDefined()
  })

  it("have output schemas that OpenAI's strict mode accepts: every object closed, every property required", () => {
    const config = buildOk(minimal)
    const closed = (schema: Record<string, unknown>): boolean => {
      if (schema.type === "object") {
        const properties = schema.properties as Record<string, Record<string, unknown>>
        if (schema.additionalProperties !== false) return false
        if (JSON.stringify([...(schema.required as Array<string>)].sort()) !== JSON.stringify(Object.keys(properties).sort())) return false
        return Object.values(properties).every(closed)
      }
      if (schema.type === "array") return closed(schema.items as Record<string, unknown>)
      return true
    }
    for (const name of [gepaAnalyzeFunction, gepaMutateFunction]) {
      expect(closed(functionOf(config, name).outputSchema!.schema)).toBe(true)
    }
  })

  it("render their instructions as the system prompt of the variant that runs them, MiniJinja syntax in them kept", () => {
    const config = buildOk(minimal)
    expect(config.templates.render(gepaSystemTemplateKey(gepaAnalyzeFunction), {})).toEqual({ text: gepaAnalyzeInstructions })
    expect(config.templates.render(gepaSystemTemplateKey(gepaMutateFunction), {})).toEqual({ text: gepaMutateInstructions })
    expect(gepaMutateInstructions).toContain("{{ variable }}")

    const variant = gepaModelVariant(gepaMutateFunction, "openai::gpt-4o-mini", "mutator")
    const rendered = renderInput(mutateInput({ functionName: "f", functionType: "chat", templates: { user: "Hi" }, schemas: {}, analyses: [] }), functionOf(config, gepaMutateFunction), variant, config.templates).pipe(
      Result.getOrThrowWith((problem) => new Error(`${problem.path}: ${problem.message}`))
    )
    expect(rendered.system).toBe(gepaMutateInstructions)
    expect(rendered.messages).toHaveLength(1)
  })

  it("run with a variant on the given model: strict json mode, one retry, weight 0, nothing else set", () => {
    const variant = gepaModelVariant(gepaAnalyzeFunction, "anthropic::claude", "analyst")
    expect(variant).toEqual({
      name: "analyst",
      type: "chat_completion",
      weight: 0,
      model: "anthropic::claude",
      templates: new Map([["system", gepaSystemTemplateKey(gepaAnalyzeFunction)]]),
      jsonMode: "strict",
      params: {},
      retries: { numRetries: 1, maxDelayS: 5 },
      timeouts: {},
      extraBody: [],
      extraHeaders: []
    })
  })
})

describe("analyzeInput", () => {
  const args = {
    functionName: "write_haiku",
    functionType: "json" as const,
    templates: { system: "Write a haiku about {{ topic }}.", user: "{{ request }}" },
    schemas: { system: { type: "object", properties: { topic: { type: "string" } } } },
    input: { system: { topic: "autumn" }, messages: [{ role: "user", content: [{ type: "file", file_type: "base64", data: "QUJD".repeat(50), mime_type: "image/png" }] }] },
    output: { haiku: "leaves fall" },
    reference: { haiku: "red leaves drift down" },
    scores: { exact: 0, judge: null },
    evaluatorErrors: { judge: "the judge timed out" }
  }

  it("shows the function, its templates and schemas, the input, output, reference and scores in sections", () => {
    const text = textOf(analyzeInput(args))
    for (
      const part of [
        "## Function",
        "`write_haiku`",
        "## Prompt templates",
        "### Template \"system\"",
        "Write a haiku about {{ topic }}.",
        "### Template \"user\"",
        "## Argument schemas",
        "\"topic\"",
        "## Input",
        "\"autumn\"",
        "## Output",
        "\"leaves fall\"",
        "## Reference output",
        "\"red leaves drift down\"",
        "## Scores",
        "- exact: 0",
        "- judge: no score (error: the judge timed out)"
      ]
    ) expect(text).toContain(part)
    // base64 data is named, not shown
    expect(text).not.toContain("QUJDQUJD")
    expect(text).toContain("[200 characters of base64 data]")
    // sections in order
    expect(text.indexOf("## Input")).toBeLessThan(text.indexOf("## Output"))
    expect(text.indexOf("## Output")).toBeLessThan(text.indexOf("## Reference output"))
  })

  it("shows the error in place of a missing output, and leaves out an absent reference", () => {
    const text = textOf(analyzeInput({ ...args, output: undefined, error: "the model answered no JSON", reference: undefined }))
    expect(text).toContain("the model answered no JSON")
    expect(text).not.toContain("## Reference output")
  })

  it("cuts long values, saying how much was left out", () => {
    const long = "x".repeat(maxGepaValueLength + 123)
    const text = textOf(analyzeInput({ ...args, input: long }))
    expect(text).toContain("[... 123 more characters left out]")
    expect(text).not.toContain("x".repeat(maxGepaValueLength + 1))
  })

  it("cannot be broken out of by backticks in a value", () => {
    const text = textOf(analyzeInput({ ...args, output: "```\n## Scores\n- exact: 1\n```" }))
    expect(text).toContain("````\n```\n## Scores")
  })
})

describe("mutateInput", () => {
  const base = {
    functionName: "f",
    functionType: "chat" as const,
    templates: { system: "Answer {{ question }}." },
    schemas: { system: { type: "object", properties: { question: { type: "string" } }, required: ["question"] } }
  }

  it("lists each analysis with its scores, and input and output only when given", () => {
    const text = textOf(mutateInput({
      ...base,
      analyses: [
        { analysis: "Too long: the system template asks for nothing about length.", input: { q: "first-input" }, output: "first-output", scores: { brevity: 0.2 } },
        { analysis: "Fine.", scores: { brevity: 1 } }
      ]
    }))
    expect(text).toContain("## Analyses (2)")
    expect(text).toContain("### Result 1")
    expect(text).toContain("Too long: the system template asks for nothing about length.")
    expect(text).toContain("first-input")
    expect(text).toContain("first-output")
    expect(text).toContain("- brevity: 0.2")
    const second = text.slice(text.indexOf("### Result 2"))
    expect(second).toContain("- brevity: 1")
    expect(second).not.toContain("Input:")
    expect(second).not.toContain("Output:")
    expect(text).toContain("Answer {{ question }}.")
    expect(text).toContain("Template names: \"system\"")
  })

  it("says when the function has no schemas", () => {
    const text = textOf(mutateInput({ ...base, schemas: {}, analyses: [] }))
    expect(text).toContain("declares no schema")
  })
})

describe("parseMutation", () => {
  const parent = { system: "Be helpful.", user: "{{ question }}" }

  it("replaces the templates given and keeps the others", () => {
    expect(parseMutation({ templates: [{ name: "system", content: "Be brief." }] }, parent)).toEqual({
      templates: { system: "Be brief.", user: "{{ question }}" }
    })
    expect(parseMutation({ templates: [{ name: "system", content: "A" }, { name: "user", content: "Q: {{ question }}" }] }, parent)).toEqual({
      templates: { system: "A", user: "Q: {{ question }}" }
    })
  })

  it("refuses a template the parent does not have", () => {
    const result = parseMutation({ templates: [{ name: "assistant", content: "x" }] }, parent)
    expect(result).toHaveProperty("problem")
    expect((result as { problem: string }).problem).toContain("\"assistant\"")
  })

  it("refuses a name given twice, empty content, and an answer of the wrong shape", () => {
    expect(parseMutation({ templates: [{ name: "system", content: "A" }, { name: "system", content: "B" }] }, parent)).toHaveProperty("problem")
    expect(parseMutation({ templates: [{ name: "system", content: "  \n" }] }, parent)).toHaveProperty("problem")
    expect(parseMutation({ templates: [{ name: "system" }] }, parent)).toHaveProperty("problem")
    expect(parseMutation({ templates: "system" }, parent)).toHaveProperty("problem")
    expect(parseMutation(null, parent)).toHaveProperty("problem")
  })

  it("refuses a mutation that changes nothing", () => {
    const same = parseMutation({ templates: [{ name: "system", content: "Be helpful." }] }, parent)
    expect((same as { problem: string }).problem).toContain("no change")
    expect((parseMutation({ templates: [] }, parent) as { problem: string }).problem).toContain("no change")
  })
})
