/** The endpoints of InferencesGroup (the HttpApi contract), over the request and answer Schemas of src/api/inferences.ts. */
import * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as OpenApi from "effect/http-api/OpenApi"
import { bodyStatuses, gatewayErrors, keyedStatuses } from "../api/errors.ts"
import { ReadsOnly, requiresKey } from "./guard.ts"
import { GetInferencesRequest, InferencesResponse, ListInferencesRequest } from "../api/inferences.ts"

export const InferencesGroup = HttpApiGroup.make("inferences")
  .add(
    HttpApiEndpoint.post("getInferences", "/v1/inferences/get_inferences", {
      payload: GetInferencesRequest,
      success: InferencesResponse,
      error: gatewayErrors([...bodyStatuses, ...keyedStatuses])
    }).annotate(ReadsOnly, true).annotateMerge(OpenApi.annotations({
      summary: "Get stored inferences by id",
      description: "In the order asked for; ids not found are left out."
    })),
    HttpApiEndpoint.post("listInferences", "/v1/inferences/list_inferences", {
      payload: ListInferencesRequest,
      success: InferencesResponse,
      error: gatewayErrors([...bodyStatuses, ...keyedStatuses])
    }).annotate(ReadsOnly, true).annotateMerge(OpenApi.annotations({
      summary: "List stored inferences",
      description: "Filtered by function, variant, episode, tags, time, metrics and demonstrations; newest first, `limit` (default 20) from `offset`."
    }))
  )
  .annotateEndpointsMerge(requiresKey)
  .annotateMerge(OpenApi.annotations({ title: "Inferences" }))
