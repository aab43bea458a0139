import { describe, expect, it } from "vitest"
import { sampleVariantOrder, seededRandom } from "../../src/inference/variantDraw.ts"

const seeds = (n: number) => Array.from({ length: n }, (_, i) => `episode-${i}`)

describe("seededRandom", () => {
  it("gives the same sequence for the same seed and another for another seed", () => {
    const a = seededRandom("seed-a")
    const a2 = seededRandom("seed-a")
    const b = seededRandom("seed-b")
    const seqA = [a(), a(), a(), a()]
    expect([a2(), a2(), a2(), a2()]).toEqual(seqA)
    expect([b(), b(), b(), b()]).not.toEqual(seqA)
  })

  it("draws numbers in [0, 1) spread evenly", () => {
    const random = seededRandom("uniform")
    const buckets = new Array(10).fill(0)
    const n = 20_000
    for (let i = 0; i < n; i++) {
      const x = random()
      expect(x).toBeGreaterThanOrEqual(0)
      expect(x).toBeLessThan(1)
      buckets[Math.floor(x * 10)]++
    }
    for (const count of buckets) expect(Math.abs(count - n / 10)).toBeLessThan(n / 10 * 0.1)
  })
})

describe("sampleVariantOrder", () => {
  const variants = [
    { name: "a", weight: 1 },
    { name: "b", weight: 3 },
    { name: "zero", weight: 0 },
    { name: "c", weight: 6 }
  ]

  it("puts each variant first in proportion to its weight, over many episodes", () => {
    const firsts: Record<string, number> = { a: 0, b: 0, c: 0, zero: 0 }
    const n = 20_000
    for (const seed of seeds(n)) firsts[sampleVariantOrder(variants, seededRandom(seed))[0]]++
    expect(firsts.zero).toBe(0)
    expect(firsts.a / n).toBeCloseTo(0.1, 1)
    expect(firsts.b / n).toBeCloseTo(0.3, 1)
    expect(firsts.c / n).toBeCloseTo(0.6, 1)
    // tighter than toBeCloseTo(…, 1): within 2 points of the expected share
    expect(Math.abs(firsts.a / n - 0.1)).toBeLessThan(0.02)
    expect(Math.abs(firsts.b / n - 0.3)).toBeLessThan(0.02)
    expect(Math.abs(firsts.c / n - 0.6)).toBeLessThan(0.02)
  })

  it("draws the next variants by weight among the rest (without replacement)", () => {
    // when c is drawn first, b should come second 3 times out of 4 (3 / (1 + 3))
    let cFirst = 0
    let bSecond = 0
    for (const seed of seeds(20_000)) {
      const order = sampleVariantOrder(variants, seededRandom(seed))
      if (order[0] === "c") {
        cFirst++
        if (order[1] === "b") bSecond++
      }
    }
    expect(Math.abs(bSecond / cFirst - 0.75)).toBeLessThan(0.03)
  })

  it("lists every positive-weight variant exactly once and leaves out zero weights", () => {
    for (const seed of seeds(200)) {
      const order = sampleVariantOrder(variants, seededRandom(seed))
      expect([...order].sort()).toEqual(["a", "b", "c"])
    }
  })

  it("is deterministic for the same seed", () => {
    for (const seed of seeds(50)) {
      expect(sampleVariantOrder(variants, seededRandom(seed))).toEqual(sampleVariantOrder(variants, seededRandom(seed)))
    }
  })

  it("varies with the seed", () => {
    const orders = new Set(seeds(100).map((seed) => sampleVariantOrder(variants, seededRandom(seed)).join(",")))
    expect(orders.size).toBeGreaterThan(1)
  })

  it("returns nothing when no variant has a positive weight", () => {
    expect(sampleVariantOrder([{ name: "a", weight: 0 }, { name: "b", weight: 0 }], seededRandom("x"))).toEqual([])
    expect(sampleVariantOrder([], seededRandom("x"))).toEqual([])
  })

  it("follows the random source: low draws pick the first variant, high draws the last", () => {
    const even = [{ name: "x", weight: 1 }, { name: "y", weight: 1 }]
    expect(sampleVariantOrder(even, () => 0)).toEqual(["x", "y"])
    expect(sampleVariantOrder(even, () => 0.99)).toEqual(["y", "x"])
    expect(sampleVariantOrder([{ name: "x", weight: 1 }, { name: "y", weight: 3 }], () => 0.2)).toEqual(["x", "y"])
    expect(sampleVariantOrder([{ name: "x", weight: 1 }, { name: "y", weight: 3 }], () => 0.3)).toEqual(["y", "x"])
  })

  it("does not modify the list it is given", () => {
    const input = [{ name: "a", weight: 1 }, { name: "b", weight: 2 }]
    const copy = structuredClone(input)
    sampleVariantOrder(input, seededRandom("s"))
    expect(input).toEqual(copy)
  })
})
