/**
 * The sampling probabilities one process knows of an adaptive experiment, and which of them an
 * episode draws with. A computation comes into force `delayMs` after it was made, by which
 * time every process has read it (each reads the newest every few seconds), and an episode
 * draws with the computation in force when it began (the time its UUIDv7 id carries). So every
 * process gives an episode the same probabilities, hence (with the draw seeded by the episode)
 * the same variant, for as long as the episode lasts: an update changes the draws of episodes
 * that begin after it, never of one under way. Pure: no clock, no I/O.
 */
import type { WeightedVariant } from "../inference/variantDraw.ts"
import type { StoredSampling } from "./store.ts"

/** computations kept per experiment: an episode older than all of them draws with the oldest */
export const historyLength = 64

export interface InForce {
  readonly sampling: StoredSampling
  readonly inForceFrom: number
  readonly weights: ReadonlyArray<WeightedVariant>
}

export class SamplingHistory {
  /** oldest first */
  private entries: Array<InForce> = []
  /** whether the first computation of the experiment is among `entries`: before it, candidates draw uniformly */
  private fromTheStart: boolean

  private readonly candidates: ReadonlyArray<string>
  private readonly delayMs: number

  constructor(
    candidates: ReadonlyArray<string>,
    delayMs: number,
    /** the newest computations read at start (newest first), and whether they are all there are */
    initial: ReadonlyArray<StoredSampling> = [],
    complete = true
  ) {
    this.candidates = candidates
    this.delayMs = delayMs
    this.fromTheStart = complete
    this.add(initial)
  }

  /**
   * Computations read from the store, in any order; those already known are skipped. One
   * stored late with an older id (two processes computing at once, without the lock) takes its
   * place by id, as a process reading both at once would have it.
   */
  add(samplings: ReadonlyArray<StoredSampling>): void {
    const known = new Set(this.entries.map((entry) => entry.sampling.id))
    const fresh = samplings.filter((sampling) => !known.has(sampling.id))
    if (fresh.length === 0) return
    for (const sampling of fresh) {
      const probabilities = new Map(sampling.probabilities.map(({ name, probability }) => [name, probability]))
      this.entries.push({
        sampling,
        inForceFrom: sampling.computedAt + this.delayMs,
        // in the configured order, so that a draw depends on the probabilities only
        weights: this.candidates.map((name) => ({ name, weight: probabilities.get(name) ?? 0 }))
      })
    }
    this.entries.sort((a, b) => (a.sampling.id < b.sampling.id ? -1 : a.sampling.id > b.sampling.id ? 1 : 0))
    if (this.entries.length > historyLength) {
      this.entries = this.entries.slice(-historyLength)
      this.fromTheStart = false
    }
  }

  get newest(): InForce | undefined {
    return this.entries[this.entries.length - 1]
  }

  /** the computation in force at `time` (epoch ms); undefined before the first (a uniform draw) */
  at(time: number): InForce | undefined {
    for (let i = this.entries.length - 1; i >= 0; i--) {
      if (this.entries[i].inForceFrom <= time) return this.entries[i]
    }
    return this.fromTheStart ? undefined : this.entries[0]
  }
}
