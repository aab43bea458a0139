/** The endpoints of BatchGroup (the HttpApi contract), over the request and answer Schemas of src/api/batch.ts. */
import * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as OpenApi from "effect/http-api/OpenApi"
import * as Schema from "effect/Schema"
import { bodyStatuses, gatewayErrors, keyedStatuses } from "../api/errors.ts"
import { requiresKey } from "./guard.ts"
import { BatchInferenceRequest, BatchInferenceResponse, BatchStatusResponse, maxBatchPage } from "../api/batch.ts"

/** the paging of a completed batch's inferences (without it, all of them, written a page at a time) */
const BatchPaging = {
  limit: Schema.optional(Schema.String).annotate({ description: `the most inferences answered (1 to ${maxBatchPage}); the answer then has \`next_after\`` }),
  after: Schema.optional(Schema.String).annotate({ description: "only the inferences after this one (an inference id of the batch, in input order)" })
}

export const BatchGroup = HttpApiGroup.make("batch")
  .add(
    HttpApiEndpoint.post("startBatch", "/batch_inference", {
      payload: BatchInferenceRequest,
      success: BatchInferenceResponse,
      error: gatewayErrors([...bodyStatuses, 404, 502, ...keyedStatuses])
    }).annotateMerge(OpenApi.annotations({
      summary: "Submit a batch of inferences",
      description: "Every input is checked and rendered, then the whole batch is sent to the provider's batch API (half the price, results within 24 h)."
    })),
    HttpApiEndpoint.get("getBatch", "/batch_inference/:batch_id", {
      params: { batch_id: Schema.String },
      query: BatchPaging,
      success: BatchStatusResponse,
      error: gatewayErrors([400, 404, 502, ...keyedStatuses])
    }).annotateMerge(OpenApi.annotations({
      summary: "Read a batch",
      description: "While the batch is pending, polls the provider when due (at most once per `[gateway.batch] poll_interval_s` across " +
        "gateways, never while another read polls it: such a read answers pending); once it completed, its inferences are stored " +
        "and read from the database, all of them (streamed) or a page (`limit`, `after`)."
    })),
    HttpApiEndpoint.get("getBatchInference", "/batch_inference/:batch_id/inference/:inference_id", {
      params: { batch_id: Schema.String, inference_id: Schema.String },
      success: BatchStatusResponse,
      error: gatewayErrors([400, 404, 502, ...keyedStatuses])
    }).annotateMerge(OpenApi.annotations({ summary: "Read one inference of a batch" }))
  )
  .annotateEndpointsMerge(requiresKey)
  .annotateMerge(OpenApi.annotations({ title: "Batch inference" }))
