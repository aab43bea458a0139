/**
 * `[models.<name>]` and their `providers` -> models with their routing, each provider table
 * decoded by its provider type's own schema (`settingsFields` in `providers/registry.ts`)
 * and its credential resolved against the environment captured at start-up.
 */
import * as Schema from "effect/Schema"
import { parseShorthandModel, providerTypes } from "../providers/registry.ts"
import { type BuildContext, tableDecoder } from "./context.ts"
import {
  type Credential,
  type CredentialLocation,
  missingAlways,
  parseCredentialLocation,
  resolveCredential,
  type SingleLocation
} from "./credentials.ts"
import type { KeyPath } from "./merge.ts"
import { type CostRule, costRule, type ModelPrices } from "../inference/cost.ts"
import type { ExtraBodyEdit } from "../inference/extraBody.ts"
import { pricedProviderTypes, pricingRules, reportsCacheWrites } from "./pricing.ts"
import { providerCommonFields, RawModel, type RawPricing } from "./raw.ts"
import { relayedModel, relayProvider } from "./relay.ts"
import { type FunctionConfig, type ModelConfig, type ProviderConfig, type RelaySettings, type ShorthandDefault, variantModel } from "./types.ts"

const decodeModel = tableDecoder(RawModel)

/**
 * TensorZero's provider settings that are fields of the provider's request body, sent as
 * written (as a configured `extra_body` entry would be, before the table's own `extra_body`):
 * Groq's `reasoning_format`, Mistral's `prompt_mode`.
 */
const bodySettings: Readonly<Record<string, ReadonlyArray<string>>> = { groq: ["reasoning_format"], mistral: ["prompt_mode"] }
const bodySettingFields = (type: string) => Object.fromEntries((bodySettings[type] ?? []).map((key) => [key, Schema.optional(Schema.Unknown)]))

const providerDecoders = new Map(
  [...providerTypes.values()].map((provider) => [
    provider.type,
    tableDecoder(Schema.Struct({ ...providerCommonFields, ...provider.settingsFields, ...bodySettingFields(provider.type) }))
  ])
)

/** the credential location a provider table gives, if any (`api_key_location` or `credential_location`, not both) */
const writtenLocation = (
  context: BuildContext,
  keyPath: KeyPath,
  table: { readonly api_key_location?: unknown; readonly credential_location?: unknown }
): CredentialLocation | undefined | false => {
  if (table.api_key_location !== undefined && table.credential_location !== undefined) {
    context.report([...keyPath, "credential_location"], "give api_key_location or credential_location, not both")
    return false
  }
  const key = table.api_key_location !== undefined ? "api_key_location" : "credential_location"
  const written = table[key]
  if (written === undefined) return undefined
  const parsed = parseCredentialLocation(written)
  if (typeof parsed === "string") {
    context.report([...keyPath, key], parsed)
    return false
  }
  // a `path::` written in a file is relative to that file's folder, as templates and schemas are
  const resolved = (location: SingleLocation): SingleLocation =>
    location.kind === "path" ? { kind: "path", path: context.resolvePath([...keyPath, key], location.path) } : location
  return parsed.kind === "fallback"
    ? { kind: "fallback", primary: resolved(parsed.primary), fallback: resolved(parsed.fallback) }
    : resolved(parsed)
}

const pricesOf = (raw: RawPricing): ModelPrices => ({
  inputPerMillion: raw.input_per_million,
  outputPerMillion: raw.output_per_million,
  cacheReadPerMillion: raw.cache_read_per_million,
  cacheWritePerMillion: raw.cache_write_per_million
})

/**
 * One provider table (also `[embedding_models.<name>.providers.<name>]`, see `embeddingModels.ts`).
 * `chatModel`: the chat model the provider serves, with its `pricing` (absent for an embedding model, whose tables take none).
 */
