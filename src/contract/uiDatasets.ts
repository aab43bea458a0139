/** The endpoints of UiDatasetsGroup (the HttpApi contract), over the request and answer Schemas of src/api/uiDatasets.ts. */
import * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as OpenApi from "effect/http-api/OpenApi"
import * as Schema from "effect/Schema"
import { datasetNameRule } from "../api/datasets.ts"
import { adminStatuses, gatewayErrors } from "../api/errors.ts"
import { AdminOnly, requiresKey } from "./guard.ts"
import { DatapointHistory } from "../api/uiDatasets.ts"

export const UiDatasetsGroup = HttpApiGroup.make("uiDatasets")
  .add(
    HttpApiEndpoint.get("getDatapointHistory", "/v1/ui/datasets/:dataset_name/datapoints/:datapoint_id/history", {
      params: {
        dataset_name: Schema.String.annotate({ description: datasetNameRule.description }),
        datapoint_id: Schema.String.annotate({ description: "any version's id (UUIDv7), live or stale" })
      },
      success: DatapointHistory,
      error: gatewayErrors([400, 404, ...adminStatuses])
    }).annotateMerge(OpenApi.annotations({
      summary: "A datapoint's versions",
      description: "Every version of the datapoint the id is a version of, newest first, stale ones included; 404 when the id is no datapoint of the dataset."
    }))
  )
  .annotate(AdminOnly, true)
  .annotateEndpointsMerge(requiresKey)
  .annotateMerge(OpenApi.annotations({ title: "UI" }))
