/**
 * The calendar periods of spend reads (src/budgets/spendStore.ts), which fill the empty periods of
 * `GET /v1/spend`: UTC days, weeks from Monday and months, at their boundaries, and the starts
 * of every period a range touches; and the query's defaults (src/budgets/spendRead.ts).
 */
import * as Result from "effect/Result"
import { describe, expect, it } from "vitest"
import { parseSpendParams } from "../../src/budgets/spendRead.ts"
import { nextPeriodStart, periodStartOf, periodStarts } from "../../src/budgets/spendStore.ts"

const iso = (ms: number) => new Date(ms).toISOString()

describe("spend periods", () => {
  it("starts a day at 00:00 UTC, a week on Monday, a month on its first", () => {
    expect(iso(periodStartOf(Date.UTC(2026, 1, 28, 23, 59, 59, 999), "day"))).toBe("2026-02-28T00:00:00.000Z")
    expect(iso(periodStartOf(Date.UTC(2026, 2, 1), "day"))).toBe("2026-03-01T00:00:00.000Z")
    // 2026-03-01 is a Sunday, 2026-03-02 a Monday
    expect(iso(periodStartOf(Date.UTC(2026, 2, 1, 23, 59, 59), "week"))).toBe("2026-02-23T00:00:00.000Z")
    expect(iso(periodStartOf(Date.UTC(2026, 2, 2), "week"))).toBe("2026-03-02T00:00:00.000Z")
    // 1970-01-01 was a Thursday: its week began on Monday 1969-12-29
    expect(iso(periodStartOf(0, "week"))).toBe("1969-12-29T00:00:00.000Z")
    expect(iso(periodStartOf(Date.UTC(2024, 1, 29, 12), "month"))).toBe("2024-02-01T00:00:00.000Z")
    expect(iso(nextPeriodStart(Date.UTC(2025, 11, 1), "month"))).toBe("2026-01-01T00:00:00.000Z")
  })

  it("lists every period a range touches, the first even when the range cuts into it", () => {
    expect(periodStarts(Date.UTC(2026, 1, 28, 12), Date.UTC(2026, 2, 2), "day").map(iso)).toEqual([
      "2026-02-28T00:00:00.000Z",
      "2026-03-01T00:00:00.000Z"
    ])
    expect(periodStarts(Date.UTC(2026, 2, 1), Date.UTC(2026, 2, 2, 0, 0, 0, 1), "week").map(iso)).toEqual([
      "2026-02-23T00:00:00.000Z",
      "2026-03-02T00:00:00.000Z"
    ])
    expect(periodStarts(Date.UTC(2025, 10, 15), Date.UTC(2026, 1, 1), "month").map(iso)).toEqual([
      "2025-11-01T00:00:00.000Z",
      "2025-12-01T00:00:00.000Z",
      "2026-01-01T00:00:00.000Z"
    ])
  })

  it("defaults to the workspace, daily, from the start of the period 30 days before now", () => {
    const now = Date.UTC(2026, 2, 14, 9, 30)
    const query = Result.getOrThrow(parseSpendParams("acme", {}, now))
    expect(query).toEqual({ workspace: "acme", scope: { kind: "workspace" }, granularity: "day", from: Date.UTC(2026, 1, 12), to: now })
    const monthly = Result.getOrThrow(parseSpendParams("acme", { granularity: "month" }, now))
    expect(monthly).toMatchObject({ scope: { kind: "workspace" }, from: Date.UTC(2025, 2, 1) })
  })
})
