/**
 * Plain templates (src/inference/plainTemplate.ts) render without the WebAssembly engine: every
 * template of the test configurations, the examples and the benchmark, and a list of edge
 * cases, is rendered both ways (an engine with plain rendering and one without) with the same
 * arguments, and the results must be equal: text, or the engine's own error.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "vitest"
import { plainTemplate, renderPlain } from "../../src/inference/plainTemplate.ts"
import { type RenderResult, TemplateEngine } from "../../src/inference/templates.ts"

const root = path.resolve(import.meta.dirname, "../..")

const filesUnder = (dir: string, keep: (name: string) => boolean): Array<string> =>
  fs.readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && keep(entry.name))
    .map((entry) => path.join(entry.parentPath, entry.name))

/** template sources written as string literals next to a `.minijinja` name in the tests and the benchmark */
const literalTemplates = (): Array<string> => {
  const literal = /\.minijinja"\)?[:,]\s*("(?:[^"\\\n]|\\.)*"|`[^`$]*`)/g
  const sources: Array<string> = []
  for (const file of [...filesUnder(path.join(root, "test"), (name) => name.endsWith(".ts")), ...filesUnder(path.join(root, "bench"), (name) => name.endsWith(".ts"))]) {
    for (const match of fs.readFileSync(file, "utf8").matchAll(literal)) {
      const text = match[1]!
      sources.push(text.startsWith("`") ? text.slice(1, -1) : JSON.parse(text))
    }
  }
  return sources
}

const configurationTemplates = (): Array<string> => [
  ...filesUnder(path.join(root, "examples"), (name) => name.endsWith(".minijinja")).map((file) => fs.readFileSync(file, "utf8")),
  ...literalTemplates()
]

/** strings a prompt may carry, including what looks like template syntax */
const values = ["tea", "", "{{ not_a_variable }}", "{% if x %}", "line\nbreak\r\n", "émoji 🍵 ß", "  spaced  ", "a\"quote'", "\\back", "\u0000nul"]

/** `paths` as nested objects, each holding `value(i)` */
const contextOf = (paths: ReadonlyArray<ReadonlyArray<string>>, value: (i: number) => unknown): Record<string, unknown> => {
  const context: Record<string, unknown> = {}
  paths.forEach((names, i) => {
    let at = context
    names.slice(0, -1).forEach((name) => {
      if (typeof at[name] !== "object" || at[name] === null) at[name] = {}
      at = at[name] as Record<string, unknown>
    })
    at[names.at(-1)!] = value(i)
  })
  return context
}

const key = "f::v::user"

/** the source compiled twice, with and without plain rendering; undefined when it does not compile */
const bothWays = (source: string) => {
  const plain = TemplateEngine.compile([{ key, source, origin: "t" }])
  const engine = TemplateEngine.compile([{ key, source, origin: "t" }], { plainRendering: false })
  if (!("engine" in plain) || !("engine" in engine)) return undefined
  return { plain: plain.engine, engine: engine.engine }
}

/** renders `source` both ways with contexts made for its variables; answers how many were plain */
const compare = (sources: ReadonlyArray<string>): number => {
  let plainCount = 0
  for (const source of sources) {
    const engines = bothWays(source)
    if (engines === undefined) continue
    const parsed = plainTemplate(key, source)
    if (parsed === undefined) continue
    plainCount++
    const paths = parsed.filter((piece): piece is ReadonlyArray<string> => typeof piece !== "string")
    const contexts: Array<unknown> = [
      ...values.map((_, shift) => contextOf(paths, (i) => values[(i + shift) % values.length])),
      // not strings: the engine's formatting
      contextOf(paths, (i) => [1, 1.5, true, null, ["x"], { a: 1 }][i % 6]),
      // a variable missing: the engine's error
      contextOf(paths.slice(1), () => "x"),
      {}
    ]
    for (const context of contexts) {
      const both: [RenderResult, RenderResult] = [engines.plain.render(key, context), engines.engine.render(key, context)]
      expect(both[0], `${JSON.stringify(source)} with ${JSON.stringify(context)}`).toEqual(both[1])
    }
  }
  return plainCount
}

describe("plain templates", () => {
  it("render every template of the test configurations, the examples and the benchmark as the engine does", () => {
    const sources = configurationTemplates()
    expect(sources.length).toBeGreaterThan(40)
    // most of them are plain, which is why the shortcut pays
    expect(compare(sources)).toBeGreaterThan(sources.length / 3)
  })

  it("render edge cases as the engine does, and leave everything but text and variables to it", () => {
    const cases = [
      "Hello {{ name }}", "{{name}}", "{{ a }}{{ b }}", "{{\n  a\t}}", "{{ user.name }} and {{ user.city.zip }}",
      "trailing\n", "trailing\r\n", "two\n\n", "\n", "", "just text", "a { lone brace }", "}} closing", "{ {{ a }} }",
      "{{ a }}\n", "{{ true }}", "{{ none }}", "{{ a|upper }}", "{{- a }}", "{{ a -}} x", "{{ a.0 }}", "{{ a['b'] }}",
      "{# comment #}{{ a }}", "{% if a %}x{% endif %}", "{{ 'lit' }}", "{{ a + b }}", "{{ range }}", "end {", "{{ a }", "{{ loop }}"
    ]
    compare(cases)
    expect(plainTemplate(key, "{{ a|upper }}")).toBeUndefined()
    expect(plainTemplate(key, "{# c #}")).toBeUndefined()
    expect(plainTemplate(key, "{{- a }}")).toBeUndefined()
    expect(plainTemplate(key, "{{ true }}")).toBeUndefined()
    expect(plainTemplate(key, "You are {{ name }}, on {{ topic.title }}.\n")).toEqual(["You are ", ["name"], ", on ", ["topic", "title"], "."])
    // a name that makes the engine escape what it prints
    expect(plainTemplate("f::v::page.html", "{{ a }}")).toBeUndefined()
    expect(plainTemplate("data.json.j2", "{{ a }}")).toBeUndefined()
  })

  it("answer undefined where only the engine knows the text, so that it renders those", () => {
    const template = plainTemplate(key, "{{ a.b }}")!
    expect(renderPlain(template, { a: { b: "x" } })).toBe("x")
    expect(renderPlain(template, { a: { b: 1 } })).toBeUndefined()
    expect(renderPlain(template, { a: {} })).toBeUndefined()
    expect(renderPlain(template, { a: ["x"] })).toBeUndefined()
    expect(renderPlain(template, { a: "b" })).toBeUndefined()
  })
})
