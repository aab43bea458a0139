/**
 * Does the target of a feedback exist? An inference written a moment ago may still be in
 * this gateway's write queue, or in another gateway's (several processes share a database),
 * so the store is asked again over about a second and a half before the answer is no.
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import { InvalidRequest, ServiceUnavailable } from "../errors.ts"
import type { InferenceTarget } from "../inferences/store.ts"
import { Observability, observabilityDisabled, type ObservabilityStores, storeUnavailable } from "../observability/stores.ts"
import { WriteQueue } from "../observability/writeQueue.ts"

const retryDelaysMs = [250, 500, 750]

/** The store, or a 503 naming the variable that would enable it. */
export const requireStore: Effect.Effect<ObservabilityStores, ServiceUnavailable, Observability> = Effect.flatMap(
  Observability,
  ({ stores }) => (stores === undefined ? Effect.fail(observabilityDisabled()) : Effect.succeed(stores))
)

const lookUp = <A>(
  stores: ObservabilityStores,
  inQueue: () => A | undefined,
  inStore: Effect.Effect<A | undefined, { readonly message: string }>
): Effect.Effect<A | undefined, ServiceUnavailable> => {
  const attempt = (index: number): Effect.Effect<A | undefined, ServiceUnavailable> => {
    const queued = inQueue()
    if (queued !== undefined) return Effect.succeed(queued)
    return Effect.flatMap(
      Effect.mapError(inStore, (error) => storeUnavailable(stores.database.backend, error.message)),
      (found) =>
        found !== undefined || index >= retryDelaysMs.length
          ? Effect.succeed(found)
          : Effect.flatMap(Effect.sleep(Duration.millis(retryDelaysMs[index])), () => attempt(index + 1))
    )
  }
  return attempt(0)
}

export const findInferenceTarget = (id: string): Effect.Effect<InferenceTarget, InvalidRequest | ServiceUnavailable, Observability | WriteQueue> =>
  Effect.gen(function*() {
    const writeQueue = yield* WriteQueue
    const stores = yield* requireStore
    const target = yield* lookUp(stores, () => writeQueue.queuedInference(id), stores.inferences.findInference(id))
    if (target === undefined) return yield* new InvalidRequest({ message: `inference_id: no inference with id ${id}` })
    return target
  })

export const checkEpisodeExists = (id: string): Effect.Effect<void, InvalidRequest | ServiceUnavailable, Observability | WriteQueue> =>
  Effect.gen(function*() {
    const writeQueue = yield* WriteQueue
    const stores = yield* requireStore
    const found = yield* lookUp(
      stores,
      () => (writeQueue.queuedEpisode(id) ? true : undefined),
      Effect.map(stores.inferences.episodeExists(id), (exists) => (exists ? true : undefined))
    )
    if (found === undefined) return yield* new InvalidRequest({ message: `episode_id: no episode with id ${id}` })
  })
