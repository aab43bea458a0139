/**
 * The gateway's metrics in Prometheus' text format: the `Metrics` recorder the engine and the
 * handlers call, its families registered in a prom-client registry of its own (not the global
 * one: each gateway built in a process, as tests do, counts apart), and the write queue's
 * figures read from its counters at scrape time. In a cluster worker a scrape asks the primary
 * for the sum over every worker (cluster.ts).
 */
import cluster from "node:cluster"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { Registry } from "prom-client"
import type { GatewayConfig } from "../../src/config/types.ts"
import { defaultFunctionName } from "../../src/inference/prepare.ts"
import { type InferenceMeasures, Metrics, type MetricsRecorder, modelLabel, type ProviderOutcome, shorthandType } from "../../src/metrics/metrics.ts"
import { WriteQueue } from "../../src/analytics/writeQueue.ts"
import { workerScrape } from "./cluster.ts"
import { BoundedGauge, CollectedFamily, CounterFamily, HistogramFamily, register } from "./families.ts"

/** budgets shown at most in `gateway_budget_used_ratio`: a `gateway::each` budget has one series per key or tag value */
const maxBudgetSeries = 1_000

/** seconds: from a millisecond to two minutes, for answers of models */
const latencyBounds = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120]
/** seconds: routes that answer at once (status, feedback) as well as inferences */
const requestBounds = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60]
/** seconds: the gateway's own time, from a tenth of a millisecond */
const overheadBounds = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1]

const inferenceLabels = ["function", "variant", "model", "provider"]

