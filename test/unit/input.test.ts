import * as Result from "effect/Result"
import { renderInput } from "../../src/inference/input.ts"
import { describe, expect, it } from "vitest"
import type { Input } from "../../src/api/inference.ts"

import { buildErrors, buildOk, functionOf, json, variantOf } from "./fixtures.ts"

const files = {
  "/cfg/schemas/system.json": json({ type: "object", properties: { tone: { type: "string" } }, required: ["tone"] }),
  "/cfg/schemas/user.json": json({
    type: "object",
    properties: { name: { type: "string" } },
    required: ["name"],
    additionalProperties: false
  }),
  "/cfg/schemas/greeting.json": json({ type: "object", properties: { who: { type: "string" } }, required: ["who"] }),
  "/cfg/templates/system.minijinja": "You are {{ tone }}.",
  "/cfg/templates/user.minijinja": "My name is {{ name }}.",
  "/cfg/templates/assistant.minijinja": "Noted: {{ fact }}",
  "/cfg/templates/greeting.minijinja": "Greet {{ who }}!",
  "/cfg/templates/fixed_system.minijinja": "You are a fixed assistant."
}

const config = buildOk(`
# schemas for system and user; assistant has a template but no schema
[functions.schematic]
type = "chat"
schemas.system.path = "schemas/system.json"
schemas.user.path = "schemas/user.json"
schemas.greeting.path = "schemas/greeting.json"
[functions.schematic.variants.v]
type = "chat_completion"
model = "dummy::echo_request_messages"
templates.system.path = "templates/system.minijinja"
templates.user.path = "templates/user.minijinja"
templates.assistant.path = "templates/assistant.minijinja"
templates.greeting.path = "templates/greeting.minijinja"

# no schemas, a fixed system template
[functions.fixed]
type = "chat"
[functions.fixed.variants.v]
type = "chat_completion"
model = "dummy::echo_request_messages"
templates.system.path = "templates/fixed_system.minijinja"

# nothing at all
[functions.plain]
type = "chat"
[functions.plain.variants.v]
type = "chat_completion"
model = "dummy::echo_request_messages"
`, { files })

const renderFor = (functionName: string, input: Input) =>
  renderInput(input, functionOf(config, functionName), variantOf(config, functionName, "v"), config.templates)

const rendered = (functionName: string, input: Input) => {
  const result = renderFor(functionName, input)
  if (Result.isFailure(result)) throw new Error(`${result.failure.path}: ${result.failure.message}`)
  return result.success
}

const problem = (functionName: string, input: Input) => {
  const result = renderFor(functionName, input)
  if (Result.isSuccess(result)) throw new Error(`expected a problem, got ${JSON.stringify(result.success)}`)
  return result.failure
}

