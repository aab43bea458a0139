/**
 * `[functions.<f>.variants.<v>]` -> variants: the model they call (checked to exist), their
 * templates (read into the engine), parameters, retries, timeouts and extra_body/headers.
 * `chat_completion` and `experimental_chain_of_thought` are built here; the other types
 * (sampling, DICL) in `advancedVariants.ts`, with the checks across variants (candidates, cycles).
 */
import { templateKey } from "../inference/templates.ts"
import { type InferenceParams, inferenceParamNames } from "../inference/params.ts"
import type { JsonSchemaValidator } from "../jsonSchema.ts"
import { providerTypes, shorthandProblem } from "../providers/registry.ts"
import { type BuildContext, tableDecoder } from "./context.ts"
import { enabledShorthand, shorthandOff } from "./models.ts"
import { formatKeyPath, type KeyPath } from "./merge.ts"
import { type RawFunction, type RawJudgeBlock, RawVariant } from "./raw.ts"
import type { TemplateFiles } from "./templateFiles.ts"
import type { ChatCompletionVariant, ModelCallConfig, RetryConfig, ShorthandDefault } from "./types.ts"

export const decodeVariant = tableDecoder(RawVariant)
const legacyRoles = ["system", "user", "assistant"] as const

/** What a function's variants are checked against. */
export interface VariantScope {
  /** the names under [models], built or not (one that failed is reported once, not again by each variant) */
  readonly modelNames: ReadonlySet<string>
  /** the names under [embedding_models] */
  readonly embeddingModelNames: ReadonlySet<string>
  /** the short-hand types requests and variants may name (`config/models.ts` shorthandDefaults) */
  readonly shorthands: ReadonlyMap<string, ShorthandDefault>
  readonly templates: TemplateFiles
}

/** A variant's model must be configured or a short-hand (`<provider_type>::<model>`). */
export const checkVariantModel = (context: BuildContext, scope: VariantScope, keyPath: KeyPath, model: string): void => {
  if (scope.modelNames.has(model)) return
  if (enabledShorthand(model, scope.shorthands) !== undefined) {
    const problem = shorthandProblem(model)
    if (problem !== undefined) context.report(keyPath, problem)
    return
  }
  const off = shorthandOff(model, scope.shorthands)
  if (off !== undefined) return context.report(keyPath, `model "${model}": ${off}`)
  // the header is quoted when the name needs it (`[models."fireworks::accounts/x"]`), so it can be pasted as is
  context.report(
    keyPath,
    `unknown model "${model}": define [${formatKeyPath(["models", model])}] or use "<provider_type>::<model>" (provider types: ${
      [...providerTypes.keys()].join(", ")
    })`
  )
}

/** The inference parameters a variant table fixes (its other fields left out). */
export const variantParams = (variant: InferenceParams): InferenceParams => {
  const params: Record<string, unknown> = {}
  for (const param of inferenceParamNames) {
    if (variant[param] !== undefined) params[param] = variant[param]
  }
  return params as InferenceParams
}

/** `retries` as written: none by default, at most 10 s between attempts */
export const variantRetries = (retries: RawVariant["retries"]): RetryConfig => ({
  numRetries: retries?.num_retries ?? 0,
  maxDelayS: retries?.max_delay_s ?? 10
})

/** a function's json mode when a variant sets none: strict for a json function with an output schema */
export const defaultJsonMode = (fn: RawFunction): ModelCallConfig["jsonMode"] =>
  fn.type === "json" ? (fn.output_schema === undefined ? "on" : "strict") : "off"

/** How a table's model call is made (`modelCallFields` in raw.ts), with the json mode it defaults to. */
export const callSettings = (
  table: Pick<RawVariant, "json_mode" | "retries" | "timeouts" | "extra_body" | "extra_headers"> & InferenceParams,
  defaultJsonMode: ModelCallConfig["jsonMode"]
): Pick<ModelCallConfig, "jsonMode" | "params" | "retries" | "timeouts" | "extraBody" | "extraHeaders"> => ({
  jsonMode: table.json_mode ?? defaultJsonMode,
  params: variantParams(table),
  retries: variantRetries(table.retries),
  timeouts: table.timeouts ?? {},
  extraBody: table.extra_body ?? [],
  extraHeaders: table.extra_headers ?? []
})

/** its template files: name -> where the file is named and its path as written */
const templateFilesOf = (context: BuildContext, keyPath: KeyPath, variant: RawVariant | RawJudgeBlock) => {
  const files = new Map<string, { readonly keyPath: KeyPath; readonly relative: string }>()
  for (const role of legacyRoles) {
    const legacy = variant[`${role}_template`]
    if (legacy === undefined) continue
    if (variant.templates?.[role] !== undefined) {
      context.report([...keyPath, `${role}_template`], `both ${role}_template and templates.${role} are set; keep templates.${role}.path`)
      continue
    }
    files.set(role, { keyPath: [...keyPath, `${role}_template`], relative: legacy })
  }
  for (const [templateName, entry] of Object.entries(variant.templates ?? {})) {
    files.set(templateName, { keyPath: [...keyPath, "templates", templateName, "path"], relative: entry.path })
  }
  return files
}

