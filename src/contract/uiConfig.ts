/** The endpoints of UiConfigGroup (the HttpApi contract), over the request and answer Schemas of src/api/uiConfig.ts. */
import * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as OpenApi from "effect/http-api/OpenApi"
import { adminStatuses, gatewayErrors } from "../api/errors.ts"
import { AdminOnly, requiresKey } from "./guard.ts"
import { UiConfig } from "../api/uiConfig.ts"

export const UiConfigGroup = HttpApiGroup.make("uiConfig")
  .add(
    HttpApiEndpoint.get("getUiConfig", "/v1/ui/config", { success: UiConfig, error: gatewayErrors(adminStatuses) })
      .annotateMerge(OpenApi.annotations({ summary: "The configuration as loaded: functions, variants, models, tools, metrics, evaluators (no secrets)" }))
  )
  .annotate(AdminOnly, true)
  .annotateEndpointsMerge(requiresKey)
  .annotateMerge(OpenApi.annotations({ title: "UI" }))
