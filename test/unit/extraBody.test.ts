import { describe, expect, it } from "vitest"
import {
  applyExtraBodyEdit,
  applyExtraHeaderEdits,
  type ExtraBodyEdit,
  extraHeaderProblem,
  parsePointer,
  requestBodyEdit,
  requestFieldOf,
  scopeMatches
} from "../../src/inference/extraBody.ts"

/** applies edits in order to a copy of `body`; throws on the first explanation */
const edited = (body: Record<string, unknown>, ...edits: Array<ExtraBodyEdit>) => {
  const copy = structuredClone(body)
  for (const edit of edits) {
    const problem = applyExtraBodyEdit(copy, edit)
    if (problem !== undefined) throw new Error(problem)
  }
  return copy
}

describe("applyExtraBodyEdit", () => {
  it("sets a top-level field, replacing what was there", () => {
    expect(edited({ model: "a", temperature: 1 }, { pointer: "/temperature", value: 0.2 })).toEqual({ model: "a", temperature: 0.2 })
  })

  it("sets a nested field inside an existing object", () => {
    expect(edited({ a: { b: 1, keep: true } }, { pointer: "/a/b", value: { deep: [1] } })).toEqual({ a: { b: { deep: [1] }, keep: true } })
  })

  it("creates the missing intermediate objects", () => {
    expect(edited({}, { pointer: "/generation_config/thinking/budget", value: 100 })).toEqual({
      generation_config: { thinking: { budget: 100 } }
    })
  })

  it("appends to an array with -", () => {
    expect(edited({ stop: ["a"] }, { pointer: "/stop/-", value: "b" }, { pointer: "/stop/-", value: "c" })).toEqual({ stop: ["a", "b", "c"] })
  })

  it("sets an array element by index, and appends at index = length", () => {
    expect(edited({ messages: [{ role: "user" }, { role: "assistant" }] }, { pointer: "/messages/1/role", value: "tool" })).toEqual({
      messages: [{ role: "user" }, { role: "tool" }]
    })
    expect(edited({ xs: [1, 2] }, { pointer: "/xs/0", value: 9 })).toEqual({ xs: [9, 2] })
    expect(edited({ xs: [1, 2] }, { pointer: "/xs/2", value: 3 })).toEqual({ xs: [1, 2, 3] })
  })

  it("refuses an index past the end of an array, or a token that is not an index", () => {
    const body = { xs: [1] }
    expect(applyExtraBodyEdit(body, { pointer: "/xs/5", value: 1 })).toContain(`no index "5"`)
    expect(applyExtraBodyEdit(body, { pointer: "/xs/01", value: 1 })).toContain(`no index "01"`)
    expect(applyExtraBodyEdit(body, { pointer: "/xs/first", value: 1 })).toContain(`no index "first"`)
    expect(body).toEqual({ xs: [1] })
  })

  it("deletes a field", () => {
    expect(edited({ a: { b: 1, c: 2 } }, { pointer: "/a/b", delete: true })).toEqual({ a: { c: 2 } })
  })

  it("deletes an array element", () => {
    expect(edited({ xs: ["a", "b", "c"] }, { pointer: "/xs/1", delete: true })).toEqual({ xs: ["a", "c"] })
  })

  it("does nothing when deleting a path that does not exist", () => {
    const body = { a: { b: 1 }, xs: [1] }
    expect(edited(body, { pointer: "/nope", delete: true })).toEqual(body)
    expect(edited(body, { pointer: "/x/y/z", delete: true })).toEqual(body)
    expect(edited(body, { pointer: "/a/c", delete: true })).toEqual(body)
    expect(edited(body, { pointer: "/xs/1", delete: true })).toEqual(body)
  })

  it("unescapes ~1 as / and ~0 as ~ in pointer tokens", () => {
    expect(edited({}, { pointer: "/a~1b/c~0d", value: 1 })).toEqual({ "a/b": { "c~d": 1 } })
    // ~01 is "~1" (the ~0 is decoded after ~1), not "/"
    expect(edited({}, { pointer: "/~01", value: 1 })).toEqual({ "~1": 1 })
  })

  it("leaves values the body shares with others (configuration) unchanged", () => {
    const stop = ["END"]
    const schema = { type: "object", properties: {} as Record<string, unknown> }
    const body: Record<string, unknown> = { stop, response_format: { json_schema: { schema } } }
    expect(applyExtraBodyEdit(body, { pointer: "/stop/-", value: "STOP" })).toBeUndefined()
    expect(applyExtraBodyEdit(body, { pointer: "/response_format/json_schema/schema/properties/x", value: { type: "string" } }))
      .toBeUndefined()
    expect(applyExtraBodyEdit(body, { pointer: "/response_format/json_schema/schema/type", delete: true })).toBeUndefined()
    expect(body).toEqual({ stop: ["END", "STOP"], response_format: { json_schema: { schema: { properties: { x: { type: "string" } } } } } })
    expect(stop).toEqual(["END"])
    expect(schema).toEqual({ type: "object", properties: {} })
  })

  it("explains a pointer that does not start with /", () => {
    const body = { a: 1 }
    expect(applyExtraBodyEdit(body, { pointer: "a/b", value: 1 })).toBe(`extra_body pointer "a/b" must start with "/"`)
    expect(body).toEqual({ a: 1 })
  })

  it("explains an empty pointer (the whole body cannot be replaced)", () => {
    expect(applyExtraBodyEdit({}, { pointer: "", value: 1 })).toContain("must name a field")
  })

  it("explains a pointer that goes through a scalar", () => {
    expect(applyExtraBodyEdit({ a: 5 }, { pointer: "/a/b", value: 1 })).toContain("not an object or array")
  })
})

