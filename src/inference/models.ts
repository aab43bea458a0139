/**
 * The models a request can reach, with a client per provider: the configured ones, built at
 * start-up, and `<provider_type>::<model>` short-hands, built on first use and kept.
 */
import { isDeepStrictEqual } from "node:util"
import { shorthandProviders } from "../config/models.ts"
import type { GatewayConfig, ModelConfig, ProviderConfig } from "../config/types.ts"
import { providerTypes, shorthandProblem } from "../providers/registry.ts"
import type { ProviderClient } from "../providers/types.ts"

export interface RoutedProvider {
  readonly config: ProviderConfig
  readonly client: ProviderClient
}

export interface ResolvedModel {
  readonly config: ModelConfig
  /** in routing order */
  readonly providers: ReadonlyArray<RoutedProvider>
}

/** `previous`: the same model before a reload, whose clients of unchanged providers (and what they keep: tokens, credentials) are reused */
const route = (config: ModelConfig, previous?: ResolvedModel): ResolvedModel => ({
  config,
  providers: config.routing.map((name) => {
    const provider = config.providers.get(name)!
    const kept = previous?.providers.find((routed) => isDeepStrictEqual(routed.config, provider))
    return kept ?? { config: provider, client: providerTypes.get(provider.type)!.make(provider) }
  })
})

// short-hand names come from requests; bound how many are kept
const maxShorthandModels = 1024

export class ModelTable {
  private readonly models = new Map<string, ResolvedModel>()
  private shorthandCount = 0
  private readonly shorthands: GatewayConfig["shorthands"]
  private readonly relay: GatewayConfig["gateway"]["relay"]

  /** `previous`: the table before a configuration reload, whose clients of unchanged providers are kept */
  constructor(config: GatewayConfig, previous?: ModelTable) {
    this.shorthands = config.shorthands
    this.relay = config.gateway.relay
    for (const model of config.models.values()) this.models.set(model.name, route(model, previous?.models.get(model.name)))
  }

  /**
   * What `name` names: a configured model (they take precedence), else a short-hand of a known
   * provider type; `refused` when it is a short-hand that names nothing its type can call (no
   * client is made of it, and it is not kept); undefined when it names nothing.
   */
  lookup(name: string): ResolvedModel | { readonly refused: string } | undefined {
    const known = this.models.get(name)
    if (known !== undefined) return known
    const refused = shorthandProblem(name)
    if (refused !== undefined) return { refused }
    const providers = shorthandProviders(name, this.shorthands, this.relay)
    if (providers.length === 0) return undefined
    const model = route({
      name,
      routing: providers.map((provider) => provider.name),
      providers: new Map(providers.map((provider) => [provider.name, provider])),
      timeouts: {}
    })
    if (this.shorthandCount < maxShorthandModels) {
      this.shorthandCount++
      this.models.set(name, model)
    }
    return model
  }

  /** The model `name` names (see `lookup`), or undefined. */
  get(name: string): ResolvedModel | undefined {
    const found = this.lookup(name)
    return found === undefined || "refused" in found ? undefined : found
  }
}
