/**
 * Which stored computation an episode draws with (src/experimentation/history.ts): the one in
 * force when the episode began, so that an update never changes an episode under way; a
 * uniform draw before the first; computations arriving late or out of order take their place.
 */
import { describe, expect, it } from "vitest"
import { SamplingHistory } from "../../src/experimentation/history.ts"
import type { StoredSampling } from "../../src/experimentation/store.ts"

/** a UUIDv7 carrying `ms` */
const idAt = (ms: number) => {
  const time = ms.toString(16).padStart(12, "0")
  return `${time.slice(0, 8)}-${time.slice(8)}-7000-8000-000000000000`
}

const at = 1_750_000_000_000
const delay = 2000

const computed = (offsetMs: number, probabilities: Record<string, number>): StoredSampling => ({
  id: idAt(at + offsetMs),
  functionName: "f",
  configKey: "k",
  computedAt: at + offsetMs,
  probabilities: Object.entries(probabilities).map(([name, probability]) => ({ name, probability })),
  statistics: [],
  stopped: false,
  exploring: []
})

const first = computed(0, { b: 0.4, a: 0.6 })
const second = computed(10_000, { a: 0.9, b: 0.1 })

describe("SamplingHistory", () => {
  it("draws uniformly before the first computation is in force, then with the one in force when the episode began", () => {
    const history = new SamplingHistory(["a", "b", "c"], delay)
    expect(history.at(at)).toBeUndefined()
    history.add([first])
    expect(history.at(at + delay - 1)).toBeUndefined()
    // in the configured order, a candidate the computation does not name at 0
    expect(history.at(at + delay)?.weights).toEqual([{ name: "a", weight: 0.6 }, { name: "b", weight: 0.4 }, { name: "c", weight: 0 }])
    history.add([second, first])
    expect(history.at(at + 10_000 + delay - 1)?.sampling.id).toBe(first.id)
    expect(history.at(at + 10_000 + delay)?.sampling.id).toBe(second.id)
    expect(history.newest?.sampling.id).toBe(second.id)
    expect(history.newest?.inForceFrom).toBe(at + 10_000 + delay)
  })

  it("puts a computation stored late with an older id in its place", () => {
    const late = computed(5000, { a: 0.5, b: 0.5 })
    const history = new SamplingHistory(["a", "b"], delay, [second, first])
    history.add([late])
    expect(history.at(at + 5000 + delay)?.sampling.id).toBe(late.id)
    expect(history.newest?.sampling.id).toBe(second.id)
  })

  it("gives an episode older than every computation kept the oldest, when the first is not among them", () => {
    const history = new SamplingHistory(["a", "b"], delay, [second], false)
    expect(history.at(at)?.sampling.id).toBe(second.id)
    const many = new SamplingHistory(["a", "b"], delay)
    many.add(Array.from({ length: 70 }, (_, i) => computed(i * 1000, { a: 1, b: 0 })))
    expect(many.at(at)?.sampling.computedAt).toBe(at + 6000)
  })
})
