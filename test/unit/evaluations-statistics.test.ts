import { describe, expect, it } from "vitest"
import {
  confidenceHalfWidth,
  cutoffMet,
  minScoresForStopping,
  parseEvaluatorNumbers,
  precisionReached,
  ScoreAccumulator
} from "../../src/evaluations/statistics.ts"
import type { EvaluatorSummary } from "../../src/evaluations/store.ts"

const accumulate = (scores: ReadonlyArray<boolean | number>, errors = 0): EvaluatorSummary => {
  const accumulator = new ScoreAccumulator()
  for (const score of scores) accumulator.add(score)
  for (let i = 0; i < errors; i++) accumulator.addError()
  return accumulator.summary()
}

describe("ScoreAccumulator", () => {
  it("has no mean nor standard error before any score", () => {
    const summary = accumulate([])
    expect(summary).toEqual({ count: 0, errors: 0 })
    expect(summary.mean).toBeUndefined()
    expect(summary.stderr).toBeUndefined()
  })

  it("has a mean but no standard error with one score", () => {
    const summary = accumulate([0.4])
    expect(summary.count).toBe(1)
    expect(summary.mean).toBe(0.4)
    expect(summary.stderr).toBeUndefined()
  })

  it("computes the mean and the standard error of the mean (sample standard deviation / sqrt(n))", () => {
    // deviations from the mean 5: squares sum to 32; variance 32/7; stderr sqrt(32/7)/sqrt(8)
    const summary = accumulate([2, 4, 4, 4, 5, 5, 7, 9])
    expect(summary.count).toBe(8)
    expect(summary.mean).toBeCloseTo(5, 12)
    expect(summary.stderr).toBeCloseTo(0.7559289460184544, 12)
  })

  it("counts booleans as 0 and 1", () => {
    // mean 0.75; squared deviations 3 * 0.0625 + 0.5625 = 0.75; variance 0.25; stderr 0.5 / 2
    const summary = accumulate([true, false, true, true])
    expect(summary.mean).toBeCloseTo(0.75, 12)
    expect(summary.stderr).toBeCloseTo(0.25, 12)
  })

  it("gives a standard error of 0 to identical scores", () => {
    expect(accumulate([true, true, true])).toEqual({ count: 3, mean: 1, stderr: 0, errors: 0 })
  })

  it("keeps its precision on large values with a small spread", () => {
    // a sum of squares would lose the variance (30) in values around 1e9
    const summary = accumulate([1e9 + 4, 1e9 + 7, 1e9 + 13, 1e9 + 16])
    expect(summary.mean).toBe(1e9 + 10)
    expect(summary.stderr).toBeCloseTo(Math.sqrt(30) / 2, 6)
  })

  it("counts errors apart from the scores", () => {
    expect(accumulate([1, 3], 2)).toEqual({ count: 2, mean: 2, stderr: 1, errors: 2 })
    expect(accumulate([], 1)).toEqual({ count: 0, errors: 1 })
  })

  it("summarises the scores so far each time it is asked", () => {
    const accumulator = new ScoreAccumulator()
    accumulator.add(1)
    const first = accumulator.summary()
    accumulator.add(3)
    expect(first).toEqual({ count: 1, mean: 1, errors: 0 })
    expect(accumulator.summary()).toEqual({ count: 2, mean: 2, stderr: 1, errors: 0 })
  })
})

describe("confidenceHalfWidth", () => {
  it("is 1.96 standard errors", () => {
    expect(confidenceHalfWidth({ count: 8, mean: 5, stderr: 0.5, errors: 0 })).toBeCloseTo(0.98, 12)
    expect(confidenceHalfWidth(accumulate([2, 4, 4, 4, 5, 5, 7, 9]))).toBeCloseTo(1.4816207341961707, 12)
  })

  it("is undefined without a standard error", () => {
    expect(confidenceHalfWidth(accumulate([1]))).toBeUndefined()
    expect(confidenceHalfWidth(accumulate([]))).toBeUndefined()
  })
})

describe("cutoffMet", () => {
  const summary = accumulate([0.6, 0.8])

  it("max: the mean is at least the cutoff", () => {
    expect(cutoffMet(summary, "max", 0.7)).toBe(true)
    expect(cutoffMet(accumulate([0.7]), "max", 0.7)).toBe(true)
    expect(cutoffMet(summary, "max", 0.71)).toBe(false)
  })

  it("min: the mean is at most the cutoff", () => {
    expect(cutoffMet(summary, "min", 0.75)).toBe(true)
    expect(cutoffMet(accumulate([0.7]), "min", 0.7)).toBe(true)
    expect(cutoffMet(summary, "min", 0.69)).toBe(false)
  })

  it("is never met without a mean", () => {
    expect(cutoffMet(accumulate([], 3), "max", 0)).toBe(false)
    expect(cutoffMet(accumulate([], 3), "min", 1)).toBe(false)
  })
})

