/**
 * `[embedding_models.<name>]`: `routing`, `providers` (tables as for chat models, of a type
 * whose codec has embeddings) and `timeout_ms` -> embedding models. Their credentials are
 * checked now, like those of chat models: a missing environment variable is a start-up error.
 */
import * as Schema from "effect/Schema"
import { parseShorthandModel, providerTypes } from "../providers/registry.ts"
import { type BuildContext, tableDecoder } from "./context.ts"
import type { KeyPath } from "./merge.ts"
import { missingAlways } from "./credentials.ts"
import { buildProvider, type ProviderTypeDefaults } from "./models.ts"
import { relayedEmbeddingModel } from "./relay.ts"
import type { EmbeddingModelConfig, ProviderConfig, RelaySettings } from "./types.ts"

const RawEmbeddingModel = Schema.Struct({
  routing: Schema.Array(Schema.String),
  providers: Schema.Record(Schema.String, Schema.Record(Schema.String, Schema.Unknown)),
  timeout_ms: Schema.optional(Schema.Int.check(Schema.isGreaterThan(0))),
  /** with `[gateway.relay]`: this model keeps its own providers */
  skip_relay: Schema.optional(Schema.Boolean)
})
const decodeEmbeddingModel = tableDecoder(RawEmbeddingModel)

/** the provider types that answer embeddings, for messages */
export const embeddingProviderTypes = (): ReadonlyArray<string> =>
  [...providerTypes.values()].filter((definition) => definition.embeddings === true).map((definition) => definition.type)

/** why a provider type cannot serve embeddings, or undefined when it can */
export const embeddingsRefusal = (type: string): string | undefined =>
  providerTypes.get(type)?.embeddings === true
    ? undefined
    : `provider type "${type}" does not support embeddings (types that do: ${embeddingProviderTypes().join(", ")})`

/** `relay`: models without `skip_relay` are served by the relay's gateway (their tables are still checked, not their credentials) */
/**
 * TensorZero's `timeout_ms` on an embedding model's provider: the bound of one call to it,
 * this gateway's `timeouts.non_streaming.total_ms` (which wins when both are given).
 */
const withProviderTimeout = (context: BuildContext, keyPath: KeyPath, table: Record<string, unknown>): Record<string, unknown> => {
  if (!("timeout_ms" in table)) return table
  const { timeout_ms: timeoutMs, ...rest } = table
  if (typeof timeoutMs !== "number" || !Number.isInteger(timeoutMs) || timeoutMs <= 0) {
    context.report([...keyPath, "timeout_ms"], `expected a positive whole number of milliseconds, got ${JSON.stringify(timeoutMs)}`)
    return rest
  }
  const timeouts = (rest.timeouts ?? {}) as Record<string, unknown>
  const nonStreaming = (timeouts.non_streaming ?? {}) as Record<string, unknown>
  return { ...rest, timeouts: { ...timeouts, non_streaming: { total_ms: timeoutMs, ...nonStreaming } } }
}

export const buildEmbeddingModels = (
  context: BuildContext,
  tables: Readonly<Record<string, unknown>>,
  typeDefaults: ProviderTypeDefaults,
  relay?: RelaySettings | undefined
): Map<string, EmbeddingModelConfig> => {
  const models = new Map<string, EmbeddingModelConfig>()
  for (const [name, table] of Object.entries(tables)) {
    const keyPath = ["embedding_models", name]
    if (name.startsWith("gateway::") || parseShorthandModel(name) !== undefined) {
      context.report(keyPath, `embedding model names may not start with "gateway::" or "<provider_type>::", which are reserved for short-hand names`)
      continue
    }
    const model = context.decodeAt(decodeEmbeddingModel, table, keyPath)
    if (model === undefined) continue
    const relayed = relay !== undefined && model.skip_relay !== true
    const providers = new Map<string, ProviderConfig>()
    for (const [providerName, providerTable] of Object.entries(model.providers)) {
      const providerPath = [...keyPath, "providers", providerName]
      const provider = buildProvider(context, providerPath, providerName, withProviderTimeout(context, providerPath, providerTable), typeDefaults)
      if (provider === undefined) continue
      const refusal = embeddingsRefusal(provider.type)
      if (refusal !== undefined) {
        context.report([...providerPath, "type"], refusal)
        continue
      }
      const missing = relayed ? undefined : missingAlways(provider.credential)
      if (missing !== undefined) {
        context.report(providerPath, `the credential of provider "${providerName}" is missing: ${missing}`)
        continue
      }
      providers.set(providerName, provider)
    }
    if (model.routing.length === 0) context.report([...keyPath, "routing"], "routing must name at least one provider")
    model.routing.forEach((providerName, index) => {
      if (model.providers[providerName] === undefined) {
        context.report([...keyPath, "routing", index], `provider "${providerName}" is not defined under embedding_models.${name}.providers`)
      }
    })
    for (const providerName of Object.keys(model.providers)) {
      if (!model.routing.includes(providerName)) {
        context.report([...keyPath, "providers", providerName], `provider "${providerName}" is not listed in routing`)
      }
    }
    const built: EmbeddingModelConfig = { name, routing: model.routing, providers, timeoutMs: model.timeout_ms }
    models.set(name, relay !== undefined && relayed ? relayedEmbeddingModel(relay, built) : built)
  }
  return models
}
