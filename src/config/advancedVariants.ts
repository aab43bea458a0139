/**
 * The advanced variant types (spec 2.1): best-of-n and mixture-of-n sampling (candidates and
 * an evaluator or fuser block) and dynamic in-context learning (an embedding model, k, a model).
 * Checked here: each candidate is a variant of the same function, no variant reaches itself
 * through candidates, and the models and embedding models named exist.
 */
import { embeddingsRefusal } from "./embeddingModels.ts"
import { parseShorthandModel, shorthandProblem } from "../providers/registry.ts"
import type { JsonSchemaValidator } from "../jsonSchema.ts"
import { type BuildContext, tableDecoder } from "./context.ts"
import { shorthandOff } from "./models.ts"
import { formatKeyPath, type KeyPath } from "./merge.ts"
import { type RawDiclVariant, RawDiclVariant as DiclSchema, type RawFunction, RawJudgeBlock, RawSamplingVariant } from "./raw.ts"
import { isSamplingVariant, type ModelCallConfig, type VariantConfig } from "./types.ts"
import { callSettings, checkVariantModel, defaultJsonMode, loadTemplates, type VariantScope } from "./variants.ts"

const decodeSampling = tableDecoder(RawSamplingVariant)
const decodeJudge = tableDecoder(RawJudgeBlock)
const decodeDicl = tableDecoder(DiclSchema)

/** TensorZero writes mixture-of-n without `_sampling` too */
const samplingTypes: Readonly<Record<string, "experimental_best_of_n_sampling" | "experimental_mixture_of_n_sampling">> = {
  experimental_best_of_n_sampling: "experimental_best_of_n_sampling",
  experimental_mixture_of_n_sampling: "experimental_mixture_of_n_sampling",
  experimental_mixture_of_n: "experimental_mixture_of_n_sampling"
}
const diclType = "experimental_dynamic_in_context_learning"

export const isAdvancedType = (type: string): boolean => type in samplingTypes || type === diclType

/** the types this module builds */
export const advancedTypes: ReadonlyArray<string> = [...new Set(Object.values(samplingTypes)), diclType]


/** the evaluator's or fuser's block: its model, templates (or system_instructions) and call settings */
const buildJudge = (
  context: BuildContext,
  scope: VariantScope,
  keyPath: KeyPath,
  functionName: string,
  variantName: string,
  field: "evaluator" | "fuser",
  table: unknown,
  schemas: ReadonlyMap<string, JsonSchemaValidator>,
  jsonMode: ModelCallConfig["jsonMode"]
): ModelCallConfig | undefined => {
  const judgeKeyPath = [...keyPath, field]
  if (table === undefined) {
    context.report(judgeKeyPath, "missing table")
    return undefined
  }
  const judge = context.decodeAt(decodeJudge, table, judgeKeyPath)
  if (judge === undefined) return undefined
  if (judge.model === undefined) {
    context.report([...judgeKeyPath, "model"], "missing field")
    return undefined
  }
  checkVariantModel(context, scope, [...judgeKeyPath, "model"], judge.model)
  // its templates live under a name of their own, so they do not replace the variant's
  const templates = loadTemplates(context, scope, judgeKeyPath, functionName, `${variantName}::${field}`, judge, schemas)
  context.checkPointers([...judgeKeyPath, "extra_body"], judge.extra_body)
  const extraHeaders = context.checkHeaders([...judgeKeyPath, "extra_headers"], judge.extra_headers)
  return {
    name: variantName,
    model: judge.model,
    templates,
    ...callSettings({ ...judge, extra_headers: extraHeaders }, jsonMode)
  }
}

/** an embedding model: one under [embedding_models], or a short-hand of a type with embeddings */
const checkEmbeddingModel = (context: BuildContext, scope: VariantScope, keyPath: KeyPath, name: string): void => {
  if (scope.embeddingModelNames.has(name)) return
  const off = shorthandOff(name, scope.shorthands)
  if (off !== undefined) return context.report(keyPath, `embedding model "${name}": ${off}`)
  const shorthand = parseShorthandModel(name)
  if (shorthand === undefined) {
    context.report(keyPath, `unknown embedding model "${name}": define [${formatKeyPath(["embedding_models", name])}] or use "<provider_type>::<model>"`)
    return
  }
  const refusal = embeddingsRefusal(shorthand.type) ?? shorthandProblem(name)
  if (refusal !== undefined) context.report(keyPath, refusal)
}