export const buildProvider = (
  context: BuildContext,
  keyPath: KeyPath,
  name: string,
  table: Record<string, unknown>,
  typeDefaults: ProviderTypeDefaults,
  chatModel?: { readonly pricing?: RawPricing | undefined } | undefined
): ProviderConfig | undefined => {
  const type = table.type
  const definition = typeof type === "string" ? providerTypes.get(type) : undefined
  if (definition === undefined) {
    context.report([...keyPath, "type"], typeof type === "string"
      ? `unknown provider type "${type}" (known: ${[...providerTypes.keys()].join(", ")})`
      : "missing field")
    return undefined
  }
  const decoded = context.decodeAt(providerDecoders.get(definition.type)!, table, keyPath)
  if (decoded === undefined) return undefined
  const {
    type: _type,
    model_name,
    api_key_location,
    credential_location,
    extra_body,
    extra_headers,
    timeouts,
    cost,
    pricing,
    provider_tools,
    ...rest
  } = decoded
  const settings: Record<string, unknown> = { ...rest }
  const bodyEdits: Array<ExtraBodyEdit> = []
  for (const key of bodySettings[definition.type] ?? []) {
    if (settings[key] !== undefined) bodyEdits.push({ pointer: `/${key}`, value: settings[key] })
    delete settings[key]
  }
  if (model_name === undefined && definition.requiresModelName) {
    context.report([...keyPath, "model_name"], "missing field")
    return undefined
  }
  context.checkPointers([...keyPath, "extra_body"], extra_body)
  const extraHeaders = context.checkHeaders([...keyPath, "extra_headers"], extra_headers)
  const location = writtenLocation(context, keyPath, { api_key_location, credential_location })
  if (location === false) return undefined
  const typeDefault = typeDefaults.get(definition.type)!
  const costRules: Array<CostRule> = []
  cost?.forEach((raw, index) => {
    const rule = costRule(raw)
    if ("field" in rule) context.report([...keyPath, "cost", index, rule.field], rule.message)
    else costRules.push(rule)
  })
  if (pricing !== undefined && chatModel === undefined) {
    context.report([...keyPath, "pricing"], "pricing applies to the providers of [models] only: write `cost` rules for an embedding model")
    return undefined
  }
  const rawPrices = pricing ?? chatModel?.pricing
  const prices = rawPrices === undefined ? undefined : pricesOf(rawPrices)
  const typeSettings = withTypeSettings(typeDefault.settings, settings)
  // explicit `cost` rules win over the prices (which the budgets' estimate still reads)
  if (prices !== undefined && costRules.length === 0) {
    const rules = pricingRules(definition.type, typeSettings, prices)
    if (rules === undefined) {
      context.report(
        // where the prices were written: the provider's table or its model's
        pricing !== undefined ? [...keyPath, "pricing"] : [...keyPath.slice(0, -2), "pricing"],
        `provider "${name}": the ${definition.type} provider type has no built-in usage pointers for \`pricing\` (types that have: ${
          pricedProviderTypes.join(", ")
        }): write \`cost\` rules for this provider`
      )
      return undefined
    }
    if (prices.cacheWritePerMillion !== undefined && !reportsCacheWrites(definition.type, typeSettings)) {
      context.warn([...keyPath, "pricing"], `the ${definition.type} provider type reports no cache writes: cache_write_per_million is not used`)
    }
    costRules.push(...rules)
  }
  const provider: ProviderConfig = {
    name,
    type: definition.type,
    modelName: model_name ?? "",
    credential: location !== undefined
      ? resolveCredential(location, context.input)
      : typeDefaultCredential(context, keyPath, typeDefault.credential, typeDefault.credential === definition.defaultCredential),
    extraBody: [...bodyEdits, ...(extra_body ?? [])],
    extraHeaders: extraHeaders ?? [],
    timeouts: timeouts ?? {},
    cost: costRules,
    prices,
    providerTools: provider_tools ?? [],
    settings: typeSettings,
    env: context.input.env
  }
  const problem = definition.settingsProblem?.(provider)
  if (problem !== undefined) {
    context.report(keyPath, problem)
    return undefined
  }
  return provider
}

const envValue = (context: BuildContext, name: string): string | undefined => {
  const value = context.input.env[name]
  return value === undefined || value === "" ? undefined : value
}

/**
 * A provider's credential from its type's default location. A type's own default of the form
 * `{ default = "env::NEW", fallback = "env::OLD" }` (azure: AZURE_API_KEY, then the older
 * AZURE_OPENAI_API_KEY) reads the older variable with a warning, and names the new one when
 * neither is set.
 */
const typeDefaultCredential = (
  context: BuildContext,
  keyPath: KeyPath,
  location: CredentialLocation,
  builtIn: boolean
): Credential => {
  const credential = resolveCredential(location, context.input)
  if (!builtIn || location.kind !== "fallback" || location.primary.kind !== "env" || location.fallback.kind !== "env") {
    return credential
  }
  const primary = location.primary.name
  const older = location.fallback.name
  if (envValue(context, primary) !== undefined) return credential
  if (envValue(context, older) === undefined) {
    return { kind: "missing", what: `environment variable ${primary} is not set (nor the older ${older})` }
  }
  context.warn(keyPath, `reads its API key from ${older}, an older name: set ${primary} instead`)
  return credential
}

/**
 * What each provider type's tables start from: its credential location
 * (`[provider_types.<type>.defaults]`'s, else the type's own) and settings a provider table
 * may leave out (`[provider_types.<type>.batch]`, for a type with a `batch` setting).
 */
