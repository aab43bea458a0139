/**
 * `GET /v1/spend`: what the stored model calls of the caller's workspace cost, per calendar
 * period in UTC, for the whole workspace, one API key or one tag (docs/budgets.md "Reading
 * spend"). For admins of the workspace.
 */
import * as Schema from "effect/Schema"

/** UTC days, weeks from Monday (ISO weeks) and months */
export const spendGranularities = ["day", "week", "month"] as const
export type SpendGranularity = typeof spendGranularities[number]

/** the longest range of each granularity, in days: a year of days, two years of weeks, five years of months */
export const maxSpendRangeDays = { day: 366, week: 731, month: 1827 } as const

/** the default range when `from` is absent: this many days before `to`, from the start of that period */
export const defaultSpendRangeDays = { day: 30, week: 84, month: 365 } as const

const Amount = Schema.Finite.annotate({ description: "the sum of the calls' `cost`, in the providers' currency (a call without one adds 0)" })
const Calls = Schema.Int.annotate({ description: "the stored model calls, cached ones included" })

export const SpendScopeJson = Schema.Union([
  Schema.Struct({ kind: Schema.Literal("workspace"), value: Schema.String }),
  Schema.Struct({ kind: Schema.Literal("api_key"), value: Schema.String.annotate({ description: "the key's public id" }) }),
  Schema.Struct({ kind: Schema.Literal("tag"), key: Schema.String, value: Schema.String })
]).annotate({ identifier: "SpendScope" })
export type SpendScopeJson = typeof SpendScopeJson.Type

export const SpendPeriodJson = Schema.Struct({
  period_start: Schema.String.annotate({ description: "the period's start, RFC 3339 UTC (a week starts on Monday)", format: "date-time" }),
  cost: Amount,
  calls: Calls
}).annotate({ identifier: "SpendPeriod" })
export type SpendPeriodJson = typeof SpendPeriodJson.Type

export const SpendAnswer = Schema.Struct({
  workspace: Schema.String,
  scope: SpendScopeJson,
  granularity: Schema.Literals(spendGranularities),
  from: Schema.String.annotate({ description: "the range's start (inclusive), RFC 3339 UTC", format: "date-time" }),
  to: Schema.String.annotate({ description: "the range's end (exclusive), RFC 3339 UTC", format: "date-time" }),
  total: Schema.Struct({ cost: Amount, calls: Calls }),
  periods: Schema.Array(SpendPeriodJson).annotate({ description: "every period the range touches, oldest first, empty ones with 0" })
}).annotate({ identifier: "Spend" })
export type SpendAnswer = typeof SpendAnswer.Type
