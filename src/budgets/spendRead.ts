/**
 * `GET /v1/spend` (src/api/spend.ts): the query string checked (the scope, the range, the
 * granularity: a 400 naming the parameter), the workspace's spend read from the analytics
 * database (src/budgets/spendStore.ts), and the answer with every period of the range and the
 * total. The workspace is always the caller's: another workspace's key or tag reads 0.
 */
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import { defaultSpendRangeDays, maxSpendRangeDays, type SpendAnswer, type SpendGranularity, spendGranularities, type SpendScopeJson } from "../api/spend.ts"
import { storeFailure, type StoreFailure, storeOf } from "../analytics/stores.ts"
import { publicIdPattern } from "../auth/apiKey.ts"
import { InvalidRequest } from "../errors.ts"
import { parseRfc3339 } from "../time.ts"
import { periodStartOf, periodStarts, type SpendQuery, type SpendScope, SpendStoreService } from "./spendStore.ts"

/** the query string's parameters, as given */
export interface SpendParams {
  readonly api_key?: string | undefined
  readonly tag_key?: string | undefined
  readonly tag_value?: string | undefined
  readonly from?: string | undefined
  readonly to?: string | undefined
  readonly granularity?: string | undefined
}

const dayMs = 86_400_000
/** the last millisecond a UUIDv7 can carry */
const latestTime = 2 ** 48 - 1

const invalid = (message: string) => Result.fail(new InvalidRequest({ message }))
const given = (value: string | undefined) => (value === undefined || value === "" ? undefined : value)
const shown = (text: string) => JSON.stringify(text.slice(0, 100))

const timeParam = (name: string, text: string): Result.Result<number, InvalidRequest> => {
  const time = parseRfc3339(text)
  if (time === undefined) return invalid(`${name}: ${shown(text)} is not an RFC 3339 date-time such as 2026-01-31T00:00:00Z`)
  if (time < 0 || time > latestTime) return invalid(`${name}: ${shown(text)} is before 1970 or after 10889`)
  return Result.succeed(time)
}

const scopeParam = (params: SpendParams): Result.Result<SpendScope, InvalidRequest> => {
  const [apiKey, tagKey, tagValue] = [given(params.api_key), given(params.tag_key), given(params.tag_value)]
  if (apiKey !== undefined && (tagKey !== undefined || tagValue !== undefined)) {
    return invalid("api_key: give either api_key or tag_key with tag_value, not both")
  }
  if (apiKey !== undefined) {
    // a key's public id, not the whole key: a secret must not travel in a URL
    return publicIdPattern.test(apiKey)
      ? Result.succeed({ kind: "api_key", publicId: apiKey })
      : invalid(`api_key: ${shown(apiKey)} is not a key's public id (12 letters and digits, the part after sk-gw- or sk-t0-)`)
  }
  if (tagKey === undefined && tagValue !== undefined) return invalid("tag_key: tag_value needs the tag's key")
  if (tagKey !== undefined && tagValue === undefined) return invalid("tag_value: tag_key needs the tag's value")
  return tagKey !== undefined ? Result.succeed({ kind: "tag", key: tagKey, value: tagValue! }) : Result.succeed({ kind: "workspace" })
}

/** `params` checked, with the defaults (daily, up to now), or the 400 naming the parameter at fault */
export const parseSpendParams = (workspace: string, params: SpendParams, now: number): Result.Result<SpendQuery, InvalidRequest> =>
  Result.gen(function*() {
    const scope = yield* scopeParam(params)
    const granularityText = given(params.granularity) ?? "day"
    if (!(spendGranularities as ReadonlyArray<string>).includes(granularityText)) {
      return yield* invalid(`granularity: ${shown(granularityText)} is not one of ${spendGranularities.join(", ")}`)
    }
    const granularity = granularityText as SpendGranularity
    const toText = given(params.to)
    const to = toText === undefined ? now : yield* timeParam("to", toText)
    const fromText = given(params.from)
    const from = fromText === undefined ? periodStartOf(Math.max(0, to - defaultSpendRangeDays[granularity] * dayMs), granularity) : yield* timeParam("from", fromText)
    if (from >= to) return yield* invalid(`from: ${new Date(from).toISOString()} is not before to (${new Date(to).toISOString()})`)
    const longest = maxSpendRangeDays[granularity]
    if (to - from > longest * dayMs) {
      return yield* invalid(`from: the range from ${new Date(from).toISOString()} to ${new Date(to).toISOString()} is longer than ${longest} days, the most a ${granularity}ly read spans: choose a wider granularity or a shorter range`)
    }
    return { workspace, scope, from, to, granularity }
  })

const scopeJson = (query: SpendQuery): SpendScopeJson =>
  query.scope.kind === "workspace"
    ? { kind: "workspace", value: query.workspace }
    : query.scope.kind === "api_key"
    ? { kind: "api_key", value: query.scope.publicId }
    : { kind: "tag", key: query.scope.key, value: query.scope.value }

/** the spend `params` ask for, of the caller's `workspace` */
export const readSpend = (
  workspace: string,
  params: SpendParams,
  now: number
): Effect.Effect<SpendAnswer, InvalidRequest | StoreFailure, SpendStoreService> =>
  Effect.gen(function*() {
    const query = yield* Effect.fromResult(parseSpendParams(workspace, params, now))
    const store = yield* storeOf(SpendStoreService)
    const found = yield* store.spend(query).pipe(Effect.mapError(storeFailure(store)))
    const byStart = new Map(found.map((period) => [period.periodStart, period]))
    const periods = periodStarts(query.from, query.to, query.granularity).map((start) => {
      const period = byStart.get(start)
      return { period_start: new Date(start).toISOString(), cost: period?.cost ?? 0, calls: period?.calls ?? 0 }
    })
    return {
      workspace,
      scope: scopeJson(query),
      granularity: query.granularity,
      from: new Date(query.from).toISOString(),
      to: new Date(query.to).toISOString(),
      total: {
        cost: found.reduce((sum, period) => sum + period.cost, 0),
        calls: found.reduce((sum, period) => sum + period.calls, 0)
      },
      periods
    }
  })
