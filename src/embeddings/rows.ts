/**
 * An answered embeddings call -> the row that records it, with a cache key when the request
 * writes the cache and the answer came from the provider.
 */
import { hashKeyParts, keyPrefix } from "../cache/policy.ts"
import type { ProviderConfig } from "../config/types.ts"
import { uuidv7Timestamp } from "../ids.ts"
import type { EmbeddingCacheEntry } from "../analytics/records.ts"
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
  const prefix = keyPrefix(provider, `embeddings\0${call.modelName}\0${call.providerName}`, () => [
    "embeddings",
    call.modelName,
    call.providerName,
    provider.type,
    provider.modelName,
    provider.settings
  ])
  return hashKeyParts(prefix, [call.request.input, call.request.dimensions ?? null, call.extraBody, call.extraHeaders], provider, call, scope)
}

/** the key the answer is cached under, when the request writes the cache and the provider answered */
const resultCacheKey = (result: EmbeddingResult): string | undefined =>
  result.cache.write && !result.cached ? embeddingCacheKey(result.provider.config, result.call, result.cache.scope) : undefined

/** The answer as a cache that keeps its own entries holds it (see `CacheStore.rememberEmbedding`), when it is cached. */
export const embeddingCacheEntryOf = (result: EmbeddingResult): EmbeddingCacheEntry | undefined => {
  const key = resultCacheKey(result)
  return key === undefined
    ? undefined
    : { key, rawRequest: result.rawRequest, rawResponse: result.rawResponse, timestamp: uuidv7Timestamp(result.id) }
}

/** the write of `result`, made for a caller of `workspace` */
export const embeddingWriteUnit = (result: EmbeddingResult, workspace: string): WriteUnit => ({
  batch: {
    inferences: [],
    modelInferences: [],
    feedback: [],
    embeddingInferences: [{
      id: result.id,
      workspace,
      modelName: result.modelName,
      modelProviderName: result.provider.config.name,
      input: result.call.request.input,
      dimensions: result.call.request.dimensions,
      rawRequest: result.rawRequest,
      rawResponse: result.rawResponse,
      inputTokens: result.inputTokens,
      responseTimeMs: result.responseTimeMs,
      cached: result.cached,
      cacheKey: resultCacheKey(result),
      tags: result.tags,
      timestamp: uuidv7Timestamp(result.id)
    }]
  }
})
