/**
 * GEPA's score bookkeeping (src/optimization/gepa/frontier.ts) on small hand-made tables:
 * instance scores (direction, skipped nulls, failures), the instance-wise Pareto frontier
 * (dominated candidates out even when they tie the best, a single best datapoint enough,
 * counts, ties, the all-failed fallback), parent choice, minibatch acceptance, statistics and
 * aggregates (expected figures worked out by hand below).
 */
import { describe, expect, it } from "vitest"
import {
  aggregate,
  chooseParent,
  instanceScore,
  notWorse,
  type Objective,
  paretoFrontier,
  type ScoreTable,
  statistics
} from "../../src/optimization/gepa/frontier.ts"
import { SeededRandom } from "../../src/optimization/gepa/random.ts"

const correct: Array<Objective> = [{ name: "correct", optimize: "max" }]
const loss: Array<Objective> = [{ name: "loss", optimize: "min" }]
const both: Array<Objective> = [
  { name: "accuracy", optimize: "max" },
  { name: "latency", optimize: "min" }
]

/** a table of one evaluator's scores over d1, d2, ... in order */
const column = (name: string, scores: ReadonlyArray<number | null>): ScoreTable =>
  Object.fromEntries(scores.map((score, i) => [`d${i + 1}`, { [name]: score }]))

const ids = (n: number): Array<string> => Array.from({ length: n }, (_, i) => `d${i + 1}`)

describe("instanceScore", () => {
  it("averages the oriented scores: a min objective's score counts negated", () => {
    // (0.8 + -0.2) / 2
    expect(instanceScore({ accuracy: 0.8, latency: 0.2 }, both)).toBeCloseTo(0.3, 12)
    expect(instanceScore({ loss: 0.25 }, loss)).toBe(-0.25)
  })

  it("skips null and missing scores", () => {
    expect(instanceScore({ accuracy: null, latency: 0.4 }, both)).toBe(-0.4)
    expect(instanceScore({ accuracy: 0.7 }, both)).toBe(0.7)
    // an evaluator that is not an objective does not count
    expect(instanceScore({ accuracy: 0.5, other: 100 }, both)).toBe(0.5)
  })

  it("is -Infinity when nothing is scored (worse than any score, even a min objective's large one)", () => {
    expect(instanceScore({ accuracy: null, latency: null }, both)).toBe(-Infinity)
    expect(instanceScore({}, both)).toBe(-Infinity)
    expect(instanceScore(undefined, both)).toBe(-Infinity)
    expect(instanceScore({ loss: 1e12 }, loss)).toBeGreaterThan(-Infinity)
  })
})

