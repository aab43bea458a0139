/**
 * The conformance suite of the adaptive experimentation port (`ExperimentationStore` of
 * src/experimentation/store.ts), the same tests against ClickHouse and Postgres: each
 * variant's statistics of a metric from the latest feedback per target (inference-level: by
 * the inference's variant; episode-level: by the variant of the episode's first inference of
 * the function), other functions, metrics and kinds left out; sampling probabilities stored
 * and read back exactly, newest first, per function and settings.
 * The Postgres adapter runs twice: on the Postgres server and on the embedded database (PGlite).
 */
import { describe, expect, it } from "vitest"
import { uuidv7, uuidv7Timestamp } from "../../src/ids.ts"
import type { StoredSampling } from "../../src/experimentation/store.ts"
import type { VariantStatistics } from "../../src/experimentation/store.ts"
import type { StoredFeedback, StoredInference } from "../../src/analytics/records.ts"
import { batch, chatInference, feedback, idAt, jsonInference, run, storeForSuite, write } from "../support/storeFixtures.ts"

/** population statistics of `values`, as the store computes them */
const expected = (name: string, values: ReadonlyArray<number>) => {
  const mean = values.reduce((sum, value) => sum + value, 0) / values.length
  return { name, count: values.length, mean, variance: values.reduce((sum, value) => sum + (value - mean) ** 2, 0) / values.length }
}

/** the same variants in the same order, counts exact, means and variances to 12 places (each database sums its own way) */
const expectStatistics = (found: ReadonlyArray<VariantStatistics>, wanted: ReadonlyArray<VariantStatistics>) => {
  expect(found.map(({ count, name }) => ({ name, count }))).toEqual(wanted.map(({ count, name }) => ({ name, count })))
  found.forEach((stats, i) => {
    expect(stats.mean).toBeCloseTo(wanted[i].mean, 12)
    expect(stats.variance).toBeCloseTo(wanted[i].variance, 12)
  })
}

const sampling = (fields: Partial<StoredSampling> = {}): StoredSampling => {
  const id = fields.id ?? uuidv7(Date.now())
  return {
    id,
    functionName: "draft",
    configKey: "{\"metric\":\"thumbs\"}",
    computedAt: uuidv7Timestamp(id),
    probabilities: [{ name: "a", probability: 0.1 + 0.2 }, { name: "b", probability: 1 - (0.1 + 0.2) }],
    statistics: [{ name: "a", count: 12, mean: 1 / 3, variance: 2 / 9 }],
    stopped: false,
    exploring: ["b"],
    ...fields
  }
}

