/**
 * What the gateway counts for `GET /metrics`, as the engine and the handlers see it: a few
 * calls at the points where the figures exist already (a route answered, an inference
 * completed, a provider or a variant failed, an answer's overhead known). The engine never
 * sees the metrics library: the implementation is a layer (layers/metrics/prometheus.ts), and
 * without it every call is a no-op (the default of the reference), so tests and tools that
 * compose the engine alone need nothing.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"

/** The text of a scrape and its content type. */
export interface Scrape {
  readonly contentType: string
  readonly text: string
}

/** tokens counted for a model */
export interface TokenCount {
  readonly input_tokens: number
  readonly output_tokens: number
}

/**
 * What /metrics counts of a completed inference, built by the use case from the engine's
 * result (inferenceMeasures in src/inference/service.ts): metrics sits below the engine and
 * never sees its types.
 */
export interface InferenceMeasures {
  readonly functionName: string
  readonly variantName: string
  /** the model and provider that answered */
  readonly modelName: string
  readonly providerName: string
  readonly processingTimeMs: number
  readonly ttftMs?: number | undefined
  readonly usage: TokenCount
  readonly cost: number | undefined
  /** the variant's other model calls (candidates, judge, embedding), each counted under its model */
  readonly otherCalls: ReadonlyArray<{ readonly modelName: string; readonly usage: TokenCount; readonly cost?: number | undefined }>
  /** answered from the cache */
  readonly cached: boolean
  /** the request read the cache (a miss when not `cached`) */
  readonly cacheRead: boolean
}

export interface ProviderOutcome {
  readonly model: string
  readonly provider: string
  readonly answered: number
  readonly failed: number
}

export interface MetricsRecorder {
  /** a route answered `status` after `seconds` (a stream: when its headers were ready) */
  readonly requestServed: (route: string, status: number, seconds: number) => void
  /** a route refused a call for the rate limits (`[rate_limiting]`) */
  readonly rateLimited: (route: string) => void
  /** an inference's answer is whole (a stream: its last chunk was sent) */
  readonly inferenceCompleted: (completed: InferenceMeasures) => void
  /** a provider of `model` failed; `fellBack` when the next provider was tried */
  readonly providerFailed: (model: string, provider: string, kind: string, fellBack: boolean) => void
  /** a variant of `fn` failed; `fellBack` when the next variant was tried */
  readonly variantFailed: (fn: string, variant: string, fellBack: boolean) => void
  /** the time the gateway added to an answer (total minus the providers' time), in seconds */
  readonly overhead: (route: string, seconds: number) => void
  /**
   * per model and provider (labelled as on /metrics), the inferences this process answered with
   * it and the calls of it that failed, since the process started: failed calls are not stored
   */
  readonly providerOutcomes: () => ReadonlyArray<ProviderOutcome>
  /** the metrics of this process, or of every worker when it runs in a cluster */
  readonly scrape: Effect.Effect<Scrape, Error>
  /** a configuration reload: its models are labelled by name from now on (others by provider type) */
  readonly modelsChanged: (models: { readonly has: (name: string) => boolean }) => void
  /** `gateway_budget_used_ratio{budget}`: the spend over the limit a reservation or settlement last saw */
  readonly budgetUsed?: ((budget: string, ratio: number) => void) | undefined
  /** `gateway_budget_refused_total{budget}`: a call a budget refused */
  readonly budgetRefused?: ((budget: string) => void) | undefined
  /** `gateway_budget_underestimates_total`: a call that cost more than its estimate */
  readonly budgetUnderestimated?: (() => void) | undefined
}

const nothing = () => {}

/** counts nothing; what the engine finds when no metrics layer is provided */
export const noMetrics: MetricsRecorder = {
  requestServed: nothing,
  rateLimited: nothing,
  inferenceCompleted: nothing,
  providerFailed: nothing,
  variantFailed: nothing,
  modelsChanged: nothing,
  overhead: nothing,
  providerOutcomes: () => [],
  scrape: Effect.fail(new Error("metrics are off"))
}

/** The metrics recorder of the running gateway (no-op unless layers/metrics provides one). */
export const Metrics = Context.Reference<MetricsRecorder>("gateway/Metrics", { defaultValue: () => noMetrics })

/**
 * The label of a model: its name when the configuration has it; a short-hand name
 * (`<provider type>::<model>`, the request's to choose) as `<provider type>::*`, so that labels
 * stay as few as the configuration makes them, whatever requests send.
 */
export const modelLabel = (configured: { readonly has: (name: string) => boolean }, name: string): string => {
  if (configured.has(name)) return name
  const type = shorthandType(name)
  return type === undefined ? "gateway::other" : `${type}::*`
}

/** the provider type of a short-hand model name (`openai` of `openai::gpt-4o-mini`), if it is one */
export const shorthandType = (name: string): string | undefined => {
  const separator = name.indexOf("::")
  return separator < 0 ? undefined : name.slice(0, separator)
}