export interface ProviderTypeDefault {
  readonly credential: CredentialLocation
  readonly settings: Readonly<Record<string, unknown>>
}
export type ProviderTypeDefaults = ReadonlyMap<string, ProviderTypeDefault>

/** a provider table's own settings win over its type's, key by key */
const withTypeSettings = (typeSettings: Readonly<Record<string, unknown>>, own: Readonly<Record<string, unknown>>) => {
  const settings: Record<string, unknown> = { ...typeSettings }
  for (const [key, value] of Object.entries(own)) if (value !== undefined) settings[key] = value
  return settings
}

const ProviderTypeTable = Schema.Struct({
  defaults: Schema.optional(Schema.Struct({
    api_key_location: Schema.optional(Schema.Unknown),
    credential_location: Schema.optional(Schema.Unknown)
  })),
  /** checked against the type's own `batch` setting below */
  batch: Schema.optional(Schema.Unknown),
  /** TensorZero's supervised fine-tuning defaults: loaded, not used (a warning says so) */
  sft: Schema.optional(Schema.Unknown)
})
const decodeProviderType = tableDecoder(ProviderTypeTable)
/** a type's `batch` setting alone, decoded as a provider table's would be (settings Schemas need no services) */
const batchTable = (field: Schema.Struct.Fields[string]) =>
  Schema.Struct({ batch: field }) as unknown as Schema.Codec<{ readonly batch?: unknown }, unknown>
const batchDecoders = new Map(
  [...providerTypes.values()].flatMap((provider) =>
    provider.settingsFields.batch === undefined ? [] : [[provider.type, tableDecoder(batchTable(provider.settingsFields.batch))] as const]
  )
)

export const buildProviderTypeDefaults = (
  context: BuildContext,
  tables: Readonly<Record<string, Record<string, unknown>>>
): ProviderTypeDefaults => {
  const defaults = new Map<string, ProviderTypeDefault>()
  for (const [type, definition] of providerTypes) defaults.set(type, { credential: definition.defaultCredential, settings: {} })
  for (const [type, table] of Object.entries(tables)) {
    const keyPath = ["provider_types", type]
    if (!providerTypes.has(type)) {
      context.report(keyPath, `unknown provider type "${type}" (known: ${[...providerTypes.keys()].join(", ")})`)
      continue
    }
    const decoded = context.decodeAt(decodeProviderType, table, keyPath)
    if (decoded === undefined) continue
    let credential = defaults.get(type)!.credential
    if (decoded.defaults !== undefined) {
      const location = writtenLocation(context, [...keyPath, "defaults"], decoded.defaults)
      if (location !== false && location !== undefined) credential = location
    }
    if (decoded.sft !== undefined) {
      context.warn([...keyPath, "sft"], "supervised fine-tuning is not run by this gateway: these settings are ignored")
    }
    const settings: Record<string, unknown> = {}
    if (decoded.batch !== undefined) {
      const decoder = batchDecoders.get(type)
      if (decoder === undefined) {
        context.report([...keyPath, "batch"], `the ${type} provider type has no batch settings`)
      } else {
        const batch = context.decodeAt(decoder, { batch: decoded.batch }, keyPath)
        if (batch !== undefined) settings.batch = batch.batch
      }
    }
    defaults.set(type, { credential, settings })
  }
  return defaults
}

/** The short-hands requests may name, by type: every type's, but the dummy's when `[gateway] dummy_shorthands = false`. */
export const shorthandDefaults = (
  context: BuildContext,
  defaults: ProviderTypeDefaults,
  dummyShorthands = true
): ReadonlyMap<string, ShorthandDefault> => {
  const shorthands = new Map<string, ShorthandDefault>()
  for (const [type, typeDefault] of defaults) {
    if (type === "dummy" && !dummyShorthands) continue
    shorthands.set(type, { credential: resolveCredential(typeDefault.credential, context.input), settings: typeDefault.settings })
  }
  return shorthands
}

/** `name` as a short-hand (`<provider_type>::<model>`) of a type whose short-hands are on, else undefined */
export const enabledShorthand = (name: string, shorthands: ReadonlyMap<string, ShorthandDefault>) => {
  const shorthand = parseShorthandModel(name)
  return shorthand !== undefined && shorthands.has(shorthand.type) ? shorthand : undefined
}

/** why `name` names no model although it reads as a short-hand: its type's short-hands are off (only the dummy's can be) */
export const shorthandOff = (name: string, shorthands: ReadonlyMap<string, ShorthandDefault>): string | undefined => {
  const shorthand = parseShorthandModel(name)
  return shorthand === undefined || shorthands.has(shorthand.type) ? undefined : (
    `the "${shorthand.type}::" short-hands are off ([gateway] dummy_shorthands = false): ` +
    `configure a model of type "${shorthand.type}" under [models] instead`
  )
}

