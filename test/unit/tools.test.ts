import * as Result from "effect/Result"
import { describe, expect, it } from "vitest"
import type { InferenceRequest } from "../../src/api/inference.ts"
import { resolveTools } from "../../src/inference/tools.ts"
import type { ToolConfig } from "../../src/inference/types.ts"
import { buildOk, functionOf, json } from "./fixtures.ts"

const config = buildOk(`
[tools.get_weather]
description = "Weather"
parameters = "weather.json"
[tools.search]
description = "Search"
parameters = "search.json"
[tools.renamed]
name = "get_weather_v2"
description = "Configured under one key, offered under another name"
parameters = "weather.json"
[tools.unlisted]
description = "Configured but not listed by any function"
parameters = "search.json"

[functions.assistant]
type = "chat"
tools = ["get_weather", "search"]
tool_choice = { specific = "search" }
parallel_tool_calls = true
[functions.assistant.variants.v]
type = "chat_completion"
model = "dummy::offered_tool"

[functions.renaming]
type = "chat"
tools = ["renamed"]
tool_choice = { specific = "renamed" }
[functions.renaming.variants.v]
type = "chat_completion"
model = "dummy::offered_tool"

[functions.toolless]
type = "chat"
[functions.toolless.variants.v]
type = "chat_completion"
model = "dummy::hello"

[functions.extract]
type = "json"
[functions.extract.variants.v]
type = "chat_completion"
model = "dummy::json"
`, {
  files: {
    "/cfg/weather.json": json({ type: "object", properties: { location: { type: "string" } }, required: ["location"] }),
    "/cfg/search.json": json({ type: "object", properties: { q: { type: "string" } }, required: ["q"] })
  }
})

const request = (fields: Partial<InferenceRequest>): InferenceRequest => ({ input: {}, ...fields })

const resolve = (functionName: string, fields: Partial<InferenceRequest> = {}) =>
  resolveTools(functionOf(config, functionName), request(fields), config.tools)

const resolved = (functionName: string, fields: Partial<InferenceRequest> = {}): ToolConfig | undefined => {
  const result = resolve(functionName, fields)
  if (Result.isFailure(result)) throw new Error(`${result.failure.path}: ${result.failure.message}`)
  return result.success
}

const problem = (functionName: string, fields: Partial<InferenceRequest>) => {
  const result = resolve(functionName, fields)
  if (Result.isSuccess(result)) throw new Error(`expected a problem, got ${JSON.stringify(result.success)}`)
  return result.failure
}

const names = (tools: ToolConfig | undefined) => tools?.tools.map((tool) => tool.name)

describe("resolveTools", () => {
  it("offers the function's configured tools with its tool_choice and parallel_tool_calls", () => {
    const tools = resolved("assistant")!
    expect(names(tools)).toEqual(["get_weather", "search"])
    expect(tools.choice).toEqual({ type: "specific", name: "search" })
    expect(tools.parallelToolCalls).toBe(true)
    expect(tools.allowed).toBeUndefined()
  })

  it("lets the request override tool_choice and parallel_tool_calls", () => {
    const tools = resolved("assistant", { tool_choice: "none", parallel_tool_calls: false })!
    expect(tools.choice).toEqual({ type: "none" })
    expect(tools.parallelToolCalls).toBe(false)
  })

  it("has no tools for a function without tools", () => {
    expect(resolved("toolless")).toBeUndefined()
    expect(resolved("toolless", { tool_choice: "auto" })).toBeUndefined()
  })

  it("refuses tool_choice required or specific when there are no tools", () => {
    expect(problem("toolless", { tool_choice: "required" }).path).toBe("tool_choice")
  })

  it("adds additional_tools, compiling their schemas", () => {
    const tools = resolved("toolless", {
      additional_tools: [{ name: "lookup", description: "Look up", parameters: { type: "object", required: ["id"] }, strict: true }]
    })!
    expect(names(tools)).toEqual(["lookup"])
    expect(tools.tools[0].strict).toBe(true)
    expect(tools.tools[0].parameters).toEqual({ type: "object", required: ["id"] })
    expect(tools.tools[0].validator.validate({ id: 1 })).toBeUndefined()
    expect(tools.tools[0].validator.validate({})).toBeDefined()
    expect(tools.choice).toEqual({ type: "auto" })
  })

  it("refuses an additional tool with an invalid schema, naming it", () => {
    const result = problem("toolless", {
      additional_tools: [
        { name: "ok", description: "", parameters: { type: "object" } },
        { name: "bad", description: "", parameters: { type: "nonsense" } }
      ]
    })
    expect(result.path).toBe("additional_tools[1].parameters")
    expect(result.message).toMatch(/^invalid JSON Schema: /)
  })

  it("refuses an additional tool named like an available tool", () => {
    expect(problem("assistant", { additional_tools: [{ name: "search", description: "", parameters: {} }] }).path).toBe(
      "additional_tools[0].name"
    )
  })

  it("restricts the tools with allowed_tools, which may name configured and additional tools", () => {
    const tools = resolved("assistant", {
      additional_tools: [{ name: "lookup", description: "", parameters: { type: "object" } }],
      allowed_tools: ["lookup", "get_weather", "unlisted"],
      tool_choice: "auto"
    })!
    expect(tools.allowed).toEqual(["lookup", "get_weather", "unlisted"])
    // a configured tool the function does not list becomes available by being allowed
    expect(names(tools)).toEqual(["get_weather", "search", "lookup", "unlisted"])
  })

  it("refuses allowed_tools naming an unknown tool, with its index", () => {
    const result = problem("assistant", { allowed_tools: ["search", "ghost"] })
    expect(result.path).toBe("allowed_tools[1]")
    expect(result.message).toContain(`"ghost"`)
  })

  it("refuses tool_choice specific naming an unknown tool", () => {
    const result = problem("assistant", { tool_choice: { specific: "ghost" } })
    expect(result.path).toBe("tool_choice.specific")
    expect(result.message).toContain(`"ghost"`)
  })

  it("accepts tool_choice specific naming an additional tool", () => {
    const tools = resolved("toolless", {
      additional_tools: [{ name: "lookup", description: "", parameters: {} }],
      tool_choice: { specific: "lookup" }
    })!
    expect(tools.choice).toEqual({ type: "specific", name: "lookup" })
  })

  it("names a forced tool as it is offered (its name, not its [tools] key), from configuration or request", () => {
    const configured = resolved("renaming")!
    expect(names(configured)).toEqual(["get_weather_v2"])
    expect(configured.choice).toEqual({ type: "specific", name: "get_weather_v2" })
    expect(resolved("renaming", { tool_choice: { specific: "renamed" } })!.choice).toEqual({ type: "specific", name: "get_weather_v2" })
  })

  it("refuses every tool field for a json function", () => {
    expect(resolved("extract")).toBeUndefined()
    expect(problem("extract", { additional_tools: [] }).path).toBe("additional_tools")
    expect(problem("extract", { allowed_tools: [] }).path).toBe("allowed_tools")
    expect(problem("extract", { tool_choice: "auto" }).path).toBe("tool_choice")
    expect(problem("extract", { parallel_tool_calls: true }).path).toBe("parallel_tool_calls")
  })
})
