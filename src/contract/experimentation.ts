/** The endpoints of ExperimentationGroup (the HttpApi contract), over the request and answer Schemas of src/api/experimentation.ts. */
import * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as OpenApi from "effect/http-api/OpenApi"
import * as Schema from "effect/Schema"
import { gatewayErrors, keyedStatuses } from "../api/errors.ts"
import { requiresKey } from "./guard.ts"
import { ExperimentationResponse } from "../api/experimentation.ts"

export const ExperimentationGroup = HttpApiGroup.make("experimentation")
  .add(
    HttpApiEndpoint.get("getExperimentation", "/v1/experimentation/:function_name", {
      params: { function_name: Schema.String },
      success: ExperimentationResponse,
      error: gatewayErrors([404, ...keyedStatuses])
    }).annotateMerge(OpenApi.annotations({
      summary: "How a function's variants are drawn",
      description:
        "The probabilities a new episode draws its first variant with: an adaptive experiment's newest computation (with each candidate's " +
        "feedback count, mean and variance, and whether it stopped on a winner), or the normalized weights of a static experiment or of the variants."
    }))
  )
  .annotateEndpointsMerge(requiresKey)
  .annotateMerge(OpenApi.annotations({ title: "Experimentation" }))
