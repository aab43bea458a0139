/**
 * `GET /v1/ui/datasets/:dataset_name/datapoints/:datapoint_id/history`: every version of a
 * datapoint, for the UI's datapoint page. An update writes a new version with a new id and
 * stales the old one; the public routes read a version by its id but cannot say which versions
 * belong together. The store ties them by their first version's id.
 */
import * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as OpenApi from "effect/http-api/OpenApi"
import * as Schema from "effect/Schema"
import { ChatDatapoint, datasetNameRule, DatasetsResponse, JsonDatapoint } from "./datasets.ts"
import { adminStatuses, gatewayErrors } from "./errors.ts"
import { AdminOnly, requiresKey } from "./guard.ts"

export const DatapointHistory = Schema.Struct({
  versions: Schema.Array(Schema.Union([ChatDatapoint, JsonDatapoint])).annotate({
    description: "the datapoint's versions, newest first: the live one (if any) and the stale ones (`staled_at` set)"
  })
}).annotate({ identifier: "DatapointHistory" })
export type DatapointHistory = typeof DatapointHistory.Type

/** a datapoint version as the dataset routes answer it */
export type Datapoint = typeof ChatDatapoint.Type | typeof JsonDatapoint.Type
/** `GET /v1/datasets` */
export type DatasetsList = typeof DatasetsResponse.Type

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
