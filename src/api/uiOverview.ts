/**
 * `GET /v1/ui/overview`: the UI's Overview of a time range, for one function or for all of them:
 * inferences over time, their split by variant (or by function), the metrics' means per variant
 * with 95% confidence intervals, and the model calls per model and provider with their latency
 * percentiles. Every figure is computed by the analytics database (src/overview/store.ts).
 */
import * as Schema from "effect/Schema"

export const overviewBuckets = ["minute", "hour", "day"] as const
export type OverviewBucket = typeof overviewBuckets[number]

/** the most buckets one answer holds: a minute over a day, an hour over two months */
export const maxOverviewBuckets = 1500

const Timestamp = Schema.String.annotate({ description: "RFC 3339, UTC" })

export const OverviewQuery = {
  function_name: Schema.optional(Schema.String).annotate({ description: "the function; every function's inferences when absent" }),
  from: Schema.optional(Schema.String).annotate({ description: "RFC 3339 date-time, inclusive; default: a day before `to`" }),
  to: Schema.optional(Schema.String).annotate({ description: "RFC 3339 date-time, exclusive; default: now" }),
  // a string, not the literals: the handler answers an unknown one with the 400 naming them
  bucket: Schema.optional(Schema.String).annotate({
    description: `${overviewBuckets.join(", ")}: the width of a bucket of the series (default hour); buckets are aligned on UTC, and at most ${maxOverviewBuckets}`
  })
}

export const OverviewSeries = Schema.Struct({
  name: Schema.String.annotate({ description: "the variant (one function) or the function (every function)" }),
  counts: Schema.Array(Schema.Int).annotate({ description: "the inferences of each bucket, aligned with `bucket_starts`" }),
  total: Schema.Int,
  share: Schema.Finite.annotate({ description: "`total` over all the inferences of the range, from 0 to 1" })
}).annotate({ identifier: "UiOverviewSeries" })

const Interval = Schema.NullOr(Schema.Finite)

export const OverviewMetricVariant = Schema.Struct({
  variant_name: Schema.String,
  count: Schema.Int.annotate({ description: "targets with feedback of the metric (the latest value of each counts)" }),
  mean: Schema.Finite.annotate({ description: "booleans as 0 and 1: the share of true" }),
  sd: Schema.NullOr(Schema.Finite).annotate({ description: "the sample standard deviation; null below 2 values" }),
  ci_lower: Interval.annotate({ description: "the 95% confidence interval's lower bound; null when it cannot be computed (a float metric with fewer than 2 values)" }),
  ci_upper: Interval
}).annotate({ identifier: "UiOverviewMetricVariant" })

export const OverviewMetric = Schema.Struct({
  metric_name: Schema.String,
  type: Schema.Literals(["boolean", "float"]),
  level: Schema.Literals(["inference", "episode"]).annotate({
    description: "`inference`: feedback on the variant's inferences; `episode`: on the episodes whose first inference of the function in the range is the variant's"
  }),
  optimize: Schema.NullOr(Schema.Literals(["max", "min"])).annotate({ description: "as configured; null for a metric the configuration does not name" }),
  interval: Schema.Literals(["wilson", "normal"]).annotate({
    description: "`wilson`: the Wilson score interval of a proportion (boolean metrics); `normal`: mean ± 1.96·sd/√n (float metrics)"
  }),
  variants: Schema.Array(OverviewMetricVariant)
}).annotate({ identifier: "UiOverviewMetric" })

export const OverviewPercentiles = Schema.Struct({ p50: Schema.Finite, p90: Schema.Finite, p99: Schema.Finite })
  .annotate({ identifier: "UiOverviewPercentiles", description: "milliseconds, interpolated between the closest ranks" })

export const OverviewModel = Schema.Struct({
  model_name: Schema.String,
  provider_name: Schema.String,
  calls: Schema.Int.annotate({ description: "the stored calls: answered ones only (a failed provider call is not stored)" }),
  cached_calls: Schema.Int.annotate({ description: "answered from the gateway's cache" }),
  input_tokens: Schema.Int,
  output_tokens: Schema.Int,
  cost: Schema.NullOr(Schema.Finite).annotate({ description: "the sum of the calls' costs; null when no call has one" }),
  response_time_ms: OverviewPercentiles,
  ttft_calls: Schema.Int.annotate({ description: "streamed calls, which alone have a time to the first token" }),
  ttft_ms: Schema.NullOr(OverviewPercentiles)
}).annotate({ identifier: "UiOverviewModel" })

export const OverviewProviderOutcomes = Schema.Struct({
  since: Timestamp.annotate({ description: "when this gateway process started" }),
  outcomes: Schema.Array(Schema.Struct({
    model: Schema.String.annotate({ description: "as labelled on /metrics: a configured model's name, a short-hand as `<type>::*`" }),
    provider: Schema.String,
    answered: Schema.Int.annotate({ description: "inferences this process answered with it" }),
    failed: Schema.Int.annotate({ description: "calls of it that failed in this process (with or without a fallback after)" }),
    error_rate: Schema.Finite.annotate({ description: "failed / (answered + failed)" })
  }).annotate({ identifier: "UiProviderOutcome" }))
}).annotate({
  identifier: "UiProviderOutcomes",
  description: "Failed provider calls are not stored, so error rates come from this process's counters (those of `gateway_provider_errors_total` and `gateway_inference_duration_seconds` on /metrics): since it started, whatever the range, and per worker with `workers` > 1"
})

export const OverviewFunction = Schema.Struct({
  name: Schema.String,
  type: Schema.NullOr(Schema.Literals(["chat", "json"])).annotate({ description: "null for a function no longer configured" }),
  configured: Schema.Boolean,
  inferences: Schema.Int.annotate({ description: "in the range" })
}).annotate({ identifier: "UiOverviewFunction" })

export const UiOverview = Schema.Struct({
  function_name: Schema.NullOr(Schema.String),
  from: Timestamp,
  to: Timestamp,
  bucket: Schema.Literals(overviewBuckets),
  split_by: Schema.Literals(["variant", "function"]).annotate({ description: "what `series` splits the inferences by: the function's variants, or the functions when none is given" }),
  total_inferences: Schema.Int,
  bucket_starts: Schema.Array(Timestamp).annotate({ description: "every bucket of the range, oldest first (the first starts at or before `from`)" }),
  series: Schema.Array(OverviewSeries).annotate({ description: "most inferences first" }),
  metrics: Schema.Array(OverviewMetric).annotate({ description: "the metrics with feedback on the function's inferences of the range (none without a function)" }),
  models: Schema.Array(OverviewModel).annotate({
    description: "the model calls of the range's inferences, per model and provider, most calls first. Failed calls are not stored, so there is no error rate here: see `provider_outcomes`"
  }),
  functions: Schema.Array(OverviewFunction).annotate({ description: "the configured functions and those with inferences in the range, by name" }),
  provider_outcomes: OverviewProviderOutcomes
}).annotate({ identifier: "UiOverview" })
export type UiOverview = typeof UiOverview.Type
export type UiOverviewSeries = typeof OverviewSeries.Type
export type UiOverviewMetric = typeof OverviewMetric.Type
export type UiOverviewMetricVariant = typeof OverviewMetricVariant.Type
export type UiOverviewModel = typeof OverviewModel.Type
export type UiOverviewFunction = typeof OverviewFunction.Type
export type UiProviderOutcomes = typeof OverviewProviderOutcomes.Type