describe.each(["clickhouse", "postgres", "pglite"] as const)("%s experimentation store", (backend) => {
  const suite = storeForSuite(backend)

  it("inference-level metrics: per variant, the latest feedback of each inference of the function, exact", async () => {
    const { store } = suite
    const inferences: Array<StoredInference> = [
      chatInference({ functionName: "draft", variantName: "a" }),
      chatInference({ functionName: "draft", variantName: "a" }),
      chatInference({ functionName: "draft", variantName: "a" }),
      chatInference({ functionName: "draft", variantName: "b" }),
      jsonInference({ functionName: "draft", variantName: "b" }),
      chatInference({ functionName: "draft", variantName: "c" }),
      chatInference({ functionName: "other", variantName: "a" })
    ]
    const [a1, a2, a3, b1, b2, c1, other] = inferences
    const now = Date.now()
    const rows: Array<StoredFeedback> = [
      // a1: false, then true: only the latest counts
      feedback("boolean", a1.id, false, { metricName: "thumbs", id: idAt(now, 1) }),
      feedback("boolean", a1.id, true, { metricName: "thumbs", id: idAt(now + 1, 1) }),
      feedback("boolean", a2.id, false, { metricName: "thumbs" }),
      feedback("boolean", a3.id, true, { metricName: "thumbs" }),
      feedback("boolean", b1.id, true, { metricName: "thumbs" }),
      feedback("boolean", b2.id, true, { metricName: "thumbs" }),
      // another metric, another function, another kind: none counts
      feedback("boolean", c1.id, true, { metricName: "other_metric" }),
      feedback("boolean", other.id, false, { metricName: "thumbs" }),
      feedback("float", a2.id, 0.1, { metricName: "score" }),
      feedback("float", a1.id, 0.1, { metricName: "score" }),
      feedback("float", a2.id, 0.7, { metricName: "score" }),
      feedback("float", b1.id, -2.5, { metricName: "score" })
    ]
    await run(write(suite.store, batch({ inferences, feedback: rows })))
    // written twice (a retried batch): still counted once
    await run(write(suite.store, batch({ inferences, feedback: rows })))

    const thumbs = await run(store.experimentation.variantStatistics({ functionName: "draft", metricName: "thumbs", metricType: "boolean", level: "inference" }))
    expectStatistics(thumbs, [expected("a", [1, 0, 1]), expected("b", [1, 1])])
    const score = await run(store.experimentation.variantStatistics({ functionName: "draft", metricName: "score", metricType: "float", level: "inference" }))
    expectStatistics(score, [expected("a", [0.1, 0.7]), expected("b", [-2.5])])
    expect(await run(store.experimentation.variantStatistics({ functionName: "nobody", metricName: "thumbs", metricType: "boolean", level: "inference" }))).toEqual([])
  })

  it("episode-level metrics: per variant of the episode's first inference of the function", async () => {
    const { store } = suite
    const now = Date.now()
    const [e1, e2, e3, e4] = [uuidv7(now), uuidv7(now), uuidv7(now), uuidv7(now)]
    const inferences = [
      // e1 began with x, then fell back to y: it is x's
      chatInference({ functionName: "flow", variantName: "x", episodeId: e1, id: idAt(now, 1) }),
      chatInference({ functionName: "flow", variantName: "y", episodeId: e1, id: idAt(now + 5, 1) }),
      chatInference({ functionName: "flow", variantName: "y", episodeId: e2 }),
      chatInference({ functionName: "flow", variantName: "y", episodeId: e3 }),
      // e4 has only another function's inferences
      chatInference({ functionName: "elsewhere", variantName: "x", episodeId: e4 })
    ]
    await run(write(store, batch({
      inferences,
      feedback: [
        feedback("float", e1, 3, { metricName: "rating", targetType: "episode", id: idAt(now, 2) }),
        feedback("float", e1, 4, { metricName: "rating", targetType: "episode", id: idAt(now + 1, 2) }),
        feedback("float", e2, 1, { metricName: "rating", targetType: "episode" }),
        feedback("float", e3, 2, { metricName: "rating", targetType: "episode" }),
        feedback("float", e4, 5, { metricName: "rating", targetType: "episode" })
      ]
    })))
    const rating = await run(store.experimentation.variantStatistics({ functionName: "flow", metricName: "rating", metricType: "float", level: "episode" }))
    expectStatistics(rating, [expected("x", [4]), expected("y", [1, 2])])
  })

  it("stores sampling probabilities and reads them back exactly, newest first, per function and settings", async () => {
    const { store } = suite
    const now = Date.now()
    const first = sampling({ id: idAt(now - 2000), computedAt: now - 2000 })
    const second = sampling({ id: idAt(now - 1000), computedAt: now - 1000, stopped: true, winner: "a", exploring: [], probabilities: [{ name: "a", probability: 0.95 }, { name: "b", probability: 0.05 }] })
    const third = sampling({ id: idAt(now), computedAt: now, statistics: [{ name: "a", count: 3, mean: Math.PI, variance: Number.MIN_VALUE }] })
    const elsewhere = sampling({ functionName: "other", id: idAt(now + 1) })
    const otherSettings = sampling({ configKey: "{\"metric\":\"other\"}", id: idAt(now + 2) })
    for (const row of [second, first, third, elsewhere, otherSettings]) await run(store.experimentation.saveSampling(row))
    // saved again (a retry): read once
    await run(store.experimentation.saveSampling(third))

    expect(await run(store.experimentation.latestSamplings("draft", first.configKey, 10))).toStrictEqual([third, second, first])
    expect(await run(store.experimentation.latestSamplings("draft", first.configKey, 2))).toStrictEqual([third, second])
    expect(await run(store.experimentation.latestSamplings("other", first.configKey, 10))).toStrictEqual([elsewhere])
    expect(await run(store.experimentation.latestSamplings("draft", "{}", 10))).toEqual([])
  })
})
