/**
 * Adaptive experimentation's sampling probabilities: Track-and-Stop, the best-arm
 * identification algorithm of Garivier & Kaufmann, "Optimal Best Arm Identification with
 * Fixed Confidence" (COLT 2016, arXiv:1602.04589), for Gaussian arms with plug-in variances, in
 * its ε-best form (an arm within `epsilon` of the best counts as best), as TensorZero runs it.
 * Pure and deterministic: the same statistics and settings give the same probabilities.
 *
 * - Sampling ("tracking"): each candidate is drawn with the probability the algorithm's optimal
 *   allocation w* gives it: the proportions that make the best arm identifiable soonest,
 *   max_w min_{a ≠ leader} (μ_L − μ_a + ε)² / (2 (σ_L²/w_L + σ_a²/w_a)) over the simplex with
 *   every w ≥ `min_prob` (the paper's Lemma 3 for Gaussian arms; the floor is the forced
 *   exploration of its C-tracking). The gateway draws by these probabilities per episode rather
 *   than deterministically tracking counts, since an update reaches many processes at once.
 *   Solved exactly (to float precision) by bisection on the objective's value: for a target z
 *   and a leader share w_L, each challenger needs w_a ≥ σ_a² / ((μ_L − μ_a + ε)²/(2z) − σ_L²/w_L),
 *   and the least total over w_L (convex in w_L: a golden-section search) is at most 1 exactly
 *   when z is reachable.
 * - Stopping: the generalized likelihood ratio of the leader against each challenger,
 *   Z_a = (μ_L − μ_a + ε)² / (2 (σ_L²/n_L + σ_a²/n_a)), against the threshold
 *   β(t, δ) = ln((1 + ln t) / δ) (the paper's Section 4 with its practical threshold): once
 *   every Z_a exceeds it, the leader is the best arm (within ε) with confidence 1 − δ and the
 *   experiment stops: the winner gets all the probability the floors leave. A stop is kept
 *   (`previousWinner`) while the candidates stay the same.
 * - Cold start: a candidate with fewer than `min_samples_per_variant` observations is explored
 *   (each such candidate gets 1/K of the draws, the rest being shared by the others as above),
 *   as TensorZero's "nursery" does; with fewer than two candidates past it, the draw is uniform.
 *
 * Boolean metrics are 0/1 observations; their variance is taken from the mean smoothed by
 * Laplace's rule ((successes + 1) / (n + 2)), so that an arm with every answer alike still has
 * some uncertainty. `optimize = "min"` negates the observations.
 */
import type { VariantStatistics } from "./store.ts"

export interface TrackAndStopSettings {
  readonly epsilon: number
  readonly delta: number
  readonly minProb: number
  readonly minSamplesPerVariant: number
  readonly optimize: "max" | "min"
  readonly metricType: "boolean" | "float"
}

export interface SamplingDecision {
  /** one per candidate, in the candidates' order; each at least `minProb`, summing to 1 */
  readonly probabilities: ReadonlyArray<{ readonly name: string; readonly probability: number }>
  /** the best candidate was identified: it gets everything the floors leave */
  readonly stopped: boolean
  /** the stopped experiment's winner */
  readonly winner?: string | undefined
  /** the candidates still under `minSamplesPerVariant` observations */
  readonly exploring: ReadonlyArray<string>
}

/** the variance of a float metric is floored here (TensorZero's choice too): constant answers still divide */
const varianceFloor = 1e-12
const bisections = 100
const goldenSteps = 100

interface Arm {
  readonly index: number
  readonly name: string
  readonly count: number
  /** the mean with the sign that makes larger better */
  readonly reward: number
  readonly variance: number
}

const armVariance = (stats: VariantStatistics, metricType: TrackAndStopSettings["metricType"]): number => {
  if (metricType === "boolean") {
    const smoothed = (stats.count * stats.mean + 1) / (stats.count + 2)
    return smoothed * (1 - smoothed)
  }
  return Math.max(stats.variance, varianceFloor)
}

