/**
 * The request and answer Schemas of workflow evaluation runs (spec 2.7, 4.6), served alike under
 * `/workflow_evaluation_run...` and TensorZero's older `/dynamic_evaluation_run...`: a run pins
 * a variant per function and carries tags; an episode of it carries a task name and tags; the
 * inferences of an episode run the pinned variants with those tags, and their feedback and the
 * episode's is summed up per metric when the run is read back.
 */
import * as Schema from "effect/Schema"

/** the episodes a read of a run answers: 100 by default, at most this */
export const maxEpisodesListed = 1000
export const defaultEpisodesListed = 100
/** the runs a listing answers: 20 by default, at most this */
export const maxRunsListed = 1000
export const defaultRunsListed = 20

const Tags = Schema.Record(Schema.String, Schema.String)
const Timestamp = Schema.String.annotate({ description: "RFC 3339, UTC: the time of the id" })
export const RunId = Schema.String.annotate({ description: "a run id (UUIDv7)" })

export const CreateRunRequest = Schema.Struct({
  variants: Schema.Record(Schema.String, Schema.String).annotate({
    description: "function name -> the variant every inference of the run's episodes runs for it; each must be configured"
  }),
  project_name: Schema.optional(Schema.NullOr(Schema.String)),
  display_name: Schema.optional(Schema.NullOr(Schema.String)),
  tags: Schema.optional(Schema.NullOr(Tags)).annotate({ description: "on every inference of the run; keys may not start with `gateway::`" })
}).annotate({ identifier: "CreateWorkflowEvaluationRunRequest" })
export type CreateRunRequest = typeof CreateRunRequest.Type

export const CreateRunResponse = Schema.Struct({ run_id: RunId }).annotate({ identifier: "CreateWorkflowEvaluationRunResponse" })

export const CreateEpisodeRequest = Schema.Struct({
  task_name: Schema.optional(Schema.NullOr(Schema.String)),
  tags: Schema.optional(Schema.NullOr(Tags)).annotate({
    description: "on every inference of the episode (over the run's on equal keys); keys may not start with `gateway::`"
  })
}).annotate({ identifier: "CreateWorkflowEvaluationEpisodeRequest" })
export type CreateEpisodeRequest = typeof CreateEpisodeRequest.Type

export const CreateEpisodeResponse = Schema.Struct({
  episode_id: Schema.String.annotate({ description: "a UUIDv7 to send as the `episode_id` of inferences and feedback" })
}).annotate({ identifier: "CreateWorkflowEvaluationEpisodeResponse" })

export const WorkflowRun = Schema.Struct({
  run_id: RunId,
  variants: Schema.Record(Schema.String, Schema.String),
  project_name: Schema.NullOr(Schema.String),
  display_name: Schema.NullOr(Schema.String),
  tags: Tags,
  timestamp: Timestamp
}).annotate({ identifier: "WorkflowEvaluationRun" })

export const WorkflowEpisode = Schema.Struct({
  episode_id: Schema.String,
  run_id: RunId,
  task_name: Schema.NullOr(Schema.String),
  tags: Tags,
  timestamp: Timestamp
}).annotate({ identifier: "WorkflowEvaluationEpisode" })

export const WorkflowMetric = Schema.Struct({
  metric_name: Schema.String,
  count: Schema.Int.annotate({ description: "feedback on the run's episodes and on their inferences" }),
  mean: Schema.NullOr(Schema.Finite).annotate({ description: "boolean (as 0 and 1) and float metrics; null for comments and demonstrations" })
}).annotate({ identifier: "WorkflowEvaluationMetric" })

export const RunDetailsResponse = Schema.Struct({
  run: WorkflowRun,
  episodes: Schema.Array(WorkflowEpisode).annotate({ description: "oldest first, a page of `limit` from `offset`" }),
  metrics: Schema.Array(WorkflowMetric).annotate({ description: "by metric name" })
}).annotate({ identifier: "WorkflowEvaluationRunDetails" })

export const RunsResponse = Schema.Struct({
  runs: Schema.Array(WorkflowRun).annotate({ description: "newest first" })
}).annotate({ identifier: "WorkflowEvaluationRuns" })
