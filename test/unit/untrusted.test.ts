import { describe, expect, it } from "vitest"
import { maxJsonDepth, quoted, quotedList, tooDeepPath } from "../../src/untrusted.ts"

const nested = (depth: number) => JSON.parse("[".repeat(depth) + "]".repeat(depth))

describe("quoted", () => {
  it("quotes as JSON, so control characters cannot start a new line", () => {
    expect(quoted("plain")).toBe(`"plain"`)
    expect(quoted("a\nb\r\u0000")).toBe(`"a\\nb\\r\\u0000"`)
  })

  it("cuts long text short", () => {
    expect(quoted("x".repeat(1000), 10)).toBe(`"xxxxxxxxxx..."`)
  })
})

describe("quotedList", () => {
  it("lists at most maxNames names, then how many more", () => {
    expect(quotedList(["a", "b"])).toBe(`"a", "b"`)
    expect(quotedList(["a", "b", "c", "d"], 2)).toBe(`"a", "b" and 2 more`)
    const many = Array.from({ length: 100_000 }, (_, i) => `name_${"y".repeat(500)}_${i}`)
    expect(quotedList(many).length).toBeLessThan(3000)
  })
})

describe("tooDeepPath", () => {
  it("accepts up to maxJsonDepth levels, the body being the first", () => {
    expect(tooDeepPath({ a: nested(maxJsonDepth - 1) })).toBeUndefined()
    expect(tooDeepPath({ a: 1, b: { c: [1, { d: "x" }] } })).toBeUndefined()
  })

  it("names the first fields on the way to a value nested deeper", () => {
    expect(tooDeepPath({ a: nested(maxJsonDepth) })).toBe("a[0][0]")
    expect(tooDeepPath({ ok: 1, input: { system: { x: nested(20_000) } } })).toBe("input.system.x")
    expect(tooDeepPath({ "odd\nname": [{ b: nested(200) }] })).toBe(`["odd\\nname"][0].b`)
  })
})
