/**
 * The UI's Overview (`GET /v1/ui/overview`, src/api/uiOverview.ts): the query checked (times,
 * bucket, function), the database's aggregates read at once (src/overview/store.ts), and the
 * answer assembled: series with every bucket of the range, shares, confidence intervals, the
 * configured functions beside those with inferences. Reads answer 503 while observability is
 * off or the database does not answer.
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import { maxOverviewBuckets, type OverviewBucket, overviewBuckets, type UiOverview, type UiOverviewMetric } from "../api/uiOverview.ts"
import type { GatewayConfig } from "../config/types.ts"
import { InvalidRequest, NotFound } from "../errors.ts"
import { storeFailure, type StoreFailure, storeOf } from "../analytics/stores.ts"
import { Configuration } from "../services.ts"
import { parseRfc3339 } from "../time.ts"
import { bucketCount, bucketStarts, bucketWidths, normalInterval, wilsonInterval } from "./statistics.ts"
import { type BucketCount, type FunctionCount, type MetricVariantStatistics, type ModelCallStatistics, OverviewStoreService } from "./store.ts"

/** the query string's parameters, as given */
export interface OverviewParams {
  readonly function_name?: string | undefined
  readonly from?: string | undefined
  readonly to?: string | undefined
  readonly bucket?: string | undefined
}

export interface OverviewRequest {
  readonly functionName?: string | undefined
  readonly from: number
  readonly to: number
  readonly bucket: OverviewBucket
}

const day = 86_400_000
/** the last millisecond a UUIDv7 can carry */
const latestTime = 2 ** 48 - 1

const timeParam = (name: string, given: string): Result.Result<number, InvalidRequest> => {
  const time = parseRfc3339(given)
  if (time === undefined) {
    return Result.fail(new InvalidRequest({ message: `${name}: "${given.slice(0, 100)}" is not an RFC 3339 date-time such as 2026-01-31T12:00:00Z` }))
  }
  if (time < 0 || time > latestTime) return Result.fail(new InvalidRequest({ message: `${name}: ${given} is before 1970 or after 10889` }))
  return Result.succeed(time)
}

/** `params` checked, with the defaults (the day before now, hourly), or the 400 naming the parameter at fault */
export const parseOverviewParams = (params: OverviewParams, now: number): Result.Result<OverviewRequest, InvalidRequest> =>
  Result.gen(function*() {
    const to = params.to === undefined || params.to === "" ? now : yield* timeParam("to", params.to)
    const from = params.from === undefined || params.from === "" ? Math.max(0, to - day) : yield* timeParam("from", params.from)
    if (from >= to) {
      return yield* Result.fail(new InvalidRequest({ message: `from: ${new Date(from).toISOString()} is not before to (${new Date(to).toISOString()})` }))
    }
    const bucket = params.bucket === undefined || params.bucket === "" ? "hour" : params.bucket
    if (!(overviewBuckets as ReadonlyArray<string>).includes(bucket)) {
      return yield* Result.fail(new InvalidRequest({ message: `bucket: "${bucket.slice(0, 100)}" is not one of ${overviewBuckets.join(", ")}` }))
    }
    const buckets = bucketCount(from, to, bucketWidths[bucket as OverviewBucket])
    if (buckets > maxOverviewBuckets) {
      return yield* Result.fail(new InvalidRequest({
        message: `bucket: ${buckets} ${bucket}s from ${new Date(from).toISOString()} to ${new Date(to).toISOString()} exceed ${maxOverviewBuckets}: choose a wider bucket or a shorter range`
      }))
    }
    const functionName = params.function_name === "" ? undefined : params.function_name
    return { functionName, from, to, bucket: bucket as OverviewBucket }
  })

