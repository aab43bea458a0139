/**
 * `openai`: OpenAI Chat Completions, the first member of its family (`chatCompletionsFamily.ts`);
 * with `api_base`, any server that speaks it the same way. With `api_type = "responses"` (or
 * the short-hand `openai::responses::<model>`), the Responses API (`responses/`). The API is
 * chosen once per configured provider, when it is made: a Chat Completions call runs exactly
 * the codec it ran before. Both APIs run batches through OpenAI's Batch API (`batch.ts`), each
 * with its own line `url`.
 */
import { type FamilyTarget, hostedCodec } from "../chatCompletionsFamily.ts"
import type { WireCodec } from "../codec.ts"
import { wireProvider } from "../wireProvider.ts"
import type { ProviderDefinition } from "../types.ts"
import { openAiBatchApi, openAiBatchHooks, type OpenAiBatchTarget } from "./batch.ts"
import { responsesCodec } from "./responses/index.ts"
import { openAiDefaultApiBase, OpenAiSettings } from "./responses/index.ts"

const family = hostedCodec({
  type: "openai",
  defaultApiBase: openAiDefaultApiBase,
  defaultCredential: { kind: "env", name: "OPENAI_API_KEY" },
  // OpenAI deprecated `max_tokens` for `max_completion_tokens`, which its reasoning models require
  params: { max_tokens: "max_completion_tokens" }
})

export const openAiCodec: WireCodec<OpenAiSettings, FamilyTarget & OpenAiBatchTarget, string> = {
  ...family,
  // the settings of both APIs: the chat codec reads `api_base` only
  settings: OpenAiSettings,
  target: (settings, model) => ({
    ...family.target(settings, model),
    batchApi: openAiBatchApi(settings.api_base ?? openAiDefaultApiBase, "/v1/chat/completions")
  }),
  // the Batch API of the Chat Completions family's own server; its other members lack it, or differ
  batch: openAiBatchHooks
}

const chatCompletions = wireProvider(openAiCodec)
const responses = wireProvider(responsesCodec)

/** the short-hand's model prefix that selects the Responses API: `openai::responses::<model>` */
export const responsesModelPrefix = "responses::"

export const openAiProvider: ProviderDefinition = {
  type: "openai",
  defaultCredential: openAiCodec.defaultCredential,
  requiresModelName: true,
  settingsFields: OpenAiSettings.fields,
  embeddings: chatCompletions.embeddings,
  // both APIs run batches (`/v1/chat/completions` or `/v1/responses` lines)
  batch: true,
  make: (config) => {
    const apiType = config.settings.api_type
    if (apiType === "responses") return responses.make(config)
    if (apiType === undefined && config.modelName.startsWith(responsesModelPrefix)) {
      return responses.make({ ...config, modelName: config.modelName.slice(responsesModelPrefix.length) })
    }
    return chatCompletions.make(config)
  }
}
