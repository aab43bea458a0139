import { describe, expect, it } from "vitest"
import type { ChatCompletionVariant } from "../../src/config/types.ts"
import { buildConfig } from "../../src/config/build.ts"
import { formatIssue, formatKeyPath, isTable, mergeConfigSources } from "../../src/config/merge.ts"

describe("mergeConfigSources", () => {
  it("merges tables spread over several files into one tree", () => {
    const { merged, issues } = mergeConfigSources([
      { path: "/cfg/functions.toml", text: `[functions.f]\ntype = "chat"\n` },
      { path: "/cfg/variants/f.toml", text: `[functions.f.variants.v]\ntype = "chat_completion"\nmodel = "dummy::x"\n` },
      { path: "/cfg/gateway.toml", text: `[gateway]\ndebug = true\n` }
    ])
    expect(issues).toEqual([])
    expect(merged.value).toEqual({
      functions: { f: { type: "chat", variants: { v: { type: "chat_completion", model: "dummy::x" } } } },
      gateway: { debug: true }
    })
  })

  it("remembers the file that defined each key, for the deepest known prefix", () => {
    const { merged } = mergeConfigSources([
      { path: "/cfg/a.toml", text: `[functions.f]\ntype = "chat"\n` },
      { path: "/cfg/b.toml", text: `[functions.f.variants.v]\ntype = "chat_completion"\n` }
    ])
    expect(merged.fileOf(["functions", "f", "type"])).toBe("/cfg/a.toml")
    expect(merged.fileOf(["functions", "f", "variants", "v", "type"])).toBe("/cfg/b.toml")
    // a key that no file defines belongs to the file of its nearest defined parent
    expect(merged.fileOf(["functions", "f", "variants", "v", "templates", "user"])).toBe("/cfg/b.toml")
    expect(merged.fileOf(["models"])).toBeUndefined()
  })

  it("with a single file, every path belongs to that file", () => {
    const { merged } = mergeConfigSources([{ path: "/cfg/only.toml", text: `a = 1\n` }])
    expect(merged.fileOf(["nowhere", "at", "all"])).toBe("/cfg/only.toml")
  })

  it("reports a key defined in two files as one issue naming both files", () => {
    const { merged, issues } = mergeConfigSources([
      { path: "/cfg/one.toml", text: `[functions.f]\ntype = "chat"\n` },
      { path: "/cfg/two.toml", text: `[functions.f]\ntype = "json"\n` }
    ])
    expect(issues).toHaveLength(1)
    expect(issues[0].path).toEqual(["functions", "f", "type"])
    expect(issues[0].file).toBe("/cfg/two.toml")
    expect(issues[0].message).toContain("/cfg/one.toml")
    expect(issues[0].message).toContain("/cfg/two.toml")
    // the first definition is kept
    expect((merged.value.functions as any).f.type).toBe("chat")
  })

  it("reports a table in one file replaced by a value in another", () => {
    const { issues } = mergeConfigSources([
      { path: "/cfg/one.toml", text: `[models.m]\nrouting = ["p"]\n` },
      { path: "/cfg/two.toml", text: `models = "none"\n` }
    ])
    expect(issues).toHaveLength(1)
    expect(issues[0].path).toEqual(["models"])
    expect(issues[0].message).toMatch(/defined twice: in \/cfg\/one\.toml and in \/cfg\/two\.toml/)
  })

  it("reports invalid TOML with the file, and still merges the other files", () => {
    const { merged, issues } = mergeConfigSources([
      { path: "/cfg/broken.toml", text: `[functions.f\ntype = "chat"\n` },
      { path: "/cfg/good.toml", text: `[gateway]\ndebug = true\n` }
    ])
    expect(issues).toHaveLength(1)
    expect(issues[0].file).toBe("/cfg/broken.toml")
    expect(issues[0].path).toEqual([])
    expect(issues[0].message).toMatch(/^invalid TOML: /)
    expect(merged.value).toEqual({ gateway: { debug: true } })
  })

  it("reports a duplicate key inside one file as invalid TOML", () => {
    const { issues } = mergeConfigSources([{ path: "/cfg/dup.toml", text: `a = 1\na = 2\n` }])
    expect(issues).toHaveLength(1)
    expect(issues[0].message).toMatch(/^invalid TOML: /)
  })
})

