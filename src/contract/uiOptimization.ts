/** The endpoints of UiOptimizationGroup (the HttpApi contract), over the request and answer Schemas of src/api/uiOptimization.ts. */
import * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as OpenApi from "effect/http-api/OpenApi"
import * as Schema from "effect/Schema"
import { adminStatuses, gatewayErrors } from "../api/errors.ts"
import { AdminOnly, requiresKey } from "./guard.ts"
import { UiGepaExport } from "../api/uiOptimization.ts"

export const UiOptimizationGroup = HttpApiGroup.make("uiOptimization")
  .add(
    HttpApiEndpoint.get("exportGepaTask", "/v1/ui/optimization/gepa/:task_id/export", {
      params: { task_id: Schema.String },
      success: UiGepaExport,
      error: gatewayErrors([404, 409, ...adminStatuses])
    }).annotateMerge(OpenApi.annotations({
      summary: "The configuration files that adopt a completed GEPA task's variants",
      description: "The files `gateway optimize export` writes. 404 for an unknown task, 409 while it runs or when it ended in error."
    }))
  )
  .annotate(AdminOnly, true)
  .annotateEndpointsMerge(requiresKey)
  .annotateMerge(OpenApi.annotations({ title: "UI" }))
