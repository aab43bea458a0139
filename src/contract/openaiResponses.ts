/** The endpoints of OpenAiResponsesGroup (the HttpApi contract): OpenAI's Responses API, over the Schemas of src/openaiResponses/api.ts and src/api/openaiResponses.ts. */
import * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as HttpApiSchema from "effect/http-api/HttpApiSchema"
import * as OpenApi from "effect/http-api/OpenApi"
import * as Schema from "effect/Schema"
import { bodyStatuses, errorsWith, keyedStatuses } from "../api/errors.ts"
import { OpenAiErrorResponse } from "../api/openaiCompatible.ts"
import { DeletedResponse, InputItemList, ResponseObject, ResponseStreamEvent } from "../api/openaiResponses.ts"
import { CreateResponseRequest } from "../openaiResponses/api.ts"
import { ErrorFamily, requiresKey } from "./guard.ts"

const ResponseId = { id: Schema.String.annotate({ description: "the response's id (the gateway's inference id)" }) }

const storedStatuses = [400, 404, 500, 503, ...keyedStatuses] as const

const storedDescription =
  "Only responses stored by this surface, not deleted, and with authentication on the caller's own are seen (others are a 404). Without an analytics database: a 400 naming `GATEWAY_ANALYTICS_DB_URL`."

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
        "OpenAI's Responses API: point an OpenAI SDK's base URL at `<gateway>/openai/v1`. `model` names a function (`gateway::function_name::<name>`, optionally `::variant_name::<variant>`), a model (`gateway::model_name::<name>`) or a configured model by its bare name. With `\"stream\": true` the answer is the Responses API's named events. With an analytics database (`GATEWAY_ANALYTICS_DB_URL`) a response is stored unless `store` is false, and `previous_response_id` continues a stored one (its input and output come before the new input); without one `store: true` is answered `store: false` with a `gateway-warning` header and `previous_response_id` is a 400. `background`, `conversation`, `prompt` and built-in tools are refused (400)."
    }))
  )
  .add(
    HttpApiEndpoint.get("getResponse", "/openai/v1/responses/:id", {
      params: ResponseId,
      success: ResponseObject,
      error: errorsWith(OpenAiErrorResponse, storedStatuses)
    }).annotateMerge(OpenApi.annotations({ summary: "Read a stored response", description: storedDescription })),
    HttpApiEndpoint.delete("deleteResponse", "/openai/v1/responses/:id", {
      params: ResponseId,
      success: DeletedResponse,
      error: errorsWith(OpenAiErrorResponse, storedStatuses)
    }).annotateMerge(OpenApi.annotations({
      summary: "Delete a stored response",
      description: "Hides the response from these routes and from `previous_response_id` (then a 404): its inference stays stored, for feedback and datasets."
    })),
    HttpApiEndpoint.get("listInputItems", "/openai/v1/responses/:id/input_items", {
      params: ResponseId,
      query: {
        after: Schema.optional(Schema.String).annotate({ description: "an item id: the page starts after it" }),
        limit: Schema.optional(Schema.String).annotate({ description: "1 to 100 (default 20)" }),
        order: Schema.optional(Schema.Literals(["asc", "desc"])).annotate({ description: "desc (newest first, the default) or asc" })
      },
      success: InputItemList,
      error: errorsWith(OpenAiErrorResponse, storedStatuses)
    }).annotateMerge(OpenApi.annotations({
      summary: "List a stored response's input items",
      description: "The whole conversation as stored (earlier turns of `previous_response_id` included), paged. " + storedDescription
    }))
  )
  .annotate(ErrorFamily, "openai")
  .annotateEndpointsMerge(requiresKey)
  .annotateMerge(OpenApi.annotations({ title: "OpenAI Responses-compatible" }))
