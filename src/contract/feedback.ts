/** The endpoints of FeedbackGroup (the HttpApi contract), over the request and answer Schemas of src/api/feedback.ts. */
import * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as OpenApi from "effect/http-api/OpenApi"
import { bodyStatuses, gatewayErrors, keyedStatuses } from "../api/errors.ts"
import { requiresKey } from "./guard.ts"
import { FeedbackRequest, FeedbackResponse } from "../api/feedback.ts"

export const FeedbackGroup = HttpApiGroup.make("feedback")
  .add(
    HttpApiEndpoint.post("feedback", "/feedback", {
      payload: FeedbackRequest,
      success: FeedbackResponse,
      error: gatewayErrors([...bodyStatuses, 404, 500, ...keyedStatuses])
    }).annotateMerge(OpenApi.annotations({
      summary: "Assign feedback",
      description: "A metric's value for an inference or an episode (`inference_id` or `episode_id`), a comment, or a demonstration."
    }))
  )
  .annotateEndpointsMerge(requiresKey)
  .annotateMerge(OpenApi.annotations({ title: "Feedback" }))
