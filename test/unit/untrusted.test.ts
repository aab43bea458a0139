import { describe, expect, it } from "vitest"
import { quoted, quotedList } from "../../src/untrusted.ts"

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
