/**
 * The embeddings use case (`POST /openai/v1/embeddings`): the request's model resolved (a
 * configured embedding model or a short-hand), its providers tried in routing order within the
 * model's `timeout_ms` (and each provider's `timeouts.non_streaming.total_ms`), each call
 * through the cache (when the request reads it) and the rate limits, and the call that answered
 * queued for storage (unless it is a dryrun). The handler decodes the wire format and encodes
 * the answer.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type { EmbeddingsRequest } from "../api/embeddings.ts"
import { apiKeyTag, tagsWithApiKey } from "../api/tags.ts"
import { type CachePolicy, cachePolicy, cacheSharing } from "../cache/policy.ts"
import { CacheStoreService } from "../cache/store.ts"
import { AllProvidersFailed, type GatewayError, InvalidRequest, NotFound } from "../errors.ts"
import { uuidv7 } from "../ids.ts"
import { abandonAfter } from "../inference/cacheLookup.ts"
import { allFailed, type CallRefused, inRoutingOrder } from "../inference/routing.ts"
import { within } from "../inference/timeouts.ts"
import type { ModelRequest } from "../inference/types.ts"
import { WriteQueue } from "../analytics/writeQueue.ts"
import type { EmbeddingRequest } from "../providers/codec.ts"
import { providerCall } from "../inference/providerCall.ts"
import { type ProviderCall } from "../providers/types.ts"
import { ProviderFailure } from "../providers/failure.ts"
import { withinRateLimits } from "../ratelimit/limiter.ts"
import type { RequestScope } from "../ratelimit/rules.ts"
import { Configuration, type InferenceServices } from "../services.ts"
import type { EmbeddingResult } from "./result.ts"
import { embeddingCacheEntryOf, embeddingCacheKey, embeddingWriteUnit } from "./rows.ts"
import { type EmbeddingProvider, EmbeddingModelTable, type ResolvedEmbeddingModel } from "./models.ts"
import type { Caller } from "../workspace.ts"

const noVariant = { name: "", extraBody: [], extraHeaders: [] }

/**
 * The rate limits are written for model calls: an embeddings call is charged as one whose
 * prompt is its texts and which answers no tokens (`max_tokens` 0), then settled with the
 * input tokens the provider reports.
 */
const asModelRequest = (input: ReadonlyArray<string>): ModelRequest => ({
  messages: [{ role: "user", content: input.map((text) => ({ type: "text", text })) }],
  params: { max_tokens: 0 },
  functionType: "chat",
  jsonMode: "off",
  providerTools: []
})

export class EmbeddingService extends Context.Service<EmbeddingService, {
  /** the embeddings `caller` asks for */
  readonly embed: (request: EmbeddingsRequest, caller: Caller) => Effect.Effect<EmbeddingResult, GatewayError, InferenceServices>
}>()("gateway/EmbeddingService") {
  static readonly layer = Layer.effect(
    EmbeddingService,
    Effect.gen(function*() {
      const config = yield* Configuration
      const writeQueue = yield* WriteQueue
      const { store: cacheStore } = yield* CacheStoreService
      const models = new EmbeddingModelTable(config)

      return EmbeddingService.of({
        embed: (request, caller) => {
          const found = models.get(request.model)
          if ("unknown" in found) return Effect.fail(new NotFound({ message: found.unknown }))
          if ("refused" in found) return Effect.fail(new InvalidRequest({ message: found.refused }))
          const tags = tagsWithApiKey(undefined, caller.publicId) ?? {}
          const dryrun = request["gateway::dryrun"] === true
          const cache = cachePolicy(request["gateway::cache_options"], dryrun, cacheSharing(config.gateway, tags[apiKeyTag], caller.workspace))
          const input = typeof request.input === "string" ? [request.input] : request.input
          const embedding: EmbeddingRequest = { input, dimensions: request.dimensions }
          const options = { requestModel: request.model, credentials: request["gateway::credentials"] ?? {}, cache, tags, workspace: caller.workspace }
          return Effect.map(embedWith(found.model, embedding, options), (result) => {
            if (!dryrun && writeQueue.enabled) writeQueue.submitSoon(() => embeddingWriteUnit(result, caller.workspace))
            if (cacheStore?.rememberEmbedding !== undefined) {
              const entry = embeddingCacheEntryOf(result)
              if (entry !== undefined) cacheStore.rememberEmbedding(entry)
            }
            return result
          })
        }
      })
    })
  )
}

/** What one provider answered, before the rest of the result is known. */
interface Answer {
  readonly embeddings: ReadonlyArray<ReadonlyArray<number>>
  readonly inputTokens: number
  readonly rawRequest: string
  readonly rawResponse: string
  readonly cached: boolean
}

