import * as Result from "effect/Result"
import { parse } from "smol-toml"
import { describe, expect, it } from "vitest"
import type { Input } from "../../src/api/inference.ts"
import { buildConfig } from "../../src/config/build.ts"
import type { ChatCompletionVariant, GatewayConfig } from "../../src/config/types.ts"
import { renderInput } from "../../src/inference/input.ts"
import { candidateVariant, compileCandidate, type GepaCandidate } from "../../src/optimization/gepa/candidates.ts"
import { exportFiles, gepaVariantJson } from "../../src/optimization/gepa/export.ts"
import { buildOk, configPath, functionOf, json, variantOf } from "./fixtures.ts"

const toml = `
[models.m]
routing = ["d"]
[models.m.providers.d]
type = "dummy"
model_name = "hello"

[functions."my::fn"]
type = "chat"
schemas.user.path = "user.json"

[functions."my::fn".variants.base]
type = "chat_completion"
model = "m"
templates.system.path = "system.minijinja"
templates.user.path = "user.minijinja"
temperature = 0.5
stop_sequences = ["END"]
json_mode = "off"
retries = { num_retries = 3, max_delay_s = 2 }
timeouts = { non_streaming = { total_ms = 9000 } }
extra_body = [{ pointer = "/top_k", value = 40 }, { pointer = "/drop", delete = true }]
extra_headers = [{ name = "X-Team", value = "mail" }]
`

const files: Record<string, string> = {
  "/cfg/user.json": json({ type: "object", properties: { name: { type: "string" } }, required: ["name"] }),
  "/cfg/system.minijinja": "Be kind.",
  "/cfg/user.minijinja": "Hello {{ name }}"
}

const config = buildOk(toml, { files })
const base = variantOf(config, "my::fn", "base") as ChatCompletionVariant

const input: Input = { messages: [{ role: "user", content: [{ type: "text", arguments: { name: "Ada" } }] }] }

const candidates: ReadonlyArray<GepaCandidate> = [
  { name: "gepa::1/a", iteration: 1, parent: "base", templates: { system: "Be kind and brief. {# a comment #}", user: "Hi {{ name }}!\n" } },
  { name: "gepa 2", iteration: 2, templates: { system: "{% if true %}Be warm.{% endif %}", user: "Dear {{ name | upper }}," } }
]

/** what the candidate's variant renders through its own engine */
const renderedCandidate = (candidate: GepaCandidate) => {
  const compiled = compileCandidate(config.templates, "my::fn", candidate)
  if ("problem" in compiled) throw new Error(compiled.problem)
  return renderInput(input, functionOf(config, "my::fn"), candidateVariant(base, "my::fn", candidate), compiled.engine).pipe(Result.getOrThrowWith((problem) => new Error(`${problem.path}: ${problem.message}`)))
}

describe("gepaVariantJson", () => {
  it("writes the candidate as a chat_completion variant table with the base's settings and its templates inline", () => {
    expect(gepaVariantJson(base, candidates[0])).toEqual({
      type: "chat_completion",
      model: "m",
      templates: { system: { content: "Be kind and brief. {# a comment #}" }, user: { content: "Hi {{ name }}!\n" } },
      json_mode: "off",
      temperature: 0.5,
      stop_sequences: ["END"],
      retries: { num_retries: 3, max_delay_s: 2 },
      timeouts: { non_streaming: { total_ms: 9000 } },
      extra_body: [{ pointer: "/top_k", value: 40 }, { pointer: "/drop", delete: true }],
      extra_headers: [{ name: "X-Team", value: "mail" }]
    })
  })

  it("leaves out what the base does not set", () => {
    const plain = buildOk(`
[functions.g]
type = "json"
[functions.g.variants.v]
type = "chat_completion"
model = "dummy::json"
`)
    const table = gepaVariantJson(variantOf(plain, "g", "v") as ChatCompletionVariant, { name: "c", iteration: 0, templates: {} })
    expect(table).toEqual({ type: "chat_completion", model: "dummy::json", templates: {}, json_mode: "on", retries: { num_retries: 0, max_delay_s: 10 } })
  })
})

describe("exportFiles", () => {
  const variants = Object.fromEntries(candidates.map((candidate) => [candidate.name, gepaVariantJson(base, candidate)]))
  const exported = exportFiles("my::fn", variants)

  it("writes gateway.toml and one file per template, at paths safe for file systems", () => {
    expect(exported[0].path).toBe("gateway.toml")
    const templatePaths = exported.slice(1).map((file) => file.path)
    expect(templatePaths).toEqual([
      "my__fn/gepa__1_a/system.minijinja",
      "my__fn/gepa__1_a/user.minijinja",
      "my__fn/gepa_2/system.minijinja",
      "my__fn/gepa_2/user.minijinja"
    ])
    expect(exported[2].content).toBe("Hi {{ name }}!\n")
    const tables = parse(exported[0].content) as { functions: Record<string, { variants: Record<string, { templates: unknown }> }> }
    expect(Object.keys(tables.functions)).toEqual(["my::fn"])
    expect(tables.functions["my::fn"].variants["gepa::1/a"].templates).toEqual({
      system: { path: "my__fn/gepa__1_a/system.minijinja" },
      user: { path: "my__fn/gepa__1_a/user.minijinja" }
    })
  })

  it("gives distinct paths to names that sanitize alike", () => {
    const clash = exportFiles("f", {
      "a::b": { type: "chat_completion", model: "m", templates: { user: { content: "1" } } },
      "a__b": { type: "chat_completion", model: "m", templates: { user: { content: "2" } } },
      "..": { type: "chat_completion", model: "m", templates: { user: { content: "3" } } }
    })
    const paths = clash.slice(1).map((file) => file.path)
    expect(new Set(paths).size).toBe(3)
    expect(paths).toContain("f/__/user.minijinja")
    for (const path of paths) expect(path.split("/")).not.toContain("..")
  })

  it("merged into the configuration, builds, and each exported variant renders what its candidate does", () => {
    // the exported files under /cfg/gepa: paths in the TOML resolve against its folder
    const exportedFiles = Object.fromEntries(exported.slice(1).map((file) => [`/cfg/gepa/${file.path}`, file.content]))
    const result = buildConfig({
      sources: [{ path: configPath, text: toml }, { path: "/cfg/gepa/gateway.toml", text: exported[0].content }],
      readFile: (path) => ({ ...files, ...exportedFiles })[path],
      env: {}
    })
    if ("errors" in result) throw new Error(result.errors.join("\n"))
    const merged: GatewayConfig = result.config
    const fn = functionOf(merged, "my::fn")
    for (const candidate of candidates) {
      const variant = variantOf(merged, "my::fn", candidate.name) as ChatCompletionVariant
      expect(variant.params).toEqual(base.params)
      expect(variant.retries).toEqual(base.retries)
      expect(variant.timeouts).toEqual(base.timeouts)
      expect(variant.extraBody).toEqual(base.extraBody)
      expect(variant.extraHeaders).toEqual(base.extraHeaders)
      expect(variant.jsonMode).toBe(base.jsonMode)
      const rendered = renderInput(input, fn, variant, merged.templates).pipe(Result.getOrThrowWith((problem) => new Error(`${problem.path}: ${problem.message}`)))
      expect(rendered).toEqual(renderedCandidate(candidate))
    }
  })
})
