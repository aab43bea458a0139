/**
 * `[functions.<fn>.evaluators.<name>]` and `[evaluations.<name>]` -> evaluators and
 * evaluations. An `llm_judge` evaluator runs as a built-in json function
 * (`gateway::llm_judge::<fn or evaluation>::<evaluator>`, see `evaluations/names.ts`) whose
 * variants are the judge's: it is collected in `EvaluatorsScope.judges` and `buildConfig`
 * adds it to the functions, so callers can also call it through `/inference`.
 */
import { RE2JS } from "re2js"
import { type EvaluatorScope, evaluatorMetricName, judgeFunctionName, judgeOutputSchema } from "../evaluations/names.ts"
import { templateKey } from "../inference/templates.ts"
import { compileJsonSchema, type JsonSchemaValidator } from "../jsonSchema.ts"
import { type BuildContext, type TableDecoder, tableDecoder } from "./context.ts"
import { formatKeyPath, type KeyPath } from "./merge.ts"
import { advancedTypes, buildAdvancedVariant, checkCandidates, isAdvancedType } from "./advancedVariants.ts"
import { RawEvaluation, RawEvaluators, type RawFunction, RawJudgeVariant } from "./raw.ts"
import type { ConfiguredRegex, EvaluationConfig, EvaluatorConfig, FunctionConfig, VariantConfig } from "./types.ts"
import { checkVariantModel, variantParams, variantRetries, type VariantScope } from "./variants.ts"

/** A judge's function and the evaluator that defines it (where problems with its variants are reported). */
export interface JudgeFunction {
  readonly fn: FunctionConfig
  readonly keyPath: KeyPath
}

export interface EvaluatorsScope extends VariantScope {
  /** the judges' functions built so far, by function name */
  readonly judges: Map<string, JudgeFunction>
}

type EvaluatorType = keyof typeof RawEvaluators
type RawEvaluator = (typeof RawEvaluators)[EvaluatorType]["Type"]

const evaluatorDecoders: Readonly<Record<EvaluatorType, TableDecoder<RawEvaluator>>> = {
  exact_match: tableDecoder(RawEvaluators.exact_match),
  regex: tableDecoder(RawEvaluators.regex),
  tool_use: tableDecoder(RawEvaluators.tool_use),
  llm_judge: tableDecoder(RawEvaluators.llm_judge)
}
const decodeJudgeVariant = tableDecoder(RawJudgeVariant)
const decodeEvaluation = tableDecoder(RawEvaluation)

const compiledJudgeSchema = (outputType: "boolean" | "float"): JsonSchemaValidator => {
  const compiled = compileJsonSchema(judgeOutputSchema(outputType))
  if ("error" in compiled) throw new Error(`the ${outputType} judge output schema does not compile: ${compiled.error}`)
  return compiled.validator
}
const judgeOutputSchemas = { boolean: compiledJudgeSchema("boolean"), float: compiledJudgeSchema("float") }

/** "::" separates the parts of metric and judge function names */
const checkName = (context: BuildContext, keyPath: KeyPath, what: string, name: string): boolean => {
  if (!name.includes("::")) return true
  context.report(keyPath, `${what} names may not contain "::" (it separates the parts of metric names)`)
  return false
}

const decodeEvaluatorAt = (context: BuildContext, keyPath: KeyPath, table: Record<string, unknown>): RawEvaluator | undefined => {
  const type = table.type
  if (typeof type !== "string" || !Object.hasOwn(evaluatorDecoders, type)) {
    context.report([...keyPath, "type"], typeof type === "string"
      ? `unknown evaluator type "${type}" (known: ${[...Object.keys(evaluatorDecoders), "typescript"].join(", ")})`
      : "missing field")
    return undefined
  }
  return context.decodeAt(evaluatorDecoders[type as EvaluatorType], table, keyPath)
}

/** TensorZero's `typescript` evaluator: its other fields are its runner's, not read here */
const typescriptEvaluator = (context: BuildContext, keyPath: KeyPath, table: Record<string, unknown>) => {
  context.warn(keyPath, "TypeScript evaluators are not run by this gateway: an evaluation run or a GEPA optimization that uses this one is refused")
  const outputType = table.output_type === "boolean" ? "boolean" : "float"
  const optimize = table.optimize === "min" ? "min" : "max"
  const cutoff = typeof table.cutoff === "number" ? table.cutoff : undefined
  return { outputType, optimize, cutoff } as const
}

/** Compiled for linear-time matching (RE2): an output cannot make a pattern backtrack. */
const compileRegex = (context: BuildContext, keyPath: KeyPath, source: string): ConfiguredRegex | undefined => {
  try {
    // ECMAScript escapes RE2 spells otherwise (\uXXXX, \u{...}, \cX) are translated first
    const re = RE2JS.compile(RE2JS.translateRegExp(source))
    return { source, test: (text) => re.test(text) }
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error)
    context.report(keyPath, `pattern ${JSON.stringify(source)} does not compile (patterns run on RE2: no backreferences or lookaround): ${reason}`)
    return undefined
  }
}

