/** The endpoints of UiOverviewGroup (the HttpApi contract), over the request and answer Schemas of src/api/uiOverview.ts. */
import * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as OpenApi from "effect/http-api/OpenApi"
import { adminStatuses, gatewayErrors } from "../api/errors.ts"
import { AdminOnly, requiresKey } from "./guard.ts"
import { OverviewQuery, UiOverview, maxOverviewBuckets } from "../api/uiOverview.ts"

export const UiOverviewGroup = HttpApiGroup.make("uiOverview")
  .add(
    HttpApiEndpoint.get("getUiOverview", "/v1/ui/overview", {
      query: OverviewQuery,
      success: UiOverview,
      error: gatewayErrors([400, 404, ...adminStatuses])
    }).annotateMerge(OpenApi.annotations({
      summary: "Inferences over time, variant shares, metric means with confidence intervals, and model calls with latency percentiles",
      description:
        "400: a time that is not RFC 3339, `from` not before `to`, an unknown `bucket` or more buckets than " + maxOverviewBuckets +
        ". 404: a function neither configured nor with any stored inference. 503: observability is off or its database does not answer."
    }))
  )
  .annotate(AdminOnly, true)
  .annotateEndpointsMerge(requiresKey)
  .annotateMerge(OpenApi.annotations({ title: "UI" }))
