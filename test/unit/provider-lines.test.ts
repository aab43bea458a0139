/**
 * The line cutter of downloaded result files (src/providers/lines.ts): lines cut across reads
 * at any byte (inside a multi-byte character included), CRLF, a last line without a break, a
 * byte order mark, and a line past the bound passed as unreadable without holding its bytes.
 */
import { describe, expect, it } from "vitest"
import { lineCutter } from "../../src/providers/lines.ts"

const bytes = (text: string) => new TextEncoder().encode(text)

/** every line of `text` fed in reads of `size` bytes */
const cut = (text: string | Uint8Array, size: number, maxLineBytes = 1000) => {
  const cutter = lineCutter(maxLineBytes)
  const all = typeof text === "string" ? bytes(text) : text
  const out: Array<string | undefined> = []
  for (let at = 0; at < all.length; at += size) cutter.feed(all.subarray(at, at + size), out)
  cutter.end(out)
  return out
}

describe("lineCutter", () => {
  const text = "{\"a\":\"é日本\"}\r\n\n{\"b\":2}\nlast"

  it("gives the same lines whatever the reads' size, a multi-byte character cut in two included", () => {
    const expected = ["{\"a\":\"é日本\"}", "", "{\"b\":2}", "last"]
    for (const size of [1, 2, 3, 5, 7, 64, 10_000]) expect(cut(text, size)).toEqual(expected)
  })

  it("a body ending with a line break has no empty last line; an empty body has no line", () => {
    expect(cut("x\ny\n", 3)).toEqual(["x", "y"])
    expect(cut("", 3)).toEqual([])
  })

  it("drops a UTF-8 byte order mark before the first line only", () => {
    expect(cut("\ufeffx\n\ufeffy", 2)).toEqual(["x", "\ufeffy"])
  })

  it("passes a line longer than the bound as undefined, the lines around it intact, whether it ends the body or not", () => {
    const long = "z".repeat(50)
    for (const size of [1, 4, 100]) {
      expect(cut(`a\n${long}\nb\n${long}`, size, 20)).toEqual(["a", undefined, "b", undefined])
    }
    // exactly at the bound is read
    expect(cut(`${"y".repeat(20)}\n`, 3, 20)).toEqual(["y".repeat(20)])
  })
})