/** `relay`: models without `skip_relay` are served by the relay's gateway (their tables are still checked) */
export const buildModels = (
  context: BuildContext,
  tables: Readonly<Record<string, unknown>>,
  typeDefaults: ProviderTypeDefaults,
  relay?: RelaySettings | undefined
): Map<string, ModelConfig> => {
  const models = new Map<string, ModelConfig>()
  for (const [name, table] of Object.entries(tables)) {
    const keyPath = ["models", name]
    if (name.startsWith("gateway::") || parseShorthandModel(name) !== undefined) {
      context.report(keyPath, `model names may not start with "gateway::" or "<provider_type>::", which are reserved for short-hand names`)
      continue
    }
    const model = context.decodeAt(decodeModel, table, keyPath)
    if (model === undefined) continue
    const providers = new Map<string, ProviderConfig>()
    for (const [providerName, providerTable] of Object.entries(model.providers)) {
      const provider = buildProvider(context, [...keyPath, "providers", providerName], providerName, providerTable, typeDefaults, model)
      if (provider !== undefined) providers.set(providerName, provider)
    }
    if (model.routing.length === 0) context.report([...keyPath, "routing"], "routing must name at least one provider")
    model.routing.forEach((providerName, index) => {
      if (model.providers[providerName] === undefined) {
        context.report([...keyPath, "routing", index], `provider "${providerName}" is not defined under models.${name}.providers`)
      }
    })
    for (const providerName of Object.keys(model.providers)) {
      if (!model.routing.includes(providerName)) {
        context.report([...keyPath, "providers", providerName], `provider "${providerName}" is not listed in routing`)
      }
    }
    const built: ModelConfig = { name, routing: model.routing, providers, timeouts: model.timeouts ?? {} }
    models.set(name, relay !== undefined && model.skip_relay !== true ? relayedModel(relay, built) : built)
  }
  return models
}

/** The single provider of a `<provider_type>::<model>` short-hand model: with a relay, the other gateway's, for the same name. */
export const shorthandProviders = (
  name: string,
  shorthands: ReadonlyMap<string, ShorthandDefault>,
  relay?: RelaySettings | undefined
): ReadonlyArray<ProviderConfig> => {
  const shorthand = enabledShorthand(name, shorthands)
  if (shorthand === undefined) return []
  if (relay !== undefined) return [relayProvider(relay, name)]
  const { credential, settings } = shorthands.get(shorthand.type)!
  return [{
    name: shorthand.type,
    type: shorthand.type,
    modelName: shorthand.model,
    credential,
    extraBody: [],
    extraHeaders: [],
    timeouts: {},
    settings
  }]
}

/**
 * Credentials of every provider a positive-weight variant can reach must be present now, not at
 * its first call. `keyPathOf` says where a function's variants are written (a judge's: under its evaluator).
 */
export const checkCredentials = (
  context: BuildContext,
  functions: ReadonlyMap<string, FunctionConfig>,
  models: ReadonlyMap<string, ModelConfig>,
  shorthands: ReadonlyMap<string, ShorthandDefault>,
  relay: RelaySettings | undefined,
  keyPathOf: (functionName: string) => KeyPath = (functionName) => ["functions", functionName]
): void => {
  const check = (keyPath: KeyPath, modelName: string, providers: ReadonlyArray<ProviderConfig>) => {
    for (const provider of providers) {
      const missing = missingAlways(provider.credential)
      if (missing !== undefined) context.report(keyPath, `model "${modelName}" uses provider "${provider.name}", whose credential is missing: ${missing}`)
    }
  }
  for (const [functionName, fn] of functions) {
    for (const [variantName, variant] of fn.variants) {
      if (variant.weight <= 0) continue
      const variantPath = [...keyPathOf(functionName), "variants", variantName]
      const { model: modelName, keyPath } = variantModel(variant)
      const model = models.get(modelName)
      check([...variantPath, ...keyPath], modelName, model !== undefined ? [...model.providers.values()] : shorthandProviders(modelName, shorthands, relay))
      // a configured embedding model's credentials are checked with it (embeddingModels.ts); a short-hand's here
      if (variant.type === "experimental_dynamic_in_context_learning" && enabledShorthand(variant.embeddingModel, shorthands) !== undefined) {
        check([...variantPath, "embedding_model"], variant.embeddingModel, shorthandProviders(variant.embeddingModel, shorthands, relay))
      }
    }
  }
}