describe("renderInput: templates and schemas", () => {
  it("renders system and user arguments with the variant's templates", () => {
    expect(rendered("schematic", {
      system: { tone: "terse" },
      messages: [{ role: "user", content: [{ type: "text", arguments: { name: "Ada" } }] }]
    })).toEqual({
      system: "You are terse.",
      messages: [{ role: "user", content: [{ type: "text", text: "My name is Ada." }] }]
    })
  })

  it("renders assistant arguments with the assistant template even without an assistant schema", () => {
    const result = rendered("schematic", {
      system: { tone: "terse" },
      messages: [{ role: "assistant", content: [{ type: "text", arguments: { fact: "42" } }] }]
    })
    expect(result.messages).toEqual([{ role: "assistant", content: [{ type: "text", text: "Noted: 42" }] }])
  })

  it("names the path of arguments that do not fit the schema", () => {
    const result = problem("schematic", {
      system: { tone: "terse" },
      messages: [
        { role: "user", content: [{ type: "text", arguments: { name: "Ada" } }] },
        { role: "user", content: [{ type: "raw_text", value: "x" }, { type: "text", arguments: { name: 7 } }] }
      ]
    })
    expect(result.path).toBe("input.messages[1].content[1].arguments")
    expect(result.message).toContain("user schema")
    expect(result.message).toContain("/name")
  })

  it("names input.messages[0].content[0].arguments for the first block", () => {
    const result = problem("schematic", {
      system: { tone: "terse" },
      messages: [{ role: "user", content: [{ type: "text", arguments: { nom: "Ada" } }] }]
    })
    expect(result.path).toBe("input.messages[0].content[0].arguments")
  })

  it("refuses string content for a role that has a schema", () => {
    const result = problem("schematic", { system: { tone: "terse" }, messages: [{ role: "user", content: "hello" }] })
    expect(result.path).toBe("input.messages[0].content")
    expect(result.message).toContain("user schema")
  })

  it("accepts string content for a role without a schema", () => {
    const result = rendered("schematic", { system: { tone: "terse" }, messages: [{ role: "assistant", content: "hello" }] })
    expect(result.messages).toEqual([{ role: "assistant", content: [{ type: "text", text: "hello" }] }])
  })

  it("refuses a text block with text for a role that has a schema", () => {
    const result = problem("schematic", {
      system: { tone: "terse" },
      messages: [{ role: "user", content: [{ type: "text", text: "hi" }] }]
    })
    expect(result.path).toBe("input.messages[0].content[0].text")
  })

  it("requires exactly one of text or arguments in a text block", () => {
    const both = problem("plain", { messages: [{ role: "user", content: [{ type: "text", text: "a", arguments: { b: 1 } }] }] })
    expect(both.path).toBe("input.messages[0].content[0]")
    expect(both.message).toContain("exactly one of text or arguments")
    const neither = problem("plain", { messages: [{ role: "user", content: [{ type: "text" }] }] })
    expect(neither.path).toBe("input.messages[0].content[0]")
  })

  it("refuses arguments when the variant has no template for the role", () => {
    const result = problem("plain", { messages: [{ role: "user", content: [{ type: "text", arguments: { a: 1 } }] }] })
    expect(result.path).toBe("input.messages[0].content[0].arguments")
    expect(result.message).toContain(`no template "user"`)
  })

  it("renders template blocks by name, validated by the schema of that name", () => {
    const ok = rendered("schematic", {
      system: { tone: "terse" },
      messages: [{ role: "user", content: [{ type: "template", name: "greeting", arguments: { who: "Bob" } }] }]
    })
    expect(ok.messages[0].content).toEqual([{ type: "text", text: "Greet Bob!" }])
    const bad = problem("schematic", {
      system: { tone: "terse" },
      messages: [{ role: "user", content: [{ type: "template", name: "greeting", arguments: {} }] }]
    })
    expect(bad.path).toBe("input.messages[0].content[0].arguments")
    expect(bad.message).toContain("greeting schema")
    const missing = problem("plain", {
      messages: [{ role: "user", content: [{ type: "template", name: "nope", arguments: {} }] }]
    })
    expect(missing.message).toContain(`no template "nope"`)
  })

  it("reports a template that fails to render (an undefined variable without a schema)", () => {
    const result = problem("schematic", {
      system: { tone: "terse" },
      messages: [{ role: "assistant", content: [{ type: "text", arguments: { other: 1 } }] }]
    })
    expect(result.path).toBe("input.messages[0].content[0].arguments")
    expect(result.message).toMatch(/^template "assistant" failed to render: /)
  })

  it("passes raw_text through untouched, even for a role with a schema", () => {
    const result = rendered("schematic", {
      system: { tone: "terse" },
      messages: [{ role: "user", content: [{ type: "raw_text", value: "{{ name }} stays" }] }]
    })
    expect(result.messages[0].content).toEqual([{ type: "text", text: "{{ name }} stays" }])
  })
})

