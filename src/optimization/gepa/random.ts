/**
 * The draws GEPA makes (shuffles, the train/validation split, minibatches, weighted picks) with
 * the project's seeded generator (src/seededRandom.ts), whose whole state is one uint32: an
 * optimization task checkpoints it as JSON (`random.state`) and resumes with
 * `new SeededRandom(state)`, drawing exactly what it would have drawn had it never stopped.
 * Pure: the same seed and the same inputs give the same results on every machine.
 */

import { SeededRandom } from "../../seededRandom.ts"

export { SeededRandom }

/** a shuffled copy (Fisher–Yates); the input is left as it is */
export const shuffled = <A>(items: ReadonlyArray<A>, random: SeededRandom): Array<A> => {
  const result = [...items]
  for (let i = result.length - 1; i > 0; i--) {
    const j = random.int(i + 1)
    const swap = result[i]
    result[i] = result[j]
    result[j] = swap
  }
  return result
}

/**
 * Shuffles, then the first floor(n/2) items train and the rest validate (validation gets the
 * odd one). Callers sort the items (by id) first, so the split depends only on the seed and
 * the set of items, not on the order they were read in.
 */
export const splitHalves = <A>(
  items: ReadonlyArray<A>,
  random: SeededRandom
): { train: Array<A>; validation: Array<A> } => {
  const all = shuffled(items, random)
  const half = Math.floor(all.length / 2)
  return { train: all.slice(0, half), validation: all.slice(half) }
}

/**
 * `count` distinct items (distinct positions of `items`) drawn without replacement, in the
 * order drawn; all of them, shuffled, when `count` >= their number; none when `count` <= 0.
 */
export const sample = <A>(items: ReadonlyArray<A>, count: number, random: SeededRandom): Array<A> => {
  const take = Math.max(0, Math.min(Math.floor(count), items.length))
  // a partial Fisher–Yates: the first `take` positions are the draw
  const pool = [...items]
  for (let i = 0; i < take; i++) {
    const j = i + random.int(pool.length - i)
    const swap = pool[i]
    pool[i] = pool[j]
    pool[j] = swap
  }
  return pool.slice(0, take)
}

/**
 * An index drawn with probability proportional to its weight (weights must be finite and
 * non-negative); uniform when every weight is zero; never an index of weight zero when some
 * weight is positive. Throws on no weights.
 */
export const weightedIndex = (weights: ReadonlyArray<number>, random: SeededRandom): number => {
  if (weights.length === 0) throw new RangeError("weightedIndex needs at least one weight")
  let total = 0
  for (const weight of weights) {
    if (!Number.isFinite(weight) || weight < 0) throw new RangeError(`weightedIndex needs finite non-negative weights, got ${weight}`)
    total += weight
  }
  if (total === 0) return random.int(weights.length)
  const point = random.next() * total
  let cumulative = 0
  let lastPositive = -1
  for (let i = 0; i < weights.length; i++) {
    if (weights[i] === 0) continue
    cumulative += weights[i]
    lastPositive = i
    if (point < cumulative) return i
  }
  // rounding can leave `point` a hair above the running sum: the last positive weight takes it
  return lastPositive
}
