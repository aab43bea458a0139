/**
 * Track-and-Stop's sampling probabilities (src/experimentation/trackAndStop.ts): simulated
 * experiments move the probability to the better variant within a bounded number of updates,
 * with `min_prob` respected at every update; exploration under `min_samples_per_variant`;
 * the Gaussian optimal allocation's closed form for two arms; stopping (δ, ε), a kept stop,
 * `optimize = "min"`; determinism.
 */
import { describe, expect, it } from "vitest"
import { seededRandom } from "../../src/inference/variantDraw.ts"
import { type SamplingDecision, trackAndStop, type TrackAndStopSettings } from "../../src/experimentation/trackAndStop.ts"
import { type VariantStatistics } from "../../src/experimentation/store.ts"

const settings = (fields: Partial<TrackAndStopSettings> = {}): TrackAndStopSettings => ({
  epsilon: 0,
  delta: 0.05,
  minProb: 0.05,
  minSamplesPerVariant: 10,
  optimize: "max",
  metricType: "boolean",
  ...fields
})

const probabilityOf = (decision: SamplingDecision, name: string) => decision.probabilities.find((p) => p.name === name)!.probability

const expectValid = (decision: SamplingDecision, minProb: number) => {
  const total = decision.probabilities.reduce((sum, { probability }) => sum + probability, 0)
  expect(Math.abs(total - 1)).toBeLessThan(1e-9)
  for (const { probability } of decision.probabilities) expect(probability).toBeGreaterThanOrEqual(minProb - 1e-12)
}

/** running sums of 0/1 observations per arm */
class Observations {
  readonly sums = new Map<string, { n: number; sum: number; squares: number }>()
  add(name: string, value: number) {
    const arm = this.sums.get(name) ?? { n: 0, sum: 0, squares: 0 }
    arm.n++
    arm.sum += value
    arm.squares += value * value
    this.sums.set(name, arm)
  }
  statistics(): Array<VariantStatistics> {
    return [...this.sums].map(([name, { n, sum, squares }]) => ({ name, count: n, mean: sum / n, variance: squares / n - (sum / n) ** 2 }))
  }
}

/**
 * An experiment run as the gateway runs it: between updates `perUpdate` episodes each draw a
 * variant by the current probabilities and give feedback drawn from the variant's true rate.
 */
const simulate = (rates: Record<string, number>, options: { updates: number; perUpdate: number; seed: string; settings: TrackAndStopSettings }) => {
  const candidates = Object.keys(rates)
  const random = seededRandom(options.seed)
  const observations = new Observations()
  const decisions: Array<SamplingDecision> = []
  let decision = trackAndStop(candidates, [], options.settings)
  decisions.push(decision)
  for (let update = 0; update < options.updates; update++) {
    for (let episode = 0; episode < options.perUpdate; episode++) {
      let point = random()
      const drawn = decision.probabilities.find(({ probability }) => (point -= probability) < 0)?.name ?? candidates[candidates.length - 1]
      observations.add(drawn, random() < rates[drawn] ? 1 : 0)
    }
    decision = trackAndStop(candidates, observations.statistics(), options.settings, decision.stopped ? decision.winner : undefined)
    decisions.push(decision)
  }
  return decisions
}

describe("Track-and-Stop: simulated experiments", () => {
  it.each(["one", "two", "three", "four", "five"])("moves the probability to the better of two variants within 10 updates, min_prob respected throughout (seed %s)", (seed) => {
    const decisions = simulate({ good: 0.8, poor: 0.5 }, { updates: 10, perUpdate: 100, seed, settings: settings() })
    for (const decision of decisions) expectValid(decision, 0.05)
    const last = decisions[decisions.length - 1]
    expect(last.stopped).toBe(true)
    expect(last.winner).toBe("good")
    expect(probabilityOf(last, "good")).toBeCloseTo(0.95, 12)
    expect(probabilityOf(last, "poor")).toBeCloseTo(0.05, 12)
  })

  it("starts uniform, and takes probability from a clearly worse variant before it stops", () => {
    const decisions = simulate({ best: 0.7, close: 0.62, bad: 0.1 }, { updates: 40, perUpdate: 60, seed: "three-arms", settings: settings({ minProb: 0.02 }) })
    expect(decisions[0].probabilities.map(({ probability }) => probability)).toEqual([1 / 3, 1 / 3, 1 / 3])
    for (const decision of decisions) expectValid(decision, 0.02)
    // the first update past exploration already draws the bad variant least, and the two close ones most
    const bandit = decisions.find((decision) => decision.exploring.length === 0 && !decision.stopped)!
    expect(probabilityOf(bandit, "bad")).toBeLessThan(0.2)
    expect(probabilityOf(bandit, "best") + probabilityOf(bandit, "close")).toBeGreaterThan(0.8)
    const last = decisions[decisions.length - 1]
    expect(last.winner).toBe("best")
    expect(probabilityOf(last, "best")).toBeCloseTo(1 - 2 * 0.02, 12)
  })

  it("never stops on two variants that are equally good, and keeps them both drawn", () => {
    const decisions = simulate({ a: 0.6, b: 0.6 }, { updates: 20, perUpdate: 100, seed: "tie", settings: settings() })
    for (const decision of decisions.slice(1)) {
      expect(decision.stopped).toBe(false)
      expect(probabilityOf(decision, "a")).toBeGreaterThan(0.3)
      expect(probabilityOf(decision, "b")).toBeGreaterThan(0.3)
    }
  })
})

const stats = (name: string, count: number, mean: number, variance: number): VariantStatistics => ({ name, count, mean, variance })

