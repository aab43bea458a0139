import { describe, expect, it } from "vitest"
import { parseRfc3339 } from "../../src/time.ts"

describe("parseRfc3339", () => {
  it("reads a date-time with Z or an offset, with or without fractional seconds", () => {
    expect(parseRfc3339("2026-01-31T12:00:00Z")).toBe(Date.UTC(2026, 0, 31, 12))
    expect(parseRfc3339("2026-01-31T13:00:00+01:00")).toBe(Date.UTC(2026, 0, 31, 12))
    expect(parseRfc3339("2026-01-31T06:30:00-05:30")).toBe(Date.UTC(2026, 0, 31, 12))
    expect(parseRfc3339("2026-01-31T12:00:00.250Z")).toBe(Date.UTC(2026, 0, 31, 12, 0, 0, 250))
    expect(parseRfc3339("2028-02-29T00:00:00z")).toBe(Date.UTC(2028, 1, 29))
  })

  it.each([
    ["a date alone", "2026-01-31"],
    ["no offset", "2026-01-31T12:00:00"],
    ["no seconds", "2026-01-31T12:00Z"],
    ["a space for T", "2026-01-31 12:00:00Z"],
    ["a day the month lacks", "2026-02-30T00:00:00Z"],
    ["February 29 of a common year", "2026-02-29T00:00:00Z"],
    ["month 13", "2026-13-01T00:00:00Z"],
    ["hour 24", "2026-01-01T24:00:00Z"],
    ["minute 60", "2026-01-01T23:60:00Z"],
    ["an offset beyond a day", "2026-01-01T00:00:00+24:00"],
    ["words", "tomorrow"],
    ["nothing", ""]
  ])("refuses %s", (_, text) => {
    expect(parseRfc3339(text)).toBeUndefined()
  })
})