/** the highest reward; ties go to the smaller variance per observation, then to the earlier candidate */
const leaderOf = (arms: ReadonlyArray<Arm>): Arm =>
  arms.reduce((best, arm) => {
    if (arm.reward !== best.reward) return arm.reward > best.reward ? arm : best
    return arm.variance / arm.count < best.variance / best.count ? arm : best
  })

/** the gap to beat, ε included; never zero, so that a tie still asks for samples rather than dividing by zero */
const gapOf = (leader: Arm, arm: Arm, epsilon: number): number =>
  Math.max(leader.reward - arm.reward + epsilon, 1e-9 * (Math.sqrt(leader.variance) + Math.sqrt(arm.variance)))

/** whether every challenger's GLR statistic exceeds β(t, δ) */
const identified = (arms: ReadonlyArray<Arm>, leader: Arm, epsilon: number, delta: number): boolean => {
  const total = arms.reduce((sum, arm) => sum + arm.count, 0)
  const threshold = Math.log((1 + Math.log(total)) / delta)
  return arms.every((arm) => {
    if (arm === leader) return true
    const gap = leader.reward - arm.reward + epsilon
    if (gap <= 0) return false
    return (gap * gap) / (2 * (leader.variance / leader.count + arm.variance / arm.count)) > threshold
  })
}

/** the minimum of a convex function on [lo, hi] (golden-section search) */
const convexMinimum = (f: (x: number) => number, lo: number, hi: number): { readonly x: number; readonly value: number } => {
  const ratio = (Math.sqrt(5) - 1) / 2
  let a = lo
  let b = hi
  let c = b - ratio * (b - a)
  let d = a + ratio * (b - a)
  let fc = f(c)
  let fd = f(d)
  for (let step = 0; step < goldenSteps; step++) {
    if (fc <= fd) {
      b = d
      d = c
      fd = fc
      c = b - ratio * (b - a)
      fc = f(c)
    } else {
      a = c
      c = d
      fc = fd
      d = a + ratio * (b - a)
      fd = f(d)
    }
  }
  const x = (a + b) / 2
  return { x, value: f(x) }
}

/**
 * Track-and-Stop's optimal allocation among `arms` (at least two), every share at least
 * `floor` (floor × arms ≤ 1): shares in the arms' order, summing to 1.
 */
const optimalAllocation = (arms: ReadonlyArray<Arm>, epsilon: number, floor: number): Array<number> => {
  const leader = leaderOf(arms)
  const challengers = arms.filter((arm) => arm !== leader)
  const gaps = challengers.map((arm) => gapOf(leader, arm, epsilon))
  const s = leader.variance
  // the value cannot exceed what every arm sampled with share 1 would give
  const zMax = Math.min(...challengers.map((arm, i) => (gaps[i] * gaps[i]) / (2 * (s + arm.variance))))

  /** the challengers' least shares for value z with leader share wL (Infinity when out of reach) */
  const sharesFor = (z: number, wL: number): Array<number> =>
    challengers.map((arm, i) => {
      const room = (gaps[i] * gaps[i]) / (2 * z) - s / wL
      return room <= 0 ? Infinity : Math.max(floor, arm.variance / room)
    })
  const totalFor = (z: number) => (wL: number) => sharesFor(z, wL).reduce((sum, share) => sum + share, wL)

  /** the leader share making the total least for z, if that total fits in 1 */
  const reachable = (z: number): number | undefined => {
    // below this leader share some challenger cannot reach z at all
    const lo = Math.max(floor, ...gaps.map((gap) => (s * 2 * z) / (gap * gap))) * (1 + 1e-12)
    if (lo >= 1) return undefined
    const best = convexMinimum(totalFor(z), lo, 1)
    return best.value <= 1 ? best.x : undefined
  }

  let zLo = 0
  let zHi = zMax
  let wL: number | undefined
  for (let step = 0; step < bisections; step++) {
    const z = (zLo + zHi) / 2
    const found = reachable(z)
    if (found === undefined) zHi = z
    else {
      zLo = z
      wL = found
    }
  }
  if (wL === undefined) return arms.map(() => 1 / arms.length)
  const shares = sharesFor(zLo, wL)
  const byIndex = new Map<Arm, number>(challengers.map((arm, i) => [arm, shares[i]]))
  byIndex.set(leader, wL)
  const raw = arms.map((arm) => byIndex.get(arm)!)
  // the slack (the search stops just short of the optimum) goes to every arm in proportion: each only gains
  const total = raw.reduce((sum, share) => sum + share, 0)
  return raw.map((share) => share / total)
}

