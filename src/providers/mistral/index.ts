/**
 * `mistral`: Mistral's chat completions (`https://api.mistral.ai/v1/chat/completions`, Bearer
 * key). The family's request body with Mistral's own messages, tool choice and parameter names
 * (`request.ts`), and its own answers (`response.ts`).
 */
import * as Schema from "effect/Schema"
import { paramFieldsOf } from "../chatCompletionsFamily.ts"
import type { WireCodec } from "../codec.ts"
import { type ChatCompletionsTarget, chatCompletionsUrl } from "../openai/request.ts"
import { bearerJsonHeaders } from "../headers.ts"
import { wireProvider } from "../wireProvider.ts"
import { sse } from "../sse.ts"
import { BaseUrl } from "../urls.ts"
import { mistralBody } from "./request.ts"
import { makeMistralChunkParser, mistralErrorMessage, parseMistralResponse } from "./response.ts"

const MistralSettings = Schema.Struct({ api_base: Schema.optional(BaseUrl) })
type MistralSettings = typeof MistralSettings.Type

export const mistralDefaultApiBase = "https://api.mistral.ai/v1/"

// Mistral names the seed `random_seed`, and takes no reasoning effort, service tier or verbosity
const paramFields = paramFieldsOf({ seed: "random_seed", reasoning_effort: null, service_tier: null, verbosity: null })

export const mistralCodec: WireCodec<MistralSettings, ChatCompletionsTarget, string> = {
  type: "mistral",
  settings: MistralSettings,
  defaultCredential: { kind: "env", name: "MISTRAL_API_KEY" },
  target: (settings, model) => ({
    url: chatCompletionsUrl(settings.api_base ?? mistralDefaultApiBase),
    model,
    paramFields,
    paramDefaults: undefined,
    // Mistral sends usage in its last chunk unasked, and refuses `stream_options`
    streamUsage: false
  }),
  url: (target) => target.url,
  headers: bearerJsonHeaders,
  body: mistralBody,
  parseResponse: parseMistralResponse,
  framing: sse,
  streamParser: makeMistralChunkParser,
  errorMessage: mistralErrorMessage
}

export const mistralProvider = wireProvider(mistralCodec)
