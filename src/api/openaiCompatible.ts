/**
 * The request and answer Schemas of the OpenAI-compatible surface (spec 4.2): `POST /openai/v1/chat/completions`
 * (its request schema is src/openaiCompatible/api.ts; unknown fields are ignored, or refused with
 * `gateway::deny_unknown_fields`), `GET /openai/v1/models`, their answers and OpenAI's error body.
 */
import * as Schema from "effect/Schema"
import { BudgetRefusal, budgetField } from "../errors.ts"
import { errorBody } from "./errors.ts"

/** OpenAI's error body: the type is OpenAI's for the status, so that OpenAI SDKs raise their own errors */
/** OpenAI's error type for each status: what its SDKs expect. */
const errorType = (status: number): string => {
  if (status === 401) return "authentication_error"
  if (status === 403) return "permission_error"
  if (status === 404) return "not_found_error"
  if (status === 429) return "rate_limit_error"
  if (status === 408 || status === 504) return "timeout_error"
  if (status === 503) return "service_unavailable_error"
  if (status >= 500) return "server_error"
  return "invalid_request_error"
}

/** OpenAI's `code` where its API has one for the status: SDKs and clients branch on it */
const errorCode = (status: number): string | null => {
  if (status === 429) return "rate_limit_exceeded"
  if (status === 504) return "timeout"
  if (status === 502) return "upstream_error"
  return null
}

/** `budget`: the budget that refused the call (a 429), beside `error` as on every surface */
export const openAiErrorJson = (message: string, status: number, budget?: { readonly budget?: BudgetRefusal }) => ({
  error: { message, type: errorType(status), param: null, code: errorCode(status) },
  ...budget
})

export const OpenAiErrorBody = Schema.Struct({
  error: Schema.Struct({
    message: Schema.String,
    type: Schema.String.annotate({
      description: "invalid_request_error, authentication_error, not_found_error, rate_limit_error, timeout_error, server_error..."
    }),
    param: Schema.Null,
    code: Schema.NullOr(Schema.String).annotate({ description: "rate_limit_exceeded (429), timeout (504), upstream_error (502), else null" })
  }),
  budget: Schema.optional(BudgetRefusal.annotate({ description: "429 only: the budget that refused the call (docs/budgets.md)" }))
})

export const OpenAiErrorResponse = errorBody(OpenAiErrorBody, (error) => openAiErrorJson(error.message, error.status, budgetField(error)))

const FinishReason = Schema.Literals(["stop", "length", "tool_calls", "content_filter"])

const ToolCall = Schema.Union([
  Schema.Struct({
    id: Schema.String,
    type: Schema.Literal("function"),
    function: Schema.Struct({ name: Schema.String, arguments: Schema.String })
  }),
  Schema.Struct({
    id: Schema.String,
    type: Schema.Literal("custom"),
    custom: Schema.Struct({ name: Schema.String, input: Schema.String })
  })
])

/** thoughts and blocks of unknown kind, with their position among the output's blocks */
const ExtraContent = Schema.Struct({
  type: Schema.Literals(["thought", "unknown"]),
  insert_index: Schema.optional(Schema.Int),
  text: Schema.optional(Schema.String),
  signature: Schema.optional(Schema.String),
  data: Schema.optional(Schema.Unknown),
  model_name: Schema.optional(Schema.String),
  provider_name: Schema.optional(Schema.String)
})

const Count = Schema.Int.check(Schema.isGreaterThanOrEqualTo(0))

const ApiType = Schema.Literals(["chat_completions", "responses", "embeddings"])
  .annotate({ description: "the API the model call went through" })

/** one entry per model call: which call, through which API, and `data` about it */
const perModelCall = <Data extends Schema.Top>(data: Data) =>
  Schema.Array(Schema.Struct({ model_inference_id: Schema.String, provider_type: Schema.String, api_type: ApiType, data }))

const RawResponse = perModelCall(Schema.String)
  .annotate({ description: "with `gateway::include_raw_response`: each model call's raw response (the variant's other calls first)" })

const RawUsage = perModelCall(Schema.Unknown)
  .annotate({ description: "with `gateway::include_raw_usage`: each model call's usage as its provider reported it" })