/**
 * Reads a variant's (or an evaluator's, a fuser's) templates into the engine under keys of
 * `owner`: each of the function's schemas needs its template. `system_instructions` (judges)
 * is the system template when there is none, read as plain text.
 */
export const loadTemplates = (
  context: BuildContext,
  scope: VariantScope,
  keyPath: KeyPath,
  functionName: string,
  owner: string,
  variant: RawVariant | RawJudgeBlock,
  schemas: ReadonlyMap<string, JsonSchemaValidator>
): Map<string, string> => {
  const templateFiles = templateFilesOf(context, keyPath, variant)
  const templateKeys = new Map<string, string>()
  for (const [templateName, file] of templateFiles) {
    const key = templateKey(functionName, owner, templateName)
    if (scope.templates.load(file.keyPath, file.relative, key)) templateKeys.set(templateName, key)
  }
  const instructions = "system_instructions" in variant ? variant.system_instructions : undefined
  if (instructions !== undefined) {
    if (templateFiles.has("system")) {
      context.report([...keyPath, "system_instructions"], "give system_instructions or a system template, not both")
    } else {
      const key = templateKey(functionName, owner, "system")
      if (scope.templates.loadLiteral([...keyPath, "system_instructions"], instructions, key)) templateKeys.set("system", key)
      templateFiles.set("system", { keyPath: [...keyPath, "system_instructions"], relative: instructions })
    }
  }
  for (const schemaName of schemas.keys()) {
    if (!templateFiles.has(schemaName)) {
      context.report(keyPath, `the function has schemas.${schemaName} but this variant has no template "${schemaName}" (templates.${schemaName}.path)`)
    }
  }
  return templateKeys
}

/**
 * The templates that wrap a role's plain text (TensorZero's): `input_wrappers.<role>`, or a
 * legacy `<role>_template` for a role without a schema. A role with a schema takes arguments,
 * not text, so a wrapper for it is a problem.
 */
const loadTextWrappers = (
  context: BuildContext,
  scope: VariantScope,
  keyPath: KeyPath,
  functionName: string,
  owner: string,
  variant: RawVariant,
  schemas: ReadonlyMap<string, JsonSchemaValidator>,
  templateKeys: ReadonlyMap<string, string>
): Map<string, string> => {
  const wrappers = new Map<string, string>()
  for (const role of legacyRoles) {
    const wrapper = variant.input_wrappers?.[role]
    if (wrapper !== undefined) {
      const wrapperPath = [...keyPath, "input_wrappers", role]
      if (schemas.has(role)) {
        context.report(wrapperPath, `the function has a ${role} schema, so ${role} input is arguments, not text to wrap`)
        continue
      }
      const key = templateKey(functionName, owner, `input_wrappers.${role}`)
      if (scope.templates.load(wrapperPath, wrapper, key)) wrappers.set(role, key)
    } else if (variant[`${role}_template`] !== undefined && !schemas.has(role) && templateKeys.has(role)) {
      wrappers.set(role, templateKeys.get(role)!)
    }
  }
  return wrappers
}

/** a chat_completion (or chain-of-thought) variant */
export const buildVariant = (
  context: BuildContext,
  scope: VariantScope,
  keyPath: KeyPath,
  functionName: string,
  fn: RawFunction,
  name: string,
  variant: RawVariant,
  schemas: ReadonlyMap<string, JsonSchemaValidator>,
  anyWeight: boolean
): ChatCompletionVariant | undefined => {
  if (variant.model === undefined) {
    context.report([...keyPath, "model"], "missing field")
    return undefined
  }
  checkVariantModel(context, scope, [...keyPath, "model"], variant.model)
  const templateKeys = loadTemplates(context, scope, keyPath, functionName, name, variant, schemas)
  const textWrappers = loadTextWrappers(context, scope, keyPath, functionName, name, variant, schemas, templateKeys)
  context.checkPointers([...keyPath, "extra_body"], variant.extra_body)
  const extraHeaders = context.checkHeaders([...keyPath, "extra_headers"], variant.extra_headers)
  return {
    name,
    type: variant.type === "experimental_chain_of_thought" ? "experimental_chain_of_thought" : "chat_completion",
    weight: variant.weight ?? (anyWeight ? 0 : 1),
    model: variant.model,
    templates: templateKeys,
    ...callSettings({ ...variant, extra_headers: extraHeaders }, defaultJsonMode(fn)),
    ...(textWrappers.size > 0 && { textWrappers })
  }
}
