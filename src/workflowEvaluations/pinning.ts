/**
 * What a workflow evaluation run does to an inference of one of its episodes (spec 4.6): the
 * run's variant for the function is the one that runs, and the inference carries the run's and
 * the episode's tags and the run's id. Pure: the request and the episode in, the request to
 * prepare (or the 400 to answer) out.
 */
import * as Result from "effect/Result"
import type { InferenceRequest } from "../api/inference.ts"
import { InvalidRequest } from "../errors.ts"
import type { WorkflowEpisodeRecord, WorkflowRunRecord } from "./store.ts"

/** on every inference of a run's episodes: the run's id */
export const workflowEvaluationRunIdTag = "gateway::workflow_evaluation_run_id"

/** a run episode and its run, as an inference of the episode needs them */
export interface RunEpisode {
  readonly episode: WorkflowEpisodeRecord
  readonly run: WorkflowRunRecord
}

/** the variant `run` pins for `functionName`, if it pins one */
export const pinnedVariant = (run: WorkflowRunRecord, functionName: string): string | undefined =>
  Object.hasOwn(run.variants, functionName) ? run.variants[functionName] : undefined

/**
 * `request` as it runs in `found`'s episode: the pinned variant of its function (the request's
 * own `variant_name` only when it names the same one), and the tags of the run, of the episode
 * and of the request, in that order (the later win on equal keys), with the run's id.
 */
export const applyRun = (request: InferenceRequest, { episode, run }: RunEpisode): Result.Result<InferenceRequest, InvalidRequest> => {
  const pinned = request.function_name === undefined ? undefined : pinnedVariant(run, request.function_name)
  if (pinned !== undefined && request.variant_name !== undefined && request.variant_name !== pinned) {
    return Result.fail(new InvalidRequest({
      message: `variant_name: "${request.variant_name}" is not the variant "${pinned}" that workflow evaluation run ${run.id} ` +
        `pins for function "${request.function_name}" (episode ${episode.id}); drop variant_name or name that one`
    }))
  }
  const tags = { ...run.tags, ...episode.tags, ...request.tags, [workflowEvaluationRunIdTag]: run.id }
  return Result.succeed(pinned === undefined ? { ...request, tags } : { ...request, variant_name: pinned, tags })
}
