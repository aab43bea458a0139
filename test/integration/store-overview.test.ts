/**
 * The conformance suite of the Overview's port (`OverviewStore` of src/overview/store.ts), the
 * same tests against ClickHouse, Postgres and the embedded database (PGlite, with the Postgres
 * adapter), checking each aggregate against rows written here: inferences per bucket and
 * variant (or function), the range's bounds (from inclusive, to exclusive), rows written twice
 * counted once, functions' counts, the latest feedback per target by variant (inference- and
 * episode-level, booleans and floats, with their sample variance), and the model calls per model
 * and provider with interpolated percentiles of their latency and time to first token.
 */
import { describe, expect, it } from "vitest"
import type { StoredFeedback, StoredInference, StoredModelInference } from "../../src/analytics/records.ts"
import type { ModelCallStatistics } from "../../src/overview/store.ts"
import { batch, chatInference, feedback, idAt, jsonInference, modelInference, oddStrings, run, storeForSuite, write } from "../support/storeFixtures.ts"

const hour = 3_600_000
const minute = 60_000
/** a whole hour, so that hourly buckets start at base, base + 1h, base + 2h */
const base = Date.UTC(2026, 0, 10, 12)
const range = { from: base, to: base + 3 * hour }

const at = (ms: number, fields: Partial<StoredInference> = {}) => chatInference({ id: idAt(ms), timestamp: ms, functionName: "draft", ...fields })

// draft: a1, a2 in the first hour (one episode with b1), b1 (json) in the second, b2 at the range's last millisecond;
// outside: one a millisecond before `from`, one b at `to`; another function inside
const a1 = at(base, { variantName: "a" })
const a2 = at(base + 10 * minute, { variantName: "a" })
const b1 = jsonInference({ id: idAt(base + hour + 5 * minute), timestamp: base + hour + 5 * minute, functionName: "draft", variantName: "b", episodeId: a1.episodeId })
const b2 = at(base + 3 * hour - 1, { variantName: "b" })
const before = at(base - 1, { variantName: "a" })
const after = at(base + 3 * hour, { variantName: "b" })
const other = at(base + 30 * minute, { functionName: "other", variantName: "x" })
const inferences = [a1, a2, b1, b2, before, after, other]

const call = (inference: StoredInference, sequence: number, fields: Partial<StoredModelInference>) =>
  modelInference(inference.id, { id: idAt(inference.timestamp + 5, sequence), cost: undefined, ttftMs: undefined, ...fields })

const calls = [
  call(a1, 0, { modelName: "m1", modelProviderName: "p1", responseTimeMs: 100, ttftMs: 10, inputTokens: 10, outputTokens: 2, cost: 0.5 }),
  call(a2, 0, { modelName: "m1", modelProviderName: "p1", responseTimeMs: 200, inputTokens: 20, outputTokens: 3, cached: true }),
  call(b1, 0, { modelName: "m1", modelProviderName: "p1", responseTimeMs: 400, ttftMs: 30, inputTokens: 30, outputTokens: 4, cost: 0.25 }),
  call(b2, 0, { modelName: "m2", modelProviderName: "p2", responseTimeMs: 50, inputTokens: 1, outputTokens: 1 }),
  // a second call of b2 (a fallback's answer, a candidate of best-of-n)
  call(b2, 1, { modelName: "m2", modelProviderName: "p2", responseTimeMs: 70, inputTokens: 1, outputTokens: 1 }),
  call(before, 0, { modelName: "m1", modelProviderName: "p1", responseTimeMs: 10_000 }),
  call(other, 0, { modelName: "m3", modelProviderName: "p3", responseTimeMs: 7 })
]

const later = (ms: number, sequence = 0) => idAt(base + 4 * hour + ms, sequence)
const rows: Array<StoredFeedback> = [
  // thumbs: a1 false then true (the latest counts), a2 false; b1, b2 true
  feedback("boolean", a1.id, false, { metricName: "thumbs", id: later(0) }),
  feedback("boolean", a1.id, true, { metricName: "thumbs", id: later(1) }),
  feedback("boolean", a2.id, false, { metricName: "thumbs", id: later(2) }),
  feedback("boolean", b1.id, true, { metricName: "thumbs", id: later(3) }),
  feedback("boolean", b2.id, true, { metricName: "thumbs", id: later(4) }),
  // score: a 1 and 3, b 5
  feedback("float", a1.id, 1, { metricName: "score", id: later(5) }),
  feedback("float", a2.id, 3, { metricName: "score", id: later(6) }),
  feedback("float", b1.id, 5, { metricName: "score", id: later(7) }),
  // the episode of a1 and b1: a1's variant, the first
  feedback("float", a1.episodeId, 0.25, { metricName: "episode_score", targetType: "episode", id: later(8) }),
  // inferences out of the range or of another function: not counted
  feedback("boolean", before.id, false, { metricName: "thumbs", id: later(9) }),
  feedback("boolean", after.id, false, { metricName: "thumbs", id: later(10) }),
  feedback("float", other.id, 100, { metricName: "score", id: later(11) }),
  // comments and demonstrations are no metric
  feedback("comment", a1.id, "nice", { id: later(12) }),
  feedback("demonstration", a1.id, [{ type: "text", text: "x" }], { id: later(13) })
]