/** the counts per series, every bucket of the range in order, most inferences first */
export const seriesOf = (counts: ReadonlyArray<BucketCount>, starts: ReadonlyArray<number>): UiOverview["series"] => {
  const index = new Map(starts.map((start, i) => [start, i]))
  const byName = new Map<string, Array<number>>()
  for (const { bucketStart, count, name } of counts) {
    const at = index.get(bucketStart)
    if (at === undefined) continue
    let row = byName.get(name)
    if (row === undefined) byName.set(name, row = starts.map(() => 0))
    row[at] += count
  }
  const total = counts.reduce((sum, { count }) => sum + count, 0)
  return [...byName]
    .map(([name, row]) => {
      const sum = row.reduce((a, b) => a + b, 0)
      return { name, counts: row, total: sum, share: total === 0 ? 0 : sum / total }
    })
    .sort((a, b) => b.total - a.total || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
}

/** per metric, each variant's mean with its 95% interval: Wilson's for booleans, the normal approximation for floats */
export const metricsOf = (rows: ReadonlyArray<MetricVariantStatistics>, config: GatewayConfig): ReadonlyArray<UiOverviewMetric> => {
  const metrics = new Map<string, { metric: Omit<UiOverviewMetric, "variants">; variants: Array<UiOverviewMetric["variants"][number]> }>()
  for (const row of rows) {
    const key = `${row.kind}\u0000${row.level}\u0000${row.metricName}`
    let entry = metrics.get(key)
    if (entry === undefined) {
      const optimize = config.metrics.get(row.metricName)?.optimize ?? null
      const metric = { metric_name: row.metricName, type: row.kind, level: row.level, optimize, interval: row.kind === "boolean" ? "wilson" : "normal" } as const
      metrics.set(key, entry = { metric, variants: [] })
    }
    const sd = row.count > 1 ? Math.sqrt(Math.max(0, row.variance)) : null
    const interval = row.kind === "boolean" ? wilsonInterval(row.mean, row.count) : normalInterval(row.mean, sd ?? 0, row.count)
    entry.variants.push({
      variant_name: row.variantName,
      count: row.count,
      mean: row.mean,
      sd,
      ci_lower: interval?.lower ?? null,
      ci_upper: interval?.upper ?? null
    })
  }
  return [...metrics.values()].map(({ metric, variants }) => ({ ...metric, variants }))
}

const modelJson = (model: ModelCallStatistics): UiOverview["models"][number] => ({
  model_name: model.modelName,
  provider_name: model.providerName,
  calls: model.calls,
  cached_calls: model.cachedCalls,
  input_tokens: model.inputTokens,
  output_tokens: model.outputTokens,
  cost: model.cost ?? null,
  response_time_ms: model.responseTimeMs,
  ttft_calls: model.ttftCalls,
  ttft_ms: model.ttftMs ?? null
})

/** the configured functions and those with inferences in the range, by name (code unit order) */
export const functionsOf = (counts: ReadonlyArray<FunctionCount>, config: GatewayConfig): UiOverview["functions"] => {
  const stored = new Map(counts.map(({ count, functionName }) => [functionName, count]))
  const names = [...new Set([...config.functions.keys(), ...stored.keys()])].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))
  return names.map((name) => {
    const fn = config.functions.get(name)
    return { name, type: fn?.type ?? null, configured: fn !== undefined, inferences: stored.get(name) ?? 0 }
  })
}

/** The Overview `params` ask for, of `workspace`'s inferences only. */
export const readOverview = (workspace: string, params: OverviewParams): Effect.Effect<Omit<UiOverview, "provider_outcomes">, InvalidRequest | NotFound | StoreFailure, Configuration | OverviewStoreService> =>
  Effect.gen(function*() {
    const request = yield* Effect.fromResult(parseOverviewParams(params, yield* Clock.currentTimeMillis))
    const config = yield* Configuration
    const store = yield* storeOf(OverviewStoreService)
    const { bucket, from, functionName, to } = request
    const scope = { functionName, from, to }
    const read = Effect.all([
      store.inferenceCounts(workspace, { ...scope, bucketMs: bucketWidths[bucket] }),
      store.functionCounts(workspace, { from, to }),
      functionName === undefined ? Effect.succeed([]) : store.metricStatistics(workspace, { ...scope, functionName }),
      store.modelStatistics(workspace, scope),
      functionName === undefined || config.functions.has(functionName) ? Effect.succeed(true) : store.hasInferences(workspace, functionName)
    ], { concurrency: "unbounded" })
    const [counts, functionCounts, metrics, models, known] = yield* Effect.mapError(read, storeFailure(store))
    if (!known) return yield* new NotFound({ message: `function "${functionName}" is not configured and has no stored inference` })
    const starts = bucketStarts(from, to, bucketWidths[bucket])
    return {
      function_name: functionName ?? null,
      from: new Date(from).toISOString(),
      to: new Date(to).toISOString(),
      bucket,
      split_by: functionName === undefined ? "function" : "variant",
      total_inferences: counts.reduce((sum, { count }) => sum + count, 0),
      bucket_starts: starts.map((start) => new Date(start).toISOString()),
      series: seriesOf(counts, starts),
      metrics: metricsOf(metrics, config),
      models: models.map(modelJson),
      functions: functionsOf(functionCounts, config)
    } satisfies Omit<UiOverview, "provider_outcomes">
  })
