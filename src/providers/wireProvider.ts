/**
 * A wire codec (`codec.ts`) made into a provider type and its clients: the runner, the one
 * driver of every codec. For one call it has the codec build the body with the call's edits and
 * `provider_tools` (`wireRequest.ts`), sends it (`exchange.ts`), reads the whole or streamed
 * answer (`wholeAnswer.ts`, `streamedAnswer.ts`), and maps every failure to a `ProviderFailure`
 * whose message carries no key (`upstreamFailures.ts`); embeddings, batches and token counts go
 * the same way (`embeddingClient.ts`, `batchClient.ts`, `countTokensClient.ts`). Written once: a
 * codec only translates. The call itself (credential, edits) is planned by `inference/providerCall.ts`; timeouts and fallback
 * between providers are the model call's (`inference/modelCall.ts`).
 */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { batchClient } from "./batchClient.ts"
import type { WireCodec } from "./codec.ts"
import { countTokensClient } from "./countTokensClient.ts"
import { embeddingClient } from "./embeddingClient.ts"
import { exchange, post } from "./exchange.ts"
import { ProviderFailure } from "./failure.ts"
import { streamedAnswer } from "./streamedAnswer.ts"
import type { ProviderClient, ProviderDefinition } from "./types.ts"
import { wholeAnswer } from "./wholeAnswer.ts"
import { wireRequest } from "./wireRequest.ts"

/**
 * A provider type from its codec. The configuration decodes a provider table's settings with
 * `settingsFields`; `make` checks them against the codec's Schema once, which types them. Only
 * a `<type>::<model>` short-hand (no table, no settings) can fail the check, for a type whose
 * settings are required (a self-hosted server's `api_base`): its calls then fail saying so.
 */
export const wireProvider = <Settings, Target, Event>(
  codec: WireCodec<Settings, Target, Event>
): ProviderDefinition => {
  const isSettings = Schema.is(codec.settings)
  return {
    type: codec.type,
    defaultCredential: codec.defaultCredential,
    requiresModelName: codec.requiresModelName ?? true,
    settingsFields: codec.settings.fields,
    embeddings: codec.embeddings !== undefined,
    batch: codec.batch !== undefined,
    countTokens: codec.countTokens !== undefined,
    settingsProblem: codec.targetProblem === undefined ? undefined : (config) => {
      if (!isSettings(config.settings)) return undefined
      return codec.targetProblem?.(codec.target(config.settings, config.modelName, config.env ?? {}))
    },
    // a short-hand has no settings of its own: its model name alone says where its calls go
    modelNameProblem: codec.targetProblem === undefined || !isSettings({})
      ? undefined
      : (model) => codec.targetProblem?.(codec.target({} as Settings, model, {})),
    make: (config) =>
      isSettings(config.settings)
        ? wireClient(codec, codec.target(config.settings, config.modelName, config.env ?? {}))
        : failingClient(
          `provider "${config.name}" (type ${codec.type}) lacks the settings its type requires (${
            Object.keys(codec.settings.fields).join(", ")
          }): configure it in a [models.<name>.providers.<name>] table`,
          codec.countTokens !== undefined
        )
  }
}

/** `counts`: the type counts tokens, so a count fails as the rest does rather than as a type that cannot count */
const failingClient = (message: string, counts: boolean): ProviderClient => {
  const problem = new ProviderFailure({ message, timedOut: false })
  const failed = Effect.fail(problem)
  return {
    infer: () => failed,
    stream: () => failed,
    embeddings: { embed: () => failed, parse: () => problem },
    batch: { start: () => failed, poll: () => failed },
    countTokens: counts ? () => failed : undefined
  }
}

/** The client of one configured provider: `target` is what its codec derived from the settings. */
export const wireClient = <Settings, Target, Event>(
  codec: WireCodec<Settings, Target, Event>,
  target: Target
): ProviderClient => {
  const authorize = codec.authorizer?.(target)
  const streamType = codec.framing.contentType
  return {
    apiType: codec.apiType,
    infer: (call) => exchange(codec, authorize, call, wireRequest(codec, target, call, false), post, wholeAnswer),
    stream: (call) =>
      exchange(codec, authorize, call, wireRequest(codec, target, call, true), (http, request) =>
        http.postStream(request, streamType), streamedAnswer),
    embeddings: codec.embeddings === undefined ? undefined : embeddingClient(codec, codec.embeddings, target, authorize),
    batch: codec.batch === undefined ? undefined : batchClient(codec, codec.batch, target, authorize),
    countTokens: codec.countTokens === undefined ? undefined : countTokensClient(codec, codec.countTokens, target, authorize)
  }
}