const buildJudgeVariant = (
  context: BuildContext,
  scope: VariantScope,
  keyPath: KeyPath,
  functionName: string,
  name: string,
  variant: RawJudgeVariant,
  anyWeight: boolean
): VariantConfig | undefined => {
  if (variant.active !== undefined && variant.weight !== undefined) {
    context.report([...keyPath, "active"], "give active or weight, not both")
  }
  checkVariantModel(context, scope, [...keyPath, "model"], variant.model)
  const systemKey = templateKey(functionName, name, "system")
  const loaded = scope.templates.loadLiteral([...keyPath, "system_instructions"], variant.system_instructions, systemKey)
  context.checkPointers([...keyPath, "extra_body"], variant.extra_body)
  const extraHeaders = context.checkHeaders([...keyPath, "extra_headers"], variant.extra_headers)
  if (!loaded) return undefined
  const weight = variant.weight ?? (variant.active !== undefined ? (variant.active ? 1 : 0) : anyWeight ? 0 : 1)
  return {
    name,
    type: "chat_completion",
    weight,
    model: variant.model,
    templates: new Map([["system", systemKey]]),
    jsonMode: variant.json_mode ?? "strict",
    params: variantParams(variant),
    retries: variantRetries(variant.retries),
    timeouts: variant.timeouts ?? {},
    extraBody: variant.extra_body ?? [],
    extraHeaders: extraHeaders ?? []
  }
}

/** what the sampling and DICL builders read of the function a judge variant belongs to: a json function */
const judgeFunctionTable = { type: "json" } as RawFunction

/** a judge variant's TensorZero switch `active` as the weight the variant builders read */
const withWeight = (table: Record<string, unknown>): Record<string, unknown> => {
  if (table.active === undefined) return table
  const { active, ...rest } = table
  return rest.weight !== undefined ? table : { ...rest, weight: active === true ? 1 : 0 }
}

/** A judge's variants. As a function's: when one sets `active` or `weight`, the others weigh 0; one at least must weigh more. */
const buildJudgeVariants = (
  context: BuildContext,
  scope: VariantScope,
  keyPath: KeyPath,
  functionName: string,
  tables: Readonly<Record<string, Record<string, unknown>>>
): Map<string, VariantConfig> => {
  const variantsKeyPath = [...keyPath, "variants"]
  const entries = Object.entries(tables)
  // the sampling and DICL types (TensorZero's judges take them too) are built as a json function's variants
  const advanced = new Map(entries.filter(([, table]) => typeof table.type === "string" && isAdvancedType(table.type)))
  const decoded = entries.filter(([name]) => !advanced.has(name)).map(([name, table]) => {
    const variantKeyPath = [...variantsKeyPath, name]
    if (table.type !== undefined && table.type !== "chat_completion") {
      context.report(
        [...variantKeyPath, "type"],
        `judge variant type ${JSON.stringify(table.type)} is not supported (supported: chat_completion, ${advancedTypes.join(", ")})`
      )
      return { name, keyPath: variantKeyPath, variant: undefined }
    }
    return { name, keyPath: variantKeyPath, variant: context.decodeAt(decodeJudgeVariant, table, variantKeyPath) }
  })
  if (entries.length === 0) context.report(variantsKeyPath, "a judge needs at least one variant")
  const anyWeight = entries.some(([, table]) => table.active !== undefined || table.weight !== undefined)
  const variants = new Map<string, VariantConfig>()
  for (const { name, keyPath: variantKeyPath, variant } of decoded) {
    if (variant === undefined) continue
    const built = buildJudgeVariant(context, scope, variantKeyPath, functionName, name, variant, anyWeight)
    if (built !== undefined) variants.set(name, built)
  }
  for (const [name, table] of advanced) {
    const variantKeyPath = [...variantsKeyPath, name]
    const built = buildAdvancedVariant(context, scope, variantKeyPath, functionName, judgeFunctionTable, name, withWeight(table), new Map(), anyWeight)
    if (built !== undefined) variants.set(name, built)
  }
  checkCandidates(context, keyPath, variants, entries.map(([name]) => name))
  // checked only when every variant was built, so that a broken one does not also read as inactive
  if (entries.length > 0 && variants.size === entries.length && [...variants.values()].every((variant) => variant.weight <= 0)) {
    context.report(variantsKeyPath, "no variant is active: set active = true (or a positive weight) on one")
  }
  return variants
}

