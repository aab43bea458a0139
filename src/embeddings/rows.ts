/**
 * An answered embeddings call -> the row that records it, with a cache key when the request
 * writes the cache and the answer came from the provider.
 */
import { hashKeyParts } from "../cache/policy.ts"
import type { ProviderConfig } from "../config/types.ts"
import { uuidv7Timestamp } from "../ids.ts"
import type { WriteUnit } from "../analytics/writeQueue.ts"
import type { EmbeddingRequest } from "../providers/codec.ts"
import type { ProviderCall } from "../providers/types.ts"
import type { EmbeddingResult } from "./result.ts"

/**
 * The key of an embeddings answer: the model, the provider (its type, model and settings), the
 * texts and dimensions, the edits, and (as for inference, `cache/policy.ts`) a credential the
 * caller sent and the cache scope.
 */
export const embeddingCacheKey = (
  provider: ProviderConfig,
  call: ProviderCall<EmbeddingRequest>,
  scope?: string | undefined
): string => {
  const parts: Array<unknown> = [
    "embeddings",
    call.modelName,
    call.providerName,
    provider.type,
    provider.modelName,
    provider.settings,
    call.request.input,
    call.request.dimensions ?? null,
    call.extraBody,
    call.extraHeaders
  ]
  return hashKeyParts(parts, provider, call, scope)
}

export const embeddingWriteUnit = (result: EmbeddingResult): WriteUnit => ({
  batch: {
    inferences: [],
    modelInferences: [],
    feedback: [],
    embeddingInferences: [{
      id: result.id,
      modelName: result.modelName,
      modelProviderName: result.provider.config.name,
      input: result.call.request.input,
      dimensions: result.call.request.dimensions,
      rawRequest: result.rawRequest,
      rawResponse: result.rawResponse,
      inputTokens: result.inputTokens,
      responseTimeMs: result.responseTimeMs,
      cached: result.cached,
      cacheKey: result.cache.write && !result.cached
        ? embeddingCacheKey(result.provider.config, result.call, result.cache.scope)
        : undefined,
      tags: result.tags,
      timestamp: uuidv7Timestamp(result.id)
    }]
  }
})
