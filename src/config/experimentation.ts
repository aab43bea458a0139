/**
 * `[functions.<fn>.experimentation]`: how a function's variants are drawn, in place of their
 * `weight`s. `type = "static"` (TensorZero's `uniform` and `static_weights` are the same thing
 * written two ways): `candidate_variants`, a list drawn uniformly or a table of weights, and
 * `fallback_variants`, tried in order once every candidate failed. `type = "adaptive"`
 * (TensorZero's `track_and_stop`): a bandit over a list of candidates, driven by the feedback
 * of `metric` (src/experimentation/), with TensorZero's settings and defaults. Variants in
 * neither list are reached only by pinning them (`variant_name`, evaluation runs).
 */
import * as Schema from "effect/Schema"
import type { WeightedVariant } from "../inference/variantDraw.ts"
import { type BuildContext, tableDecoder } from "./context.ts"
import type { KeyPath } from "./merge.ts"
import type { AdaptiveExperimentation, ExperimentationConfig, FunctionConfig, MetricConfig, VariantConfig } from "./types.ts"

const Weight = Schema.Finite.check(Schema.isGreaterThanOrEqualTo(0))
const ExperimentationType = Schema.Literals(["static", "uniform", "static_weights", "adaptive", "track_and_stop"])
const adaptiveTypes: ReadonlyArray<unknown> = ["adaptive", "track_and_stop"]

const RawStatic = Schema.Struct({
  type: ExperimentationType,
  candidate_variants: Schema.optional(
    Schema.Union([Schema.Array(Schema.String), Schema.Record(Schema.String, Weight)])
      .annotate({ expected: "a list of variant names (drawn uniformly) or a table of variant names to weights" })
  ),
  fallback_variants: Schema.optional(Schema.Array(Schema.String))
})
const decodeStatic = tableDecoder(RawStatic)

/** TensorZero's defaults (its `track_and_stop` configuration reference) */
export const adaptiveDefaults = {
  epsilon: 0,
  delta: 0.05,
  minProb: 0,
  minSamplesPerVariant: 10,
  updatePeriodS: 300
} as const

const RawAdaptive = Schema.Struct({
  type: ExperimentationType,
  candidate_variants: Schema.Array(Schema.String),
  fallback_variants: Schema.optional(Schema.Array(Schema.String)),
  metric: Schema.String,
  epsilon: Schema.optional(Schema.Finite.check(Schema.isGreaterThanOrEqualTo(0))),
  delta: Schema.optional(Schema.Finite.check(Schema.isGreaterThan(0), Schema.isLessThan(1))),
  min_prob: Schema.optional(Schema.Finite.check(Schema.isGreaterThanOrEqualTo(0))),
  min_samples_per_variant: Schema.optional(Schema.Int.check(Schema.isGreaterThanOrEqualTo(1))),
  // seconds; a fraction is accepted (TensorZero takes whole seconds)
  update_period_s: Schema.optional(Schema.Finite.check(Schema.isGreaterThan(0)))
})
const decodeAdaptive = tableDecoder(RawAdaptive)

/** Checks each named variant exists and is named once across both lists; false if one is not. */
const checkNames = (
  context: BuildContext,
  keyPath: KeyPath,
  variants: ReadonlyMap<string, VariantConfig>,
  candidates: ReadonlyArray<{ readonly name: string; readonly at: string | number }>,
  fallbacks: ReadonlyArray<string>
): boolean => {
  let valid = true
  const named = new Set<string>()
  const check = (name: string, at: KeyPath) => {
    if (!variants.has(name)) {
      context.report(at, `variant "${name}" is not a variant of this function`)
      valid = false
    } else if (named.has(name)) {
      context.report(at, `variant "${name}" is named twice (a variant is a candidate or a fallback, once)`)
      valid = false
    }
    named.add(name)
  }
  candidates.forEach(({ at, name }) => check(name, [...keyPath, "candidate_variants", at]))
  fallbacks.forEach((name, index) => check(name, [...keyPath, "fallback_variants", index]))
  return valid
}

