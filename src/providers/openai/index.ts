/**
 * `openai`: OpenAI Chat Completions, the first member of its family (`chatCompletionsFamily.ts`);
 * with `api_base`, any server that speaks it the same way. With `api_type = "responses"` (or
 * the short-hand `openai::responses::<model>`), the Responses API (`responses/`). The API is
 * chosen once per configured provider, when it is made: a Chat Completions call runs exactly
 * the codec it ran before.
 */
import * as Effect from "effect/Effect"
import type { OutputBlock } from "../../inference/types.ts"
import { hostedCodec } from "../chatCompletionsFamily.ts"
import { wireProvider } from "../runner.ts"
import type { ProviderClient, ProviderDefinition } from "../types.ts"
import { responsesCodec } from "./responses/index.ts"
import { openAiDefaultApiBase, OpenAiSettings } from "./responses/index.ts"
import { unscopedProvider } from "./responses/response.ts"

export const openAiCodec = {
  ...hostedCodec({
    type: "openai",
    defaultApiBase: openAiDefaultApiBase,
    defaultCredential: { kind: "env", name: "OPENAI_API_KEY" },
    // OpenAI deprecated `max_tokens` for `max_completion_tokens`, which its reasoning models require
    params: { max_tokens: "max_completion_tokens" }
  }),
  // the settings of both APIs: the chat codec reads `api_base` only
  settings: OpenAiSettings
}

const chatCompletions = wireProvider(openAiCodec)
const responses = wireProvider(responsesCodec)

/** the short-hand's model prefix that selects the Responses API: `openai::responses::<model>` */
export const responsesModelPrefix = "responses::"

/** The Responses API's unknown blocks (built-in tools' items) scoped to the provider that answered them. */
const scopingUnknownBlocks = (client: ProviderClient): ProviderClient => ({
  infer: (call) =>
    Effect.map(client.infer(call), (response) =>
      response.output.some((block) => block.type === "unknown")
        ? {
          ...response,
          output: response.output.map((block): OutputBlock =>
            block.type === "unknown" && block.model_provider_name === unscopedProvider
              ? { ...block, model_provider_name: call.qualifiedName }
              : block
          )
        }
        : response
    ),
  stream: client.stream
})

export const openAiProvider: ProviderDefinition = {
  type: "openai",
  defaultCredential: openAiCodec.defaultCredential,
  requiresModelName: true,
  settingsFields: OpenAiSettings.fields,
  make: (config) => {
    const apiType = config.settings.api_type
    if (apiType === "responses") return scopingUnknownBlocks(responses.make(config))
    if (apiType === undefined && config.modelName.startsWith(responsesModelPrefix)) {
      return scopingUnknownBlocks(responses.make({ ...config, modelName: config.modelName.slice(responsesModelPrefix.length) }))
    }
    return chatCompletions.make(config)
  }
}
