/**
 * The model answer cache (spec 4.1 `cache_options`): keyed by the model, the provider and the
 * full provider request, so two calls share an entry only when the provider would have
 * received the same request.
 */
import { hash } from "node:crypto"
import type { CacheOptions } from "../api/inference.ts"
import type { ProviderConfig } from "../config/types.ts"
import type { ProviderResponse } from "../inference/types.ts"
import type { ProviderCall } from "../providers/types.ts"
import type { CacheEntry } from "./records.ts"

export interface CachePolicy {
  readonly read: boolean
  readonly write: boolean
  readonly maxAgeS: number | undefined
}

/** `write_only` unless asked otherwise; `dryrun` never writes. */
export const cachePolicy = (options: typeof CacheOptions.Type | undefined, dryrun: boolean): CachePolicy => {
  const enabled = options?.enabled ?? "write_only"
  return {
    read: enabled === "on" || enabled === "read_only",
    write: !dryrun && (enabled === "on" || enabled === "write_only"),
    maxAgeS: options?.max_age_s ?? undefined
  }
}

export const cacheKey = (provider: ProviderConfig, call: ProviderCall): string => {
  const request = call.request
  const tools = request.tools === undefined ? undefined : {
    tools: request.tools.tools.map(({ validator: _validator, ...tool }) => tool),
    allowed: request.tools.allowed,
    choice: request.tools.choice,
    parallel: request.tools.parallelToolCalls
  }
  // the one-shot hash costs half of createHash().update().digest() on the hot path
  return hash("sha256", JSON.stringify([
    call.modelName,
    call.providerName,
    provider.type,
    provider.modelName,
    provider.settings,
    { ...request, tools },
    call.extraBody,
    call.extraHeaders
  ]))
}

/** A cached entry as a provider response: the stored output, no tokens spent. */
export const cachedResponse = (entry: CacheEntry): ProviderResponse => ({
  output: entry.output,
  usage: { input_tokens: 0, output_tokens: 0 },
  finishReason: entry.finishReason,
  rawRequest: entry.rawRequest,
  rawResponse: entry.rawResponse
})
