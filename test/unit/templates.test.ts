import { describe, expect, it } from "vitest"
import { TemplateEngine, templateArgumentLimits, templateArgumentsProblem } from "../../src/inference/templates.ts"

const compiled = () => {
  const result = TemplateEngine.compile([
    { key: "f::v::system", source: `{% include "header.minijinja" %}{{ topic }}`, origin: "system.minijinja" },
    { key: "f::v::ruler", source: `{{ "-" * width }}`, origin: "ruler.minijinja" },
    { key: "header.minijinja", source: "About: ", origin: "header.minijinja" }
  ])
  if (!("engine" in result)) throw new Error(JSON.stringify(result.errors))
  return result.engine
}

/** `depth` arrays nested in one another */
const nested = (depth: number) => JSON.parse("[".repeat(depth) + "]".repeat(depth))

describe("TemplateEngine", () => {
  it("renders, includes included", () => {
    expect(compiled().render("f::v::system", { topic: "tea" })).toEqual({ text: "About: tea" })
  })

  it("reports a template error and keeps the engine", () => {
    const engine = compiled()
    const failed = engine.render("f::v::system", {})
    expect(failed).toEqual({ error: expect.stringMatching(/^undefined value/) })
    expect("engineFailed" in failed).toBe(false)
    expect(engine.render("f::v::system", { topic: "tea" })).toEqual({ text: "About: tea" })
  })

  it("rebuilds itself after a WebAssembly trap, which would otherwise break every later render", () => {
    const engine = compiled()
    // past the argument bounds (checked by the caller): the engine's stack overflows
    const trapped = engine.render("f::v::system", { topic: "x", deep: nested(20_000) })
    expect(trapped).toEqual({ error: expect.stringMatching(/^the template engine failed \(.+\); it has been restarted$/), engineFailed: true })
    expect(engine.render("f::v::system", { topic: "tea" })).toEqual({ text: "About: tea" })
    // a Rust panic (capacity overflow) within the bounds
    expect(engine.render("f::v::ruler", { width: 3e9 })).toMatchObject({ engineFailed: true })
    expect(engine.render("f::v::ruler", { width: 3 })).toEqual({ text: "---" })
    expect(engine.render("f::v::system", { topic: "coffee" })).toEqual({ text: "About: coffee" })
  })

  it("stops a render that runs out of fuel (a loop in a loop over a long list) with a template error", () => {
    const result = TemplateEngine.compile([
      { key: "pairs", source: "{% for x in items %}{% for y in items %}.{% endfor %}{% endfor %}", origin: "pairs" },
      { key: "list", source: "{% for x in items %}{{ x }},{% endfor %}", origin: "list" }
    ])
    if (!("engine" in result)) throw new Error(JSON.stringify(result.errors))
    const items = Array.from({ length: 100_000 }, (_, i) => i)
    expect(result.engine.render("pairs", { items })).toEqual({ error: "engine ran out of fuel (in pairs:1)" })
    // a list of 100 000 values rendered once fits
    expect((result.engine.render("list", { items }) as { text: string }).text.split(",")).toHaveLength(100_001)
  })

  it("keeps compiling syntax errors as start-up errors, with the template's origin", () => {
    const result = TemplateEngine.compile([{ key: "k", source: "{% if %}", origin: "bad.minijinja" }])
    expect(result).toEqual({ errors: [{ origin: "bad.minijinja", message: expect.stringMatching(/^template syntax error: /) }] })
  })
})

describe("templateArgumentsProblem", () => {
  it("accepts arguments within the limits", () => {
    expect(templateArgumentsProblem({ topic: "tea", list: [1, { a: [2] }] })).toBeUndefined()
    expect(templateArgumentsProblem({ x: nested(templateArgumentLimits.depth - 1) })).toBeUndefined()
    expect(templateArgumentsProblem({ x: new Array(templateArgumentLimits.values - 2).fill("a") })).toBeUndefined()
  })

  it("refuses deeper nesting, in arrays and objects alike", () => {
    expect(templateArgumentsProblem({ x: nested(templateArgumentLimits.depth) })).toBe("template arguments nest deeper than 64 levels")
    let deep: Record<string, unknown> = {}
    for (let i = 0; i < 100; i++) deep = { a: deep }
    expect(templateArgumentsProblem(deep)).toBe("template arguments nest deeper than 64 levels")
  })

  it("refuses more values, counted across the whole tree", () => {
    const half = new Array(templateArgumentLimits.values / 2).fill(0)
    expect(templateArgumentsProblem({ a: half, b: { c: half } })).toBe("template arguments hold more than 100000 values")
  })
})
