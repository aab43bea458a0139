/**
 * Does the target of a feedback exist? An inference written a moment ago may still be in
 * this gateway's write queue, or in another gateway's (several processes share a database),
 * so the store is asked again over about a second and a half before the answer is no.
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import { InvalidRequest, ServiceUnavailable } from "../errors.ts"
import { analyticsUrlVariable, type InferenceTarget, Observability, type Store } from "../observability/store.ts"

const retryDelaysMs = [250, 500, 750]

export const observabilityDisabled = () =>
  new ServiceUnavailable({
    message:
      `observability is disabled: set ${analyticsUrlVariable} (and leave [gateway.observability] enabled) to store and read inferences and feedback`
  })

/** The store, or a 503 naming the variable that would enable it. */
export const requireStore: Effect.Effect<Store, ServiceUnavailable, Observability> = Effect.flatMap(
  Observability,
  ({ store }) => (store === undefined ? Effect.fail(observabilityDisabled()) : Effect.succeed(store))
)

export const storeUnavailable = (store: Store, message: string) =>
  new ServiceUnavailable({ message: `the ${store.backend} database is unavailable: ${message}` })

const lookUp = <A>(
  store: Store,
  inQueue: () => A | undefined,
  inStore: Effect.Effect<A | undefined, { readonly message: string }>
): Effect.Effect<A | undefined, ServiceUnavailable> => {
  const attempt = (index: number): Effect.Effect<A | undefined, ServiceUnavailable> => {
    const queued = inQueue()
    if (queued !== undefined) return Effect.succeed(queued)
    return Effect.flatMap(
      Effect.mapError(inStore, (error) => storeUnavailable(store, error.message)),
      (found) =>
        found !== undefined || index >= retryDelaysMs.length
          ? Effect.succeed(found)
          : Effect.flatMap(Effect.sleep(Duration.millis(retryDelaysMs[index])), () => attempt(index + 1))
    )
  }
  return attempt(0)
}

export const findInferenceTarget = (id: string): Effect.Effect<InferenceTarget, InvalidRequest | ServiceUnavailable, Observability> =>
  Effect.gen(function*() {
    const observability = yield* Observability
    const store = yield* requireStore
    const target = yield* lookUp(store, () => observability.queuedInference(id), store.findInference(id))
    if (target === undefined) return yield* new InvalidRequest({ message: `inference_id: no inference with id ${id}` })
    return target
  })

export const checkEpisodeExists = (id: string): Effect.Effect<void, InvalidRequest | ServiceUnavailable, Observability> =>
  Effect.gen(function*() {
    const observability = yield* Observability
    const store = yield* requireStore
    const found = yield* lookUp(
      store,
      () => (observability.queuedEpisode(id) ? true : undefined),
      Effect.map(store.episodeExists(id), (exists) => (exists ? true : undefined))
    )
    if (found === undefined) return yield* new InvalidRequest({ message: `episode_id: no episode with id ${id}` })
  })