/** How an embedding is asked for, besides the model and the texts. */
export interface EmbedOptions {
  /** the model as the caller named it (a result's `model`) */
  readonly requestModel: string
  /** dynamic credentials the caller sent */
  readonly credentials: Readonly<Record<string, string>>
  readonly cache: CachePolicy
  /** charged to the rate limits (with the caller's key), stored with the call */
  readonly tags: Readonly<Record<string, string>>
  /** the caller's workspace, charged to the rate limits and budgets */
  readonly workspace: string
}

/**
 * `embedding` by `model`'s providers in routing order within its time limit, each through the
 * cache and the rate limits; not stored (the caller decides how: /openai/v1/embeddings as an
 * embedding inference, DICL as a model inference of its inference).
 */
export const embedWith = (
  model: ResolvedEmbeddingModel,
  embedding: EmbeddingRequest,
  { requestModel, credentials, cache, tags, workspace }: EmbedOptions
): Effect.Effect<EmbeddingResult, AllProvidersFailed | CallRefused, InferenceServices> =>
  Effect.clockWith((clock) => {
    const started = clock.currentTimeMillisUnsafe()
    const extras = { bodyEdits: [], headerEdits: [], credentials }
    const routed = inRoutingOrder(
      model.providers,
      (provider) => providerCall(embedding, model.config.name, provider.config, noVariant, extras),
      (provider) => provider.config.timeouts.non_streaming?.total_ms,
      (provider, call) => attempt(provider, call, cache, { publicId: tags[apiKeyTag], workspace, tags }),
      (failures) => allFailed(model.config.name, failures, "embedding model"),
      clock
    ).pipe(Effect.map(([answer, provider, call]): EmbeddingResult => {
      const now = clock.currentTimeMillisUnsafe()
      return {
        ...answer,
        id: uuidv7(now),
        model: requestModel,
        modelName: model.config.name,
        provider,
        call,
        responseTimeMs: now - started,
        cache,
        tags
      }
    }))
    const limit = model.config.timeoutMs
    return within(routed, limit, () =>
      new AllProvidersFailed({ message: `embedding model "${model.config.name}" timed out after ${limit} ms`, kind: "timeout" }))
  })

/** one provider's answer: from the cache when the request reads it and an entry exists, else from the provider within the rate limits */
const attempt = (
  provider: EmbeddingProvider,
  call: ProviderCall<EmbeddingRequest>,
  cache: CachePolicy,
  scope: RequestScope
): Effect.Effect<Answer, ProviderFailure | CallRefused, InferenceServices> => {
  const viaProvider = () => withinRateLimits(
    scope,
    asModelRequest(call.request.input),
    // embeddings have no prices here: under a budget they reserve and are charged `default_cost`
    undefined,
    () =>
      Effect.map(provider.client.embed(call), (answer): Answer => ({
        embeddings: answer.embeddings,
        inputTokens: answer.usage.input_tokens,
        rawRequest: answer.rawRequest,
        rawResponse: answer.rawResponse,
        cached: false
      })),
    (answer) => ({ usage: { input_tokens: answer.inputTokens, output_tokens: 0 } })
  )
  if (!cache.read) return viaProvider()
  return Effect.flatMap(fromCache(provider, call, cache), (hit) => hit === undefined ? viaProvider() : Effect.succeed(hit))
}

/** the cached answer for this call, when one exists and reads back; never fails (a slow or failing lookup calls the provider) */
const fromCache = (
  provider: EmbeddingProvider,
  call: ProviderCall<EmbeddingRequest>,
  cache: CachePolicy
): Effect.Effect<Answer | undefined, never, CacheStoreService> =>
  Effect.flatMap(CacheStoreService, ({ store }) => {
    if (store === undefined) return Effect.succeed(undefined)
    const key = embeddingCacheKey(provider.config, call, cache.scope)
    return abandonAfter(store.lookupEmbedding(key, cache.maxAgeS), cache.lookupTimeoutMs).pipe(
      Effect.map((entry) => {
        if (entry === undefined) return undefined
        const parsed = provider.client.parse(entry.rawResponse)
        if (parsed instanceof ProviderFailure || parsed.embeddings.length !== call.request.input.length) return undefined
        return { embeddings: parsed.embeddings, inputTokens: 0, rawRequest: entry.rawRequest, rawResponse: entry.rawResponse, cached: true }
      }),
      Effect.catch((error) => Effect.as(Effect.logWarning(`embedding cache lookup failed, calling the provider: ${error.message}`), undefined))
    )
  })