const expectModels = (found: ReadonlyArray<ModelCallStatistics>, wanted: ReadonlyArray<ModelCallStatistics>) => {
  const exact = (model: ModelCallStatistics) => ({ ...model, cost: undefined, responseTimeMs: undefined, ttftMs: undefined })
  expect(found.map(exact)).toEqual(wanted.map(exact))
  found.forEach((model, i) => {
    const expected = wanted[i]
    expect(model.cost === undefined, model.modelName).toBe(expected.cost === undefined)
    if (expected.cost !== undefined) expect(model.cost).toBeCloseTo(expected.cost, 12)
    for (const key of ["p50", "p90", "p99"] as const) {
      expect(model.responseTimeMs[key], `${model.modelName} ${key}`).toBeCloseTo(expected.responseTimeMs[key], 9)
      expect(model.ttftMs === undefined).toBe(expected.ttftMs === undefined)
      if (expected.ttftMs !== undefined) expect(model.ttftMs![key], `${model.modelName} ttft ${key}`).toBeCloseTo(expected.ttftMs[key], 9)
    }
  })
}

const m1: ModelCallStatistics = {
  modelName: "m1",
  providerName: "p1",
  calls: 3,
  cachedCalls: 1,
  inputTokens: 60,
  outputTokens: 9,
  cost: 0.75,
  // [100, 200, 400]: ranks 1, 1.8, 1.98 between 0 and 2
  responseTimeMs: { p50: 200, p90: 360, p99: 396 },
  ttftCalls: 2,
  ttftMs: { p50: 20, p90: 28, p99: 29.8 }
}
const m2: ModelCallStatistics = {
  modelName: "m2",
  providerName: "p2",
  calls: 2,
  cachedCalls: 0,
  inputTokens: 2,
  outputTokens: 2,
  cost: undefined,
  responseTimeMs: { p50: 60, p90: 68, p99: 69.8 },
  ttftCalls: 0,
  ttftMs: undefined
}
const m3: ModelCallStatistics = {
  modelName: "m3",
  providerName: "p3",
  calls: 1,
  cachedCalls: 0,
  inputTokens: 10,
  outputTokens: 2,
  cost: undefined,
  responseTimeMs: { p50: 7, p90: 7, p99: 7 },
  ttftCalls: 0,
  ttftMs: undefined
}