describe("renderInput: system", () => {
  it("passes a system string through when there is no system schema", () => {
    expect(rendered("plain", { system: "Be brief." }).system).toBe("Be brief.")
    // a system template without schema: a string still wins over the template
    expect(rendered("fixed", { system: "Custom." }).system).toBe("Custom.")
  })

  it("refuses a system string when the function has a system schema", () => {
    const result = problem("schematic", { system: "Be brief." })
    expect(result.path).toBe("input.system")
    expect(result.message).toContain("system schema")
  })

  it("validates a system object against the system schema", () => {
    const result = problem("schematic", { system: { mood: "x" } })
    expect(result.path).toBe("input.system")
    expect(result.message).toContain("system schema")
  })

  it("renders the system template with no arguments when system is absent", () => {
    expect(rendered("fixed", { messages: [] }).system).toBe("You are a fixed assistant.")
  })

  it("checks the absent system against the schema (as an empty object)", () => {
    const result = problem("schematic", { messages: [] })
    expect(result.path).toBe("input.system")
    expect(result.message).toContain("tone")
  })

  it("has no system prompt when system is absent and there is no system template", () => {
    expect(rendered("plain", { messages: [{ role: "user", content: "hi" }] })).toEqual({
      system: undefined,
      messages: [{ role: "user", content: [{ type: "text", text: "hi" }] }]
    })
  })

  it("defaults messages to none", () => {
    expect(rendered("plain", {}).messages).toEqual([])
  })
})

describe("renderInput: other blocks", () => {
  it("turns tool_call arguments into JSON text, keeping string arguments as they are", () => {
    const result = rendered("plain", {
      messages: [{
        role: "assistant",
        content: [
          { type: "tool_call", id: "c1", name: "get_weather", arguments: { city: "Paris" } },
          { type: "tool_call", id: "c2", name: "get_weather", arguments: "{\"city\": \"Rome\"}" },
          { type: "tool_call", id: "c3", name: "noargs" }
        ]
      }]
    })
    expect(result.messages[0].content).toEqual([
      { type: "tool_call", id: "c1", name: "get_weather", arguments: "{\"city\":\"Paris\"}" },
      { type: "tool_call", id: "c2", name: "get_weather", arguments: "{\"city\": \"Rome\"}" },
      { type: "tool_call", id: "c3", name: "noargs", arguments: "{}" }
    ])
  })

  it("accepts a tool_call as the output block shape (raw_name and raw_arguments win)", () => {
    const result = rendered("plain", {
      messages: [{
        role: "assistant",
        content: [{ type: "tool_call", id: "c1", name: null, arguments: null, raw_name: "get_wether", raw_arguments: "{bad json" }]
      }]
    })
    expect(result.messages[0].content).toEqual([{ type: "tool_call", id: "c1", name: "get_wether", arguments: "{bad json" }])
  })

  it("refuses a tool_call without any name", () => {
    const result = problem("plain", {
      messages: [{ role: "assistant", content: [{ type: "raw_text", value: "x" }, { type: "tool_call", id: "c1", arguments: {} }] }]
    })
    expect(result.path).toBe("input.messages[0].content[1].name")
  })

  it("passes tool_result blocks through", () => {
    const block = { type: "tool_result" as const, id: "c1", name: "get_weather", result: "22 degrees" }
    expect(rendered("plain", { messages: [{ role: "user", content: [block] }] }).messages[0].content).toEqual([block])
  })

  it("turns file blocks into url and base64 sources, keeping detail", () => {
    const result = rendered("plain", {
      messages: [{
        role: "user",
        content: [
          { type: "file", file_type: "url", url: "https://example.com/cat.png", detail: "low" },
          { type: "file", file_type: "url", url: "https://example.com/doc", mime_type: "application/pdf" },
          { type: "file", file_type: "base64", data: "aGVsbG8=", mime_type: "image/png", detail: "high" }
        ]
      }]
    })
    expect(result.messages[0].content).toEqual([
      { type: "file", source: { kind: "url", url: "https://example.com/cat.png", mimeType: undefined }, detail: "low" },
      { type: "file", source: { kind: "url", url: "https://example.com/doc", mimeType: "application/pdf" }, detail: undefined },
      { type: "file", source: { kind: "base64", data: "aGVsbG8=", mimeType: "image/png" }, detail: "high" }
    ])
  })

  it("keeps thought and unknown blocks", () => {
    const result = rendered("plain", {
      messages: [{
        role: "assistant",
        content: [
          { type: "thought", text: "hmm", signature: "sig" },
          { type: "unknown", data: { type: "vendor_block", x: 1 }, model_provider_name: "gateway::model_name::m::provider_name::p" },
          { type: "unknown", data: [1, 2] }
        ]
      }]
    })
    expect(result.messages[0].content).toEqual([
      { type: "thought", text: "hmm", signature: "sig" },
      { type: "unknown", data: { type: "vendor_block", x: 1 }, modelProviderName: "gateway::model_name::m::provider_name::p" },
      { type: "unknown", data: [1, 2], modelProviderName: undefined }
    ])
  })

  it("keeps the order and roles of messages", () => {
    const result = rendered("plain", {
      messages: [
        { role: "user", content: "one" },
        { role: "assistant", content: "two" },
        { role: "user", content: [{ type: "text", text: "three" }, { type: "raw_text", value: "four" }] }
      ]
    })
    expect(result.messages).toEqual([
      { role: "user", content: [{ type: "text", text: "one" }] },
      { role: "assistant", content: [{ type: "text", text: "two" }] },
      { role: "user", content: [{ type: "text", text: "three" }, { type: "text", text: "four" }] }
    ])
  })
})

