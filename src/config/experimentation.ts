/**
 * `[functions.<fn>.experimentation]`: how a function's variants are drawn, in place of their
 * `weight`s. `type = "static"` (TensorZero's `uniform` and `static_weights` are the same thing
 * written two ways): `candidate_variants`, a list drawn uniformly or a table of weights, and
 * `fallback_variants`, tried in order once every candidate failed. Variants in neither are
 * reached only by pinning them (`variant_name`, evaluation runs).
 */
import * as Schema from "effect/Schema"
import type { WeightedVariant } from "../inference/sampling.ts"
import { type BuildContext, tableDecoder } from "./context.ts"
import type { KeyPath } from "./merge.ts"
import type { ExperimentationConfig, VariantConfig } from "./types.ts"

const Weight = Schema.Finite.check(Schema.isGreaterThanOrEqualTo(0))

const RawExperimentation = Schema.Struct({
  type: Schema.Literals(["static", "uniform", "static_weights", "adaptive", "track_and_stop"]),
  candidate_variants: Schema.optional(
    Schema.Union([Schema.Array(Schema.String), Schema.Record(Schema.String, Weight)])
      .annotate({ expected: "a list of variant names (drawn uniformly) or a table of variant names to weights" })
  ),
  fallback_variants: Schema.optional(Schema.Array(Schema.String))
})
const decodeExperimentation = tableDecoder(RawExperimentation)

export const buildExperimentation = (
  context: BuildContext,
  functionKeyPath: KeyPath,
  table: unknown,
  variants: ReadonlyMap<string, VariantConfig>,
  /** whether a variant sets its `weight` (which the experimentation replaces) */
  anyWeight: boolean
): ExperimentationConfig | undefined => {
  const keyPath = [...functionKeyPath, "experimentation"]
  const raw = context.decodeAt(decodeExperimentation, table, keyPath)
  if (raw === undefined) return undefined
  if (raw.type === "adaptive" || raw.type === "track_and_stop") {
    context.report([...keyPath, "type"], `"${raw.type}" (adaptive experimentation) is not available yet; use "static"`)
    return undefined
  }
  if (raw.candidate_variants === undefined) {
    context.report([...keyPath, "candidate_variants"], "missing field")
    return undefined
  }
  const listed = Array.isArray(raw.candidate_variants)
  const candidates: Array<WeightedVariant> = listed
    ? (raw.candidate_variants as ReadonlyArray<string>).map((name) => ({ name, weight: 1 }))
    : Object.entries(raw.candidate_variants as Readonly<Record<string, number>>).map(([name, weight]) => ({ name, weight }))
  const fallbacks = raw.fallback_variants ?? []
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
  candidates.forEach(({ name }, index) => check(name, [...keyPath, "candidate_variants", listed ? index : name]))
  fallbacks.forEach((name, index) => check(name, [...keyPath, "fallback_variants", index]))
  if (valid && !candidates.some(({ weight }) => weight > 0)) {
    context.report([...keyPath, "candidate_variants"], "no candidate has a positive weight")
    valid = false
  }
  if (anyWeight) {
    context.warn(keyPath, "replaces the variants' `weight`, which are ignored: give the weights in candidate_variants")
  }
  return valid ? { candidates, fallbacks } : undefined
}
