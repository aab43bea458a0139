/**
 * A seeded pseudo-random generator, the one of the project: mulberry32 over a uint32 state,
 * seeded by a hash of text. Variant sampling draws an episode's variant order with it
 * (`seededRandom`); prompt optimization checkpoints its state and resumes it (`SeededRandom`).
 * Pure: the same seed gives the same draws on every machine.
 */

/** FNV-1a over the UTF-16 code units, 32 bits */
export const fnv1a = (text: string): number => {
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

