/** The endpoints of WorkflowEvaluationsGroup (the HttpApi contract), over the request and answer Schemas of src/api/workflowEvaluations.ts. */
import * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as OpenApi from "effect/http-api/OpenApi"
import * as Schema from "effect/Schema"
import { bodyStatuses, gatewayErrors, keyedStatuses } from "../api/errors.ts"
import { requiresKey } from "./guard.ts"
import { CreateEpisodeRequest, CreateEpisodeResponse, CreateRunRequest, CreateRunResponse, RunDetailsResponse, RunsResponse, defaultEpisodesListed, defaultRunsListed, maxEpisodesListed, maxRunsListed, RunId } from "../api/workflowEvaluations.ts"

/** the same route under TensorZero's older name */
const legacyDoc = ({ description, summary }: { readonly summary: string; readonly description: string }) =>
  OpenApi.annotations({ summary: `${summary} (dynamic)`, description: `${description} The same route as its \`workflow_evaluation\` path.` })

const doc = ({ description, summary }: { readonly summary: string; readonly description: string }) => OpenApi.annotations({ summary, description })

const listRunsDoc = { summary: "List runs", description: "Newest first, of one project when `project_name` is given." }

const RunsQuery = {
  project_name: Schema.optional(Schema.String).annotate({ description: "only the runs of this project" }),
  limit: Schema.optional(Schema.String).annotate({ description: `runs to answer: ${defaultRunsListed} by default, 1 to ${maxRunsListed}` }),
  offset: Schema.optional(Schema.String).annotate({ description: "runs to skip, default 0" })
}

const listRuns = {
  query: RunsQuery,
  success: RunsResponse,
  error: gatewayErrors([400, ...keyedStatuses])
}

const getRunDoc = {
  summary: "Read a run",
  description: "The run, its episodes with their task names, and per metric the count and mean of the feedback on its episodes and their inferences."
}

const EpisodesPage = {
  limit: Schema.optional(Schema.String).annotate({ description: `episodes to answer: ${defaultEpisodesListed} by default, 1 to ${maxEpisodesListed}` }),
  offset: Schema.optional(Schema.String).annotate({ description: "episodes to skip, default 0" })
}

const RunPath = { run_id: RunId }

const getRun = {
  params: RunPath,
  query: EpisodesPage,
  success: RunDetailsResponse,
  error: gatewayErrors([400, 404, ...keyedStatuses])
}

const createEpisodeDoc = {
  summary: "Start an episode of a run",
  description: "Inferences with its `episode_id` run the run's pinned variants (a different `variant_name` is a 400) and carry the run's and the " +
    "episode's tags and `gateway::workflow_evaluation_run_id`; feedback on the episode or its inferences counts for the run."
}

const createEpisode = {
  params: RunPath,
  payload: CreateEpisodeRequest,
  success: CreateEpisodeResponse,
  error: gatewayErrors([...bodyStatuses, 404, ...keyedStatuses])
}

const createRunDoc = {
  summary: "Start a workflow evaluation run",
  description: "Pins a variant per function (each must be configured: 404 naming the one that is not) for the inferences of the run's episodes."
}

const createRun = {
  payload: CreateRunRequest,
  success: CreateRunResponse,
  error: gatewayErrors([...bodyStatuses, 404, ...keyedStatuses])
}

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