describe("paretoFrontier", () => {
  // best on d1: A, B (1); d2: B; d3: C; d4: A, B (0.5). B dominates A (equal but on d2) and D.
  const candidates = new Map<string, ScoreTable>([
    ["A", column("correct", [1, 0, 0, 0.5])],
    ["B", column("correct", [1, 1, 0, 0.5])],
    ["C", column("correct", [0, 0, 1, 0.2])],
    ["D", column("correct", [0, 0, 0, null])]
  ])

  it("keeps the undominated candidates best somewhere, with their counts, in the candidates' order", () => {
    const frontier = paretoFrontier(candidates, ids(4), correct)
    expect(frontier.members).toEqual(["B", "C"])
    expect(frontier.bestOn).toEqual({ B: 3, C: 1 })
  })

  it("excludes a dominated candidate even though it ties the best on some datapoints", () => {
    const frontier = paretoFrontier(candidates, ids(4), correct)
    expect(frontier.members).not.toContain("A")
    expect(frontier.bestOn.A).toBeUndefined()
  })

  it("keeps a candidate that is best on a single datapoint only", () => {
    const frontier = paretoFrontier(candidates, ids(4), correct)
    expect(frontier.members).toContain("C")
    expect(frontier.bestOn.C).toBe(1)
  })

  it("only looks at the datapoints given", () => {
    // on d1 and d4 alone, A and B are identical: neither dominates, both best on both
    const frontier = paretoFrontier(candidates, ["d1", "d4"], correct)
    expect(frontier.members).toEqual(["A", "B"])
    expect(frontier.bestOn).toEqual({ A: 2, B: 2 })
  })

  it("follows the order of the candidates' keys", () => {
    const reordered = new Map([...candidates].reverse())
    expect(paretoFrontier(reordered, ids(4), correct).members).toEqual(["C", "B"])
  })

  it("flips the direction for a min objective", () => {
    const tables = new Map<string, ScoreTable>([
      ["low", column("loss", [0.1, 0.1])],
      ["high", column("loss", [0.9, 0.9])]
    ])
    expect(paretoFrontier(tables, ids(2), loss)).toEqual({ members: ["low"], bestOn: { low: 2 } })
    const asMax = new Map<string, ScoreTable>([
      ["low", column("correct", [0.1, 0.1])],
      ["high", column("correct", [0.9, 0.9])]
    ])
    expect(paretoFrontier(asMax, ids(2), correct)).toEqual({ members: ["high"], bestOn: { high: 2 } })
  })

  it("keeps candidates best on different datapoints for a min objective", () => {
    const tables = new Map<string, ScoreTable>([
      ["P", column("loss", [0.1, 0.9])],
      ["Q", column("loss", [0.5, 0.5])]
    ])
    expect(paretoFrontier(tables, ids(2), loss)).toEqual({ members: ["P", "Q"], bestOn: { P: 1, Q: 1 } })
  })

  it("skips null scores across objectives", () => {
    // X: accuracy 1 alone -> 1; Y: (0.5 - 0.5) / 2 = 0
    const tables = new Map<string, ScoreTable>([
      ["X", { d1: { accuracy: 1, latency: null } }],
      ["Y", { d1: { accuracy: 0.5, latency: 0.5 } }]
    ])
    expect(paretoFrontier(tables, ["d1"], both)).toEqual({ members: ["X"], bestOn: { X: 1 } })
  })

  it("treats scores within 1e-9 as ties", () => {
    const tables = new Map<string, ScoreTable>([
      ["E", column("correct", [0.5, 0.3])],
      ["F", column("correct", [0.5 + 1e-12, 0.3])]
    ])
    expect(paretoFrontier(tables, ids(2), correct)).toEqual({ members: ["E", "F"], bestOn: { E: 2, F: 2 } })
  })

  it("counts a datapoint every candidate failed for no one", () => {
    const tables = new Map<string, ScoreTable>([
      ["G", column("correct", [1, null])],
      ["H", column("correct", [0, null])]
    ])
    expect(paretoFrontier(tables, ids(2), correct)).toEqual({ members: ["G"], bestOn: { G: 1 } })
  })

  it("falls back to the undominated candidates with 0 counts when every datapoint failed for everyone", () => {
    const tables = new Map<string, ScoreTable>([
      ["I", column("correct", [null, null])],
      ["J", {}]
    ])
    expect(paretoFrontier(tables, ids(2), correct)).toEqual({ members: ["I", "J"], bestOn: { I: 0, J: 0 } })
  })

  it("falls back to every candidate when there are no datapoints, and is empty only without candidates", () => {
    expect(paretoFrontier(candidates, [], correct)).toEqual({
      members: ["A", "B", "C", "D"],
      bestOn: { A: 0, B: 0, C: 0, D: 0 }
    })
    expect(paretoFrontier(new Map(), ids(4), correct)).toEqual({ members: [], bestOn: {} })
  })
})

describe("chooseParent", () => {
  const frontier = { members: ["zero", "three", "one"], bestOn: { zero: 0, three: 3, one: 1 } }

  it("never picks a member best nowhere when others are best somewhere, and favours the larger count", () => {
    const random = SeededRandom.fromSeed("parents")
    const counts: Record<string, number> = { zero: 0, three: 0, one: 0 }
    for (let i = 0; i < 4000; i++) counts[chooseParent(frontier, random)]++
    expect(counts.zero).toBe(0)
    expect(counts.one).toBeGreaterThan(0)
    expect(counts.three).toBeGreaterThan(2 * counts.one)
  })

  it("is deterministic per seed", () => {
    const choices = (seed: string) => {
      const random = SeededRandom.fromSeed(seed)
      return Array.from({ length: 30 }, () => chooseParent(frontier, random))
    }
    expect(choices("x")).toEqual(choices("x"))
  })

  it("picks uniformly among members when every count is 0", () => {
    const random = SeededRandom.fromSeed("fallback")
    const seen = new Set<string>()
    const zeros = { members: ["a", "b", "c"], bestOn: { a: 0, b: 0, c: 0 } }
    for (let i = 0; i < 200; i++) seen.add(chooseParent(zeros, random))
    expect([...seen].sort()).toEqual(["a", "b", "c"])
  })
})

