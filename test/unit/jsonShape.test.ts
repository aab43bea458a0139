import { describe, expect, it } from "vitest"
import { jsonShapeMessage, jsonShapeProblem, maxJsonDepth, maxJsonDistinctKeys, maxJsonValues } from "../../src/jsonShape.ts"

const bytes = (text: string) => new TextEncoder().encode(text)
const nested = (depth: number) => "[".repeat(depth) + "]".repeat(depth)
/** the message for `text`, or undefined when its shape is fine */
const problemOf = (text: string) => {
  const body = bytes(text)
  const problem = jsonShapeProblem(body)
  return problem === undefined ? undefined : jsonShapeMessage(problem, body)
}
const depthMessage = (path: string) => `${path}: nests deeper than ${maxJsonDepth} levels, the limit of a request body`

describe("jsonShapeProblem: nesting", () => {
  it("accepts up to maxJsonDepth levels, the body being the first", () => {
    expect(problemOf(`{"a":${nested(maxJsonDepth - 1)}}`)).toBeUndefined()
    expect(problemOf(`{"a":1,"b":{"c":[1,{"d":"x"}]}}`)).toBeUndefined()
  })

  it("names the first fields on the way to a value nested deeper", () => {
    expect(problemOf(`{"a":${nested(maxJsonDepth)}}`)).toBe(depthMessage("a[0][0]"))
    expect(problemOf(`{"ok":1,"input":{"system":{"x":${nested(20_000)}}}}`)).toBe(depthMessage("input.system.x"))
    expect(problemOf(`{"odd\\nname":[{"b":${nested(200)}}]}`)).toBe(depthMessage(`["odd\\nname"][0].b`))
    expect(problemOf(`{"a":[1,"x",{"k":"v"},${nested(200)}]}`)).toBe(depthMessage("a[3][0]"))
    expect(problemOf(`{"first":{"x":1},"second":{"y":${nested(200)}}}`)).toBe(depthMessage("second.y[0]"))
    // a body that is not an object is refused on its nesting all the same (the parse would refuse it anyway)
    expect(problemOf(nested(200))).toBe(depthMessage("[0][0][0]"))
  })

  it("does not count brackets inside strings, escaped quotes included", () => {
    const brackets = "[{".repeat(1000)
    expect(problemOf(JSON.stringify({ text: brackets, more: `\\"${brackets}"\\\\`, [brackets]: 1 }))).toBeUndefined()
    // a string ending in an escaped backslash ends there: what follows is structure again
    expect(problemOf(`{"a":"x\\\\","b":${nested(200)}}`)).toBe(depthMessage("b[0][0]"))
    expect(problemOf(`{"a":"x\\"","b":"${nested(200)}"}`)).toBeUndefined()
    // long strings (read with indexOf) with escaped quotes along the way
    const long = "y".repeat(100) + '\\"' + "z".repeat(100) + "\\\\"
    expect(problemOf(`{"a":"${long}","b":${nested(200)}}`)).toBe(depthMessage("b[0][0]"))
    expect(problemOf(`{"a":"${long}","b":"${nested(200)}"}`)).toBeUndefined()
  })

  it("reads multi-byte characters as what they are", () => {
    expect(problemOf(JSON.stringify({ "clé ✓": "日本語 [[[", emoji: "🎉{" }))).toBeUndefined()
    expect(problemOf(`{"clé ✓":{"日本":${nested(200)}}}`)).toBe(depthMessage(`["clé ✓"]["日本"][0]`))
  })

  it("agrees with JSON.parse on what is valid JSON of any shape", () => {
    const samples: Array<unknown> = [
      { a: [1, 2, { b: null, c: true, d: "\u0000\"\\" }], e: -1.5e10 },
      [],
      "just a string",
      { "": { "": [[], {}] } },
      { s: "\\".repeat(33) + '"' + "\\".repeat(64) }
    ]
    for (const sample of samples) expect(problemOf(JSON.stringify(sample))).toBeUndefined()
  })
})

describe("jsonShapeProblem: values and keys", () => {
  it("refuses more than maxJsonValues values and keys", () => {
    const within = `[${Array(maxJsonValues - 1).fill("0").join(",")}]`
    expect(problemOf(within)).toBeUndefined()
    const over = `[${Array(maxJsonValues + 1).fill("0").join(",")}]`
    expect(problemOf(over)).toBe(`the request body holds more than ${maxJsonValues} JSON values and keys, the limit of a request body`)
    // commas and colons inside strings are text
    expect(problemOf(JSON.stringify({ text: ",:".repeat(maxJsonValues) }))).toBeUndefined()
  })

  it("refuses more than maxJsonDistinctKeys distinct keys, however often each is used", () => {
    const distinct = (count: number) => `[${Array.from({ length: count }, (_, i) => `{"k${i}":0}`).join(",")}]`
    expect(problemOf(distinct(maxJsonDistinctKeys))).toBeUndefined()
    expect(problemOf(distinct(maxJsonDistinctKeys + 1))).toBe(
      `the request body holds more than ${maxJsonDistinctKeys} distinct object keys, the limit of a request body`
    )
    const repeated = `[${Array(100_000).fill(`{"role":"user","content":"hi"}`).join(",")}]`
    expect(problemOf(repeated)).toBeUndefined()
  })

  it("checks a range of the bytes, and names offsets from its start", () => {
    const text = `ignored {"a":${nested(200)}} ignored`
    const body = bytes(text)
    const start = text.indexOf("{")
    const problem = jsonShapeProblem(body, start, text.lastIndexOf("}") + 1)
    expect(problem).toEqual({ kind: "depth", offset: start + 5 + maxJsonDepth - 1 })
    expect(jsonShapeMessage(problem!, body, start)).toBe(depthMessage("a[0][0]"))
    expect(jsonShapeProblem(bytes(`[[[]]] ${nested(200)}`), 0, 6)).toBeUndefined()
  })
})
