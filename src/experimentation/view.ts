/**
 * A function's experimentation as `GET /v1/experimentation/{function_name}` answers it: an
 * adaptive experiment's newest computation (or a uniform draw before any), or the normalized
 * weights of a static experiment or of the variants. Pure.
 */
import type { ExperimentationResponse } from "../api/experimentation.ts"
import type { FunctionConfig, MetricConfig } from "../config/types.ts"
import type { WeightedVariant } from "../inference/variantDraw.ts"
import type { InForce } from "./history.ts"

const iso = (epochMs: number) => new Date(epochMs).toISOString()

/** the positive weights, summing to 1 */
const normalized = (variants: ReadonlyArray<WeightedVariant>): Record<string, number> => {
  const drawn = variants.filter(({ weight }) => weight > 0)
  const total = drawn.reduce((sum, { weight }) => sum + weight, 0)
  return Object.fromEntries(drawn.map(({ name, weight }) => [name, weight / total]))
}

export const experimentationView = (
  fn: FunctionConfig,
  /** for an adaptive function: its metric and the newest computation this process read */
  adaptive: { readonly metric: MetricConfig; readonly newest: InForce | undefined } | undefined
): ExperimentationResponse => {
  const experimentation = fn.experimentation
  if (experimentation === undefined) return { function_name: fn.name, type: "weights", probabilities: normalized([...fn.variants.values()]) }
  const settings = experimentation.adaptive
  if (settings === undefined || adaptive === undefined) {
    return { function_name: fn.name, type: "static", probabilities: normalized(experimentation.candidates), fallback_variants: experimentation.fallbacks }
  }
  const candidates = experimentation.candidates.map(({ name }) => name)
  const newest = adaptive.newest?.sampling
  const statistics = new Map(newest?.statistics.map((stats) => [stats.name, stats]))
  return {
    function_name: fn.name,
    type: "adaptive",
    probabilities: newest === undefined
      ? normalized(experimentation.candidates)
      : Object.fromEntries(newest.probabilities.map(({ name, probability }) => [name, probability])),
    fallback_variants: experimentation.fallbacks,
    metric: adaptive.metric.name,
    optimize: adaptive.metric.optimize,
    statistics: Object.fromEntries(candidates.map((name) => {
      const stats = statistics.get(name)
      return [name, stats === undefined ? { count: 0, mean: null, variance: null } : { count: stats.count, mean: stats.mean, variance: stats.variance }]
    })),
    computed_at: newest === undefined ? null : iso(newest.computedAt),
    in_force_from: adaptive.newest === undefined ? null : iso(adaptive.newest.inForceFrom),
    stopped: newest?.stopped ?? false,
    ...(newest?.winner !== undefined && { winner: newest.winner }),
    exploring: newest?.exploring ?? candidates,
    update_period_s: settings.updatePeriodS
  }
}
