import * as Schema from "effect/Schema"
import { describe, expect, it } from "vitest"
import { InferenceRequest } from "../../src/api/inference.ts"
import { type FieldIssue, formatFieldIssues, formatFieldPath, makeDecoder } from "../../src/decode.ts"

const decode = makeDecoder(InferenceRequest)

const issuesOf = (input: unknown): ReadonlyArray<FieldIssue> => {
  const result = decode(input)
  if (result.ok) throw new Error(`expected a decoding failure, got ${JSON.stringify(result.value)}`)
  return result.issues
}
const messageOf = (input: unknown) => formatFieldIssues(issuesOf(input))

describe("makeDecoder on the InferenceRequest schema", () => {
  it("decodes a valid request as it is", () => {
    const request = {
      function_name: "f",
      input: {
        system: { tone: "brief" },
        messages: [
          { role: "user", content: "hi" },
          { role: "assistant", content: [{ type: "tool_call", id: "1", name: "f", arguments: { a: 1 } }] },
          { role: "user", content: [{ type: "file", file_type: "base64", data: "aGk=", mime_type: "image/png", detail: "low" }] }
        ]
      },
      episode_id: null,
      tags: { user: "u1" },
      params: { chat_completion: { temperature: 0.5, max_tokens: 10, json_mode: "strict" } },
      tool_choice: { specific: "f" },
      extra_body: [{ pointer: "/a", value: { b: [1] }, variant_name: "v" }]
    }
    const result = decode(request)
    expect(result).toEqual({ ok: true, value: request })
  })

  it("refuses an unknown field, naming it", () => {
    expect(issuesOf({ function_name: "f", input: {}, temprature: 1 })).toEqual([{ path: ["temprature"], message: "unknown field" }])
    expect(messageOf({ function_name: "f", input: { messages: [{ role: "user", content: "x", name: "bob" }] } })).toBe(
      "input.messages[0].name: unknown field"
    )
    expect(messageOf({ function_name: "f", input: {}, params: { chat_completion: { temp: 1 } } })).toBe(
      "params.chat_completion.temp: unknown field"
    )
  })

  it("names the accepted block types when a content block has an unknown type", () => {
    expect(messageOf({ function_name: "f", input: { messages: [{ role: "user", content: [{ type: "texxt", text: "a" }] }] } }))
      .toMatch(/^input\.messages\[0\]\.content\[0\]: Expected a content block of type "text", "template", .*"unknown", got \{"type":"texxt"/)
    expect(messageOf({ function_name: "f", input: { messages: [{ role: "user", content: 42 }] } }))
      .toBe("input.messages[0].content: Expected a string or a list of content blocks, got 42")
  })

  it("refuses a missing field, naming it", () => {
    expect(issuesOf({ function_name: "f" })).toEqual([{ path: ["input"], message: "missing field" }])
    expect(messageOf({
      input: { messages: [{ role: "user", content: [{ type: "file", file_type: "base64", data: "x" }] }] }
    })).toBe("input.messages[0].content[0].mime_type: missing field")
    expect(messageOf({ input: { messages: [{ content: "x" }] } })).toBe("input.messages[0].role: missing field")
  })

  it("refuses a value of the wrong type, naming its path and the value", () => {
    expect(messageOf({ function_name: 3, input: {} })).toBe("function_name: Expected string, got 3")
    expect(messageOf({ input: { messages: [{ role: "user", content: [{ type: "text", text: 5 }] }] } })).toBe(
      "input.messages[0].content[0].text: Expected string, got 5"
    )
    expect(messageOf({ input: { messages: [{ role: "system", content: "x" }] } })).toMatch(/^input\.messages\[0\]\.role: .*"system"/)
    expect(messageOf({ input: {}, tags: { team: 7 } })).toBe("tags.team: Expected string, got 7")
    expect(messageOf({ input: {}, params: { chat_completion: { max_tokens: 1.5 } } })).toMatch(/^params\.chat_completion\.max_tokens: .*1\.5/)
  })

  it("reports every problem, joined with ;", () => {
    const issues = issuesOf({ input: {}, stream: "yes", dryrun: 1 })
    expect(issues.map((issue) => issue.path)).toEqual([["stream"], ["dryrun"]])
    expect(formatFieldIssues(issues)).toBe(`stream: Expected boolean, got "yes"; dryrun: Expected boolean, got 1`)
  })

  it("refuses a body that is not an object, without a path", () => {
    expect(messageOf("hello")).toBe(`Expected object, got "hello"`)
    expect(messageOf(null)).toBe("Expected object, got null")
  })

  it("cuts long rejected values short", () => {
    const message = messageOf({ function_name: 1, input: { system: 12 }, tags: "x".repeat(10_000) })
    expect(message.length).toBeLessThan(1000)
    for (const issue of issuesOf({ input: {}, tags: "x".repeat(10_000) })) expect(issue.message.length).toBeLessThanOrEqual(203)
  })

  it("does not mention `| undefined` for optional fields", () => {
    expect(messageOf({ input: {}, stream: 1 })).not.toContain("undefined")
  })
})

describe("formatFieldIssues and formatFieldPath", () => {
  it("prefixes paths and writes indexes in brackets", () => {
    expect(formatFieldPath(["input", "messages", 0, "content", 2, "text"])).toBe("input.messages[0].content[2].text")
    expect(formatFieldPath([0, "a"])).toBe("[0].a")
    expect(formatFieldPath([])).toBe("")
    expect(formatFieldIssues([{ path: ["text"], message: "missing field" }], ["inputs", 3])).toBe("inputs[3].text: missing field")
    expect(formatFieldIssues([{ path: [], message: "bad" }])).toBe("bad")
  })
})

describe("makeDecoder on other schemas", () => {
  it("applies the schema's checks", () => {
    const decodePort = makeDecoder(Schema.Struct({ port: Schema.Int.check(Schema.isGreaterThan(0)) }))
    expect(decodePort({ port: 8080 })).toEqual({ ok: true, value: { port: 8080 } })
    const result = decodePort({ port: -1 })
    expect(result.ok).toBe(false)
    if (!result.ok) expect(result.issues[0].path).toEqual(["port"])
  })
})