describe("parseEvaluatorNumbers", () => {
  it("reads name=number pairs", () => {
    expect(parseEvaluatorNumbers("a=0.8,b=0.5", "--cutoffs")).toEqual({ a: 0.8, b: 0.5 })
    expect(parseEvaluatorNumbers(" exact = 1 , judge=-2.5e-1 ,x=.5,y=3.", "--cutoffs")).toEqual({ exact: 1, judge: -0.25, x: 0.5, y: 3 })
    expect(parseEvaluatorNumbers("名前=0.1", "--precision")).toEqual({ 名前: 0.1 })
  })

  it("reads an empty text as no pairs", () => {
    expect(parseEvaluatorNumbers("", "--cutoffs")).toEqual({})
    expect(parseEvaluatorNumbers("  ", "--cutoffs")).toEqual({})
  })

  it("keeps a name such as __proto__ as a name", () => {
    const parsed = parseEvaluatorNumbers("__proto__=1", "--cutoffs") as Record<string, number>
    expect(Object.keys(parsed)).toEqual(["__proto__"])
    expect(Object.getPrototypeOf(parsed)).toBe(Object.prototype)
  })

  it("names the field and the piece without a =", () => {
    expect(parseEvaluatorNumbers("a=1,b", "--cutoffs")).toEqual({ problem: `--cutoffs: "b" is not of the form evaluator_name=number` })
    expect(parseEvaluatorNumbers("a=1,,b=2", "cutoffs")).toEqual({ problem: `cutoffs: "" is not of the form evaluator_name=number` })
  })

  it("names the piece without a name", () => {
    expect(parseEvaluatorNumbers("=0.5", "--precision")).toEqual({ problem: `--precision: "=0.5" has no evaluator name before =` })
  })

  it("names the piece whose value is not a finite number", () => {
    for (const value of ["", "abc", "1e999", "Infinity", "NaN", "0x10", "1.2.3", "0.5%", "1e"]) {
      const result = parseEvaluatorNumbers(`a=${value}`, "--cutoffs")
      expect(result).toHaveProperty("problem")
      expect((result as { problem: string }).problem).toMatch(/^--cutoffs: ".*" does not give a finite number after =$/)
    }
    expect(parseEvaluatorNumbers("a=x", "--cutoffs")).toEqual({ problem: `--cutoffs: "a=x" does not give a finite number after =` })
    expect(parseEvaluatorNumbers("a=1=2", "--cutoffs")).toHaveProperty("problem")
    // a decimal comma splits the list
    expect(parseEvaluatorNumbers("a=1,5", "--cutoffs")).toEqual({ problem: `--cutoffs: "5" is not of the form evaluator_name=number` })
  })

  it("names the evaluator given twice", () => {
    expect(parseEvaluatorNumbers("a=1,b=2, a =3", "--cutoffs")).toEqual({ problem: `--cutoffs: " a =3" gives evaluator "a" a second time` })
  })

  it("quotes at most 100 characters of a bad piece", () => {
    const result = parseEvaluatorNumbers(`${"n".repeat(500)}=bad`, "--cutoffs") as { problem: string }
    expect(result.problem).toBe(`--cutoffs: "${"n".repeat(100)}" does not give a finite number after =`)
  })
})

describe("precisionReached", () => {
  const steady = accumulate(Array.from({ length: minScoresForStopping }, () => true))
  // 10 scores alternating 0 and 1: stderr sqrt(10/36)/sqrt(10) = 1/6; half-width 1.96/6
  const noisy = accumulate(Array.from({ length: 10 }, (_, i) => i % 2 === 0))

  it("needs at least minScoresForStopping scores", () => {
    expect(minScoresForStopping).toBe(10)
    const nine = accumulate(Array.from({ length: 9 }, () => true))
    expect(precisionReached({ a: nine }, { a: 0.5 })).toBe(false)
    expect(precisionReached({ a: steady }, { a: 0.5 })).toBe(true)
  })

  it("needs each half-width strictly below its precision", () => {
    const halfWidth = 1.96 / 6
    expect(confidenceHalfWidth(noisy)).toBeCloseTo(halfWidth, 12)
    expect(precisionReached({ a: noisy }, { a: halfWidth + 1e-9 })).toBe(true)
    expect(precisionReached({ a: noisy }, { a: halfWidth - 1e-9 })).toBe(false)
    expect(precisionReached({ a: { count: 10, mean: 0.5, stderr: 0.5, errors: 0 } }, { a: 0.98 })).toBe(false)
  })

  it("needs every evaluator named to be precise, and ignores the others", () => {
    expect(precisionReached({ a: steady, b: noisy }, { a: 0.1, b: 0.1 })).toBe(false)
    expect(precisionReached({ a: steady, b: noisy }, { a: 0.1 })).toBe(true)
    expect(precisionReached({ a: steady }, { a: 0.1, missing: 1 })).toBe(false)
  })

  it("counts only scores, not errors", () => {
    const fewScores = accumulate([true, true, true], 20)
    expect(precisionReached({ a: fewScores }, { a: 1 })).toBe(false)
  })

  it("never stops without a precision to reach", () => {
    expect(precisionReached({ a: steady }, {})).toBe(false)
  })
})
