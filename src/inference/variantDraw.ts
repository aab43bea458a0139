/**
 * Variant sampling: weighted, without replacement, so that when a variant fails the next
 * one tried is drawn from the rest by weight. The draw is seeded by the episode, so every
 * inference of an episode starts with the same variant (a stable experience per episode,
 * and clean A/B comparisons).
 */

import { fnv1a, SeededRandom } from "../seededRandom.ts"

export interface WeightedVariant {
  readonly name: string
  readonly weight: number
}

/** a generator seeded by `seed`'s text (an episode's draws are the same in every process) */
export const seededRandom = (seed: string): () => number => {
  const random = new SeededRandom(fnv1a(seed))
  return () => random.next()
}

/** The order in which to try the variants: positive weights only, drawn by weight. */
export const sampleVariantOrder = (
  variants: ReadonlyArray<WeightedVariant>,
  random: () => number
): ReadonlyArray<string> => {
  const remaining = variants.filter((variant) => variant.weight > 0)
  const order: Array<string> = []
  while (remaining.length > 0) {
    const total = remaining.reduce((sum, variant) => sum + variant.weight, 0)
    let point = random() * total
    let index = 0
    while (index < remaining.length - 1 && point >= remaining[index].weight) {
      point -= remaining[index].weight
      index++
    }
    order.push(remaining[index].name)
    remaining.splice(index, 1)
  }
  return order
}

/** What the order of a function's variants depends on (`FunctionConfig`'s fields). */
export interface SampledFunction {
  readonly variants: ReadonlyMap<string, WeightedVariant>
  readonly experimentation?: { readonly candidates: ReadonlyArray<WeightedVariant>; readonly fallbacks: ReadonlyArray<string> } | undefined
}

/**
 * An adaptive experiment's candidates weighted by the probabilities in force for an episode
 * of a function (src/experimentation/), or undefined to draw them as configured (uniformly).
 * Synchronous: it reads a snapshot in memory.
 */
export type AdaptiveWeights = (functionName: string, episodeId: string) => ReadonlyArray<WeightedVariant> | undefined

/**
 * The order in which to try a function's variants: with `[functions.<fn>.experimentation]`,
 * its candidates drawn by weight and then its fallbacks in order; otherwise every variant by
 * weight. `adaptive`, an adaptive experiment's candidates with their probabilities, replaces
 * the configured weights; a candidate at probability 0 (an experiment that stopped) is still
 * tried after the others, before the fallbacks.
 */
export const variantOrder = (
  fn: SampledFunction,
  random: () => number,
  adaptive?: ReadonlyArray<WeightedVariant> | undefined
): ReadonlyArray<string> => {
  if (fn.experimentation === undefined) return sampleVariantOrder([...fn.variants.values()], random)
  if (adaptive === undefined) return [...sampleVariantOrder(fn.experimentation.candidates, random), ...fn.experimentation.fallbacks]
  return [
    ...sampleVariantOrder(adaptive, random),
    ...adaptive.filter(({ weight }) => !(weight > 0)).map(({ name }) => name),
    ...fn.experimentation.fallbacks
  ]
}
