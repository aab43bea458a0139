/**
 * The dummy provider's embeddings, as TensorZero's: a vector of 1536 zeros per input (whatever
 * `dimensions` asks), usage 10 input tokens; a name starting with `error` fails, one containing
 * `slow` answers after 30 s, `test_key` refuses a key that is not `good_key`.
 */
import * as Effect from "effect/Effect"
import type { EmbeddingResponse } from "../codec.ts"
import { ProviderFailure } from "../failure.ts"
import type { EmbeddingClient } from "../types.ts"
import { dummyEmbeddingLength, dummyEmbeddingUsage, dummyGoodKey } from "./fixed.ts"

export const dummySlowEmbeddingDelayMs = 30_000

const failure = (message: string) => new ProviderFailure({ message, timedOut: false })

const zeros = (count: number): EmbeddingResponse => ({
  embeddings: Array.from({ length: count }, () => new Array<number>(dummyEmbeddingLength).fill(0)),
  usage: dummyEmbeddingUsage
})

export const dummyEmbeddingClient = (modelName: string): EmbeddingClient => {
  const answer = (inputs: number, apiKey: string | undefined): Effect.Effect<EmbeddingResponse, ProviderFailure> => {
    if (modelName.startsWith("error")) return Effect.fail(failure(`Error sending request to Dummy provider for model '${modelName}'.`))
    if (modelName === "test_key" && apiKey !== undefined && apiKey !== dummyGoodKey) {
      return Effect.fail(failure("Invalid API key for Dummy provider"))
    }
    const embeddings = Effect.sync(() => zeros(inputs))
    return modelName.includes("slow") ? Effect.andThen(Effect.sleep(dummySlowEmbeddingDelayMs), embeddings) : embeddings
  }
  return {
    embed: (call) =>
      Effect.map(answer(call.request.input.length, call.apiKey), (response) => ({
        ...response,
        rawRequest: JSON.stringify({ model: modelName, input: call.request.input }),
        // the count, not the vectors: a cache hit reads it back (`parse`)
        rawResponse: JSON.stringify({ embeddings: response.embeddings.length, length: dummyEmbeddingLength })
      })),
    parse: (rawResponse) => {
      try {
        const stored = JSON.parse(rawResponse) as { readonly embeddings?: unknown }
        if (typeof stored.embeddings === "number" && Number.isSafeInteger(stored.embeddings) && stored.embeddings >= 0) {
          return zeros(stored.embeddings)
        }
      } catch {
        // answered below
      }
      return failure("a stored dummy embedding answer that is not one")
    }
  }
}
