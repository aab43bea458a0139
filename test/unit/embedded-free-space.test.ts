// The default free-space minimum of the embedded database (layers/embedded/freeSpace.ts): the
// larger of 1% and 256 MiB, at most 10% of the filesystem.
import { describe, expect, it } from "vitest"
import { defaultMinFreeBytesOf } from "../../layers/embedded/freeSpace.ts"

const mib = 1024 * 1024
const gib = 1024 * mib

describe("the default min_free_bytes", () => {
  it("is 256 MiB on a filesystem of a few gigabytes", () => {
    expect(defaultMinFreeBytesOf(10 * gib)).toBe(256 * mib)
  })
  it("is 1% of a large filesystem", () => {
    expect(defaultMinFreeBytesOf(2000 * gib)).toBe(20 * gib)
  })
  it("is at most 10% of a small volume, which could otherwise never have room", () => {
    expect(defaultMinFreeBytesOf(200 * mib)).toBe(20 * mib)
    expect(defaultMinFreeBytesOf(gib)).toBe(Math.floor(gib / 10))
  })
})
