/**
 * GEPA's bookkeeping over scores (Agrawal et al. 2025, "GEPA: Reflective Prompt Evolution
 * Can Outperform Reinforcement Learning"): a datapoint's instance score over the objectives,
 * the instance-wise Pareto frontier of candidates on the validation set, the frontier member
 * to mutate next, whether a child beats its parent on a minibatch, and the per-evaluator
 * statistics and aggregate figures of a candidate for ranking and reports. Pure.
 *
 * Instance scores are oriented (higher is better: a `min` objective's score is negated) and
 * -Infinity for a datapoint nothing scored, so a failed datapoint is worse than any scored one.
 * Two instance scores within `SCORE_TOLERANCE` of each other are equal (and two -Infinity are).
 */
import { type SeededRandom, weightedIndex } from "./random.ts"

/** an evaluator GEPA optimizes for: its name and direction */
export interface Objective {
  readonly name: string
  readonly optimize: "max" | "min"
}

/** one datapoint's scores: evaluator name -> score (a boolean scored 1 or 0), null when the evaluator gave none or failed (or the inference failed) */
export type DatapointScores = Readonly<Record<string, number | null>>

/** datapoint id -> its scores */
export type ScoreTable = Readonly<Record<string, DatapointScores>>

/** the frontier: its members in the candidates' order, and on how many datapoints each is best */
export interface Frontier {
  readonly members: Array<string>
  readonly bestOn: Record<string, number>
}

/** instance scores closer than this are ties (float noise in means must not decide anything) */
export const SCORE_TOLERANCE = 1e-9

/** -1, 0 or 1 as `a` is worse than, tied with or better than `b` (instance scores) */
const compareScores = (a: number, b: number): -1 | 0 | 1 => {
  if (a === b) return 0 // also both -Infinity
  if (a === -Infinity) return -1
  if (b === -Infinity) return 1
  const difference = a - b
  return difference > SCORE_TOLERANCE ? 1 : difference < -SCORE_TOLERANCE ? -1 : 0
}

/**
 * The mean over the objectives of the oriented score (the score for `max`, its negation for
 * `min`), skipping objectives with no score (null, missing, or not a finite number);
 * -Infinity when no objective has one.
 */
export const instanceScore = (scores: DatapointScores | undefined, objectives: ReadonlyArray<Objective>): number => {
  if (scores === undefined) return -Infinity
  let sum = 0
  let count = 0
  for (const objective of objectives) {
    const score = scores[objective.name]
    if (typeof score !== "number" || !Number.isFinite(score)) continue
    sum += objective.optimize === "max" ? score : -score
    count++
  }
  return count === 0 ? -Infinity : sum / count
}

/** `a` dominates `b`: at least as good on every datapoint and better on one */
const dominates = (a: ReadonlyArray<number>, b: ReadonlyArray<number>): boolean => {
  let better = false
  for (let i = 0; i < a.length; i++) {
    const comparison = compareScores(a[i], b[i])
    if (comparison < 0) return false
    if (comparison > 0) better = true
  }
  return better
}

/**
 * GEPA's instance-wise Pareto frontier of the candidates (name -> validation scores) over
 * `datapointIds`. A candidate is best on a datapoint when its instance score ties the highest
 * there (a datapoint where every candidate is -Infinity is best for no one). A member is best
 * on at least one datapoint and dominated by no other candidate (over the vector of its
 * instance scores). Members keep the order of `candidates`' keys; `bestOn` has each member's
 * count of datapoints it is best on.
 *
 * The frontier is never empty when there is a candidate: when no candidate qualifies (every
 * datapoint failed for everyone, or there are no datapoints), the members are the candidates no
 * other dominates, with their counts (then 0) — and all candidates should tolerance ever make
 * dominance circular.
 */
