/**
 * GEPA's seeded randomness (src/optimization/gepa/random.ts): determinism per seed, resuming
 * from a checkpointed state, shuffles that leave their input alone, the train/validation
 * split, sampling without replacement, and weighted draws (roughly proportional, never a
 * zero weight when another is positive).
 */
import { describe, expect, it } from "vitest"
import { sample, SeededRandom, shuffled, splitHalves, weightedIndex } from "../../src/optimization/gepa/random.ts"

const draws = (random: SeededRandom, count: number): Array<number> => Array.from({ length: count }, () => random.next())

const range = (n: number): Array<number> => Array.from({ length: n }, (_, i) => i)

describe("SeededRandom", () => {
  it("gives the same sequence for the same seed", () => {
    expect(draws(SeededRandom.fromSeed("gepa"), 50)).toEqual(draws(SeededRandom.fromSeed("gepa"), 50))
    expect(draws(SeededRandom.fromSeed(7), 50)).toEqual(draws(SeededRandom.fromSeed(7), 50))
  })

  it("gives different sequences for different seeds, including neighbouring ones", () => {
    const sequences = [SeededRandom.fromSeed(1), SeededRandom.fromSeed(2), SeededRandom.fromSeed("a"), SeededRandom.fromSeed("b")].map(
      (random) => draws(random, 10)
    )
    for (let i = 0; i < sequences.length; i++) {
      for (let j = i + 1; j < sequences.length; j++) expect(sequences[i]).not.toEqual(sequences[j])
    }
    // the first draws of neighbouring seeds are not near each other
    expect(Math.abs(sequences[0][0] - sequences[1][0])).toBeGreaterThan(1e-3)
  })

  it("hashes a number as its decimal text", () => {
    expect(SeededRandom.fromSeed(42).state).toBe(SeededRandom.fromSeed("42").state)
  })

  it("draws in [0, 1) and integers in [0, n)", () => {
    const random = SeededRandom.fromSeed("bounds")
    for (let i = 0; i < 2000; i++) {
      const x = random.next()
      expect(x).toBeGreaterThanOrEqual(0)
      expect(x).toBeLessThan(1)
      const k = random.int(7)
      expect(Number.isInteger(k)).toBe(true)
      expect(k).toBeGreaterThanOrEqual(0)
      expect(k).toBeLessThan(7)
    }
    expect(() => random.int(0)).toThrow(RangeError)
    expect(() => random.int(2.5)).toThrow(RangeError)
  })

  it("continues identically from a checkpointed state (through JSON)", () => {
    const original = SeededRandom.fromSeed("checkpoint")
    draws(original, 17)
    const checkpoint = JSON.parse(JSON.stringify({ state: original.state })) as { state: number }
    expect(Number.isInteger(checkpoint.state)).toBe(true)
    expect(checkpoint.state).toBeGreaterThanOrEqual(0)
    expect(checkpoint.state).toBeLessThan(2 ** 32)
    const resumed = new SeededRandom(checkpoint.state)
    expect(draws(resumed, 100)).toEqual(draws(original, 100))
    expect(resumed.state).toBe(original.state)
  })
})

describe("shuffled", () => {
  it("is a permutation, leaves the input alone, and is deterministic per seed", () => {
    const items = range(20)
    const copy = [...items]
    const result = shuffled(items, SeededRandom.fromSeed("s"))
    expect(items).toEqual(copy)
    expect([...result].sort((a, b) => a - b)).toEqual(items)
    expect(result).not.toEqual(items)
    expect(shuffled(items, SeededRandom.fromSeed("s"))).toEqual(result)
    expect(shuffled(items, SeededRandom.fromSeed("t"))).not.toEqual(result)
  })

  it("handles empty and single inputs", () => {
    expect(shuffled([], SeededRandom.fromSeed(1))).toEqual([])
    expect(shuffled(["only"], SeededRandom.fromSeed(1))).toEqual(["only"])
  })
})