describe("notWorse", () => {
  const parent = column("correct", [1, 0, 1, 0.5])

  it("accepts as many wins as losses", () => {
    // d2 won, d3 lost, d1 and d4 tied
    expect(notWorse(column("correct", [1, 1, 0, 0.5]), parent, ids(4), correct)).toBe(true)
  })

  it("accepts all ties", () => {
    expect(notWorse(parent, parent, ids(4), correct)).toBe(true)
  })

  it("rejects more losses than wins", () => {
    // d1 lost, the rest tied
    expect(notWorse(column("correct", [0, 0, 1, 0.5]), parent, ids(4), correct)).toBe(false)
    // d1 lost, d4 won, d3 lost
    expect(notWorse(column("correct", [0, 0, 0, 1]), parent, ids(4), correct)).toBe(false)
  })

  it("counts a failed datapoint as a loss against a scored one", () => {
    expect(notWorse(column("correct", [null, 0, 1, 0.5]), parent, ids(4), correct)).toBe(false)
    // both failed: a tie
    expect(notWorse(column("correct", [null]), column("correct", [null]), ids(1), correct)).toBe(true)
  })

  it("compares in the objective's direction", () => {
    expect(notWorse(column("loss", [0.2]), column("loss", [0.3]), ids(1), loss)).toBe(true)
    expect(notWorse(column("loss", [0.4]), column("loss", [0.3]), ids(1), loss)).toBe(false)
  })

  it("only looks at the datapoints given", () => {
    expect(notWorse(column("correct", [0, 1]), column("correct", [1, 0]), ["d2"], correct)).toBe(true)
    expect(notWorse(column("correct", [0, 1]), column("correct", [1, 0]), ["d1"], correct)).toBe(false)
  })
})

describe("statistics", () => {
  const objectives: Array<Objective> = [
    { name: "accuracy", optimize: "max" },
    { name: "latency", optimize: "min" },
    { name: "judge", optimize: "max" },
    { name: "unscored", optimize: "max" }
  ]
  const table: ScoreTable = {
    d1: { accuracy: 1, latency: 2, judge: null },
    d2: { accuracy: 0, latency: 4, judge: 0.7 },
    d3: { accuracy: 1, latency: null },
    d4: { accuracy: null, latency: 9 },
    // not among the datapoints asked about
    d5: { accuracy: 100, latency: 100, judge: 100, unscored: 100 }
  }

  it("gives each evaluator's mean, sample standard deviation and count over its raw scores", () => {
    const result = statistics(table, ids(4), objectives)
    // accuracy 1, 0, 1: mean 2/3; squared deviations 1/9 + 4/9 + 1/9 = 2/3; / (3 - 1) = 1/3
    expect(result.accuracy.count).toBe(3)
    expect(result.accuracy.mean).toBeCloseTo(2 / 3, 12)
    expect(result.accuracy.stdev).toBeCloseTo(Math.sqrt(1 / 3), 12)
    // latency 2, 4, 9 (raw, not negated): mean 5; squared deviations 9 + 1 + 16 = 26; / 2 = 13
    expect(result.latency.count).toBe(3)
    expect(result.latency.mean).toBeCloseTo(5, 12)
    expect(result.latency.stdev).toBeCloseTo(Math.sqrt(13), 12)
  })

  it("has no standard deviation under two scores and no mean without one", () => {
    const result = statistics(table, ids(4), objectives)
    expect(result.judge).toEqual({ mean: 0.7, stdev: null, count: 1 })
    expect(result.unscored).toEqual({ mean: null, stdev: null, count: 0 })
  })
})

describe("aggregate", () => {
  const table: ScoreTable = {
    d1: { accuracy: 1, latency: 2 },
    d2: { accuracy: 0, latency: 4 },
    d3: { accuracy: 1, latency: null },
    d4: { accuracy: null, latency: null }
  }

  it("counts the failed datapoints apart and averages the others' instance scores", () => {
    // instance scores: d1 (1 - 2)/2 = -0.5, d2 (0 - 4)/2 = -2, d3 1; d4 and d5 (absent) failed
    const result = aggregate(table, ["d1", "d2", "d3", "d4", "d5"], both)
    expect(result.failed).toBe(2)
    expect(result.mean).toBeCloseTo((-0.5 - 2 + 1) / 3, 12)
  })

  it("has no mean when every datapoint failed", () => {
    expect(aggregate(table, ["d4", "d5"], both)).toEqual({ failed: 2, mean: null })
    expect(aggregate(table, [], both)).toEqual({ failed: 0, mean: null })
  })
})
