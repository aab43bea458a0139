import { describe, expect, it } from "vitest"
import { chatOutput, jsonOutput, jsonRawText, validateToolCall } from "../../src/inference/output.ts"
import type { ToolConfig, ToolDefinition } from "../../src/inference/types.ts"
import { compileJsonSchema } from "../../src/jsonSchema.ts"

const tool = (name: string, parameters: Record<string, unknown>): ToolDefinition => {
  const compiled = compileJsonSchema(parameters)
  if ("error" in compiled) throw new Error(compiled.error)
  return { name, description: name, parameters, strict: false, validator: compiled.validator }
}

const weather = tool("get_weather", {
  type: "object",
  properties: { location: { type: "string" }, units: { enum: ["celsius", "fahrenheit"] } },
  required: ["location"]
})
const search = tool("search", { type: "object", properties: { q: { type: "string" } }, required: ["q"] })
const tools: ToolConfig = { tools: [weather, search], choice: { type: "auto" } }

describe("validateToolCall", () => {
  it("parses the arguments of a call to an offered tool when they fit its schema", () => {
    expect(validateToolCall(tools, "call_1", "get_weather", `{"location":"Paris","units":"celsius"}`)).toEqual({
      type: "tool_call",
      id: "call_1",
      name: "get_weather",
      arguments: { location: "Paris", units: "celsius" },
      raw_name: "get_weather",
      raw_arguments: `{"location":"Paris","units":"celsius"}`
    })
  })

  it("gives name and arguments null for a tool that was not offered, keeping the raw values", () => {
    expect(validateToolCall(tools, "c", "get_wether", `{"location":"Paris"}`)).toEqual({
      type: "tool_call",
      id: "c",
      name: null,
      arguments: null,
      raw_name: "get_wether",
      raw_arguments: `{"location":"Paris"}`
    })
  })

  it("gives arguments null when they are not JSON", () => {
    const call = validateToolCall(tools, "c", "get_weather", `{"location": Paris`)
    expect(call.name).toBe("get_weather")
    expect(call.arguments).toBeNull()
    expect(call.raw_arguments).toBe(`{"location": Paris`)
  })

  it("gives arguments null when they do not fit the tool's schema", () => {
    expect(validateToolCall(tools, "c", "get_weather", `{"location":12345}`).arguments).toBeNull()
    expect(validateToolCall(tools, "c", "get_weather", `{"units":"celsius"}`).arguments).toBeNull()
    expect(validateToolCall(tools, "c", "get_weather", `{"location":"x","units":"kelvin"}`).arguments).toBeNull()
    expect(validateToolCall(tools, "c", "get_weather", `{"location":"x","units":"kelvin"}`).name).toBe("get_weather")
  })

  it("treats a tool outside the allowed list as unknown", () => {
    const restricted: ToolConfig = { ...tools, allowed: ["search"] }
    expect(validateToolCall(restricted, "c", "search", `{"q":"x"}`).arguments).toEqual({ q: "x" })
    const call = validateToolCall(restricted, "c", "get_weather", `{"location":"Paris"}`)
    expect(call.name).toBeNull()
    expect(call.arguments).toBeNull()
  })

  it("treats every tool as unknown when no tools were offered", () => {
    const call = validateToolCall(undefined, "c", "get_weather", `{"location":"Paris"}`)
    expect(call.name).toBeNull()
    expect(call.arguments).toBeNull()
  })
})

describe("chatOutput", () => {
  it("validates tool calls and passes the other blocks through", () => {
    expect(chatOutput([
      { type: "thought", text: "thinking", signature: "s" },
      { type: "text", text: "Let me check." },
      { type: "tool_call", id: "1", raw_name: "search", raw_arguments: `{"q":"weather"}` },
      { type: "tool_call", id: "2", raw_name: "search", raw_arguments: `{}` },
      { type: "unknown", data: { x: 1 }, model_provider_name: "gateway::model_name::m::provider_name::p" }
    ], tools)).toEqual([
      { type: "thought", text: "thinking", signature: "s" },
      { type: "text", text: "Let me check." },
      { type: "tool_call", id: "1", name: "search", arguments: { q: "weather" }, raw_name: "search", raw_arguments: `{"q":"weather"}` },
      { type: "tool_call", id: "2", name: "search", arguments: null, raw_name: "search", raw_arguments: `{}` },
      { type: "unknown", data: { x: 1 }, model_provider_name: "gateway::model_name::m::provider_name::p" }
    ])
  })
})

describe("jsonRawText", () => {
  it("joins the text blocks", () => {
    expect(jsonRawText([{ type: "thought", text: "ignored" }, { type: "text", text: `{"a":` }, { type: "text", text: `1}` }])).toBe(`{"a":1}`)
  })

  it("takes the arguments of the tool call when there is no text (json_mode tool)", () => {
    expect(jsonRawText([{ type: "tool_call", id: "0", raw_name: "respond", raw_arguments: `{"answer":"Hello"}` }])).toBe(
      `{"answer":"Hello"}`
    )
  })

  it("prefers text over a tool call, and is empty when there is neither", () => {
    expect(jsonRawText([
      { type: "tool_call", id: "0", raw_name: "respond", raw_arguments: `{"b":2}` },
      { type: "text", text: `{"a":1}` }
    ])).toBe(`{"a":1}`)
    expect(jsonRawText([])).toBe("")
  })
})

describe("jsonOutput", () => {
  const schema = compileJsonSchema({ type: "object", properties: { answer: { type: "string" } }, required: ["answer"] })
  if ("error" in schema) throw new Error(schema.error)

  it("parses JSON that fits the schema", () => {
    expect(jsonOutput(`{"answer":"Hello"}`, schema.validator)).toEqual({ raw: `{"answer":"Hello"}`, parsed: { answer: "Hello" } })
  })

  it("gives parsed null for text that is not JSON, keeping raw", () => {
    expect(jsonOutput(`{"answer": Hello}`, schema.validator)).toEqual({ raw: `{"answer": Hello}`, parsed: null })
    expect(jsonOutput("", schema.validator)).toEqual({ raw: "", parsed: null })
  })

  it("gives parsed null for JSON that does not fit the schema", () => {
    expect(jsonOutput(`{"answer":42}`, schema.validator)).toEqual({ raw: `{"answer":42}`, parsed: null })
    expect(jsonOutput(`[1,2]`, schema.validator)).toEqual({ raw: `[1,2]`, parsed: null })
  })

  it("accepts any JSON when there is no schema", () => {
    expect(jsonOutput(`[1,2]`, undefined)).toEqual({ raw: `[1,2]`, parsed: [1, 2] })
    expect(jsonOutput(`"x"`, undefined)).toEqual({ raw: `"x"`, parsed: "x" })
  })
})
