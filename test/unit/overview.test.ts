/**
 * The Overview's arithmetic (src/overview/statistics.ts) and assembly (src/overview/service.ts):
 * confidence intervals against published values, the buckets of a range, the query's checks and
 * defaults, series filled to every bucket, and the functions of the picker.
 */
import { describe, expect, it } from "vitest"
import * as Result from "effect/Result"
import { functionsOf, metricsOf, parseOverviewParams, seriesOf } from "../../src/overview/service.ts"
import { bucketCount, bucketStarts, normalInterval, wilsonInterval } from "../../src/overview/statistics.ts"
import { buildOk } from "./fixtures.ts"

const hour = 3_600_000
const now = Date.UTC(2026, 0, 10, 12, 30)

const config = buildOk(`
[functions.draft]
type = "chat"
[functions.draft.variants.a]
type = "chat_completion"
model = "dummy::echo_request_messages"
[functions.extract]
type = "json"
[functions.extract.variants.a]
type = "chat_completion"
model = "dummy::json"
[metrics.thumbs]
type = "boolean"
level = "inference"
optimize = "max"
`)

describe("confidence intervals", () => {
  it("Wilson's: 1 of 2, 0 of 10 and 10 of 10, within [0, 1]", () => {
    const half = wilsonInterval(0.5, 2)!
    expect(half.lower).toBeCloseTo(0.0945, 4)
    expect(half.upper).toBeCloseTo(0.9055, 4)
    const none = wilsonInterval(0, 10)!
    expect(none.lower).toBe(0)
    expect(none.upper).toBeCloseTo(0.2775, 4)
    const all = wilsonInterval(1, 10)!
    expect(all.lower).toBeCloseTo(0.7225, 4)
    expect(all.upper).toBe(1)
    expect(wilsonInterval(0.5, 0)).toBeUndefined()
  })

  it("the normal approximation: mean ± 1.96·sd/√n, none below two values", () => {
    const interval = normalInterval(2, Math.sqrt(2), 2)!
    expect(interval.lower).toBeCloseTo(2 - 1.96, 12)
    expect(interval.upper).toBeCloseTo(2 + 1.96, 12)
    expect(normalInterval(5, 0, 1)).toBeUndefined()
  })
})

describe("buckets", () => {
  it("start at multiples of their width, the first at or before `from`, the last before `to`", () => {
    expect(bucketStarts(now, now + 2 * hour, hour)).toEqual([Date.UTC(2026, 0, 10, 12), Date.UTC(2026, 0, 10, 13), Date.UTC(2026, 0, 10, 14)])
    expect(bucketCount(now, now + 2 * hour, hour)).toBe(3)
    expect(bucketStarts(Date.UTC(2026, 0, 10, 12), Date.UTC(2026, 0, 10, 14), hour)).toEqual([Date.UTC(2026, 0, 10, 12), Date.UTC(2026, 0, 10, 13)])
  })
})

describe("the query", () => {
  it("defaults to the day before now, hourly, every function", () => {
    expect(Result.getOrThrow(parseOverviewParams({}, now))).toEqual({ functionName: undefined, from: now - 24 * hour, to: now, bucket: "hour" })
    expect(Result.getOrThrow(parseOverviewParams({ function_name: "", from: "", to: "", bucket: "" }, now))).toEqual({ functionName: undefined, from: now - 24 * hour, to: now, bucket: "hour" })
  })

  it("takes RFC 3339 times with offsets, and a bucket", () => {
    expect(Result.getOrThrow(parseOverviewParams({ function_name: "draft", from: "2026-01-10T13:00:00+01:00", to: "2026-01-10T12:30:00.5Z", bucket: "minute" }, now)))
      .toEqual({ functionName: "draft", from: Date.UTC(2026, 0, 10, 12), to: now + 500, bucket: "minute" })
  })

  it("refuses what it cannot read, naming the parameter", () => {
    const problem = (params: Parameters<typeof parseOverviewParams>[0]) => {
      const parsed = parseOverviewParams(params, now)
      return Result.isFailure(parsed) ? parsed.failure.message : "accepted"
    }
    expect(problem({ from: "yesterday" })).toMatch(/^from: "yesterday" is not an RFC 3339 date-time/)
    expect(problem({ to: "2026-02-30T00:00:00Z" })).toMatch(/^to: /)
    expect(problem({ from: "1969-12-31T23:00:00Z", to: "1970-01-01T01:00:00Z" })).toMatch(/^from: .* before 1970/)
    expect(problem({ from: "2026-01-10T12:30:00Z", to: "2026-01-10T12:30:00Z" })).toMatch(/^from: .* is not before to/)
    expect(problem({ bucket: "week" })).toBe(`bucket: "week" is not one of minute, hour, day`)
    expect(problem({ from: "2026-01-01T00:00:00Z", to: "2026-01-10T00:00:00Z", bucket: "minute" })).toMatch(/^bucket: 12960 minutes .* exceed 1500/)
    expect(problem({ from: "2026-01-01T00:00:00Z", to: "2026-01-02T01:00:00Z", bucket: "minute" })).toBe("accepted")
  })
})

describe("the answer", () => {
  it("fills every bucket of each series, most inferences first, with shares", () => {
    const starts = bucketStarts(now, now + 3 * hour, hour)
    const series = seriesOf([
      { bucketStart: starts[0], name: "b", count: 1 },
      { bucketStart: starts[2], name: "a", count: 2 },
      { bucketStart: starts[3], name: "a", count: 1 }
    ], starts)
    expect(series).toEqual([
      { name: "a", counts: [0, 0, 2, 1], total: 3, share: 0.75 },
      { name: "b", counts: [1, 0, 0, 0], total: 1, share: 0.25 }
    ])
    expect(seriesOf([], starts)).toEqual([])
  })

  it("groups metrics with their intervals: Wilson's for booleans, the normal one for floats, optimize from the configuration", () => {
    const metrics = metricsOf([
      { metricName: "score", kind: "float", level: "inference", variantName: "a", count: 2, mean: 2, variance: 2 },
      { metricName: "score", kind: "float", level: "inference", variantName: "b", count: 1, mean: 5, variance: 0 },
      { metricName: "thumbs", kind: "boolean", level: "inference", variantName: "a", count: 2, mean: 0.5, variance: 0.5 }
    ], config)
    expect(metrics.map(({ variants: _, ...metric }) => metric)).toEqual([
      { metric_name: "score", type: "float", level: "inference", optimize: null, interval: "normal" },
      { metric_name: "thumbs", type: "boolean", level: "inference", optimize: "max", interval: "wilson" }
    ])
    const [a, b] = metrics[0].variants
    expect(a.sd).toBeCloseTo(Math.SQRT2, 12)
    expect(a.ci_lower).toBeCloseTo(0.04, 12)
    expect(a.ci_upper).toBeCloseTo(3.96, 12)
    expect(b).toEqual({ variant_name: "b", count: 1, mean: 5, sd: null, ci_lower: null, ci_upper: null })
    expect(metrics[1].variants[0].ci_lower).toBeCloseTo(0.0945, 4)
  })

  it("lists the configured functions beside those with inferences, by name", () => {
    expect(functionsOf([{ functionName: "gone", count: 2 }, { functionName: "draft", count: 5 }], config).filter((fn) => !fn.name.startsWith("gateway::"))).toEqual([
      { name: "draft", type: "chat", configured: true, inferences: 5 },
      { name: "extract", type: "json", configured: true, inferences: 0 },
      { name: "gone", type: null, configured: false, inferences: 2 }
    ])
  })
})