describe("Track-and-Stop: probabilities", () => {
  it("explores every variant uniformly until two have min_samples_per_variant observations", () => {
    for (const observed of [[], [stats("a", 50, 0.9, 0.09)], [stats("a", 9, 0.9, 0.09), stats("b", 9, 0.1, 0.09), stats("c", 3, 0.5, 0.25)]]) {
      const decision = trackAndStop(["a", "b", "c"], observed, settings())
      expect(decision.probabilities.map(({ probability }) => probability)).toEqual([1 / 3, 1 / 3, 1 / 3])
      expect(decision.stopped).toBe(false)
    }
    expect(trackAndStop(["a", "b", "c"], [stats("a", 50, 0.9, 0.09), stats("b", 9, 0.1, 0.09)], settings()).exploring).toEqual(["b", "c"])
  })

  it("gives each variant still exploring 1/K, and shares the rest between the others", () => {
    const decision = trackAndStop(
      ["a", "b", "c", "d"],
      [stats("a", 40, 0.6, 1), stats("b", 40, 0.5, 1), stats("c", 40, 0.4, 1), stats("d", 2, 0.5, 1)],
      settings({ metricType: "float", minProb: 0 })
    )
    expect(decision.exploring).toEqual(["d"])
    expect(probabilityOf(decision, "d")).toBeCloseTo(0.25, 12)
    expectValid(decision, 0)
  })

  it("allocates two Gaussian variants in proportion to their standard deviations (the optimal allocation's closed form)", () => {
    const decision = trackAndStop(["a", "b"], [stats("a", 30, 1, 1), stats("b", 30, 0.9, 9)], settings({ metricType: "float", minProb: 0 }))
    expect(decision.stopped).toBe(false)
    expect(probabilityOf(decision, "a")).toBeCloseTo(1 / 4, 6)
    expect(probabilityOf(decision, "b")).toBeCloseTo(3 / 4, 6)
  })

  it("keeps every variant at min_prob or above and the sum at 1, whatever the statistics", () => {
    const random = seededRandom("properties")
    for (let round = 0; round < 300; round++) {
      const k = 2 + Math.floor(random() * 5)
      const minProb = random() < 0.2 ? 0 : random() / k
      const candidates = Array.from({ length: k }, (_, i) => `v${i}`)
      const observed = candidates.map((name) => stats(name, Math.floor(random() * 200), random() * 10 - 5, random() < 0.1 ? 0 : random() * 4))
      const decision = trackAndStop(candidates, observed, settings({ minProb, metricType: random() < 0.5 ? "float" : "boolean", epsilon: random() < 0.5 ? 0 : random(), minSamplesPerVariant: 1 + Math.floor(random() * 30) }))
      expectValid(decision, minProb)
      if (decision.stopped) expect(probabilityOf(decision, decision.winner!)).toBeCloseTo(1 - (k - 1) * minProb, 12)
    }
  })

  it("is deterministic: the same statistics in any order give the same probabilities", () => {
    const observed = [stats("a", 120, 0.61, 0.2379), stats("b", 90, 0.55, 0.2475), stats("c", 60, 0.3, 0.21)]
    const first = trackAndStop(["a", "b", "c"], observed, settings())
    expect(trackAndStop(["a", "b", "c"], [...observed].reverse(), settings())).toEqual(first)
    expect(trackAndStop(["a", "b", "c"], observed, settings())).toEqual(first)
  })
})

describe("Track-and-Stop: stopping", () => {
  it("stops on the best variant once the evidence passes the threshold of delta, and not before", () => {
    const clear = trackAndStop(["a", "b"], [stats("a", 200, 0.8, 0.16), stats("b", 200, 0.6, 0.24)], settings())
    expect(clear).toMatchObject({ stopped: true, winner: "a" })
    const early = trackAndStop(["a", "b"], [stats("a", 20, 0.8, 0.16), stats("b", 20, 0.6, 0.24)], settings())
    expect(early.stopped).toBe(false)
    // the same evidence, with a confidence asked for much higher
    expect(trackAndStop(["a", "b"], [stats("a", 200, 0.8, 0.16), stats("b", 200, 0.6, 0.24)], settings({ delta: 1e-12 })).stopped).toBe(false)
  })

  it("stops on variants within epsilon of each other", () => {
    const tied = [stats("a", 400, 0.5, 0.25), stats("b", 400, 0.5, 0.25)]
    expect(trackAndStop(["a", "b"], tied, settings()).stopped).toBe(false)
    expect(trackAndStop(["a", "b"], tied, settings({ epsilon: 0.2 })).stopped).toBe(true)
  })

  it("minimizes with optimize = \"min\": the lower mean wins", () => {
    const observed = [stats("fast", 200, 1.2, 0.04), stats("slow", 200, 2.5, 0.09)]
    expect(trackAndStop(["fast", "slow"], observed, settings({ metricType: "float", optimize: "min" }))).toMatchObject({ stopped: true, winner: "fast" })
    expect(trackAndStop(["fast", "slow"], observed, settings({ metricType: "float", optimize: "max" }))).toMatchObject({ stopped: true, winner: "slow" })
  })

  it("keeps a stop while the candidates stay the same, and explores a new candidate", () => {
    const looksTied = [stats("a", 300, 0.5, 0.25), stats("b", 40, 0.5, 0.25)]
    expect(trackAndStop(["a", "b"], looksTied, settings(), "a")).toMatchObject({ stopped: true, winner: "a" })
    const added = trackAndStop(["a", "b", "c"], looksTied, settings(), "a")
    expect(added.stopped).toBe(false)
    expect(added.exploring).toEqual(["c"])
  })

  it("draws a lone candidate always", () => {
    expect(trackAndStop(["only"], [], settings({ minProb: 0.5 }))).toEqual({ probabilities: [{ name: "only", probability: 1 }], stopped: true, winner: "only", exploring: ["only"] })
  })
})
