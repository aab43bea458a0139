/** The endpoints of OpenAiResponsesGroup (the HttpApi contract): OpenAI's Responses API, over the Schemas of src/openaiResponses/api.ts and src/api/openaiResponses.ts. */
import * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as HttpApiSchema from "effect/http-api/HttpApiSchema"
import * as OpenApi from "effect/http-api/OpenApi"
import * as Schema from "effect/Schema"
import { bodyStatuses, errorsWith, keyedStatuses } from "../api/errors.ts"
import { OpenAiErrorResponse } from "../api/openaiCompatible.ts"
import { ResponseObject, ResponseStreamEvent } from "../api/openaiResponses.ts"
import { CreateResponseRequest } from "../openaiResponses/api.ts"
import { ErrorFamily, requiresKey } from "./guard.ts"

export const OpenAiResponsesGroup = HttpApiGroup.make("openaiResponses")
  .add(
    HttpApiEndpoint.post("createResponse", "/openai/v1/responses", {
      // other fields are taken and ignored, as OpenAI's clients and agents send them
      payload: Schema.StructWithRest(CreateResponseRequest, [Schema.Record(Schema.String, Schema.Unknown)]),
      success: [ResponseObject, HttpApiSchema.StreamSse({ data: ResponseStreamEvent })],
      error: errorsWith(OpenAiErrorResponse, [...bodyStatuses, 404, 408, 500, 502, 504, ...keyedStatuses])
    }).annotateMerge(OpenApi.annotations({
      summary: "Create a response (OpenAI Responses-compatible)",
      description:
        "OpenAI's Responses API: point an OpenAI SDK's base URL at `<gateway>/openai/v1`. `model` names a function (`gateway::function_name::<name>`, optionally `::variant_name::<variant>`), a model (`gateway::model_name::<name>`) or a configured model by its bare name. With `\"stream\": true` the answer is the Responses API's named events. Stateless: `previous_response_id`, `background`, `conversation`, `prompt` and built-in tools are refused (400); `store: true` is answered `store: false` with a `gateway-warning` header."
    }))
  )
  .annotate(ErrorFamily, "openai")
  .annotateEndpointsMerge(requiresKey)
  .annotateMerge(OpenApi.annotations({ title: "OpenAI Responses-compatible" }))
