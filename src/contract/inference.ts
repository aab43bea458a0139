/** The endpoints of InferenceGroup (the HttpApi contract), over the request and answer Schemas of src/api/inference.ts. */
import * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as HttpApiSchema from "effect/http-api/HttpApiSchema"
import * as OpenApi from "effect/http-api/OpenApi"
import { bodyStatuses, gatewayErrors, keyedStatuses } from "../api/errors.ts"
import { requiresKey } from "./guard.ts"
import { InferenceChunk, InferenceRequest, InferenceResponse } from "../api/inference.ts"

export const InferenceGroup = HttpApiGroup.make("inference")
  .add(
    HttpApiEndpoint.post("inference", "/inference", {
      payload: InferenceRequest,
      success: [InferenceResponse, HttpApiSchema.StreamSse({ data: InferenceChunk })],
      error: gatewayErrors([...bodyStatuses, 404, 408, 500, 502, 504, ...keyedStatuses])
    }).annotateMerge(OpenApi.annotations({
      summary: "Run an inference",
      description:
        "Calls a function (a variant is sampled) or a model directly. With `\"stream\": true` the answer is a stream of Server-Sent Events."
    }))
  )
  .annotateEndpointsMerge(requiresKey)
  .annotateMerge(OpenApi.annotations({ title: "Inference" }))
