/**
 * `[models.<name>]` and their `providers` -> models with their routing, each provider table
 * decoded by its provider type's own schema (`settingsFields` in `providers/registry.ts`)
 * and its credential resolved against the environment captured at start-up.
 */
import * as Schema from "effect/Schema"
import { parseShorthandModel, providerTypes } from "../providers/registry.ts"
import { type BuildContext, tableDecoder } from "./context.ts"
import { parseCredentialLocation, resolveCredential } from "./credentials.ts"
import type { KeyPath } from "./merge.ts"
import { providerCommonFields, RawModel } from "./raw.ts"
import type { FunctionConfig, ModelConfig, ProviderConfig } from "./types.ts"

const decodeModel = tableDecoder(RawModel)
const providerDecoders = new Map(
  [...providerTypes.values()].map((provider) => [
    provider.type,
    tableDecoder(Schema.Struct({ ...providerCommonFields, ...provider.settingsFields }))
  ])
)

const buildProvider = (
  context: BuildContext,
  keyPath: KeyPath,
  name: string,
  table: Record<string, unknown>
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
  const { type: _type, model_name, api_key_location, extra_body, extra_headers, timeouts, ...settings } = decoded
  context.checkPointers([...keyPath, "extra_body"], extra_body)
  context.checkHeaders([...keyPath, "extra_headers"], extra_headers)
  let location = definition.defaultCredential
  if (api_key_location !== undefined) {
    const parsed = parseCredentialLocation(api_key_location)
    if (parsed === undefined) {
      context.report([...keyPath, "api_key_location"], `expected "env::NAME", "dynamic::NAME" or "none", got "${api_key_location}"`)
      return undefined
    }
    location = parsed
  }
  return {
    name,
    type: definition.type,
    modelName: model_name,
    credential: resolveCredential(location, context.input.env),
    extraBody: extra_body ?? [],
    extraHeaders: extra_headers ?? [],
    timeouts: timeouts ?? {},
    settings
  }
}

export const buildModels = (context: BuildContext, tables: Readonly<Record<string, unknown>>): Map<string, ModelConfig> => {
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
      const provider = buildProvider(context, [...keyPath, "providers", providerName], providerName, providerTable)
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
    models.set(name, { name, routing: model.routing, providers, timeouts: model.timeouts ?? {} })
  }
  return models
}

/** The single provider of a `<provider_type>::<model>` short-hand model. */
export const shorthandProviders = (
  name: string,
  env: Readonly<Record<string, string | undefined>>
): ReadonlyArray<ProviderConfig> => {
  const shorthand = parseShorthandModel(name)
  if (shorthand === undefined) return []
  const definition = providerTypes.get(shorthand.type)!
  return [{
    name: shorthand.type,
    type: shorthand.type,
    modelName: shorthand.model,
    credential: resolveCredential(definition.defaultCredential, env),
    extraBody: [],
    extraHeaders: [],
    timeouts: {},
    settings: {}
  }]
}

/** Credentials of every provider a positive-weight variant can reach must be present now, not at its first call. */
export const checkCredentials = (
  context: BuildContext,
  functions: ReadonlyMap<string, FunctionConfig>,
  models: ReadonlyMap<string, ModelConfig>
): void => {
  for (const [functionName, fn] of functions) {
    for (const [variantName, variant] of fn.variants) {
      if (variant.weight <= 0) continue
      const model = models.get(variant.model)
      const providers = model !== undefined ? [...model.providers.values()] : shorthandProviders(variant.model, context.input.env)
      for (const provider of providers) {
        if (provider.credential.kind === "missing_env") {
          context.report(
            ["functions", functionName, "variants", variantName, "model"],
            `model "${variant.model}" uses provider "${provider.name}", whose credential environment variable ${provider.credential.name} is not set`
          )
        }
      }
    }
  }
}