export const makePrometheusMetrics = (config: GatewayConfig, writeQueue: WriteQueue["Service"]): MetricsRecorder => {
  const requests = new CounterFamily("gateway_http_requests_total", "HTTP requests answered, by route and status", ["route", "status"])
  const requestDuration = new HistogramFamily(
    "gateway_http_request_duration_seconds",
    "Time to answer a request, by route (a streamed answer: until its headers are sent)",
    ["route"],
    requestBounds
  )
  const rateLimited = new CounterFamily("gateway_rate_limited_total", "Calls refused by the rate limits ([rate_limiting]), by route", ["route"])
  const inferenceDuration = new HistogramFamily(
    "gateway_inference_duration_seconds",
    "Time from an inference's start to its whole answer (a stream: its last chunk)",
    inferenceLabels,
    latencyBounds
  )
  const timeToFirstToken = new HistogramFamily(
    "gateway_time_to_first_token_seconds",
    "Time from a streamed inference's start to the provider's first chunk",
    inferenceLabels,
    latencyBounds
  )
  const overhead = new HistogramFamily(
    "gateway_overhead_seconds",
    "Time the gateway added to an answer: the request's time minus the time spent waiting on providers",
    ["route"],
    overheadBounds
  )
  const providerErrors = new CounterFamily("gateway_provider_errors_total", "Failed provider calls, by model, provider and kind of failure", [
    "model",
    "provider",
    "kind"
  ])
  const providerFallbacks = new CounterFamily(
    "gateway_provider_fallbacks_total",
    "Provider failures after which the model's next provider was tried, by the provider that failed",
    ["model", "provider"]
  )
  const variantFallbacks = new CounterFamily(
    "gateway_variant_fallbacks_total",
    "Variant failures after which the function's next variant was tried, by the variant that failed",
    ["function", "variant"]
  )
  const inputTokens = new CounterFamily("gateway_input_tokens_total", "Input tokens of answered inferences, by model", ["model"])
  const outputTokens = new CounterFamily("gateway_output_tokens_total", "Output tokens of answered inferences, by model", ["model"])
  const cost = new CounterFamily("gateway_cost_total", "Cost of answered inferences by their providers' `cost` rules, by model", ["model"])
  const cacheHits = new CounterFamily("gateway_cache_hits_total", "Inferences answered from the cache, by model", ["model"])
  const cacheMisses = new CounterFamily("gateway_cache_misses_total", "Inferences that read the cache, found nothing and were answered by a provider, by model", [
    "model"
  ])

  const stat = (name: keyof ReturnType<WriteQueue["Service"]["stats"]>) => () => [{ labels: {}, value: writeQueue.stats()[name] }]
  const byTable = (figure: "rows" | "bytes") => () =>
    [...(writeQueue.queuedByTable?.() ?? new Map<string, { rows: number; bytes: number }>())].map(([table, figures]) => ({
      labels: { table },
      value: figures[figure]
    }))
  const queue = writeQueue.enabled
    ? [
      new CollectedFamily("gateway_write_queue_units", "Units (an inference with its rows, a feedback) waiting to be written", "gauge", stat("queued")),
      new CollectedFamily("gateway_write_queue_bytes", "Encoded bytes waiting to be written", "gauge", stat("queuedBytes")),
      new CollectedFamily("gateway_write_queue_rows", "Rows waiting to be written, by table", "gauge", byTable("rows")),
      new CollectedFamily("gateway_write_queue_row_bytes", "Encoded bytes waiting to be written, by table", "gauge", byTable("bytes")),
      new CollectedFamily("gateway_write_queue_written_total", "Units written", "counter", stat("written")),
      new CollectedFamily("gateway_write_queue_dropped_total", "Units dropped because the queue was full", "counter", stat("dropped")),
      new CollectedFamily("gateway_write_queue_rejected_total", "Units dropped for their own rows (refused by the database)", "counter", stat("rejected")),
      new CollectedFamily("gateway_write_queue_failed_attempts_total", "Failed tries of a batch that is retried", "counter", stat("failedAttempts")),
      new CollectedFamily(
        "gateway_write_queue_truncated_rows_total",
        "Rows over [gateway.observability] max_row_bytes, cut down (marked) and stored",
        "counter",
        stat("truncatedRows")
      )
    ]
    : []

  const budgetRefused = new CounterFamily("gateway_budget_refused_total", "Calls refused by a budget ([[rate_limiting.budgets]]), by budget", ["budget"])
  const budgetUnderestimates = new CounterFamily(
    "gateway_budget_underestimates_total",
    "Calls under a budget that cost more than their estimate (the one way a budget is passed by more than one call's estimate)",
    []
  )
  const budgetRatios = new BoundedGauge(maxBudgetSeries)
  const budgetUsed = new CollectedFamily(
    "gateway_budget_used_ratio",
    "The spend of a budget's current period over its limit, as this process last saw it (the largest across workers), by budget",
    "gauge",
    () => budgetRatios.samples("budget"),
    "max"
  )

  const registry = new Registry()
  register(registry, [
    budgetRefused,
    budgetUnderestimates,
    budgetUsed,
    requests,
    requestDuration,
    rateLimited,
    inferenceDuration,
    timeToFirstToken,
    overhead,
    providerErrors,
    providerFallbacks,
    variantFallbacks,
    inputTokens,
    outputTokens,
    cost,
    cacheHits,
    cacheMisses,
    ...queue
  ])

  // a configuration reload replaces them (modelsChanged)
  let models: { readonly has: (name: string) => boolean } = config.models
  const modelOf = (name: string) => modelLabel(models, name)
  /** a configured model's provider by its name; a short-hand's by its type */
  const providerOf = (model: string, provider: string) => models.has(model) ? provider : shorthandType(model) ?? "gateway::other"

  const inferenceCompleted = (completed: InferenceMeasures) => {
    const model = modelOf(completed.modelName)
    const fn = completed.functionName
    // the default function's variants are named after the model the request chose
    const variant = fn === defaultFunctionName ? model : completed.variantName
    const labels = [fn, variant, model, providerOf(completed.modelName, completed.providerName)]
    inferenceDuration.observe(labels, completed.processingTimeMs / 1000)
    if (completed.ttftMs !== undefined) timeToFirstToken.observe(labels, completed.ttftMs / 1000)
    const byModel = [model]
    inputTokens.inc(byModel, completed.usage.input_tokens)
    outputTokens.inc(byModel, completed.usage.output_tokens)
    if (completed.cost !== undefined) cost.inc(byModel, completed.cost)
    // a sampling variant's candidates and judge, DICL's embedding: each model's tokens under its name
    for (const call of completed.otherCalls) {
      const callModel = [modelOf(call.modelName)]
      inputTokens.inc(callModel, call.usage.input_tokens)
      outputTokens.inc(callModel, call.usage.output_tokens)
      if (call.cost !== undefined) cost.inc(callModel, call.cost)
    }
    if (completed.cached) cacheHits.inc(byModel)
    else if (completed.cacheRead) cacheMisses.inc(byModel)
  }

  const contentType = registry.contentType
  const scrapeAll = cluster.isWorker ? workerScrape(registry) : () => registry.metrics()

  const providerOutcomes = (): ReadonlyArray<ProviderOutcome> => {
    const outcomes = new Map<string, { model: string; provider: string; answered: number; failed: number }>()
    const outcome = (model: string, provider: string) => {
      const key = `${model}\u0000${provider}`
      let found = outcomes.get(key)
      if (found === undefined) outcomes.set(key, found = { model, provider, answered: 0, failed: 0 })
      return found
    }
    for (const { count, labels } of inferenceDuration.counts()) outcome(String(labels.model), String(labels.provider)).answered += count
    for (const { labels, value } of providerErrors.values()) outcome(String(labels.model), String(labels.provider)).failed += value
    return [...outcomes.values()]
  }

  return {
    providerOutcomes,
    requestServed: (route, status, seconds) => {
      requests.inc([route, String(status)])
      requestDuration.observe([route], seconds)
    },
    rateLimited: (route) => rateLimited.inc([route]),
    budgetUsed: (budget, ratio) => budgetRatios.set(budget, ratio),
    budgetRefused: (budget) => budgetRefused.inc([budget]),
    budgetUnderestimated: () => budgetUnderestimates.inc([]),
    inferenceCompleted,
    providerFailed: (model, provider, kind, fellBack) => {
      const labels = [modelOf(model), providerOf(model, provider)]
      providerErrors.inc([...labels, kind])
      if (fellBack) providerFallbacks.inc(labels)
    },
    variantFailed: (fn, variant, fellBack) => {
      if (fellBack) variantFallbacks.inc([fn, fn === defaultFunctionName ? modelOf(variant) : variant])
    },
    overhead: (route, seconds) => overhead.observe([route], seconds),
    scrape: Effect.map(Effect.tryPromise({ try: scrapeAll, catch: (error) => error as Error }), (text) => ({ contentType, text })),
    modelsChanged: (configured) => {
      models = configured
    }
  }
}

/** The recorder of the running gateway, with the write queue's figures. */
export const MetricsLive = (config: GatewayConfig) => Layer.effect(Metrics, WriteQueue.useSync((queue) => makePrometheusMetrics(config, queue)))
