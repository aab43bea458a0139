/** The wire contract of `POST /feedback` (spec 4.3): the request, the answer and the endpoint. */
import * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as OpenApi from "effect/http-api/OpenApi"
import * as Schema from "effect/Schema"
import { bodyStatuses, gatewayErrors, keyedStatuses } from "./errors.ts"
import { requiresKey } from "./guard.ts"

export const FeedbackRequest = Schema.Struct({
  metric_name: Schema.String,
  value: Schema.Unknown,
  inference_id: Schema.optional(Schema.String),
  episode_id: Schema.optional(Schema.String),
  tags: Schema.optional(Schema.Record(Schema.String, Schema.String)),
  dryrun: Schema.optional(Schema.Boolean)
})
export type FeedbackRequest = typeof FeedbackRequest.Type

export const FeedbackResponse = Schema.Struct({
  feedback_id: Schema.String.annotate({ description: "the id of the stored feedback (a UUIDv7; also answered to a dryrun, which stores nothing)" })
}).annotate({ identifier: "FeedbackResponse" })
export type FeedbackResponse = typeof FeedbackResponse.Type

export const FeedbackGroup = HttpApiGroup.make("feedback")
  .add(
    HttpApiEndpoint.post("feedback", "/feedback", {
      payload: FeedbackRequest,
      success: FeedbackResponse,
      error: gatewayErrors([...bodyStatuses, 404, 500, ...keyedStatuses])
    }).annotateMerge(OpenApi.annotations({
      summary: "Assign feedback",
      description: "A metric's value for an inference or an episode (`inference_id` or `episode_id`), a comment, or a demonstration."
    }))
  )
  .annotateEndpointsMerge(requiresKey)
  .annotateMerge(OpenApi.annotations({ title: "Feedback" }))
