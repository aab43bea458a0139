/**
 * `gateway`: another gateway of this kind as a provider (a central gateway holding the provider
 * credentials and the authentication), called at its own `POST /inference` for a model there
 * (`model_name`: a configured model or a short-hand) or a function (`function_name`, optionally
 * `variant_name`), with `Authorization: Bearer <its API key>` when `api_key_location` gives one.
 * Embeddings go to its `POST /openai/v1/embeddings`. The variant's and the request's
 * `extra_body`/`extra_headers` are forwarded for its providers (`forwardsCallerEdits`); the
 * caller's dynamic credentials only with `forward_credentials = true`. `[gateway.relay]` makes
 * every model call of a gateway go through one of these (`config/relay.ts`).
 */
import * as Schema from "effect/Schema"
import type { WireCodec } from "../codec.ts"
import { bearerJsonHeaders } from "../headers.ts"
import { parseOpenAiEmbeddings } from "../openai/embeddings.ts"
import { wireProvider } from "../wireProvider.ts"
import { sse } from "../sse.ts"
import { baseUrlProblem } from "../urls.ts"
import { gatewayBody, gatewayEmbeddingsBody, type GatewayTarget } from "./request.ts"
import { gatewayErrorMessage, makeGatewayChunkParser, parseGatewayResponse } from "./response.ts"

export const GatewayProviderSettings = Schema.Struct({
  /** the other gateway's base URL (with its `base_path`, if any) */
  gateway_url: Schema.String,
  function_name: Schema.optional(Schema.String),
  variant_name: Schema.optional(Schema.String),
  forward_credentials: Schema.optional(Schema.Boolean)
})
type GatewayProviderSettings = typeof GatewayProviderSettings.Type

/** Why `url` cannot be a gateway's base URL, or undefined: as any provider's base URL. */
export const gatewayUrlProblem = baseUrlProblem

/** `<gateway_url>/<route>`, whatever the base URL ends with */
const routeOf = (gatewayUrl: string, route: string): string => `${gatewayUrl.replace(/\/+$/, "")}/${route}`

const settingsProblem = (settings: GatewayProviderSettings, model: string): string | undefined => {
  const urlProblem = gatewayUrlProblem(settings.gateway_url)
  if (urlProblem !== undefined) return `gateway_url: ${urlProblem}`
  const hasModel = model !== ""
  if (hasModel === (settings.function_name !== undefined)) {
    return hasModel ? "function_name: give model_name or function_name, not both" : "model_name: give model_name or function_name"
  }
  if (settings.variant_name !== undefined && settings.function_name === undefined) return "variant_name: only with function_name"
  return undefined
}

export const gatewayCodec: WireCodec<GatewayProviderSettings, GatewayTarget, string> = {
  type: "gateway",
  settings: GatewayProviderSettings,
  defaultCredential: { kind: "none" },
  requiresModelName: false,
  target: (settings, model) => ({
    inferenceUrl: routeOf(settings.gateway_url, "inference"),
    embeddingsUrl: routeOf(settings.gateway_url, "openai/v1/embeddings"),
    modelName: model === "" ? undefined : model,
    functionName: settings.function_name,
    variantName: settings.variant_name,
    forwardCredentials: settings.forward_credentials ?? false,
    problem: settingsProblem(settings, model)
  }),
  targetProblem: (target) => target.problem,
  url: (target) => target.inferenceUrl,
  headers: bearerJsonHeaders,
  body: gatewayBody,
  parseResponse: parseGatewayResponse,
  framing: sse,
  streamParser: makeGatewayChunkParser,
  errorMessage: gatewayErrorMessage,
  embeddings: {
    url: (target) => target.embeddingsUrl,
    body: gatewayEmbeddingsBody,
    parse: parseOpenAiEmbeddings
  },
  forwardsCallerEdits: true
}

export const gatewayProvider = wireProvider(gatewayCodec)
