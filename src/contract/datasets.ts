/** The endpoints of DatasetsGroup (the HttpApi contract), over the request and answer Schemas of src/api/datasets.ts. */
import * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as HttpApiSchema from "effect/http-api/HttpApiSchema"
import * as OpenApi from "effect/http-api/OpenApi"
import * as Schema from "effect/Schema"
import { bodyStatuses, gatewayErrors, keyedStatuses } from "../api/errors.ts"
import { requiresKey, Audited, ReadsOnly } from "./guard.ts"
import { CreateDatapointsRequest, DatapointIds, DatapointsResponse, DatasetsResponse, DeleteDatapointsRequest, DeletedDatapoints, FromInferencesRequest, GetDatapointsRequest, ListDatapointsRequest, UpdateDatapointsRequest, UpdateMetadataRequest, datasetNameRule, jsonLinesContentType, maxDatapointsListed, maxFromInferences } from "../api/datasets.ts"

const JsonLines = Schema.String.pipe(HttpApiSchema.asText({ contentType: jsonLinesContentType }))

const DatasetPath = { dataset_name: Schema.String.annotate({ description: datasetNameRule.description }) }

export const DatasetsGroup = HttpApiGroup.make("datasets")
  .add(
    HttpApiEndpoint.get("listDatasets", "/v1/datasets", {
      success: DatasetsResponse,
      error: gatewayErrors(keyedStatuses)
    }).annotateMerge(OpenApi.annotations({
      summary: "List datasets",
      description: "Every dataset with its live datapoints per function and its last update."
    })),
    HttpApiEndpoint.post("createDatapoints", "/v1/datasets/:dataset_name/datapoints", {
      params: DatasetPath,
      payload: CreateDatapointsRequest,
      success: DatapointIds,
      error: gatewayErrors([...bodyStatuses, 404, ...keyedStatuses])
    }).annotateMerge(OpenApi.annotations({
      summary: "Create datapoints",
      description: "Validated against their functions (all or nothing); the dataset is created by its first datapoint. The new ids, in input order."
    })),
    HttpApiEndpoint.post("getDatapoints", "/v1/datasets/:dataset_name/get_datapoints", {
      params: DatasetPath,
      payload: GetDatapointsRequest,
      success: DatapointsResponse,
      error: gatewayErrors([...bodyStatuses, ...keyedStatuses])
    }).annotate(ReadsOnly, true).annotateMerge(OpenApi.annotations({
      summary: "Get datapoints by id",
      description: "Stale ones included (`staled_at` set), in the order asked for; ids not in the dataset are left out."
    })),
    HttpApiEndpoint.post("listDatapoints", "/v1/datasets/:dataset_name/list_datapoints", {
      params: DatasetPath,
      payload: ListDatapointsRequest,
      success: DatapointsResponse,
      error: gatewayErrors([...bodyStatuses, ...keyedStatuses])
    }).annotate(ReadsOnly, true).annotateMerge(OpenApi.annotations({
      summary: "List live datapoints",
      description: `Filtered by function, tags and time, searched, ordered; \`limit\` (default 20, at most ${maxDatapointsListed}) from \`offset\`.`
    })),
    HttpApiEndpoint.post("fromInferences", "/v1/datasets/:dataset_name/from_inferences", {
      params: DatasetPath,
      payload: FromInferencesRequest,
      success: DatapointIds,
      error: gatewayErrors([...bodyStatuses, 404, ...keyedStatuses])
    }).annotateMerge(OpenApi.annotations({
      summary: "Create datapoints from stored inferences",
      description: `By ids, or by a query with the parameters of list_inferences (at most ${maxFromInferences} inferences a call).`
    })),
    HttpApiEndpoint.patch("updateDatapoints", "/v1/datasets/:dataset_name/datapoints", {
      params: DatasetPath,
      payload: UpdateDatapointsRequest,
      success: DatapointIds,
      error: gatewayErrors([...bodyStatuses, 404, 409, ...keyedStatuses])
    }).annotateMerge(OpenApi.annotations({
      summary: "Update datapoints",
      description: "Each gets a new version with a new id and the old one becomes stale (all or nothing). The new ids, in input order."
    })),
    HttpApiEndpoint.patch("updateMetadata", "/v1/datasets/:dataset_name/datapoints/metadata", {
      params: DatasetPath,
      payload: UpdateMetadataRequest,
      success: DatapointIds,
      error: gatewayErrors([...bodyStatuses, 404, ...keyedStatuses])
    }).annotateMerge(OpenApi.annotations({
      summary: "Rename datapoints in place",
      description: "Same ids, no new version; an omitted `name` changes nothing."
    })),
    HttpApiEndpoint.delete("deleteDatapoints", "/v1/datasets/:dataset_name/datapoints", {
      params: DatasetPath,
      payload: DeleteDatapointsRequest,
      success: DeletedDatapoints,
      error: gatewayErrors([...bodyStatuses, ...keyedStatuses])
    }).annotate(Audited, "datapoints.delete").annotateMerge(OpenApi.annotations({ summary: "Delete datapoints", description: "Marks them stale; their data stays." })),
    HttpApiEndpoint.delete("deleteDataset", "/v1/datasets/:dataset_name", {
      params: DatasetPath,
      success: DeletedDatapoints,
      error: gatewayErrors([400, ...keyedStatuses])
    }).annotate(Audited, "dataset.delete").annotateMerge(OpenApi.annotations({ summary: "Delete a dataset", description: "Marks every live datapoint stale; their data stays." })),
    HttpApiEndpoint.get("exportDatapoints", "/v1/datasets/:dataset_name/datapoints/export", {
      params: DatasetPath,
      success: JsonLines.annotate({ description: "one datapoint (as get_datapoints answers it) per line, oldest first" }),
      error: gatewayErrors([400, ...keyedStatuses])
    }).annotateMerge(OpenApi.annotations({ summary: "Export live datapoints as JSON Lines" })),
    HttpApiEndpoint.post("importDatapoints", "/v1/datasets/:dataset_name/datapoints/import", {
      params: DatasetPath,
      payload: JsonLines,
      success: DatapointIds,
      error: gatewayErrors([...bodyStatuses, 404, ...keyedStatuses])
    }).annotate(Audited, "dataset.import").annotateMerge(OpenApi.annotations({
      summary: "Import datapoints from JSON Lines",
      description: "One datapoint per line, as create takes them or as export writes them; validated like create, all or nothing. The new ids, in line order."
    }))
  )
  .annotateEndpointsMerge(requiresKey)
  .annotateMerge(OpenApi.annotations({ title: "Datasets" }))