describe("renderInput: TensorZero's input wrappers", () => {
  const wrapperFiles = {
    "/cfg/wrap_user.minijinja": "<question>{{ user_text }}</question>",
    "/cfg/wrap_system.minijinja": "System says: {{ system_text }}",
    "/cfg/legacy_user.minijinja": "Legacy: {{ user_text }}",
    "/cfg/schemas/user.json": json({ type: "object", properties: { name: { type: "string" } }, required: ["name"] }),
    "/cfg/templates/user.minijinja": "My name is {{ name }}."
  }
  const wrapped = buildOk(`
[functions.wrapped]
type = "chat"
[functions.wrapped.variants.v]
type = "chat_completion"
model = "dummy::echo"
input_wrappers = { user = "wrap_user.minijinja", system = "wrap_system.minijinja" }

# TensorZero's legacy user_template, without a user schema: it wraps the user's text too
[functions.legacy]
type = "chat"
[functions.legacy.variants.v]
type = "chat_completion"
model = "dummy::echo"
user_template = "legacy_user.minijinja"
`, { files: wrapperFiles })
  const renderWith = (functionName: string, input: Input) =>
    Result.getOrThrow(renderInput(input, functionOf(wrapped, functionName), variantOf(wrapped, functionName, "v"), wrapped.templates))

  it("wraps a role's plain text, as a string or as text blocks, and leaves the other roles as they are", () => {
    expect(renderWith("wrapped", {
      system: "be brief",
      messages: [
        { role: "user", content: "Where is Tokyo?" },
        { role: "assistant", content: "In Japan." },
        { role: "user", content: [{ type: "text", text: "And Osaka?" }] }
      ]
    })).toEqual({
      system: "System says: be brief",
      messages: [
        { role: "user", content: [{ type: "text", text: "<question>Where is Tokyo?</question>" }] },
        { role: "assistant", content: [{ type: "text", text: "In Japan." }] },
        { role: "user", content: [{ type: "text", text: "<question>And Osaka?</question>" }] }
      ]
    })
  })

  it("wraps the user's text with a legacy user_template when the function has no user schema", () => {
    expect(renderWith("legacy", { messages: [{ role: "user", content: "Hi" }] }).messages).toEqual([
      { role: "user", content: [{ type: "text", text: "Legacy: Hi" }] }
    ])
  })

  it("refuses a wrapper for a role that has a schema", () => {
    const problems = buildErrors(`
[functions.f]
type = "chat"
schemas.user.path = "schemas/user.json"
[functions.f.variants.v]
type = "chat_completion"
model = "dummy::echo"
templates.user.path = "templates/user.minijinja"
input_wrappers = { user = "wrap_user.minijinja" }
`, { files: wrapperFiles })
    expect(problems.join("\n")).toContain("functions.f.variants.v.input_wrappers.user: the function has a user schema, so user input is arguments, not text to wrap")
  })
})
