/**
 * The filters of the API as the stores take them (src/storedInferences/filter.ts): metrics resolved
 * in the configuration, times parsed, problems named by path; and the datapoint filters, which
 * know tags and time only.
 */
import { describe, expect, it } from "vitest"
import { DatapointFilter, InferenceFilter } from "../../src/api/inferences.ts"
import type { MetricConfig } from "../../src/config/types.ts"
import { makeDecoder } from "../../src/decode.ts"
import * as Result from "effect/Result"
import { toDatapointStoreFilter, toStoreFilter } from "../../src/storedInferences/filter.ts"

const metrics = new Map<string, MetricConfig>([
  ["good", { name: "good", type: "boolean", level: "inference", optimize: "max" }],
  ["steps", { name: "steps", type: "float", level: "episode", optimize: "min" }]
])

const message = (result: Result.Result<unknown, { readonly message: string }>) =>
  Result.isFailure(result) ? result.failure.message : `not a problem: ${JSON.stringify(result.success)}`

describe("toStoreFilter", () => {
  it("carries each metric's level from the configuration, and parses times", () => {
    expect(Result.getOrThrow(toStoreFilter({
      type: "and",
      children: [
        { type: "boolean_metric", metric_name: "good", value: false },
        { type: "not", child: { type: "float_metric", metric_name: "steps", value: 3, comparison_operator: "!=" } },
        { type: "demonstration" },
        { type: "time", time: "2026-01-31T12:00:00Z", comparison_operator: "=" },
        { type: "tag", key: "k", value: "v" }
      ]
    }, "filters", metrics))).toEqual({
      type: "and",
      children: [
        { type: "boolean_metric", metricName: "good", level: "inference", value: false },
        { type: "not", child: { type: "float_metric", metricName: "steps", level: "episode", value: 3, comparison_operator: "!=" } },
        { type: "demonstration" },
        { type: "time", time: Date.UTC(2026, 0, 31, 12), comparison_operator: "=" },
        { type: "tag", key: "k", value: "v", comparison_operator: "=" }
      ]
    })
  })

  it("names the path of an unknown metric, of a metric of the other type, and of a bad time", () => {
    expect(message(toStoreFilter({
      type: "or",
      children: [{ type: "demonstration" }, { type: "boolean_metric", metric_name: "x", value: true }]
    }, "filters", metrics))).toBe(`filters.children[1].metric_name: unknown metric "x"`)
    expect(message(toStoreFilter({ type: "not", child: { type: "boolean_metric", metric_name: "steps", value: true } }, "filters", metrics)))
      .toBe(`filters.child.type: metric "steps" is a float metric: filter on it with "float_metric"`)
    expect(message(toStoreFilter({ type: "float_metric", metric_name: "good", value: 1, comparison_operator: ">" }, "query.filters", metrics)))
      .toBe(`query.filters.type: metric "good" is a boolean metric: filter on it with "boolean_metric"`)
    expect(message(toStoreFilter({ type: "time", time: "now", comparison_operator: "<" }, "filters", metrics))).toMatch(/^filters\.time: /)
  })
})

describe("toDatapointStoreFilter and the DatapointFilter schema", () => {
  const decode = makeDecoder(DatapointFilter)
  const decodeInference = makeDecoder(InferenceFilter)

  it("takes tags and time, combined with and/or/not", () => {
    const filter = { type: "or", children: [{ type: "tag", key: "k", value: "v", comparison_operator: "!=" }, { type: "not", child: { type: "time", time: "2026-01-31T12:00:00.5+01:00", comparison_operator: ">=" } }] } as const
    const decoded = decode(filter)
    expect(decoded.ok).toBe(true)
    expect(Result.getOrThrow(toDatapointStoreFilter(filter, "filter"))).toEqual({
      type: "or",
      children: [
        { type: "tag", key: "k", value: "v", comparison_operator: "!=" },
        { type: "not", child: { type: "time", time: Date.UTC(2026, 0, 31, 11, 0, 0, 500), comparison_operator: ">=" } }
      ]
    })
    expect(message(toDatapointStoreFilter({ type: "and", children: [{ type: "tag", key: "k\u0000", value: "v" }] }, "filter"))).toMatch(/^filter\.children\[0\]\.key: holds a NUL/)
  })

  it("refuses metric and demonstration filters, which inferences alone have", () => {
    for (const leaf of [{ type: "demonstration" }, { type: "boolean_metric", metric_name: "good", value: true }]) {
      expect(decodeInference(leaf).ok).toBe(true)
      expect(decode(leaf).ok).toBe(false)
      expect(decode({ type: "not", child: leaf }).ok).toBe(false)
    }
  })
})
