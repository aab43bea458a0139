/** The endpoints of AnthropicGroup (the HttpApi contract): Anthropic's Messages API, over the Schemas of src/anthropicMessages/api.ts and src/api/anthropicMessages.ts. */
import * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as OpenApi from "effect/http-api/OpenApi"
import * as Schema from "effect/Schema"
import { AnthropicErrorResponse, AnthropicMessage } from "../api/anthropicMessages.ts"
import { bodyStatuses, errorsWith, keyedStatuses } from "../api/errors.ts"
import { MessagesRequest } from "../anthropicMessages/api.ts"
import { ApiKeyHeader, ErrorFamily, requiresKey } from "./guard.ts"

export const AnthropicGroup = HttpApiGroup.make("anthropic")
  .add(
    HttpApiEndpoint.post("messages", "/anthropic/v1/messages", {
      // other fields are taken and ignored, as Anthropic's clients and agents send them
      payload: Schema.StructWithRest(MessagesRequest, [Schema.Record(Schema.String, Schema.Unknown)]),
      success: AnthropicMessage,
      // Anthropic's statuses: 529 where the other surfaces answer 503
      error: errorsWith(AnthropicErrorResponse, [...bodyStatuses, 404, 500, ...keyedStatuses.map((status) => (status === 503 ? 529 : status))])
    }).annotateMerge(OpenApi.annotations({
      summary: "Messages (Anthropic-compatible)",
      description:
        "Anthropic's Messages API: point an Anthropic SDK's base URL at `<gateway>/anthropic`. `model` names a function (`gateway::function_name::<name>`, optionally `::variant_name::<variant>`), a model (`gateway::model_name::<name>`) or a configured model by its bare name. The key may come in `x-api-key` or `Authorization: Bearer`. Streaming is not served yet (a 400)."
    }))
  )
  .annotate(ErrorFamily, "anthropic")
  .annotate(ApiKeyHeader, true)
  .annotateEndpointsMerge(requiresKey)
  .annotateMerge(OpenApi.annotations({ title: "Anthropic-compatible" }))
