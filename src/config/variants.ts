/**
 * `[functions.<f>.variants.<v>]` -> variants: the model they call (checked to exist), their
 * templates (read into the engine), parameters, retries, timeouts and extra_body/headers.
 * Only `chat_completion` variants exist so far.
 */
import { templateKey } from "../inference/templates.ts"
import { type InferenceParams, inferenceParamNames } from "../inference/types.ts"
import type { JsonSchemaValidator } from "../jsonSchema.ts"
import { parseShorthandModel, providerTypes } from "../providers/registry.ts"
import { type BuildContext, tableDecoder } from "./context.ts"
import { formatKeyPath, type KeyPath } from "./merge.ts"
import { type RawFunction, RawVariant } from "./raw.ts"
import type { TemplateFiles } from "./templateFiles.ts"
import type { RetryConfig, VariantConfig } from "./types.ts"

const decodeVariant = tableDecoder(RawVariant)
const legacyRoles = ["system", "user", "assistant"] as const

/** What a function's variants are checked against. */
export interface VariantScope {
  /** the names under [models], built or not (one that failed is reported once, not again by each variant) */
  readonly modelNames: ReadonlySet<string>
  readonly templates: TemplateFiles
}

const decodeVariantAt = (context: BuildContext, keyPath: KeyPath, table: Record<string, unknown>): RawVariant | undefined => {
  if (table.type !== "chat_completion") {
    context.report([...keyPath, "type"], typeof table.type === "string"
      ? `variant type "${table.type}" is not supported (supported: chat_completion)`
      : "missing field")
    return undefined
  }
  return context.decodeAt(decodeVariant, table, keyPath)
}

/** A variant's model must be configured or a short-hand (`<provider_type>::<model>`). */
export const checkVariantModel = (context: BuildContext, scope: VariantScope, keyPath: KeyPath, model: string): void => {
  if (scope.modelNames.has(model) || parseShorthandModel(model) !== undefined) return
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

/** its template files: name -> where the file is named and its path as written */
const templateFilesOf = (context: BuildContext, keyPath: KeyPath, variant: RawVariant) => {
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

const buildVariant = (
  context: BuildContext,
  scope: VariantScope,
  keyPath: KeyPath,
  functionName: string,
  fn: RawFunction,
  name: string,
  variant: RawVariant,
  schemas: ReadonlyMap<string, JsonSchemaValidator>,
  anyWeight: boolean
): VariantConfig | undefined => {
  if (variant.model === undefined) {
    context.report([...keyPath, "model"], "missing field")
    return undefined
  }
  checkVariantModel(context, scope, [...keyPath, "model"], variant.model)
  const templateFiles = templateFilesOf(context, keyPath, variant)
  const templateKeys = new Map<string, string>()
  for (const [templateName, file] of templateFiles) {
    const key = templateKey(functionName, name, templateName)
    if (scope.templates.load(file.keyPath, file.relative, key)) templateKeys.set(templateName, key)
  }
  for (const schemaName of schemas.keys()) {
    if (!templateFiles.has(schemaName)) {
      context.report(keyPath, `the function has schemas.${schemaName} but this variant has no template "${schemaName}" (templates.${schemaName}.path)`)
    }
  }
  context.checkPointers([...keyPath, "extra_body"], variant.extra_body)
  context.checkHeaders([...keyPath, "extra_headers"], variant.extra_headers)
  const defaultJsonMode = fn.type === "json" ? (fn.output_schema === undefined ? "on" : "strict") : "off"
  return {
    name,
    type: "chat_completion",
    weight: variant.weight ?? (anyWeight ? 0 : 1),
    model: variant.model,
    templates: templateKeys,
    jsonMode: variant.json_mode ?? defaultJsonMode,
    params: variantParams(variant),
    retries: variantRetries(variant.retries),
    timeouts: variant.timeouts ?? {},
    extraBody: variant.extra_body ?? [],
    extraHeaders: variant.extra_headers ?? []
  }
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
  const decoded = Object.entries(fn.variants ?? {}).map(([name, table]) => {
    const keyPath = [...functionKeyPath, "variants", name]
    return { name, keyPath, variant: decodeVariantAt(context, keyPath, table) }
  })
  const anyWeight = decoded.some(({ variant }) => variant?.weight !== undefined)
  const variants = new Map<string, VariantConfig>()
  for (const { name, keyPath, variant } of decoded) {
    if (variant === undefined) continue
    const built = buildVariant(context, scope, keyPath, functionName, fn, name, variant, schemas, anyWeight)
    if (built !== undefined) variants.set(name, built)
  }
  return variants
}