describe("parsePointer", () => {
  it("splits RFC 6901 pointers", () => {
    expect(parsePointer("")).toEqual([])
    expect(parsePointer("/")).toEqual([""])
    expect(parsePointer("/a/0/b~1c")).toEqual(["a", "0", "b/c"])
    expect(parsePointer("a")).toBeUndefined()
  })
})

describe("applyExtraHeaderEdits", () => {
  it("adds a header", () => {
    expect(applyExtraHeaderEdits({ "content-type": "application/json" }, [{ name: "X-Trace", value: "1" }])).toEqual({
      "content-type": "application/json",
      "X-Trace": "1"
    })
  })

  it("replaces a header whatever the case of its name", () => {
    expect(applyExtraHeaderEdits({ authorization: "Bearer a", other: "x" }, [{ name: "Authorization", value: "Bearer b" }])).toEqual({
      Authorization: "Bearer b",
      other: "x"
    })
  })

  it("deletes a header whatever the case of its name, and ignores deleting a missing one", () => {
    expect(applyExtraHeaderEdits({ "X-Api-Key": "k", keep: "y" }, [{ name: "x-api-key", delete: true }, { name: "nope", delete: true }]))
      .toEqual({ keep: "y" })
  })

  it("applies edits in order, later ones winning", () => {
    expect(applyExtraHeaderEdits({}, [{ name: "a", value: "1" }, { name: "A", value: "2" }])).toEqual({ A: "2" })
    expect(applyExtraHeaderEdits({}, [{ name: "a", value: "1" }, { name: "A", delete: true }])).toEqual({})
    expect(applyExtraHeaderEdits({}, [{ name: "a", delete: true }, { name: "A", value: "3" }])).toEqual({ A: "3" })
  })
})

describe("scopeMatches", () => {
  const target = { variantName: "v1", modelName: "gpt", providerName: "azure", providerFamily: "other" }

  it("matches every call when there is no scope", () => {
    expect(scopeMatches({}, target)).toBe(true)
  })

  it("matches by variant name", () => {
    expect(scopeMatches({ variant_name: "v1" }, target)).toBe(true)
    expect(scopeMatches({ variant_name: "v2" }, target)).toBe(false)
  })

  it("matches by model name, and by model and provider name", () => {
    expect(scopeMatches({ model_name: "gpt" }, target)).toBe(true)
    expect(scopeMatches({ model_name: "claude" }, target)).toBe(false)
    expect(scopeMatches({ model_name: "gpt", provider_name: "azure" }, target)).toBe(true)
    expect(scopeMatches({ model_name: "gpt", provider_name: "openai" }, target)).toBe(false)
  })

  it("matches by provider family (a surface's own fields)", () => {
    expect(scopeMatches({ provider_family: "other" }, target)).toBe(true)
    expect(scopeMatches({ provider_family: "anthropic" }, target)).toBe(false)
    expect(scopeMatches({ provider_family: "anthropic" }, { ...target, providerFamily: "anthropic" })).toBe(true)
  })
})

describe("extraHeaderProblem", () => {
  it("accepts an ordinary header, set or removed", () => {
    expect(extraHeaderProblem("x-team", "red")).toBeUndefined()
    expect(extraHeaderProblem("Authorization", "Bearer k")).toBeUndefined()
    expect(extraHeaderProblem("x-team", undefined)).toBeUndefined()
  })

  it("refuses the headers the HTTP client manages, in any case, set or removed", () => {
    for (const name of ["Host", "content-length", "TRANSFER-ENCODING", "connection", "keep-alive", "te", "trailer", "upgrade", "expect"]) {
      expect(extraHeaderProblem(name, "1")).toEqual({ field: "name", message: expect.stringContaining("cannot be set or removed") })
      expect(extraHeaderProblem(name, undefined)?.field).toBe("name")
    }
  })

  it("refuses a name that is not a token, quoted and cut short", () => {
    expect(extraHeaderProblem("a b", "1")).toEqual({ field: "name", message: `"a b" is not a valid HTTP header name` })
    expect(extraHeaderProblem(`x\n${"y".repeat(1000)}`, "1")?.message.length).toBeLessThan(150)
  })

  it("refuses a value with CR, LF or NUL", () => {
    for (const value of ["a\rb", "a\nb", "a\u0000b"]) expect(extraHeaderProblem("x-a", value)?.field).toBe("value")
  })
})

describe("requestBodyEdit", () => {
  it("marks a request's edit with its field; either kind that cannot be applied returns the problem (the runner decides what it fails)", () => {
    const body = { messages: [{ role: "user", content: "hi" }] }
    const configured: ExtraBodyEdit = { pointer: "/messages/0/content/x", value: 1 }
    expect(applyExtraBodyEdit(structuredClone(body), configured)).toMatch(/goes through a value that is not an object or array/)
    expect(requestFieldOf(configured)).toBeUndefined()
    const requested = requestBodyEdit({ pointer: "/messages/0/content/x", value: 1 }, "extra_body[3]")
    expect(applyExtraBodyEdit(structuredClone(body), requested)).toMatch(/goes through a value that is not an object or array/)
    expect(requestFieldOf(requested)).toBe("extra_body[3]")
  })

  it("leaves the edit comparing and serializing as before", () => {
    const requested = requestBodyEdit({ pointer: "/a", value: 1 }, "extra_body[0]")
    expect(requested).toEqual({ pointer: "/a", value: 1 })
    expect(JSON.stringify(requested)).toBe(`{"pointer":"/a","value":1}`)
    expect(edited({}, requested)).toEqual({ a: 1 })
  })
})
