/**
 * A function's variants, each built by its type: chat completion (and chain of thought) in
 * variants.ts, the sampling and DICL types in advancedVariants.ts, which builds on variants.ts's
 * shared parts; this composes both, so neither imports the other back.
 */
import type { JsonSchemaValidator } from "../jsonSchema.ts"
import { buildAdvancedVariant, checkCandidates, isAdvancedType } from "./advancedVariants.ts"
import type { BuildContext } from "./context.ts"
import type { KeyPath } from "./merge.ts"
import type { RawFunction } from "./raw.ts"
import type { VariantConfig } from "./types.ts"
import { buildVariant, decodeVariant, type VariantScope } from "./variants.ts"

const chatCompletionTypes = new Set(["chat_completion", "experimental_chain_of_thought"])

export const variantTypes = [
  "chat_completion",
  "experimental_chain_of_thought",
  "experimental_best_of_n_sampling",
  "experimental_mixture_of_n_sampling",
  "experimental_dynamic_in_context_learning"
] as const

/** a type the gateway knows, or the problem with it */
const checkType = (context: BuildContext, keyPath: KeyPath, type: unknown): boolean => {
  if (typeof type === "string" && (chatCompletionTypes.has(type) || isAdvancedType(type))) return true
  context.report([...keyPath, "type"], typeof type === "string"
    ? `variant type "${type}" is not supported (supported: ${variantTypes.join(", ")})`
    : "missing field")
  return false
}

/** A function's variants. When no variant sets a weight all are sampled alike; when some do, the others weigh 0. */
export const buildVariants = (
  context: BuildContext,
  scope: VariantScope,
  functionKeyPath: KeyPath,
  functionName: string,
  fn: RawFunction,
  schemas: ReadonlyMap<string, JsonSchemaValidator>
): Map<string, VariantConfig> => {
  const tables = Object.entries(fn.variants ?? {}).map(([name, table]) => ({ name, keyPath: [...functionKeyPath, "variants", name], table }))
  const anyWeight = tables.some(({ table }) => table.weight !== undefined)
  const variants = new Map<string, VariantConfig>()
  for (const { name, keyPath, table } of tables) {
    if (!checkType(context, keyPath, table.type)) continue
    const built = isAdvancedType(table.type as string)
      ? buildAdvancedVariant(context, scope, keyPath, functionName, fn, name, table, schemas, anyWeight)
      : (() => {
        const variant = context.decodeAt(decodeVariant, table, keyPath)
        return variant === undefined ? undefined : buildVariant(context, scope, keyPath, functionName, fn, name, variant, schemas, anyWeight)
      })()
    if (built !== undefined) variants.set(name, built)
  }
  checkCandidates(context, functionKeyPath, variants, tables.map(({ name }) => name))
  return variants
}
