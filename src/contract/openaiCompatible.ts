/** The endpoints of OpenAiGroup (the HttpApi contract), over the request and answer Schemas of src/api/openaiCompatible.ts. */
import * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as HttpApiSchema from "effect/http-api/HttpApiSchema"
import * as OpenApi from "effect/http-api/OpenApi"
import * as Schema from "effect/Schema"
import { ChatCompletionRequest } from "../openaiCompatible/api.ts"
import { EmbeddingsRequest, EmbeddingsResponse } from "../api/embeddings.ts"
import { bodyStatuses, errorsWith, keyedStatuses } from "../api/errors.ts"
import { ErrorFamily, requiresKey } from "./guard.ts"
import { ChatCompletion, ChatCompletionStreamEvent, ModelList, OpenAiErrorResponse } from "../api/openaiCompatible.ts"

export const OpenAiGroup = HttpApiGroup.make("openai")
  .add(
    HttpApiEndpoint.post("chatCompletions", "/openai/v1/chat/completions", {
      // other fields are taken (and ignored, unless `gateway::deny_unknown_fields`), as OpenAI clients send them
      payload: Schema.StructWithRest(ChatCompletionRequest, [Schema.Record(Schema.String, Schema.Unknown)]),
      success: [ChatCompletion, HttpApiSchema.StreamSse({ data: ChatCompletionStreamEvent })],
      error: errorsWith(OpenAiErrorResponse, [...bodyStatuses, 404, 408, 500, 502, 504, ...keyedStatuses])
    }).annotateMerge(OpenApi.annotations({
      summary: "Chat completion (OpenAI-compatible)",
      description:
        "`model` names a function (`gateway::function_name::<name>`) or a model (`gateway::model_name::<name>`). With `\"stream\": true` the answer is a stream of Server-Sent Events."
    })),
    HttpApiEndpoint.post("embeddings", "/openai/v1/embeddings", {
      payload: Schema.StructWithRest(EmbeddingsRequest, [Schema.Record(Schema.String, Schema.Unknown)]),
      success: EmbeddingsResponse,
      error: errorsWith(OpenAiErrorResponse, [...bodyStatuses, 404, 408, 500, 502, ...keyedStatuses])
    }).annotateMerge(OpenApi.annotations({
      summary: "Embeddings (OpenAI-compatible)",
      description:
        "`model` names an embedding model (`gateway::embedding_model_name::<name>`) or a short-hand (`openai::text-embedding-3-small`). The providers are tried in routing order; answers may be cached (`gateway::cache_options`) and each call is stored."
    })),
    HttpApiEndpoint.get("models", "/openai/v1/models", {
      success: ModelList,
      error: errorsWith(OpenAiErrorResponse, keyedStatuses)
    }).annotateMerge(OpenApi.annotations({ summary: "The functions and models this gateway answers to" }))
  )
  .annotate(ErrorFamily, "openai")
  .annotateEndpointsMerge(requiresKey)
  .annotateMerge(OpenApi.annotations({ title: "OpenAI-compatible" }))
