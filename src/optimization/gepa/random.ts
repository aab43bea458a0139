/**
 * GEPA's randomness: a seeded PRNG whose whole state is one uint32, so an optimization task
 * can checkpoint it as JSON (`random.state`) and resume with `new SeededRandom(state)` drawing
 * exactly what it would have drawn had it never stopped; and the draws GEPA makes with it
 * (shuffles, the train/validation split, minibatches, weighted picks). Pure: the same seed
 * and the same inputs give the same results on every machine.
 */

/** FNV-1a over the UTF-16 code units, 32 bits */
const fnv1a = (text: string): number => {
  let h = 0x811c9dc5
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i)
    h = Math.imul(h, 0x01000193)
  }
  return h >>> 0
}

/** MurmurHash3's finalizer: spreads nearby seeds ("1", "2") over the whole state space */
const fmix32 = (value: number): number => {
  let h = value >>> 0
  h ^= h >>> 16
  h = Math.imul(h, 0x85ebca6b)
  h ^= h >>> 13
  h = Math.imul(h, 0xc2b2ae35)
  h ^= h >>> 16
  return h >>> 0
}

/** mulberry32 over a uint32 state: small, fast, well distributed, and checkpointable */
export class SeededRandom {
  #state: number

  /** resumes from a state read from `state` (any number is taken modulo 2^32) */
  constructor(state: number) {
    this.#state = state >>> 0
  }

  /**
   * A generator for a seed. A number is hashed as its decimal text, so `42` and `"42"` are the
   * same seed (a seed may arrive as either from a configuration or a command line).
   */
  static fromSeed(seed: number | string): SeededRandom {
    return new SeededRandom(fmix32(fnv1a(String(seed))))
  }

  /** the uint32 state: `new SeededRandom(random.state)` continues exactly as `random` would */
  get state(): number {
    return this.#state
  }

  /** a number in [0, 1) */
  next(): number {
    this.#state = (this.#state + 0x6d2b79f5) >>> 0
    let t = this.#state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }

  /** an integer in [0, n); `n` must be a positive integer */
  int(n: number): number {
    if (!Number.isInteger(n) || n <= 0) throw new RangeError(`SeededRandom.int needs a positive integer, got ${n}`)
    return Math.floor(this.next() * n)
  }
}

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