export const paretoFrontier = (
  candidates: ReadonlyMap<string, ScoreTable>,
  datapointIds: ReadonlyArray<string>,
  objectives: ReadonlyArray<Objective>
): Frontier => {
  const names = [...candidates.keys()]
  const vectors = names.map((name) => {
    const table = candidates.get(name)!
    return datapointIds.map((id) => instanceScore(table[id], objectives))
  })
  const bestCounts = names.map(() => 0)
  for (let d = 0; d < datapointIds.length; d++) {
    let best = -Infinity
    for (const vector of vectors) if (vector[d] > best) best = vector[d]
    if (best === -Infinity) continue
    for (let c = 0; c < names.length; c++) if (compareScores(vectors[c][d], best) === 0) bestCounts[c]++
  }
  const undominated = names.map((_, c) => !vectors.some((other, o) => o !== c && dominates(other, vectors[c])))
  const pick = (keep: (c: number) => boolean): Frontier => {
    const members: Array<string> = []
    const bestOn: Record<string, number> = {}
    for (let c = 0; c < names.length; c++) {
      if (!keep(c)) continue
      members.push(names[c])
      bestOn[names[c]] = bestCounts[c]
    }
    return { members, bestOn }
  }
  const frontier = pick((c) => bestCounts[c] > 0 && undominated[c])
  if (frontier.members.length > 0 || names.length === 0) return frontier
  const fallback = pick((c) => undominated[c])
  return fallback.members.length > 0 ? fallback : pick(() => true)
}

/** the frontier member to mutate next, drawn by how many datapoints it is best on (uniform when all are 0); throws on an empty frontier */
export const chooseParent = (frontier: Frontier, random: SeededRandom): string => {
  const weights = frontier.members.map((name) => frontier.bestOn[name] ?? 0)
  return frontier.members[weightedIndex(weights, random)]
}

/**
 * GEPA's minibatch acceptance: comparing instance scores datapoint by datapoint, the child
 * wins at least as many as it loses (ties count for neither; a datapoint the child failed and
 * the parent scored is a loss).
 */
export const notWorse = (
  child: ScoreTable,
  parent: ScoreTable,
  datapointIds: ReadonlyArray<string>,
  objectives: ReadonlyArray<Objective>
): boolean => {
  let balance = 0
  for (const id of datapointIds) balance += compareScores(instanceScore(child[id], objectives), instanceScore(parent[id], objectives))
  return balance >= 0
}

/** one evaluator's raw scores over some datapoints */
export interface EvaluatorStatistics {
  /** null when nothing was scored */
  readonly mean: number | null
  /** the sample standard deviation (n - 1); null under two scores */
  readonly stdev: number | null
  /** the datapoints with a score */
  readonly count: number
}

/**
 * Each objective's statistics over `datapointIds`, from its raw scores (not oriented: a `min`
 * objective's mean is its actual mean), skipping datapoints without a score.
 */
export const statistics = (
  table: ScoreTable,
  datapointIds: ReadonlyArray<string>,
  objectives: ReadonlyArray<Objective>
): Record<string, EvaluatorStatistics> => {
  const result: Record<string, EvaluatorStatistics> = {}
  for (const objective of objectives) {
    const values: Array<number> = []
    for (const id of datapointIds) {
      const score = table[id]?.[objective.name]
      if (typeof score === "number" && Number.isFinite(score)) values.push(score)
    }
    const count = values.length
    const mean = count === 0 ? null : values.reduce((sum, value) => sum + value, 0) / count
    // two passes: the squared deviations from the known mean lose no precision
    const stdev =
      mean === null || count < 2 ? null : Math.sqrt(values.reduce((sum, value) => sum + (value - mean) ** 2, 0) / (count - 1))
    result[objective.name] = { mean, stdev, count }
  }
  return result
}

/**
 * A candidate's figure for ranking and reports over `datapointIds`: how many datapoints failed
 * (instance score -Infinity: nothing scored), and the mean of the other datapoints' (oriented)
 * instance scores, null when every datapoint failed. The two are kept apart because no
 * penalty folded into the mean means the same for `max` and `min` objectives.
 */
export const aggregate = (
  table: ScoreTable,
  datapointIds: ReadonlyArray<string>,
  objectives: ReadonlyArray<Objective>
): { failed: number; mean: number | null } => {
  let failed = 0
  let sum = 0
  let count = 0
  for (const id of datapointIds) {
    const score = instanceScore(table[id], objectives)
    if (score === -Infinity) failed++
    else {
      sum += score
      count++
    }
  }
  return { failed, mean: count === 0 ? null : sum / count }
}