describe("splitHalves", () => {
  it("gives floor(n/2) to train and the rest to validation, disjoint and covering", () => {
    for (const n of [0, 1, 2, 7, 10]) {
      const items = range(n).map((i) => `dp-${i}`)
      const { train, validation } = splitHalves(items, SeededRandom.fromSeed("split"))
      expect(train.length).toBe(Math.floor(n / 2))
      expect(validation.length).toBe(n - Math.floor(n / 2))
      expect(train.filter((id) => validation.includes(id))).toEqual([])
      expect([...train, ...validation].sort()).toEqual([...items].sort())
    }
  })

  it("is deterministic per seed and depends on it", () => {
    const items = range(30)
    const first = splitHalves(items, SeededRandom.fromSeed(3))
    expect(splitHalves(items, SeededRandom.fromSeed(3))).toEqual(first)
    expect(splitHalves(items, SeededRandom.fromSeed(4)).train).not.toEqual(first.train)
  })
})

describe("sample", () => {
  it("draws distinct items without replacement", () => {
    const items = range(50)
    const random = SeededRandom.fromSeed("minibatch")
    for (let round = 0; round < 100; round++) {
      const drawn = sample(items, 5, random)
      expect(drawn.length).toBe(5)
      expect(new Set(drawn).size).toBe(5)
      for (const item of drawn) expect(items).toContain(item)
    }
  })

  it("gives every item, shuffled, when the count reaches the length; none for a count of 0", () => {
    const items = range(8)
    const all = sample(items, 20, SeededRandom.fromSeed("all"))
    expect([...all].sort((a, b) => a - b)).toEqual(items)
    expect(sample(items, 0, SeededRandom.fromSeed("all"))).toEqual([])
  })

  it("is deterministic per seed and leaves the input alone", () => {
    const items = range(40)
    const copy = [...items]
    expect(sample(items, 6, SeededRandom.fromSeed(9))).toEqual(sample(items, 6, SeededRandom.fromSeed(9)))
    expect(items).toEqual(copy)
  })

  it("reaches every item over many draws", () => {
    const random = SeededRandom.fromSeed("coverage")
    const seen = new Set<number>()
    for (let round = 0; round < 200; round++) for (const item of sample(range(10), 2, random)) seen.add(item)
    expect(seen.size).toBe(10)
  })
})

describe("weightedIndex", () => {
  it("draws roughly in proportion to the weights", () => {
    const weights = [1, 2, 3, 4]
    const total = weights.reduce((a, b) => a + b, 0)
    const counts = weights.map(() => 0)
    const random = SeededRandom.fromSeed("weights")
    const n = 10_000
    for (let i = 0; i < n; i++) counts[weightedIndex(weights, random)]++
    for (let i = 0; i < weights.length; i++) {
      const expected = weights[i] / total
      // the binomial standard deviation is at most 0.005 here; 0.02 is four of them
      expect(Math.abs(counts[i] / n - expected)).toBeLessThan(0.02)
    }
  })

  it("never picks a zero weight when another is positive", () => {
    const random = SeededRandom.fromSeed("zeros")
    const counts = [0, 0, 0, 0]
    for (let i = 0; i < 5000; i++) counts[weightedIndex([0, 5, 0, 1], random)]++
    expect(counts[0]).toBe(0)
    expect(counts[2]).toBe(0)
    expect(counts[1]).toBeGreaterThan(counts[3])
    expect(counts[3]).toBeGreaterThan(0)
    for (let i = 0; i < 100; i++) expect(weightedIndex([0, 0, 3], random)).toBe(2)
  })

  it("is uniform when every weight is zero", () => {
    const random = SeededRandom.fromSeed("uniform")
    const counts = [0, 0, 0]
    const n = 9000
    for (let i = 0; i < n; i++) counts[weightedIndex([0, 0, 0], random)]++
    for (const count of counts) expect(Math.abs(count / n - 1 / 3)).toBeLessThan(0.03)
  })

  it("throws on no weights and on negative or non-finite weights", () => {
    const random = SeededRandom.fromSeed(0)
    expect(() => weightedIndex([], random)).toThrow(RangeError)
    expect(() => weightedIndex([1, -1], random)).toThrow(RangeError)
    expect(() => weightedIndex([1, Number.NaN], random)).toThrow(RangeError)
  })
})
