/** The endpoints of OptimizationGroup (the HttpApi contract), over the request and answer Schemas of src/api/optimization.ts. */
import * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as OpenApi from "effect/http-api/OpenApi"
import * as Schema from "effect/Schema"
import { bodyStatuses, gatewayErrors, keyedStatuses } from "../api/errors.ts"
import { GepaTaskResponse, LaunchGepaRequest, LaunchGepaResponse } from "../api/gepa.ts"
import { requiresKey, Audited } from "./guard.ts"
import { CreateDiclExamplesRequest, CreateDiclExamplesResponse, DiclTaskResponse } from "../api/optimization.ts"

export const OptimizationGroup = HttpApiGroup.make("optimization")
  .add(
    HttpApiEndpoint.post("createDiclExamples", "/v1/optimization/dicl", {
      payload: CreateDiclExamplesRequest,
      success: CreateDiclExamplesResponse,
      error: gatewayErrors([...bodyStatuses, ...keyedStatuses])
    }).annotate(Audited, "dicl.launch").annotateMerge(OpenApi.annotations({
      summary: "Create the examples of a DICL variant",
      description:
        "Queues a durable task that embeds the inputs of a dataset's datapoints or of stored inferences, in batches, and stores them with their outputs " +
        "as the examples a dynamic in-context learning variant retrieves. Needs the analytics and the relational database."
    })),
    HttpApiEndpoint.get("getDiclTask", "/v1/optimization/dicl/:task_id", {
      params: { task_id: Schema.String },
      success: DiclTaskResponse,
      error: gatewayErrors([404, ...keyedStatuses])
    }).annotateMerge(OpenApi.annotations({ summary: "Read a DICL example task: its status, progress, and result or error" }))
  )
  .add(
    HttpApiEndpoint.post("launchGepa", "/v1/optimization/gepa", {
      payload: LaunchGepaRequest,
      success: LaunchGepaResponse,
      error: gatewayErrors([...bodyStatuses, ...keyedStatuses])
    }).annotate(Audited, "gepa.launch").annotateMerge(OpenApi.annotations({
      summary: "Launch a GEPA prompt optimization",
      description:
        "Queues a durable task that evolves the templates of a function's variants: it scores them on a validation set, asks an analysis model about " +
        "their results on training samples and a mutation model for better templates, and keeps the Pareto frontier. Needs the analytics and the relational database."
    })),
    HttpApiEndpoint.get("getGepaTask", "/v1/optimization/gepa/:task_id", {
      params: { task_id: Schema.String },
      success: GepaTaskResponse,
      error: gatewayErrors([404, ...keyedStatuses])
    }).annotateMerge(OpenApi.annotations({ summary: "Read a GEPA task: pending with its progress, completed with its variants and statistics, or error" })),
    HttpApiEndpoint.delete("cancelGepaTask", "/v1/optimization/gepa/:task_id", {
      params: { task_id: Schema.String },
      success: GepaTaskResponse,
      error: gatewayErrors([404, ...keyedStatuses])
    }).annotate(Audited, "gepa.cancel").annotateMerge(OpenApi.annotations({ summary: "Cancel a GEPA task (beyond the spec): its status becomes error, \"cancelled\"" }))
  )
  .annotateEndpointsMerge(requiresKey)
  .annotateMerge(OpenApi.annotations({ title: "Optimization" }))