describe("buildConfig with several files", () => {
  it("names both files of a key defined twice, in the form <file>: <key.path>: <message>", () => {
    const result = buildConfig({
      sources: [
        { path: "/cfg/a.toml", text: `[functions.f]\ntype = "chat"\n` },
        { path: "/cfg/b.toml", text: `[functions.f]\ntype = "chat"\n` }
      ],
      readFile: () => undefined,
      env: {}
    })
    expect("errors" in result && result.errors).toEqual([
      "/cfg/b.toml: functions.f.type: defined twice: in /cfg/a.toml and in /cfg/b.toml"
    ])
  })

  it("reports invalid TOML as <file>: invalid TOML", () => {
    const result = buildConfig({ sources: [{ path: "/cfg/x.toml", text: `this is not toml` }], readFile: () => undefined, env: {} })
    expect("errors" in result).toBe(true)
    if ("errors" in result) {
      expect(result.errors).toHaveLength(1)
      expect(result.errors[0]).toMatch(/^\/cfg\/x\.toml: invalid TOML: /)
    }
  })

  it("resolves relative paths against the folder of the file that wrote them", () => {
    const files: Record<string, string> = {
      "/cfg/functions/templates/user.minijinja": "Hello {{ name }}",
      "/cfg/functions/schemas/user.json": JSON.stringify({ type: "object", properties: { name: { type: "string" } } })
    }
    const result = buildConfig({
      sources: [
        { path: "/cfg/main.toml", text: `[gateway]\ndebug = true\n` },
        {
          path: "/cfg/functions/f.toml",
          text: `[functions.f]\ntype = "chat"\nschemas.user.path = "schemas/user.json"\n` +
            `[functions.f.variants.v]\ntype = "chat_completion"\nmodel = "dummy::x"\ntemplates.user.path = "templates/user.minijinja"\n`
        }
      ],
      readFile: (p) => files[p],
      env: {}
    })
    if ("errors" in result) throw new Error(result.errors.join("\n"))
    expect(result.config.functions.get("f")!.schemas.has("user")).toBe(true)
    expect((result.config.functions.get("f")!.variants.get("v")! as ChatCompletionVariant).templates.has("user")).toBe(true)
  })
})

describe("formatKeyPath", () => {
  it("joins bare keys with dots and indexes with brackets", () => {
    expect(formatKeyPath(["functions", "my_fn", "variants", "v-1"])).toBe("functions.my_fn.variants.v-1")
    expect(formatKeyPath(["rate_limiting", "rules", 0, "scope"])).toBe("rate_limiting.rules[0].scope")
    expect(formatKeyPath(["models", "m", "routing", 1])).toBe("models.m.routing[1]")
  })

  it("quotes keys that are not bare TOML keys", () => {
    expect(formatKeyPath(["functions", "my_fn", "variants", "v.1"])).toBe(`functions.my_fn.variants."v.1"`)
    expect(formatKeyPath(["models", "openai::gpt-4o"])).toBe(`models."openai::gpt-4o"`)
    expect(formatKeyPath(["functions", "with space"])).toBe(`functions."with space"`)
    expect(formatKeyPath(["a", `q"uote`])).toBe(`a."q\\"uote"`)
    expect(formatKeyPath([""])).toBe(`""`)
  })

  it("formats the empty path as an empty string", () => {
    expect(formatKeyPath([])).toBe("")
  })
})

describe("formatIssue", () => {
  it("writes <file>: <key.path>: <message>, leaving out what is unknown", () => {
    expect(formatIssue({ file: "/cfg/a.toml", path: ["gateway", "debug"], message: "bad" })).toBe("/cfg/a.toml: gateway.debug: bad")
    expect(formatIssue({ file: "/cfg/a.toml", path: [], message: "bad" })).toBe("/cfg/a.toml: bad")
    expect(formatIssue({ path: ["gateway"], message: "bad" })).toBe("gateway: bad")
    expect(formatIssue({ path: [], message: "bad" })).toBe("bad")
  })
})

describe("isTable", () => {
  it("accepts plain objects only", () => {
    expect(isTable({ a: 1 })).toBe(true)
    expect(isTable([])).toBe(false)
    expect(isTable(null)).toBe(false)
    expect(isTable(new Date())).toBe(false)
    expect(isTable("x")).toBe(false)
    expect(isTable(Object.create(null))).toBe(true)
  })
})