const buildStatic = (
  context: BuildContext,
  keyPath: KeyPath,
  table: unknown,
  variants: ReadonlyMap<string, VariantConfig>
): ExperimentationConfig | undefined => {
  const raw = context.decodeAt(decodeStatic, table, keyPath)
  if (raw === undefined) return undefined
  if (raw.candidate_variants === undefined) {
    context.report([...keyPath, "candidate_variants"], "missing field")
    return undefined
  }
  const listed = Array.isArray(raw.candidate_variants)
  const candidates: Array<WeightedVariant> = listed
    ? (raw.candidate_variants as ReadonlyArray<string>).map((name) => ({ name, weight: 1 }))
    : Object.entries(raw.candidate_variants as Readonly<Record<string, number>>).map(([name, weight]) => ({ name, weight }))
  const fallbacks = raw.fallback_variants ?? []
  let valid = checkNames(context, keyPath, variants, candidates.map(({ name }, index) => ({ name, at: listed ? index : name })), fallbacks)
  if (valid && !candidates.some(({ weight }) => weight > 0)) {
    context.report([...keyPath, "candidate_variants"], "no candidate has a positive weight")
    valid = false
  }
  return valid ? { candidates, fallbacks } : undefined
}

const buildAdaptive = (
  context: BuildContext,
  keyPath: KeyPath,
  table: unknown,
  variants: ReadonlyMap<string, VariantConfig>
): ExperimentationConfig | undefined => {
  const raw = context.decodeAt(decodeAdaptive, table, keyPath)
  if (raw === undefined) return undefined
  const fallbacks = raw.fallback_variants ?? []
  let valid = checkNames(context, keyPath, variants, raw.candidate_variants.map((name, at) => ({ name, at })), fallbacks)
  if (raw.candidate_variants.length === 0) {
    context.report([...keyPath, "candidate_variants"], "needs at least one variant")
    valid = false
  }
  const minProb = raw.min_prob ?? adaptiveDefaults.minProb
  if (minProb * raw.candidate_variants.length > 1 + 1e-9) {
    context.report(
      [...keyPath, "min_prob"],
      `${minProb} for each of ${raw.candidate_variants.length} candidates is more than all the probability there is: at most 1 / ${raw.candidate_variants.length}`
    )
    valid = false
  }
  const adaptive: AdaptiveExperimentation = {
    metric: raw.metric,
    epsilon: raw.epsilon ?? adaptiveDefaults.epsilon,
    delta: raw.delta ?? adaptiveDefaults.delta,
    minProb,
    minSamplesPerVariant: raw.min_samples_per_variant ?? adaptiveDefaults.minSamplesPerVariant,
    updatePeriodS: raw.update_period_s ?? adaptiveDefaults.updatePeriodS
  }
  return valid ? { candidates: raw.candidate_variants.map((name) => ({ name, weight: 1 })), fallbacks, adaptive } : undefined
}

export const buildExperimentation = (
  context: BuildContext,
  functionKeyPath: KeyPath,
  table: unknown,
  variants: ReadonlyMap<string, VariantConfig>,
  /** whether a variant sets its `weight` (which the experimentation replaces) */
  anyWeight: boolean
): ExperimentationConfig | undefined => {
  const keyPath = [...functionKeyPath, "experimentation"]
  const type = typeof table === "object" && table !== null ? (table as { readonly type?: unknown }).type : undefined
  const built = adaptiveTypes.includes(type) ? buildAdaptive(context, keyPath, table, variants) : buildStatic(context, keyPath, table, variants)
  if (built !== undefined && anyWeight) {
    context.warn(keyPath, "replaces the variants' `weight`, which are ignored: give the weights in candidate_variants")
  }
  return built
}

/**
 * An adaptive experiment's metric must be configured; checked once every metric is known (an
 * evaluator's metric counts: its scores are feedback like any other).
 */
export const checkExperimentationMetrics = (
  context: BuildContext,
  functions: ReadonlyMap<string, FunctionConfig>,
  metrics: ReadonlyMap<string, MetricConfig>
): void => {
  for (const [name, fn] of functions) {
    const metric = fn.experimentation?.adaptive?.metric
    if (metric !== undefined && !metrics.has(metric)) {
      context.report(["functions", name, "experimentation", "metric"], `metric "${metric}" is not defined under [metrics]`)
    }
  }
}
