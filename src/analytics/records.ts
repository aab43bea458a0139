/**
 * What the gateway stores (spec 2.10): inferences (chat or json), the model calls behind
 * them, feedback, and cached model answers. Plain data; each store turns these into the rows
 * of its database.
 */
import type { ChatOutputBlock, JsonOutput } from "../inference/output.ts"
import type { FinishReason, OutputBlock } from "../inference/types.ts"

export interface StoredInference {
  readonly id: string
  /** the workspace of the key that made it (src/workspace.ts) */
  readonly workspace: string
  readonly functionName: string
  readonly functionType: "chat" | "json"
  readonly variantName: string
  readonly episodeId: string
  /** the `input` of the request, as received */
  readonly input: unknown
  readonly output: ReadonlyArray<ChatOutputBlock> | JsonOutput
  /** chat: the tools offered, the choice and parallel_tool_calls */
  readonly toolParams?: unknown
  /** json: the schema the output was checked against */
  readonly outputSchema?: unknown
  /** `{"chat_completion": {...}}`: the parameters the variant ran with */
  readonly inferenceParams: unknown
  readonly processingTimeMs: number
  /** streamed inferences: time to the first chunk */
  readonly ttftMs?: number | undefined
  readonly tags: Readonly<Record<string, string>>
  /** epoch milliseconds; always the time carried by the UUIDv7 `id` */
  readonly timestamp: number
}

export interface StoredModelInference {
  readonly id: string
  /** the workspace of the key that made it (src/workspace.ts) */
  readonly workspace: string
  readonly inferenceId: string
  readonly modelName: string
  readonly modelProviderName: string
  readonly rawRequest: string
  readonly rawResponse: string
  readonly system?: string | undefined
  readonly inputMessages: unknown
  readonly output: ReadonlyArray<OutputBlock>
  readonly inputTokens: number
  readonly outputTokens: number
  /** of `inputTokens`, those read from the provider's prompt cache, when it says */
  readonly cachedInputTokens?: number | undefined
  /** the provider's `cost` rules applied to its raw usage; absent when it has none or they read nothing */
  readonly cost?: number | undefined
  readonly responseTimeMs: number
  readonly ttftMs?: number | undefined
  readonly finishReason?: FinishReason | undefined
  readonly cached: boolean
  /**
   * Set when the answer may be served from the cache (spec 4.1 `cache_options`) under this key:
   * the request writes the cache, the answer is valid and did not itself come from the cache.
   * The answer is stored once, here; the cache reads it from the model inferences.
   */
  readonly cacheKey?: string | undefined
  /**
   * With `cacheKey`, for an answer its provider streamed: how the stream was cut
   * (src/inference/chunks.ts), so that a streamed cache hit replays it as it came. Written, not
   * read back but by the cache.
   */
  readonly streamChunking?: string | undefined
  /** epoch milliseconds; always the time carried by the UUIDv7 `id` */
  readonly timestamp: number
}

export type FeedbackKind = "boolean" | "float" | "comment" | "demonstration"

export interface StoredFeedback {
  readonly id: string
  /** the workspace of the key that made it (src/workspace.ts) */
  readonly workspace: string
  readonly kind: FeedbackKind
  readonly metricName: string
  readonly targetType: "inference" | "episode"
  readonly targetId: string
  /** boolean, number, comment text, or a demonstration's output (JSON value) */
  readonly value: boolean | number | string | unknown
  readonly tags: Readonly<Record<string, string>>
  /** epoch milliseconds; always the time carried by the UUIDv7 `id` */
  readonly timestamp: number
}

/** One embeddings call (`POST /openai/v1/embeddings`): a model-inference-like record of its own. */
export interface StoredEmbeddingInference {
  readonly id: string
  /** the workspace of the key that made it (src/workspace.ts) */
  readonly workspace: string
  readonly modelName: string
  readonly modelProviderName: string
  /** the texts embedded, in order */
  readonly input: ReadonlyArray<string>
  readonly dimensions?: number | undefined
  readonly rawRequest: string
  readonly rawResponse: string
  readonly inputTokens: number
  readonly responseTimeMs: number
  readonly cached: boolean
  /** set when the answer may be served from the cache under this key (see `StoredModelInference.cacheKey`) */
  readonly cacheKey?: string | undefined
  readonly tags: Readonly<Record<string, string>>
  /** epoch milliseconds; always the time carried by the UUIDv7 `id` */
  readonly timestamp: number
}

/** An embeddings answer found in the cache: an embedding inference written with a cache key. */
export interface EmbeddingCacheEntry {
  readonly key: string
  readonly rawRequest: string
  readonly rawResponse: string
  /** epoch milliseconds (stores may keep whole seconds) */
  readonly timestamp: number
}

/** A model answer found in the cache (spec 4.1 `cache_options`): a model inference written with a cache key. */
export interface CacheEntry {
  /** hex SHA-256 of the model, the provider and the full provider request */
  readonly key: string
  readonly output: ReadonlyArray<OutputBlock>
  readonly rawRequest: string
  readonly rawResponse: string
  readonly finishReason?: FinishReason | undefined
  /** how the stream that brought it was cut (`StoredModelInference.streamChunking`), when it was streamed */
  readonly streamChunking?: string | undefined
  /** epoch milliseconds (stores may keep whole seconds) */
  readonly timestamp: number
}

/** One write the queue carries: rows that belong together and are written in one flush. */
export interface WriteBatch {
  readonly inferences: ReadonlyArray<StoredInference>
  readonly modelInferences: ReadonlyArray<StoredModelInference>
  readonly feedback: ReadonlyArray<StoredFeedback>
  readonly embeddingInferences?: ReadonlyArray<StoredEmbeddingInference> | undefined
}

export const emptyBatch: WriteBatch = { inferences: [], modelInferences: [], feedback: [] }

/** What feedback needs to know about the inference it targets. */
export interface InferenceTarget {
  readonly workspace: string
  readonly functionName: string
  readonly functionType: "chat" | "json"
  readonly episodeId: string
  readonly outputSchema?: unknown
}