const buildDicl = (
  context: BuildContext,
  scope: VariantScope,
  keyPath: KeyPath,
  functionName: string,
  fn: RawFunction,
  name: string,
  variant: RawDiclVariant,
  anyWeight: boolean
): VariantConfig => {
  checkVariantModel(context, scope, [...keyPath, "model"], variant.model)
  checkEmbeddingModel(context, scope, [...keyPath, "embedding_model"], variant.embedding_model)
  context.checkPointers([...keyPath, "extra_body"], variant.extra_body)
  const extraHeaders = context.checkHeaders([...keyPath, "extra_headers"], variant.extra_headers)
  // DICL renders no templates: the input goes as it is, as its examples' did; only its instructions are read
  const templates = loadTemplates(context, scope, keyPath, functionName, name, { system_instructions: variant.system_instructions }, new Map())
  return {
    name,
    type: diclType,
    weight: variant.weight ?? (anyWeight ? 0 : 1),
    model: variant.model,
    templates,
    ...callSettings({ ...variant, extra_headers: extraHeaders }, defaultJsonMode(fn)),
    embeddingModel: variant.embedding_model,
    k: variant.k,
    maxDistance: variant.max_distance
  }
}

export const buildAdvancedVariant = (
  context: BuildContext,
  scope: VariantScope,
  keyPath: KeyPath,
  functionName: string,
  fn: RawFunction,
  name: string,
  table: Record<string, unknown>,
  schemas: ReadonlyMap<string, JsonSchemaValidator>,
  anyWeight: boolean
): VariantConfig | undefined => {
  if (table.type === diclType) {
    const dicl = context.decodeAt(decodeDicl, table, keyPath)
    return dicl === undefined ? undefined : buildDicl(context, scope, keyPath, functionName, fn, name, dicl, anyWeight)
  }
  const type = samplingTypes[table.type as string]
  const raw = context.decodeAt(decodeSampling, table, keyPath)
  if (raw === undefined) return undefined
  const field = type === "experimental_best_of_n_sampling" ? "evaluator" : "fuser"
  const other = field === "evaluator" ? "fuser" : "evaluator"
  if (raw[other] !== undefined) context.report([...keyPath, other], `a ${table.type} variant has a ${field}, not a ${other}`)
  if (raw.candidates.length === 0) context.report([...keyPath, "candidates"], "at least one candidate is needed")
  // the evaluator answers with the index it picks: strict json by default; the fuser answers as the function does
  const judge = buildJudge(context, scope, keyPath, functionName, name, field, raw[field], schemas, field === "evaluator" ? "strict" : defaultJsonMode(fn))
  if (judge === undefined) return undefined
  return {
    name,
    type,
    weight: raw.weight ?? (anyWeight ? 0 : 1),
    candidates: raw.candidates,
    judge,
    timeouts: raw.timeouts ?? {},
    candidateTimeoutMs: raw.timeout_s === undefined ? undefined : raw.timeout_s * 1000
  }
}

/**
 * Every candidate names a variant of the function (one that failed to build was reported
 * already), and no sampling variant reaches itself through its candidates.
 */
export const checkCandidates = (
  context: BuildContext,
  functionKeyPath: KeyPath,
  variants: ReadonlyMap<string, VariantConfig>,
  declared: ReadonlyArray<string>
): void => {
  const names = new Set(declared)
  for (const variant of variants.values()) {
    if (!isSamplingVariant(variant)) continue
    variant.candidates.forEach((candidate, index) => {
      if (!names.has(candidate)) {
        context.report([...functionKeyPath, "variants", variant.name, "candidates", index], `variant "${candidate}" is not a variant of this function`)
      }
    })
  }
  // depth-first: a variant met again while its own candidates are being walked closes a cycle
  const state = new Map<string, "walking" | "done">()
  const walk = (name: string, path: ReadonlyArray<string>): void => {
    const variant = variants.get(name)
    if (variant === undefined || !isSamplingVariant(variant) || state.get(name) === "done") return
    if (state.get(name) === "walking") {
      const cycle = [...path.slice(path.indexOf(name)), name]
      context.report([...functionKeyPath, "variants", cycle[0], "candidates"], `variants reach themselves through their candidates: ${cycle.join(" -> ")}`)
      return
    }
    state.set(name, "walking")
    for (const candidate of new Set(variant.candidates)) walk(candidate, [...path, name])
    state.set(name, "done")
  }
  for (const name of variants.keys()) walk(name, [])
}
