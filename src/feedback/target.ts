/**
 * Does the target of a feedback exist? An inference written a moment ago may still be in
 * this gateway's write queue, or in another gateway's (several processes share a database),
 * so the store is asked again over about a second and a half (src/analytics/lookUp.ts) before
 * the answer is no. Only targets of the caller's workspace are found: another workspace's
 * inference or episode answers exactly as an unknown id.
 */
import * as Effect from "effect/Effect"
import { InvalidRequest } from "../errors.ts"
import { lookUp } from "../analytics/lookUp.ts"
import type { InferenceTarget } from "../analytics/records.ts"
import type { StoreFailure } from "../analytics/stores.ts"
import type { WriteQueue } from "../analytics/writeQueue.ts"
import type { InferenceStore } from "../storedInferences/store.ts"

export const findInferenceTarget = (
  inferences: InferenceStore,
  writeQueue: WriteQueue["Service"],
  workspace: string,
  id: string
): Effect.Effect<InferenceTarget, InvalidRequest | StoreFailure> =>
  Effect.flatMap(
    lookUp(inferences, () => writeQueue.queuedInference(workspace, id), inferences.findInference(workspace, id)),
    (target) => target === undefined ? Effect.fail(new InvalidRequest({ message: `inference_id: no inference with id ${id}` })) : Effect.succeed(target)
  )

export const checkEpisodeExists = (
  inferences: InferenceStore,
  writeQueue: WriteQueue["Service"],
  workspace: string,
  id: string
): Effect.Effect<void, InvalidRequest | StoreFailure> =>
  Effect.flatMap(
    lookUp(
      inferences,
      () => (writeQueue.queuedEpisode(workspace, id) ? true : undefined),
      Effect.map(inferences.episodeExists(workspace, id), (exists) => (exists ? true : undefined))
    ),
    (found) => found === undefined ? Effect.fail(new InvalidRequest({ message: `episode_id: no episode with id ${id}` })) : Effect.void
  )