describe.each(["clickhouse", "postgres", "pglite"] as const)("%s overview store", (backend) => {
  const suite = storeForSuite(backend)
  let written = false
  const seeded = async () => {
    if (written) return suite.store.overview
    const rowsBatch = batch({ inferences, modelInferences: calls, feedback: rows })
    await run(write(suite.store, rowsBatch))
    // written twice (a retried batch): still counted once
    await run(write(suite.store, rowsBatch))
    written = true
    return suite.store.overview
  }

  it("counts a function's inferences per bucket and variant, from inclusive and to exclusive, once each", async () => {
    const store = await seeded()
    expect(await run(store.inferenceCounts("default", { ...range, functionName: "draft", bucketMs: hour }))).toEqual([
      { bucketStart: base, name: "a", count: 2 },
      { bucketStart: base + hour, name: "b", count: 1 },
      { bucketStart: base + 2 * hour, name: "b", count: 1 }
    ])
    expect(await run(store.inferenceCounts("default", { ...range, functionName: "draft", bucketMs: 86_400_000 }))).toEqual([
      { bucketStart: Date.UTC(2026, 0, 10), name: "a", count: 2 },
      { bucketStart: Date.UTC(2026, 0, 10), name: "b", count: 2 }
    ])
    expect(await run(store.inferenceCounts("default", { from: base, to: base + 11 * minute, functionName: "draft", bucketMs: minute }))).toEqual([
      { bucketStart: base, name: "a", count: 1 },
      { bucketStart: base + 10 * minute, name: "a", count: 1 }
    ])
    // the millisecond before and the one at `to` are in a wider range
    expect(await run(store.inferenceCounts("default", { from: base - 1, to: base + 3 * hour + 1, functionName: "draft", bucketMs: 86_400_000 }))).toEqual([
      { bucketStart: Date.UTC(2026, 0, 10), name: "a", count: 3 },
      { bucketStart: Date.UTC(2026, 0, 10), name: "b", count: 3 }
    ])
  })

  it("counts every function's inferences per bucket and function without a function", async () => {
    const store = await seeded()
    expect(await run(store.inferenceCounts("default", { ...range, bucketMs: hour }))).toEqual([
      { bucketStart: base, name: "draft", count: 2 },
      { bucketStart: base, name: "other", count: 1 },
      { bucketStart: base + hour, name: "draft", count: 1 },
      { bucketStart: base + 2 * hour, name: "draft", count: 1 }
    ])
    expect(await run(store.functionCounts("default", range))).toEqual([{ functionName: "draft", count: 4 }, { functionName: "other", count: 1 }])
    expect(await run(store.functionCounts("default", { from: base + 3 * hour, to: base + 4 * hour }))).toEqual([{ functionName: "draft", count: 1 }])
    expect(await run(store.functionCounts("default", { from: 0, to: 1000 }))).toEqual([])
  })

  it("gives the latest feedback's mean, count and sample variance per metric and variant, inference- and episode-level", async () => {
    const store = await seeded()
    const found = await run(store.metricStatistics("default", { ...range, functionName: "draft" }))
    const wanted = [
      { metricName: "episode_score", kind: "float", level: "episode", variantName: "a", count: 1, mean: 0.25, variance: 0 },
      { metricName: "score", kind: "float", level: "inference", variantName: "a", count: 2, mean: 2, variance: 2 },
      { metricName: "score", kind: "float", level: "inference", variantName: "b", count: 1, mean: 5, variance: 0 },
      { metricName: "thumbs", kind: "boolean", level: "inference", variantName: "a", count: 2, mean: 0.5, variance: 0.5 },
      { metricName: "thumbs", kind: "boolean", level: "inference", variantName: "b", count: 2, mean: 1, variance: 0 }
    ]
    expect(found.map(({ mean: _m, variance: _v, ...keys }) => keys)).toEqual(wanted.map(({ mean: _m, variance: _v, ...keys }) => keys))
    found.forEach((row, i) => {
      expect(row.mean).toBeCloseTo(wanted[i].mean, 12)
      expect(row.variance).toBeCloseTo(wanted[i].variance, 12)
    })
    // the range decides which inferences count: only b2 in the last hour
    expect(await run(store.metricStatistics("default", { from: base + 2 * hour, to: base + 3 * hour, functionName: "draft" }))).toEqual([
      { metricName: "thumbs", kind: "boolean", level: "inference", variantName: "b", count: 1, mean: 1, variance: 0 }
    ])
    expect(await run(store.metricStatistics("default", { ...range, functionName: "nope" }))).toEqual([])
  })

  it("gives the model calls of the range's inferences per model and provider, with percentiles of latency and time to first token", async () => {
    const store = await seeded()
    expectModels(await run(store.modelStatistics("default", { ...range, functionName: "draft" })), [m1, m2])
    expectModels(await run(store.modelStatistics("default", range)), [m1, m2, m3])
    expectModels(await run(store.modelStatistics("default", { ...range, functionName: "other" })), [m3])
    expect(await run(store.modelStatistics("default", { from: 0, to: 1000 }))).toEqual([])
  })

  it("tells whether a function has stored inferences at all", async () => {
    const store = await seeded()
    expect(await run(store.hasInferences("default", "draft"))).toBe(true)
    expect(await run(store.hasInferences("default", "other"))).toBe(true)
    expect(await run(store.hasInferences("default", "nope"))).toBe(false)
  })

  it("counts one workspace's inferences, model calls and feedback only", async () => {
    const store = await seeded()
    // another workspace's inference of draft in the range, with a model call and feedback
    const theirs = at(base + 20 * minute, { variantName: "a", workspace: "team-a" })
    await run(write(suite.store, batch({
      inferences: [theirs],
      modelInferences: [{ ...call(theirs, 0, { modelName: "m9", modelProviderName: "p9", responseTimeMs: 1 }), workspace: "team-a" }],
      feedback: [{ ...feedback("boolean", theirs.id, true, { metricName: "thumbs", id: idAt(base + 2 * hour) }), workspace: "team-a" }]
    })))
    expect(await run(store.functionCounts("default", range))).toEqual([{ functionName: "draft", count: 4 }, { functionName: "other", count: 1 }])
    expectModels(await run(store.modelStatistics("default", range)), [m1, m2, m3])
    expect(await run(store.functionCounts("team-a", range))).toEqual([{ functionName: "draft", count: 1 }])
    expect(await run(store.inferenceCounts("team-a", { ...range, bucketMs: hour }))).toEqual([{ bucketStart: base, name: "draft", count: 1 }])
    expect((await run(store.modelStatistics("team-a", range))).map((model) => model.modelName)).toEqual(["m9"])
    expect(await run(store.metricStatistics("team-a", { ...range, functionName: "draft" }))).toEqual([
      { metricName: "thumbs", kind: "boolean", level: "inference", variantName: "a", count: 1, mean: 1, variance: 0 }
    ])
    expect(await run(store.hasInferences("team-b", "draft"))).toBe(false)
  })

  it("takes function names of any text", async () => {
    const store = await seeded()
    const odd = oddStrings.map((name, i) => at(base + 2 * hour + i, { functionName: `odd ${name}`, variantName: name }))
    await run(write(suite.store, batch({ inferences: odd })))
    for (const inference of odd) {
      expect(await run(store.inferenceCounts("default", { ...range, functionName: inference.functionName, bucketMs: hour }))).toEqual([
        { bucketStart: base + 2 * hour, name: inference.variantName, count: 1 }
      ])
      expect(await run(store.hasInferences("default", inference.functionName))).toBe(true)
    }
  })
})
