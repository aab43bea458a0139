/**
 * `GET /v1/ui/inferences/:inference_id` and `GET /v1/ui/episodes/:episode_id`: one stored
 * inference with everything its page shows (its model calls with their raw request and response,
 * its feedback and its episode's), and one episode's inferences in order with their feedback.
 * The list of inferences is the public `POST /v1/inferences/list_inferences`; feedback and
 * datasets are written through their public routes.
 */
import * as Schema from "effect/Schema"
import { StoredChatInference, StoredFeedbackResponse, StoredJsonInference, StoredModelInferenceResponse } from "./inferences.ts"

/** an episode's page holds its latest inferences up to this many */
export const maxEpisodeInferences = 200

export const UiStoredInference = Schema.Union([StoredChatInference, StoredJsonInference])
export type UiStoredInference = typeof UiStoredInference.Type
export type UiStoredFeedback = typeof StoredFeedbackResponse.Type
export type UiModelInference = typeof StoredModelInferenceResponse.Type

export const UiInferenceDetails = Schema.Struct({
  /** as get_inferences answers it, without `feedback` and `model_inferences` (they are below) */
  inference: UiStoredInference,
  /** its model calls, oldest first (a fallback's failed attempts are not stored) */
  model_inferences: Schema.Array(StoredModelInferenceResponse),
  /** the feedback on the inference: metrics, comments, demonstrations, oldest first */
  feedback: Schema.Array(StoredFeedbackResponse),
  /** the feedback on its episode, oldest first */
  episode_feedback: Schema.Array(StoredFeedbackResponse)
}).annotate({ identifier: "UiInferenceDetails" })
export type UiInferenceDetails = typeof UiInferenceDetails.Type

export const UiEpisode = Schema.Struct({
  episode_id: Schema.String,
  /** oldest first, each with `feedback`: the feedback on that inference alone */
  inferences: Schema.Array(UiStoredInference),
  /** the feedback on the episode itself, oldest first */
  feedback: Schema.Array(StoredFeedbackResponse),
  /** true when the episode holds more than `maxEpisodeInferences` inferences: the latest ones are answered */
  truncated: Schema.Boolean
}).annotate({ identifier: "UiEpisode" })
export type UiEpisode = typeof UiEpisode.Type