const CompletionUsage = Schema.Struct({
  prompt_tokens: Count,
  completion_tokens: Count,
  total_tokens: Count,
  prompt_tokens_details: Schema.optional(Schema.Struct({ cached_tokens: Count }))
    .annotate({ description: "when the provider reported prompt-cache reads" }),
  gateway_cost: Schema.NullOr(Schema.Finite)
    .annotate({ description: "the model call's cost by its provider's `cost` rules; null when it has none or they read nothing" })
})

const head = {
  id: Schema.String.annotate({ description: "the inference id" }),
  episode_id: Schema.String,
  created: Schema.Int.annotate({ description: "Unix seconds" }),
  model: Schema.String,
  system_fingerprint: Schema.String
}

export const ChatCompletion = Schema.Struct({
  ...head,
  object: Schema.Literal("chat.completion"),
  choices: Schema.Array(Schema.Struct({
    index: Schema.Int,
    finish_reason: FinishReason,
    message: Schema.Struct({
      role: Schema.Literal("assistant"),
      content: Schema.NullOr(Schema.String),
      tool_calls: Schema.optional(Schema.Array(ToolCall)),
      gateway_extra_content: Schema.optional(Schema.Array(ExtraContent))
    }),
    logprobs: Schema.Null
  })),
  usage: CompletionUsage,
  gateway_raw_usage: Schema.optional(RawUsage),
  gateway_raw_response: Schema.optional(RawResponse)
}).annotate({ identifier: "ChatCompletion" })
export type ChatCompletion = typeof ChatCompletion.Type

const ToolCallDelta = Schema.Struct({
  index: Schema.Int,
  id: Schema.optional(Schema.String).annotate({ description: "in a call's first delta" }),
  type: Schema.Literals(["function", "custom"]),
  function: Schema.optional(Schema.Struct({
    name: Schema.optional(Schema.String).annotate({ description: "a delta: in the call's first delta, whole as a rule" }),
    arguments: Schema.String
  })),
  custom: Schema.optional(Schema.Struct({ name: Schema.optional(Schema.String), input: Schema.String }))
})

export const ChatCompletionChunk = Schema.Struct({
  ...head,
  object: Schema.Literal("chat.completion.chunk"),
  choices: Schema.Array(Schema.Struct({
    index: Schema.Int,
    delta: Schema.Struct({
      role: Schema.optional(Schema.Literal("assistant")),
      content: Schema.optional(Schema.String).annotate({ description: "a json function's last chunk: \"\"" }),
      tool_calls: Schema.optional(Schema.Array(ToolCallDelta)),
      gateway_extra_content: Schema.optional(Schema.Array(ExtraContent))
        .annotate({ description: "thoughts, each piece with the `insert_index` of its block" })
    }),
    finish_reason: Schema.NullOr(FinishReason).annotate({ description: "in the last chunk" }),
    logprobs: Schema.Null
  })),
  usage: Schema.NullOr(CompletionUsage)
    .annotate({ description: "null but in the last chunk with `stream_options.include_usage` (the chunk that carries `finish_reason`)" }),
  gateway_raw_usage: Schema.optional(RawUsage).annotate({ description: "with `gateway::include_raw_usage`: in the last chunk" }),
  gateway_raw_response: Schema.optional(RawResponse)
    .annotate({ description: "with `gateway::include_raw_response`: in the first chunk, the raw responses of the model calls made before the stream (candidates, an embedding), when there were any" }),
  gateway_raw_chunk: Schema.optional(Schema.String)
    .annotate({ description: "with `gateway::include_raw_response`: the provider's own text of this chunk" })
}).annotate({ identifier: "ChatCompletionChunk" })

export const ChatCompletionStreamEvent = Schema.Union([ChatCompletionChunk, OpenAiErrorBody]).annotate({
  description: "The data of each event; the stream ends with `data: [DONE]`. A stream that fails after it started ends with an error body."
})

export const ModelList = Schema.Struct({
  object: Schema.Literal("list"),
  data: Schema.Array(Schema.Struct({
    id: Schema.String.annotate({ description: "`gateway::function_name::<function>` or `gateway::model_name::<model>`" }),
    object: Schema.Literal("model"),
    created: Schema.Int,
    owned_by: Schema.String
  }))
}).annotate({ identifier: "ModelList" })
export type ModelList = typeof ModelList.Type
