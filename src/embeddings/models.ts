/**
 * The embedding models a request can reach, with a client per provider: the configured ones
 * (`[embedding_models]`), built at start-up, and `<provider_type>::<model>` short-hands of
 * types with embeddings, built on first use and kept (a bounded number).
 */
import { embeddingModelPrefix } from "../api/embeddings.ts"
import { embeddingsRefusal } from "../config/embeddingModels.ts"
import { shorthandOff, shorthandProviders } from "../config/models.ts"
import type { EmbeddingModelConfig, GatewayConfig, ProviderConfig } from "../config/types.ts"
import { parseShorthandModel, providerTypes, shorthandProblem } from "../providers/registry.ts"
import type { EmbeddingClient } from "../providers/types.ts"

export interface EmbeddingProvider {
  readonly config: ProviderConfig
  readonly client: EmbeddingClient
}

export interface ResolvedEmbeddingModel {
  readonly config: EmbeddingModelConfig
  /** in routing order */
  readonly providers: ReadonlyArray<EmbeddingProvider>
}

const route = (config: EmbeddingModelConfig): ResolvedEmbeddingModel => ({
  config,
  providers: config.routing.flatMap((name) => {
    const provider = config.providers.get(name)
    const client = provider === undefined ? undefined : providerTypes.get(provider.type)?.make(provider).embeddings
    return provider === undefined || client === undefined ? [] : [{ config: provider, client }]
  })
})

const maxShorthandModels = 1024

/** What a request's `model` names: a model, or why it names none (`unknown`: a 404; `refused`: a 400). */
export type EmbeddingModelLookup =
  | { readonly model: ResolvedEmbeddingModel }
  | { readonly unknown: string }
  | { readonly refused: string }

export class EmbeddingModelTable {
  private readonly models = new Map<string, ResolvedEmbeddingModel>()
  private shorthandCount = 0
  private readonly shorthands: GatewayConfig["shorthands"]
  private readonly relay: GatewayConfig["gateway"]["relay"]

  constructor(config: GatewayConfig) {
    this.shorthands = config.shorthands
    this.relay = config.gateway.relay
    for (const model of config.embeddingModels.values()) this.models.set(`${embeddingModelPrefix}${model.name}`, route(model))
  }

  get(name: string): EmbeddingModelLookup {
    const known = this.models.get(name)
    if (known !== undefined) return { model: known }
    if (name.startsWith(embeddingModelPrefix)) {
      return { unknown: `unknown embedding model "${name.slice(embeddingModelPrefix.length)}"` }
    }
    const off = shorthandOff(name, this.shorthands)
    if (off !== undefined) return { unknown: `unknown embedding model "${name}": ${off}` }
    const shorthand = parseShorthandModel(name)
    if (shorthand === undefined) {
      return {
        refused: `model: "${name}" names no embedding model: give "${embeddingModelPrefix}<name>" or a short-hand "<provider_type>::<model>"`
      }
    }
    const refusal = embeddingsRefusal(shorthand.type) ?? shorthandProblem(name)
    if (refusal !== undefined) return { refused: `model: ${refusal}` }
    const providers = shorthandProviders(name, this.shorthands, this.relay)
    const model = route({
      name,
      routing: providers.map((provider) => provider.name),
      providers: new Map(providers.map((provider) => [provider.name, provider]))
    })
    if (this.shorthandCount < maxShorthandModels) {
      this.shorthandCount++
      this.models.set(name, model)
    }
    return { model }
  }
}
