/**
 * `[gateway.relay]` (TensorZero's): an edge gateway keeps its functions, variants, templates,
 * experimentation, cache, rate limits and observability, but its model calls are made by
 * another, central gateway, which holds the provider credentials. A rewrite of the
 * configuration at start-up: each model (but those with `skip_relay = true`) gets one provider
 * of type `gateway`, `gateway_relay`, calling the central gateway's model of the same name;
 * short-hand names (`openai::gpt-4o-mini`) go as they are, resolved there with its credentials;
 * embedding models go to its `/openai/v1/embeddings` as `gateway::embedding_model_name::<name>`.
 */
import { embeddingModelPrefix } from "../api/embeddings.ts"
import type { CostRule } from "../inference/cost.ts"
import { gatewayUrlProblem } from "../providers/gateway/index.ts"
import type { BuildContext } from "./context.ts"
import { type Credential, parseSingleLocation, resolveCredential } from "./credentials.ts"
import type { RawGateway } from "./raw.ts"
import type { EmbeddingModelConfig, ModelConfig, ProviderConfig, RelaySettings } from "./types.ts"

/** the one provider of a relayed model: what its model inferences are stored under */
export const relayProviderName = "gateway_relay"

const relayLocations = `"env::NAME", "dynamic::NAME" or "none"`

export const buildRelay = (context: BuildContext, raw: RawGateway["relay"]): RelaySettings | undefined => {
  if (raw === undefined) return undefined
  const keyPath = ["gateway", "relay"]
  const urlProblem = gatewayUrlProblem(raw.gateway_url)
  if (urlProblem !== undefined) context.report([...keyPath, "gateway_url"], urlProblem)
  let credential: Credential = { kind: "none" }
  const written = raw.api_key_location ?? "none"
  const location = parseSingleLocation(written)
  if (location === undefined || (location.kind !== "env" && location.kind !== "dynamic" && location.kind !== "none")) {
    context.report([...keyPath, "api_key_location"], `expected ${relayLocations}, got "${written}"`)
  } else {
    credential = resolveCredential(location, context.input)
    if (credential.kind === "missing") context.report([...keyPath, "api_key_location"], credential.what)
  }
  return { gatewayUrl: raw.gateway_url, credential, forwardCredentials: raw.forward_credentials ?? false }
}

/** the central gateway's `usage.cost` is the call's cost: the edge's rate limits and records count it */
const centralCost: CostRule = { pointer: "/usage/cost", tokens: ["usage", "cost"], perUnit: 1, required: false }

/** The provider that calls `modelName` (as the central gateway names it) there. */
export const relayProvider = (relay: RelaySettings, modelName: string): ProviderConfig => ({
  name: relayProviderName,
  type: "gateway",
  modelName,
  credential: relay.credential,
  extraBody: [],
  extraHeaders: [],
  timeouts: {},
  cost: [centralCost],
  settings: { gateway_url: relay.gatewayUrl, forward_credentials: relay.forwardCredentials }
})

const routedTo = (provider: ProviderConfig) => ({ routing: [provider.name], providers: new Map([[provider.name, provider]]) })

/** `model` served by the central gateway's model of the same name (its timeouts kept) */
export const relayedModel = (relay: RelaySettings, model: ModelConfig): ModelConfig => ({
  ...model,
  ...routedTo(relayProvider(relay, model.name))
})

export const relayedEmbeddingModel = (relay: RelaySettings, model: EmbeddingModelConfig): EmbeddingModelConfig => ({
  ...model,
  ...routedTo(relayProvider(relay, `${embeddingModelPrefix}${model.name}`))
})
