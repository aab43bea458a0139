/** The endpoints of AnthropicGroup (the HttpApi contract): Anthropic's Messages API, over the Schemas of src/anthropicMessages/api.ts and src/api/anthropicMessages.ts. */
import * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as HttpApiSchema from "effect/http-api/HttpApiSchema"
import * as OpenApi from "effect/http-api/OpenApi"
import * as Schema from "effect/Schema"
import { AnthropicErrorResponse, AnthropicMessage, AnthropicModel, AnthropicModelList, AnthropicStreamEvent, CountTokensResponse } from "../api/anthropicMessages.ts"
import { bodyStatuses, errorsWith, keyedStatuses } from "../api/errors.ts"
import { CountTokensRequest, MessagesRequest } from "../anthropicMessages/api.ts"
import { ApiKeyHeader, ErrorFamily, requiresKey } from "./guard.ts"

/** what every route behind a key answers on this surface: `keyedStatuses` with 529 where the others answer 503 */
const anthropicKeyedStatuses = keyedStatuses.map((status) => (status === 503 ? 529 : status))

export const AnthropicGroup = HttpApiGroup.make("anthropic")
  .add(
    HttpApiEndpoint.post("messages", "/anthropic/v1/messages", {
      // other fields are taken and ignored, as Anthropic's clients and agents send them
      payload: Schema.StructWithRest(MessagesRequest, [Schema.Record(Schema.String, Schema.Unknown)]),
      success: [AnthropicMessage, HttpApiSchema.StreamSse({ data: AnthropicStreamEvent })],
      error: errorsWith(AnthropicErrorResponse, [...bodyStatuses, 404, 500, ...anthropicKeyedStatuses])
    }).annotateMerge(OpenApi.annotations({
      summary: "Messages (Anthropic-compatible)",
      description:
        "Anthropic's Messages API: point an Anthropic SDK's base URL at `<gateway>/anthropic`. `model` names a function (`gateway::function_name::<name>`, optionally `::variant_name::<variant>`), a model (`gateway::model_name::<name>`) or a configured model by its bare name. The key may come in `x-api-key` or `Authorization: Bearer`. With `stream: true`, Anthropic's Server-Sent Events, with `ping`s while the provider is quiet (`[gateway] stream_keepalive_ms`)."
    })),
    HttpApiEndpoint.post("countTokens", "/anthropic/v1/messages/count_tokens", {
      payload: Schema.StructWithRest(CountTokensRequest, [Schema.Record(Schema.String, Schema.Unknown)]),
      success: CountTokensResponse,
      error: errorsWith(AnthropicErrorResponse, [...bodyStatuses, 404, 500, ...anthropicKeyedStatuses])
    }).annotateMerge(OpenApi.annotations({
      summary: "Count tokens in a message (Anthropic-compatible)",
      description:
        "Anthropic's token counting: `model` as on the messages route. The count is asked of the model's first provider (of the function's pinned or first variant, a chat_completion one) when its type has a token-counting API: `anthropic`, `gcp_vertex_anthropic`, `aws_bedrock`; any other is a 400 naming the model, its provider and the provider's type. Nothing is run, rate-limited or stored."
    })),
    HttpApiEndpoint.get("models", "/anthropic/v1/models", {
      query: {
        limit: Schema.optional(Schema.String).annotate({ description: "how many models (1 to 1000, default 20)" }),
        after_id: Schema.optional(Schema.String).annotate({ description: "the page after this model" }),
        before_id: Schema.optional(Schema.String).annotate({ description: "the page before this model" })
      },
      success: AnthropicModelList,
      error: errorsWith(AnthropicErrorResponse, [400, ...anthropicKeyedStatuses])
    }).annotateMerge(OpenApi.annotations({ summary: "The models and functions this gateway answers to (Anthropic-compatible)" })),
    HttpApiEndpoint.get("model", "/anthropic/v1/models/:model_id", {
      params: { model_id: Schema.String },
      success: AnthropicModel,
      error: errorsWith(AnthropicErrorResponse, [404, ...anthropicKeyedStatuses])
    }).annotateMerge(OpenApi.annotations({ summary: "One model or function this gateway answers to (Anthropic-compatible)" }))
  )
  .annotate(ErrorFamily, "anthropic")
  .annotate(ApiKeyHeader, true)
  .annotateEndpointsMerge(requiresKey)
  .annotateMerge(OpenApi.annotations({ title: "Anthropic-compatible" }))
