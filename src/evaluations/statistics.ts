/**
 * The figures of an evaluation run: each evaluator's mean and its standard error, kept as
 * scores arrive; whether a run reached its cutoffs; when it may stop early (adaptive
 * stopping); and the `name=number` lists of the command line (`--cutoffs`, `--precision`).
 */
import type { EvaluatorSummary } from "./store.ts"

/**
 * One evaluator's scores so far, by Welford's online algorithm (no sum of squares to lose
 * precision in); booleans count as 0 and 1.
 */
export class ScoreAccumulator {
  #count = 0
  #mean = 0
  /** the sum of squared differences from the mean */
  #m2 = 0
  #errors = 0

  add(score: boolean | number): void {
    const value = typeof score === "boolean" ? (score ? 1 : 0) : score
    this.#count += 1
    const delta = value - this.#mean
    this.#mean += delta / this.#count
    this.#m2 += delta * (value - this.#mean)
  }

  /** a datapoint this evaluator could not score */
  addError(): void {
    this.#errors += 1
  }

  /** mean once something is scored; stderr (sample standard deviation / sqrt(n)) from two scores on */
  summary(): EvaluatorSummary {
    const n = this.#count
    return {
      count: n,
      ...(n > 0 && { mean: this.#mean }),
      ...(n > 1 && { stderr: Math.sqrt(this.#m2 / (n - 1)) / Math.sqrt(n) }),
      errors: this.#errors
    }
  }
}

/** the half-width of the mean's 95% confidence interval (normal approximation) */
export const confidenceHalfWidth = (summary: EvaluatorSummary): number | undefined =>
  summary.stderr === undefined ? undefined : 1.96 * summary.stderr

/** whether the mean reached the cutoff (at least it for `max`, at most it for `min`); never without a mean */
export const cutoffMet = (summary: EvaluatorSummary, optimize: "max" | "min", cutoff: number): boolean => {
  if (summary.mean === undefined) return false
  return optimize === "max" ? summary.mean >= cutoff : summary.mean <= cutoff
}

const decimalNumber = /^[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/i

/**
 * `"a=0.8,b=0.5"` -> `{a: 0.8, b: 0.5}` (spaces around names and numbers are ignored; an empty
 * text is an empty list), or the problem naming `field` and the piece at fault.
 */
export const parseEvaluatorNumbers = (
  text: string,
  field: string
): Record<string, number> | { readonly problem: string } => {
  const numbers = new Map<string, number>()
  if (text.trim() === "") return {}
  const problem = (piece: string, why: string) => ({ problem: `${field}: ${JSON.stringify(piece.slice(0, 100))} ${why}` })
  for (const piece of text.split(",")) {
    const equals = piece.indexOf("=")
    if (equals < 0) return problem(piece, "is not of the form evaluator_name=number")
    const name = piece.slice(0, equals).trim()
    const value = piece.slice(equals + 1).trim()
    if (name === "") return problem(piece, "has no evaluator name before =")
    if (!decimalNumber.test(value) || !Number.isFinite(Number(value))) return problem(piece, "does not give a finite number after =")
    if (numbers.has(name)) return problem(piece, `gives evaluator "${name}" a second time`)
    numbers.set(name, Number(value))
  }
  // fromEntries: a name such as `__proto__` stays an own key
  return Object.fromEntries(numbers)
}

/** the scores each evaluator needs before its precision can stop a run */
export const minScoresForStopping = 10

/**
 * Adaptive stopping: every evaluator named in `precision` has at least `minScoresForStopping`
 * scores and a confidence half-width below its target. Without any target there is nothing
 * to reach: false (a run stops early only for a reason).
 */
export const precisionReached = (
  summaries: Readonly<Record<string, EvaluatorSummary>>,
  precision: Readonly<Record<string, number>>
): boolean => {
  const targets = Object.entries(precision)
  if (targets.length === 0) return false
  return targets.every(([name, target]) => {
    const summary = Object.hasOwn(summaries, name) ? summaries[name] : undefined
    if (summary === undefined || summary.count < minScoresForStopping) return false
    const halfWidth = confidenceHalfWidth(summary)
    return halfWidth !== undefined && halfWidth < target
  })
}
