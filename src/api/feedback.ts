/** The wire contract of `POST /feedback` (spec 4.3). */
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
