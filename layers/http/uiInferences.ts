/**
 * `GET /v1/ui/inferences/:inference_id` and `GET /v1/ui/episodes/:episode_id` (src/api/uiInferences.ts):
 * read through the StoredInferences service in the caller's workspace (another workspace's
 * inference or episode is answered as an unknown one), in the shapes of get_inferences.
 */
import * as Effect from "effect/Effect"
import * as HttpRouter from "effect/http/HttpRouter"
import { maxEpisodeInferences } from "../../src/api/uiInferences.ts"
import { InvalidRequest, NotFound } from "../../src/errors.ts"
import { isUuidV7 } from "../../src/inference/prepare.ts"
import { StoredInferences } from "../../src/storedInferences/service.ts"
import type { StoredFeedback } from "../../src/analytics/records.ts"
import { feedbackJson, inferenceJson, modelInferenceJson } from "./inferences.ts"
import { jsonResponse } from "./respond.ts"
import type { Caller } from "../../src/workspace.ts"

const idParam = (name: "inference_id" | "episode_id") =>
  Effect.flatMap(HttpRouter.params, (params) => {
    const id = params[name] ?? ""
    return isUuidV7(id) ? Effect.succeed(id) : Effect.fail(new InvalidRequest({ message: `${name}: "${id}" is not an id issued by the gateway (a UUIDv7)` }))
  })

const onTarget = (feedback: ReadonlyArray<StoredFeedback>, targetId: string) => feedback.filter((f) => f.targetId === targetId)

export const getUiInferenceHandler = (caller: Caller) => Effect.gen(function*() {
  const id = yield* idParam("inference_id")
  const found = yield* (yield* StoredInferences).get(caller.workspace, { ids: [id], include_feedback: true, include_model_inferences: true })
  const inference = found.inferences[0]
  if (inference === undefined) return yield* new NotFound({ message: `no inference ${id} is stored` })
  const feedback = found.feedback ?? []
  const calls = [...(found.modelInferences ?? [])].sort((a, b) => a.timestamp - b.timestamp || a.id.localeCompare(b.id))
  return jsonResponse(JSON.stringify({
    inference: inferenceJson(inference, undefined, undefined),
    model_inferences: calls.map(modelInferenceJson),
    feedback: onTarget(feedback, inference.id).map(feedbackJson),
    episode_feedback: onTarget(feedback, inference.episodeId).map(feedbackJson)
  }))
})

export const getUiEpisodeHandler = (caller: Caller) => Effect.gen(function*() {
  const id = yield* idParam("episode_id")
  // one more than shown, to know whether there are more
  const found = yield* (yield* StoredInferences).list(caller.workspace, { episode_id: id, limit: maxEpisodeInferences + 1, include_feedback: true })
  if (found.inferences.length === 0) return yield* new NotFound({ message: `no inference is stored in episode ${id}` })
  const latest = found.inferences.slice(0, maxEpisodeInferences)
  const feedback = found.feedback ?? []
  // each inference with the feedback on it alone: the episode's is answered once, beside them
  const onInferences = feedback.filter((f) => f.targetType === "inference")
  return jsonResponse(JSON.stringify({
    episode_id: id,
    inferences: latest.reverse().map((inference) => inferenceJson(inference, onInferences, undefined)),
    feedback: onTarget(feedback, id).map(feedbackJson),
    truncated: found.inferences.length > maxEpisodeInferences
  }))
})
