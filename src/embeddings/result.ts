/** What an answered embeddings call is to the handler that encodes it and the row that records it. */
import type { CachePolicy } from "../cache/policy.ts"
import type { EmbeddingRequest } from "../providers/codec.ts"
import type { ProviderCall } from "../providers/types.ts"
import type { EmbeddingProvider } from "./models.ts"

/** An embeddings call that was answered: what the handler encodes and storage records. */
export interface EmbeddingResult {
  readonly id: string
  /** the request's `model`, as given */
  readonly model: string
  readonly modelName: string
  readonly provider: EmbeddingProvider
  readonly call: ProviderCall<EmbeddingRequest>
  readonly embeddings: ReadonlyArray<ReadonlyArray<number>>
  readonly inputTokens: number
  readonly rawRequest: string
  readonly rawResponse: string
  readonly cached: boolean
  readonly responseTimeMs: number
  readonly cache: CachePolicy
  readonly tags: Readonly<Record<string, string>>
}
