/**
 * The wire contract of workflow evaluation runs (spec 2.7, 4.6), served alike under
 * `/workflow_evaluation_run...` and TensorZero's older `/dynamic_evaluation_run...`: a run pins
 * a variant per function and carries tags; an episode of it carries a task name and tags; the
 * inferences of an episode run the pinned variants with those tags, and their feedback and the
 * episode's is summed up per metric when the run is read back.
 */
import * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as OpenApi from "effect/http-api/OpenApi"
import * as Schema from "effect/Schema"
import { bodyStatuses, gatewayErrors, keyedStatuses } from "./errors.ts"
import { requiresKey } from "./guard.ts"

/** the episodes a read of a run answers: 100 by default, at most this */
export const maxEpisodesListed = 1000
export const defaultEpisodesListed = 100
/** the runs a listing answers: 20 by default, at most this */
export const maxRunsListed = 1000
export const defaultRunsListed = 20

const Tags = Schema.Record(Schema.String, Schema.String)
const Timestamp = Schema.String.annotate({ description: "RFC 3339, UTC: the time of the id" })
const RunId = Schema.String.annotate({ description: "a run id (UUIDv7)" })

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

const RunPath = { run_id: RunId }

const EpisodesPage = {
  limit: Schema.optional(Schema.String).annotate({ description: `episodes to answer: ${defaultEpisodesListed} by default, 1 to ${maxEpisodesListed}` }),
  offset: Schema.optional(Schema.String).annotate({ description: "episodes to skip, default 0" })
}

const RunsQuery = {
  project_name: Schema.optional(Schema.String).annotate({ description: "only the runs of this project" }),
  limit: Schema.optional(Schema.String).annotate({ description: `runs to answer: ${defaultRunsListed} by default, 1 to ${maxRunsListed}` }),
  offset: Schema.optional(Schema.String).annotate({ description: "runs to skip, default 0" })
}

const createRun = {
  payload: CreateRunRequest,
  success: CreateRunResponse,
  error: gatewayErrors([...bodyStatuses, 404, ...keyedStatuses])
}
const createRunDoc = {
  summary: "Start a workflow evaluation run",
  description: "Pins a variant per function (each must be configured: 404 naming the one that is not) for the inferences of the run's episodes."
}

const createEpisode = {
  params: RunPath,
  payload: CreateEpisodeRequest,
  success: CreateEpisodeResponse,
  error: gatewayErrors([...bodyStatuses, 404, ...keyedStatuses])
}
const createEpisodeDoc = {
  summary: "Start an episode of a run",
  description: "Inferences with its `episode_id` run the run's pinned variants (a different `variant_name` is a 400) and carry the run's and the " +
    "episode's tags and `gateway::workflow_evaluation_run_id`; feedback on the episode or its inferences counts for the run."
}

const getRun = {
  params: RunPath,
  query: EpisodesPage,
  success: RunDetailsResponse,
  error: gatewayErrors([400, 404, ...keyedStatuses])
}
const getRunDoc = {
  summary: "Read a run",
  description: "The run, its episodes with their task names, and per metric the count and mean of the feedback on its episodes and their inferences."
}

const listRuns = {
  query: RunsQuery,
  success: RunsResponse,
  error: gatewayErrors([400, ...keyedStatuses])
}
const listRunsDoc = { summary: "List runs", description: "Newest first, of one project when `project_name` is given." }

const doc = ({ description, summary }: { readonly summary: string; readonly description: string }) => OpenApi.annotations({ summary, description })
/** the same route under TensorZero's older name */
const legacyDoc = ({ description, summary }: { readonly summary: string; readonly description: string }) =>
  OpenApi.annotations({ summary: `${summary} (dynamic)`, description: `${description} The same route as its \`workflow_evaluation\` path.` })

export const WorkflowEvaluationsGroup = HttpApiGroup.make("workflowEvaluations")
  .add(
    HttpApiEndpoint.post("createWorkflowRun", "/workflow_evaluation_run", createRun).annotateMerge(doc(createRunDoc)),
    HttpApiEndpoint.post("createWorkflowEpisode", "/workflow_evaluation_run/:run_id/episode", createEpisode).annotateMerge(doc(createEpisodeDoc)),
    HttpApiEndpoint.get("getWorkflowRun", "/workflow_evaluation_run/:run_id", getRun).annotateMerge(doc(getRunDoc)),
    HttpApiEndpoint.get("listWorkflowRuns", "/workflow_evaluation_runs", listRuns).annotateMerge(doc(listRunsDoc)),
    HttpApiEndpoint.post("createDynamicRun", "/dynamic_evaluation_run", createRun).annotateMerge(legacyDoc(createRunDoc)),
    HttpApiEndpoint.post("createDynamicEpisode", "/dynamic_evaluation_run/:run_id/episode", createEpisode).annotateMerge(legacyDoc(createEpisodeDoc)),
    HttpApiEndpoint.get("getDynamicRun", "/dynamic_evaluation_run/:run_id", getRun).annotateMerge(legacyDoc(getRunDoc)),
    HttpApiEndpoint.get("listDynamicRuns", "/dynamic_evaluation_runs", listRuns).annotateMerge(legacyDoc(listRunsDoc))
  )
  .annotateEndpointsMerge(requiresKey)
  .annotateMerge(OpenApi.annotations({ title: "Workflow evaluations" }))
