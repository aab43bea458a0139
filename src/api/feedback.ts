/** The request and answer Schemas of `POST /feedback` (spec 4.3): the request, the answer and the endpoint. */
import * as Schema from "effect/Schema"

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