const buildEvaluator = (
  context: BuildContext,
  scope: EvaluatorsScope,
  keyPath: KeyPath,
  owner: EvaluatorScope,
  functionType: "chat" | "json" | undefined,
  name: string,
  raw: RawEvaluator
): EvaluatorConfig | undefined => {
  const common = { name, metricName: evaluatorMetricName(owner, name), cutoff: raw.cutoff }
  switch (raw.type) {
    case "exact_match":
      return { type: "exact_match", ...common, outputType: "boolean", optimize: "max" }
    case "regex": {
      if (raw.must_match === undefined && raw.must_not_match === undefined) {
        context.report(keyPath, "a regex evaluator needs must_match, must_not_match or both")
        return undefined
      }
      const mustMatch = raw.must_match === undefined ? undefined : compileRegex(context, [...keyPath, "must_match"], raw.must_match)
      const mustNotMatch = raw.must_not_match === undefined
        ? undefined
        : compileRegex(context, [...keyPath, "must_not_match"], raw.must_not_match)
      return { type: "regex", ...common, outputType: "boolean", optimize: "max", mustMatch, mustNotMatch }
    }
    case "tool_use": {
      if (functionType === "json") context.report([...keyPath, "type"], "a tool_use evaluator needs a chat function: json functions do not call tools")
      const listed = raw.behavior === "none_of" || raw.behavior === "any_of" || raw.behavior === "all_of"
      if (listed && (raw.tools === undefined || raw.tools.length === 0)) {
        context.report([...keyPath, "tools"], `behavior "${raw.behavior}" needs a non-empty list of tools`)
      }
      if (!listed && raw.tools !== undefined) context.report([...keyPath, "tools"], `behavior "${raw.behavior}" takes no tools`)
      return { type: "tool_use", ...common, outputType: "boolean", optimize: "max", behavior: raw.behavior, tools: raw.tools ?? [] }
    }
    case "llm_judge": {
      const functionName = judgeFunctionName(owner, name)
      const taken = scope.judges.get(functionName)
      if (taken !== undefined) {
        context.report(keyPath, `its judge function "${functionName}" is also that of ${formatKeyPath(taken.keyPath)}: rename one of the two evaluators`)
        return undefined
      }
      const fn: FunctionConfig = {
        name: functionName,
        type: "json",
        schemas: new Map(),
        outputSchema: judgeOutputSchemas[raw.output_type],
        tools: [],
        toolChoice: { type: "auto" },
        variants: buildJudgeVariants(context, scope, keyPath, functionName, raw.variants),
        evaluators: new Map()
      }
      scope.judges.set(functionName, { fn, keyPath })
      return {
        type: "llm_judge",
        ...common,
        outputType: raw.output_type,
        optimize: raw.optimize ?? "max",
        includeReferenceOutput: raw.include?.reference_output ?? false,
        inputFormat: raw.input_format ?? "serialized",
        description: raw.description,
        judgeFunctionName: functionName
      }
    }
  }
}

/**
 * The evaluators under `ownerKeyPath` (a function's or an evaluation's), scoring outputs of a
 * function of `functionType` (undefined: the function is unknown, which is reported elsewhere).
 */
export const buildEvaluators = (
  context: BuildContext,
  scope: EvaluatorsScope,
  ownerKeyPath: KeyPath,
  owner: EvaluatorScope,
  functionType: "chat" | "json" | undefined,
  tables: Readonly<Record<string, Record<string, unknown>>>
): Map<string, EvaluatorConfig> => {
  const evaluators = new Map<string, EvaluatorConfig>()
  for (const [name, table] of Object.entries(tables)) {
    const keyPath = [...ownerKeyPath, "evaluators", name]
    if (!checkName(context, keyPath, "evaluator", name)) continue
    if (table.type === "typescript") {
      evaluators.set(name, { type: "typescript", name, metricName: evaluatorMetricName(owner, name), ...typescriptEvaluator(context, keyPath, table) })
      continue
    }
    const raw = decodeEvaluatorAt(context, keyPath, table)
    if (raw === undefined) continue
    const evaluator = buildEvaluator(context, scope, keyPath, owner, functionType, name, raw)
    if (evaluator !== undefined) evaluators.set(name, evaluator)
  }
  return evaluators
}

/** `[evaluations.<name>]`, against the functions under [functions] (`functionNames`: built or not, so a broken one is reported once). */
export const buildEvaluations = (
  context: BuildContext,
  scope: EvaluatorsScope,
  tables: Readonly<Record<string, unknown>>,
  functionNames: ReadonlySet<string>,
  functions: ReadonlyMap<string, FunctionConfig>
): Map<string, EvaluationConfig> => {
  const evaluations = new Map<string, EvaluationConfig>()
  for (const [name, table] of Object.entries(tables)) {
    const keyPath = ["evaluations", name]
    if (!checkName(context, keyPath, "evaluation", name)) continue
    const raw = context.decodeAt(decodeEvaluation, table, keyPath)
    if (raw === undefined) continue
    if (raw.type === "static") context.warn([...keyPath, "type"], `"static" is TensorZero's older name of "inference"`)
    if (!functionNames.has(raw.function_name)) {
      context.report([...keyPath, "function_name"], `function "${raw.function_name}" is not defined under [functions]`)
    }
    const owner: EvaluatorScope = { kind: "evaluation", evaluationName: name }
    const evaluators = buildEvaluators(context, scope, keyPath, owner, functions.get(raw.function_name)?.type, raw.evaluators)
    evaluations.set(name, { name, type: "inference", description: raw.description, functionName: raw.function_name, evaluators })
  }
  return evaluations
}
