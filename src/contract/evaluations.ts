/** The endpoints of EvaluationsGroup (the HttpApi contract), over the request and answer Schemas of src/api/evaluations.ts. */
import * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as HttpApiSchema from "effect/http-api/HttpApiSchema"
import * as OpenApi from "effect/http-api/OpenApi"
import * as Schema from "effect/Schema"
import { bodyStatuses, gatewayErrors, keyedStatuses } from "../api/errors.ts"
import { requiresKey, Audited } from "./guard.ts"
import { maxResultsListed } from "../api/evaluationLimits.ts"
import { EvaluationEvent, EvaluationRunRequest, EvaluationRunResponse, EvaluationRunsResponse } from "../api/evaluations.ts"

const Paging = {
  limit: Schema.optional(Schema.String).annotate({ description: `default and at most ${maxResultsListed}` }),
  offset: Schema.optional(Schema.String)
}

export const EvaluationsGroup = HttpApiGroup.make("evaluations")
  .add(
    HttpApiEndpoint.post("runEvaluation", "/v1/evaluations/run", {
      payload: EvaluationRunRequest,
      success: HttpApiSchema.StreamSse({ data: EvaluationEvent }),
      error: gatewayErrors([...bodyStatuses, 404, ...keyedStatuses])
    }).annotate(Audited, "evaluation.launch").annotateMerge(OpenApi.annotations({
      summary: "Run an inference evaluation",
      description:
        "Runs the function on each datapoint and scores the output with each evaluator. Every inference is stored tagged with the run, " +
        "every score as feedback. Answers Server-Sent Events; a client that disconnects does not stop the run."
    })),
    HttpApiEndpoint.get("listEvaluationRuns", "/v1/evaluations/runs", {
      query: { function_name: Schema.optional(Schema.String), ...Paging },
      success: EvaluationRunsResponse,
      error: gatewayErrors([400, 503, ...keyedStatuses])
    }).annotateMerge(OpenApi.annotations({ summary: "List evaluation runs", description: "Newest first." })),
    HttpApiEndpoint.get("getEvaluationRun", "/v1/evaluations/runs/:run_id", {
      params: { run_id: Schema.String },
      query: Paging,
      success: EvaluationRunResponse,
      error: gatewayErrors([400, 404, 503, ...keyedStatuses])
    }).annotateMerge(OpenApi.annotations({ summary: "Read an evaluation run", description: "Its summary and per-datapoint results, paged." }))
  )
  .annotateEndpointsMerge(requiresKey)
  .annotateMerge(OpenApi.annotations({ title: "Evaluations" }))
