/**
 * DICL at inference: how a `experimental_dynamic_in_context_learning` variant finds its
 * examples (`EngineDeps.dicl`). The request's input is embedded (`diclInputText`, as examples were
 * when they were created) by the variant's embedding model, through the cache and the rate
 * limits as any embedding; the k nearest examples of the function and variant within
 * `max_distance` are read from the analytics database; they become user/assistant pairs before
 * a user message holding the input's text. The embedding call is one of the inference's model
 * calls (stored as a model inference of it, its tokens in the inference's usage).
 *
 * Anything that keeps the examples from being found (no example store, the embedding model
 * failing or answering no usable vector, the store failing) fails the variant, so the next
 * variant is tried; a refused call (rate limit, a missing credential) ends the inference as any
 * refused model call does.
 */
import * as Effect from "effect/Effect"
import type { DiclVariant, GatewayConfig } from "../config/types.ts"
import { EmbeddingModelTable } from "../embeddings/models.ts"
import { embedWith } from "../embeddings/service.ts"
import { type EmbeddingResult } from "../embeddings/result.ts"
import { AllProvidersFailed } from "../errors.ts"
import type { PreparedInference } from "../inference/prepare.ts"
import type { Pricing } from "../inference/pricing.ts"
import type { RequestMessage } from "../inference/types.ts"
import type { ModelCallRecord } from "../inference/variants/answer.ts"
import type { DiclContext, DiclRetrieval } from "../inference/variants/dicl.ts"
import { embeddingModelRequestName } from "./embeddingModel.ts"
import type { DiclExampleStore } from "./store.ts"
import { diclExampleMessages, diclInputText, embeddingProblem } from "./examples.ts"

const variantFailed = (variant: DiclVariant, reason: string) =>
  new AllProvidersFailed({ message: `variant "${variant.name}" (dynamic in-context learning): ${reason}`, kind: "upstream" })

/** the embedding call as a model inference of the inference: no output, its input tokens, its cost when its provider prices it */
const embeddingCall = (
  pricing: Pricing,
  result: EmbeddingResult,
  inputMessages: ReadonlyArray<RequestMessage>
): Effect.Effect<ModelCallRecord> => {
  const provider = result.provider.config
  return Effect.map(result.cached ? Effect.succeed(pricing.cached(provider)) : pricing.response(provider, result.rawResponse), (cost) => ({
    modelInferenceId: result.id,
    modelName: result.modelName,
    providerName: provider.name,
    providerType: provider.type,
    rawRequest: result.rawRequest,
    rawResponse: result.rawResponse,
    inputMessages,
    output: [],
    usage: { input_tokens: result.inputTokens, output_tokens: 0 },
    cost,
    responseTimeMs: result.responseTimeMs,
    cached: result.cached
  }))
}

/**
 * The retrieval of DICL variants under `config` (embedding short-hands are resolved once and
 * kept) from `examples` (absent while observability is off), its embedding calls priced by `pricing`.
 */
export const diclRetrieval = (config: GatewayConfig, pricing: Pricing, examples: DiclExampleStore | undefined): DiclRetrieval => {
  const embeddingModels = new EmbeddingModelTable(config)
  return (prepared: PreparedInference, variant: DiclVariant): ReturnType<DiclRetrieval> => {
    const text = diclInputText(prepared.request.input)
    const input: RequestMessage = { role: "user", content: [{ type: "text", text }] }
    // no example asked for (k = 0): nothing to embed or look up
    if (variant.k === 0) return Effect.succeed({ messages: [input], calls: [] })
    if (examples === undefined) return Effect.fail(variantFailed(variant, "there is no example store to read its examples from (observability is off)"))
    const found = embeddingModels.get(embeddingModelRequestName(config, variant.embeddingModel))
    // checked at start-up; a short-hand's provider type could still refuse
    if (!("model" in found)) return Effect.fail(variantFailed(variant, "unknown" in found ? found.unknown : found.refused))
    const options = { requestModel: variant.embeddingModel, credentials: prepared.credentials, cache: prepared.cache, tags: prepared.request.tags ?? {}, workspace: prepared.workspace }
    return Effect.gen(function*() {
      const result = yield* embedWith(found.model, { input: [text] }, options)
      const call = yield* embeddingCall(pricing, result, [input])
      const embedding = result.embeddings.length === 1 ? result.embeddings[0] : undefined
      const problem = embedding === undefined
        ? `embedding model "${variant.embeddingModel}" answered ${result.embeddings.length} embeddings for 1 input`
        : embeddingProblem(embedding)
      if (embedding === undefined || problem !== undefined) return yield* Effect.fail(variantFailed(variant, problem ?? ""))
      // the examples of the inference's workspace only
      const neighbors = yield* examples.nearest(prepared.workspace, {
        functionName: prepared.functionName,
        variantName: variant.name,
        embedding,
        k: variant.k,
        maxDistance: variant.maxDistance
      }).pipe(Effect.mapError((error) => variantFailed(variant, `its examples could not be read: ${error.message}`)))
      const context: DiclContext = { messages: [...diclExampleMessages(neighbors, prepared.fn.type), input], calls: [call] }
      return context
    })
  }
}
