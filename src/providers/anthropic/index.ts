/**
 * `anthropic`: Anthropic's Messages API (https://docs.anthropic.com/en/api/messages), with
 * `x-api-key` and `anthropic-version`; `api_base` (default `https://api.anthropic.com/v1/`)
 * points it elsewhere (a proxy, a test server): calls go to `<api_base>messages`, batches to
 * `<api_base>messages/batches` (`batch.ts`), token counts to `<api_base>messages/count_tokens`
 * (`countTokens.ts`).
 */
import * as Schema from "effect/Schema"
import type { WireCodec } from "../codec.ts"
import { wireProvider } from "../wireProvider.ts"
import { sse } from "../sse.ts"
import { BaseUrl } from "../urls.ts"
import { anthropicBatch } from "./batch.ts"
import { anthropicCountTokens } from "./countTokens.ts"
import { anthropicBody, type AnthropicTarget } from "./request.ts"
import { anthropicErrorMessage, makeAnthropicChunkParser, parseAnthropicResponse } from "./response.ts"

export const anthropicVersion = "2023-06-01"
const defaultApiBase = "https://api.anthropic.com/v1/"

const settings = Schema.Struct({ api_base: Schema.optional(BaseUrl) })

/** `<api_base>messages` and, for `path` `messages/count_tokens`, the count's URL */
export const messagesUrl = (apiBase: string, path = "messages"): string =>
  new URL(path, apiBase.endsWith("/") ? apiBase : `${apiBase}/`).toString()

export const anthropicCodec: WireCodec<typeof settings.Type, AnthropicTarget, string> = {
  type: "anthropic",
  settings,
  defaultCredential: { kind: "env", name: "ANTHROPIC_API_KEY" },
  target: (settings, model) => {
    const apiBase = settings.api_base ?? defaultApiBase
    const url = messagesUrl(apiBase)
    return { type: "anthropic", url, streamUrl: url, model, bodyVersion: undefined, count: { url: messagesUrl(apiBase, "messages/count_tokens"), model } }
  },
  url: (target) => target.url,
  headers: (_target, apiKey) => {
    const headers: Record<string, string> = { "content-type": "application/json", "anthropic-version": anthropicVersion }
    if (apiKey !== undefined) headers["x-api-key"] = apiKey
    return headers
  },
  body: anthropicBody,
  parseResponse: parseAnthropicResponse,
  framing: sse,
  streamParser: makeAnthropicChunkParser,
  errorMessage: anthropicErrorMessage,
  batch: anthropicBatch,
  countTokens: anthropicCountTokens
}

export const anthropicProvider = wireProvider(anthropicCodec)
