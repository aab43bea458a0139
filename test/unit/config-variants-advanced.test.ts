import { describe, expect, it } from "vitest"
import { isSamplingVariant } from "../../src/config/types.ts"
import { anyVariantOf, buildErrors, buildOk, configPath } from "./fixtures.ts"

const errorAt = (errors: ReadonlyArray<string>, keyPath: string): string => {
  const found = errors.find((error) => error.startsWith(`${configPath}: ${keyPath}: `))
  expect(found, `no error at ${keyPath} among:\n${errors.join("\n")}`).toBeDefined()
  return found!.slice(`${configPath}: ${keyPath}: `.length)
}

const chat = (variants: string) => `
[functions.f]
type = "chat"
[functions.f.variants.a]
type = "chat_completion"
model = "dummy::x"
weight = 0
${variants}`

describe("buildConfig: advanced variant types", () => {
  it("builds best-of-n with its evaluator (strict json by default), and mixture-of-n under both spellings", () => {
    const config = buildOk(chat(`
[functions.f.variants.bon]
type = "experimental_best_of_n_sampling"
candidates = ["a", "a"]
timeout_s = 2
[functions.f.variants.bon.evaluator]
model = "dummy::judge"
temperature = 0.1
[functions.f.variants.mon]
type = "experimental_mixture_of_n"
candidates = ["a"]
fuser = { model = "dummy::fuser" }
[functions.f.variants.mon2]
type = "experimental_mixture_of_n_sampling"
candidates = ["a", "bon"]
fuser = { model = "dummy::fuser", json_mode = "on" }
`))
    const bon = anyVariantOf(config, "f", "bon")
    if (!isSamplingVariant(bon)) throw new Error("not a sampling variant")
    expect(bon).toMatchObject({ type: "experimental_best_of_n_sampling", candidates: ["a", "a"], candidateTimeoutMs: 2000 })
    expect(bon.judge).toMatchObject({ name: "bon", model: "dummy::judge", jsonMode: "strict", params: { temperature: 0.1 } })
    expect(anyVariantOf(config, "f", "mon").type).toBe("experimental_mixture_of_n_sampling")
    const mon2 = anyVariantOf(config, "f", "mon2")
    expect(isSamplingVariant(mon2) && mon2.judge.jsonMode).toBe("on")
  })

  it("builds chain-of-thought like chat_completion, and DICL with its embedding model and k", () => {
    const config = buildOk(chat(`
[functions.f.variants.cot]
type = "experimental_chain_of_thought"
model = "dummy::x"
[functions.f.variants.dicl]
type = "experimental_dynamic_in_context_learning"
model = "dummy::x"
embedding_model = "openai::text-embedding-3-small"
k = 3
max_distance = 0.5
`), { env: { OPENAI_API_KEY: "sk" } })
    expect(anyVariantOf(config, "f", "cot")).toMatchObject({ type: "experimental_chain_of_thought", model: "dummy::x" })
    expect(anyVariantOf(config, "f", "dicl")).toMatchObject({
      type: "experimental_dynamic_in_context_learning",
      embeddingModel: "openai::text-embedding-3-small",
      k: 3,
      maxDistance: 0.5
    })
  })

  it("refuses candidates that are not variants of the function, and variants that reach themselves", () => {
    const errors = buildErrors(chat(`
[functions.f.variants.x]
type = "experimental_best_of_n_sampling"
candidates = ["a", "nope"]
evaluator = { model = "dummy::judge" }
[functions.f.variants.self]
type = "experimental_best_of_n_sampling"
candidates = ["self"]
evaluator = { model = "dummy::judge" }
[functions.f.variants.p]
type = "experimental_mixture_of_n_sampling"
candidates = ["q"]
fuser = { model = "dummy::fuser" }
[functions.f.variants.q]
type = "experimental_best_of_n_sampling"
candidates = ["p"]
evaluator = { model = "dummy::judge" }
`))
    expect(errorAt(errors, "functions.f.variants.x.candidates[1]")).toMatch(/"nope" is not a variant of this function/)
    expect(errorAt(errors, "functions.f.variants.self.candidates")).toMatch(/self -> self/)
    expect(errorAt(errors, "functions.f.variants.p.candidates")).toMatch(/p -> q -> p/)
  })

  it("refuses a missing or misnamed judge block, an unknown judge model, an empty candidate list", () => {
    const errors = buildErrors(chat(`
[functions.f.variants.x]
type = "experimental_best_of_n_sampling"
candidates = ["a"]
fuser = { model = "dummy::x" }
[functions.f.variants.y]
type = "experimental_mixture_of_n_sampling"
candidates = []
fuser = { model = "nowhere" }
`))
    expect(errorAt(errors, "functions.f.variants.x.fuser")).toMatch(/has a evaluator, not a fuser|not a fuser/)
    expect(errorAt(errors, "functions.f.variants.x.evaluator")).toBe("missing table")
    expect(errorAt(errors, "functions.f.variants.y.candidates")).toMatch(/at least one candidate/)
    expect(errorAt(errors, "functions.f.variants.y.fuser.model")).toMatch(/unknown model "nowhere"/)
  })

  it("refuses DICL without k or with an embedding model that does not exist or cannot embed", () => {
    const errors = buildErrors(chat(`
[functions.f.variants.d1]
type = "experimental_dynamic_in_context_learning"
model = "dummy::x"
embedding_model = "missing_model"
k = 2
[functions.f.variants.d2]
type = "experimental_dynamic_in_context_learning"
model = "dummy::x"
embedding_model = "anthropic::claude"
k = 2
[functions.f.variants.d3]
type = "experimental_dynamic_in_context_learning"
model = "dummy::x"
embedding_model = "openai::e"
`))
    expect(errorAt(errors, "functions.f.variants.d1.embedding_model")).toMatch(/unknown embedding model "missing_model"/)
    expect(errorAt(errors, "functions.f.variants.d2.embedding_model")).toMatch(/does not support embeddings/)
    expect(errorAt(errors, "functions.f.variants.d3.k")).toBe("missing field")
  })

  it("requires the credential of a positive-weight DICL variant's short-hand embedding model", () => {
    const dicl = (weight: number) => chat(`
[functions.f.variants.d]
type = "experimental_dynamic_in_context_learning"
model = "dummy::x"
embedding_model = "openai::text-embedding-3-small"
k = 2
weight = ${weight}
`)
    const errors = buildErrors(dicl(1))
    expect(errorAt(errors, "functions.f.variants.d.embedding_model")).toMatch(
      /model "openai::text-embedding-3-small" uses provider "openai", whose credential is missing: .*OPENAI_API_KEY/
    )
    expect(errors).toHaveLength(1)
    buildOk(dicl(1), { env: { OPENAI_API_KEY: "sk-x" } })
    // reached only when pinned: its credential may come later (or with the request)
    buildOk(dicl(0))
  })

  it("requires the evaluator's templates for the function's schemas, unless system_instructions stands for the system one", () => {
    const files = { "/cfg/system.json": JSON.stringify({ type: "object" }), "/cfg/i.txt": "Judge well." }
    const errors = buildErrors(`
[functions.g]
type = "chat"
system_schema = "system.json"
[functions.g.variants.a]
type = "chat_completion"
model = "dummy::x"
system_template = "i.txt"
[functions.g.variants.ok]
type = "experimental_best_of_n_sampling"
candidates = ["a"]
evaluator = { model = "dummy::j", system_instructions = "i.txt" }
[functions.g.variants.bad]
type = "experimental_best_of_n_sampling"
candidates = ["a"]
evaluator = { model = "dummy::j" }
`, { files })
    expect(errorAt(errors, "functions.g.variants.bad.evaluator")).toMatch(/no template "system"/)
    expect(errors.some((error) => error.includes("variants.ok"))).toBe(false)
  })
})
