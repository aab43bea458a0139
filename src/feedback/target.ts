/**
 * Does the target of a feedback exist? An inference written a moment ago may still be in
 * this gateway's write queue, or in another gateway's (several processes share a database),
 * so the store is asked again over about a second and a half (`lookupRetries`) before the
 * answer is no.
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Schedule from "effect/Schedule"
import { InvalidRequest } from "../errors.ts"
import type { InferenceTarget } from "../analytics/records.ts"
import { storeFailure, type StoreFailure } from "../analytics/stores.ts"
import type { WriteQueue } from "../analytics/writeQueue.ts"
import type { StoreError } from "../storeError.ts"
import type { InferenceStore } from "../storedInferences/store.ts"

/** three more asks, 250, 500 and 750 ms apart */
const lookupRetries = Schedule.recurs(3).pipe(
  Schedule.modifyDelay(({ attempt }) => Effect.succeed(Duration.millis(250 * attempt)))
)

/** what the queue, then the store, knows of a target, asked until it is found or the retries are spent */
const lookUp = <A>(
  inferences: InferenceStore,
  inQueue: () => A | undefined,
  inStore: Effect.Effect<A | undefined, StoreError>
): Effect.Effect<A | undefined, StoreFailure> =>
  Effect.suspend(() => {
    const queued = inQueue()
    return queued !== undefined
      ? Effect.succeed(queued)
      : Effect.mapError(inStore, storeFailure(inferences))
  }).pipe(Effect.repeat({ schedule: lookupRetries, until: (found) => found !== undefined }))

export const findInferenceTarget = (
  inferences: InferenceStore,
  writeQueue: WriteQueue["Service"],
  id: string
): Effect.Effect<InferenceTarget, InvalidRequest | StoreFailure> =>
  Effect.flatMap(
    lookUp(inferences, () => writeQueue.queuedInference(id), inferences.findInference(id)),
    (target) => target === undefined ? Effect.fail(new InvalidRequest({ message: `inference_id: no inference with id ${id}` })) : Effect.succeed(target)
  )

export const checkEpisodeExists = (
  inferences: InferenceStore,
  writeQueue: WriteQueue["Service"],
  id: string
): Effect.Effect<void, InvalidRequest | StoreFailure> =>
  Effect.flatMap(
    lookUp(
      inferences,
      () => (writeQueue.queuedEpisode(id) ? true : undefined),
      Effect.map(inferences.episodeExists(id), (exists) => (exists ? true : undefined))
    ),
    (found) => found === undefined ? Effect.fail(new InvalidRequest({ message: `episode_id: no episode with id ${id}` })) : Effect.void
  )