/**
 * `weights` (non-negative, not all zero) as probabilities each at least `floor`: the arms under
 * it are raised to it and the others scaled down in proportion (floor × length ≤ 1).
 */
export const withFloor = (weights: ReadonlyArray<number>, floor: number): Array<number> => {
  const floored = new Set<number>()
  for (;;) {
    const free = weights.map((_, i) => i).filter((i) => !floored.has(i))
    const freeMass = 1 - floored.size * floor
    const freeWeight = free.reduce((sum, i) => sum + weights[i], 0)
    const scaled = weights.map((weight, i) =>
      floored.has(i) ? floor : freeWeight > 0 ? (weight * freeMass) / freeWeight : freeMass / free.length
    )
    const under = free.filter((i) => scaled[i] < floor)
    if (under.length === 0 || floor <= 0) return scaled
    for (const i of under) floored.add(i)
  }
}

export const trackAndStop = (
  candidates: ReadonlyArray<string>,
  statistics: ReadonlyArray<VariantStatistics>,
  settings: TrackAndStopSettings,
  /** the winner the last decision stopped on, if it did */
  previousWinner?: string | undefined
): SamplingDecision => {
  const byName = new Map(statistics.map((stats) => [stats.name, stats]))
  const k = candidates.length
  const arms: Array<Arm> = candidates.map((name, index) => {
    const stats = byName.get(name) ?? { name, count: 0, mean: 0, variance: 0 }
    return {
      index,
      name,
      count: stats.count,
      reward: settings.optimize === "max" ? stats.mean : -stats.mean,
      variance: armVariance(stats, settings.metricType)
    }
  })
  const exploring = arms.filter((arm) => arm.count < settings.minSamplesPerVariant)
  const graduated = arms.filter((arm) => arm.count >= settings.minSamplesPerVariant)
  const decision = (weights: ReadonlyArray<number>, winner?: string): SamplingDecision => {
    const probabilities = withFloor(weights, settings.minProb)
    return {
      probabilities: candidates.map((name, i) => ({ name, probability: probabilities[i] })),
      stopped: winner !== undefined,
      ...(winner !== undefined && { winner }),
      exploring: exploring.map((arm) => arm.name)
    }
  }

  if (k === 1) return decision([1], candidates[0])
  if (graduated.length < 2) return decision(arms.map(() => 1))

  // each exploring candidate keeps 1/K of the draws; the graduated ones share the rest
  const mass = graduated.length / k
  const weights = arms.map(() => 1 / k)
  const leader = leaderOf(graduated)
  const sticky = exploring.length === 0 && previousWinner !== undefined && graduated.some((arm) => arm.name === previousWinner)
  const winner = sticky
    ? graduated.find((arm) => arm.name === previousWinner)!
    : identified(graduated, leader, settings.epsilon, settings.delta)
    ? leader
    : undefined
  if (winner !== undefined) {
    for (const arm of graduated) weights[arm.index] = arm === winner ? mass : 0
    return decision(weights, exploring.length === 0 ? winner.name : undefined)
  }
  const floor = Math.min(settings.minProb / mass, 1 / graduated.length)
  const shares = optimalAllocation(graduated, settings.epsilon, floor)
  graduated.forEach((arm, i) => {
    weights[arm.index] = shares[i] * mass
  })
  return decision(weights)
}
