/**
 * The storage port of spend reads (`GET /v1/spend`, docs/budgets.md "Reading spend"): what the
 * stored model calls of one workspace cost, summed per calendar period in UTC (a day, a week from
 * Monday, a month), for the whole workspace, one API key or one tag. The stored rows are the
 * source of truth; the budgets' counters (src/budgets/store.ts) only enforce.
 *
 * A model call counts in the period of its own time (the time its stored row's UUIDv7 id
 * carries: when its provider answered); its API key and tags are those of its inference. A
 * cached call costs 0 (or nothing when its provider has no cost rules) but counts as a call; a
 * call without a cost adds 0.
 * Implemented by layers/postgres/spend.ts (also the embedded database) and
 * layers/clickhouse/spend.ts, both checked by test/integration/spend-store-conformance.test.ts.
 */
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import type { AnalyticsPort, AnalyticsStore } from "../analytics/stores.ts"
import type { SpendGranularity } from "../api/spend.ts"
import { apiKeyTag } from "../api/tags.ts"
import type { StoreError } from "../storeError.ts"

/** whose spend: the whole workspace, the calls of one API key (its public id), or those of a tag's value */
export type SpendScope =
  | { readonly kind: "workspace" }
  | { readonly kind: "api_key"; readonly publicId: string }
  | { readonly kind: "tag"; readonly key: string; readonly value: string }

/** the tag the inferences of `scope` carry (a key's calls carry `gateway::api_key_public_id`), none for the whole workspace */
export const scopeTag = (scope: SpendScope): { readonly key: string; readonly value: string } | undefined =>
  scope.kind === "workspace" ? undefined : scope.kind === "api_key" ? { key: apiKeyTag, value: scope.publicId } : scope

export interface SpendQuery {
  readonly workspace: string
  readonly scope: SpendScope
  /** the calls at or after this time (epoch milliseconds) */
  readonly from: number
  /** the calls before this time (epoch milliseconds) */
  readonly to: number
  readonly granularity: SpendGranularity
}

/** one period's calls: `periodStart` is its UTC start (epoch milliseconds), even when `from` cuts into it */
export interface SpendPeriod {
  readonly periodStart: number
  readonly cost: number
  readonly calls: number
}

export interface SpendStore extends AnalyticsStore {
  /** the periods with at least one call, oldest first */
  readonly spend: (query: SpendQuery) => Effect.Effect<ReadonlyArray<SpendPeriod>, StoreError>
}

/** The SpendStore of the analytics database, absent while observability is off (provided by layers/observability/). */
export class SpendStoreService extends Context.Service<SpendStoreService, AnalyticsPort<SpendStore>>()("gateway/SpendStore") {}

const dayMs = 86_400_000

/** the UTC start of the period of `granularity` holding `ms` (a week starts on Monday, as ISO weeks do) */
export const periodStartOf = (ms: number, granularity: SpendGranularity): number => {
  const day = Math.floor(ms / dayMs)
  if (granularity === "day") return day * dayMs
  // 1970-01-01 was a Thursday: 3 days after a Monday
  if (granularity === "week") return (day - ((((day + 3) % 7) + 7) % 7)) * dayMs
  const date = new Date(ms)
  return Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), 1)
}

/** the UTC start of the period after the one starting at `start` */
export const nextPeriodStart = (start: number, granularity: SpendGranularity): number => {
  if (granularity === "day") return start + dayMs
  if (granularity === "week") return start + 7 * dayMs
  const date = new Date(start)
  return Date.UTC(date.getUTCFullYear(), date.getUTCMonth() + 1, 1)
}

/** the starts of every period `[from, to)` touches, oldest first */
export const periodStarts = (from: number, to: number, granularity: SpendGranularity): ReadonlyArray<number> => {
  const starts: Array<number> = []
  for (let start = periodStartOf(from, granularity); start < to; start = nextPeriodStart(start, granularity)) starts.push(start)
  return starts
}
