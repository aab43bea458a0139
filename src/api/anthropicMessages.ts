/**
 * The answers of the Anthropic Messages surface (`/anthropic/v1/...`, issue 37): Anthropic's
 * `message` object and its error body, with the error type and status each of the gateway's
 * errors takes there (Anthropic's SDKs raise their own typed errors from them, and retry 429,
 * 500 and 529).
 */
import * as Schema from "effect/Schema"
import { BudgetRefusal, budgetField, type GatewayError } from "../errors.ts"
import { errorBody } from "./errors.ts"

/** Anthropic's error type and HTTP status for a gateway error */
export const anthropicError = (error: GatewayError): { readonly status: number; readonly type: string } => {
  switch (error._tag) {
    case "InvalidRequest":
    case "Conflict":
      return { status: 400, type: "invalid_request_error" }
    case "MethodNotAllowed":
      return { status: 405, type: "invalid_request_error" }
    case "Unauthorized":
      return { status: 401, type: "authentication_error" }
    case "Forbidden":
      return { status: 403, type: "permission_error" }
    case "NotFound":
      return { status: 404, type: "not_found_error" }
    case "PayloadTooLarge":
      return { status: 413, type: "request_too_large" }
    case "RateLimited":
      return { status: 429, type: "rate_limit_error" }
    case "ServiceUnavailable":
      return { status: 529, type: "overloaded_error" }
    case "AllProvidersFailed":
    case "AllVariantsFailed":
      // whose fault: the request's is the caller's to fix, a rate limit theirs to wait out, the rest an API error
      return error.kind === "request"
        ? { status: 400, type: "invalid_request_error" }
        : error.kind === "rate_limited"
        ? { status: 429, type: "rate_limit_error" }
        : error.overloaded === true
        ? { status: 529, type: "overloaded_error" }
        : { status: 500, type: "api_error" }
    default:
      return { status: 500, type: "api_error" }
  }
}

export const anthropicErrorJson = (error: GatewayError) => ({
  type: "error" as const,
  error: { type: anthropicError(error).type, message: error.message },
  ...budgetField(error)
})

export const AnthropicErrorBody = Schema.Struct({
  type: Schema.Literal("error"),
  error: Schema.Struct({
    type: Schema.String.annotate({
      description:
        "invalid_request_error (400), authentication_error (401), permission_error (403), not_found_error (404), request_too_large (413), rate_limit_error (429), api_error (500), overloaded_error (529)"
    }),
    message: Schema.String
  }),
  budget: Schema.optional(BudgetRefusal.annotate({ description: "429 only: the budget that refused the call (docs/budgets.md)" }))
})

export const AnthropicErrorResponse = errorBody(AnthropicErrorBody, anthropicErrorJson)

/** `count_tokens`' answer: the input tokens the request would take, as the provider that would answer it first counts them */
export const CountTokensResponse = Schema.Struct({
  input_tokens: Schema.Int.annotate({ description: "the tokens of the messages, system prompt and tools, counted by the model's first provider" })
})

/** a model as Anthropic's model list has it: the `model` values this gateway answers to */
export const AnthropicModel = Schema.Struct({
  type: Schema.Literal("model"),
  id: Schema.String.annotate({
    description: "a configured model's name (as it is, and as `gateway::model_name::<name>`) or `gateway::function_name::<function>`"
  }),
  display_name: Schema.String,
  created_at: Schema.String.annotate({ description: "RFC 3339; the epoch: the gateway does not know when a model was released" })
})
export type AnthropicModel = typeof AnthropicModel.Type

export const AnthropicModelList = Schema.Struct({
  data: Schema.Array(AnthropicModel),
  has_more: Schema.Boolean,
  first_id: Schema.NullOr(Schema.String),
  last_id: Schema.NullOr(Schema.String)
})

const AnthropicContentBlock = Schema.Union([
  Schema.Struct({ type: Schema.Literal("text"), text: Schema.String }),
  Schema.Struct({ type: Schema.Literal("tool_use"), id: Schema.String, name: Schema.String, input: Schema.Unknown }),
  Schema.Struct({ type: Schema.Literal("thinking"), thinking: Schema.String, signature: Schema.String })
])

/** the stop reasons of Anthropic's API; an Anthropic-type provider's own is answered as it said it */
export const anthropicStopReasons = ["end_turn", "max_tokens", "stop_sequence", "tool_use", "refusal", "pause_turn", "model_context_window_exceeded"] as const

export const AnthropicMessage = Schema.Struct({
  id: Schema.String.annotate({ description: "the gateway's inference id" }),
  type: Schema.Literal("message"),
  role: Schema.Literal("assistant"),
  model: Schema.String.annotate({ description: "the `model` of the request" }),
  content: Schema.Array(AnthropicContentBlock),
  stop_reason: Schema.NullOr(Schema.Literals(anthropicStopReasons)),
  stop_sequence: Schema.NullOr(Schema.String),
  usage: Schema.Struct({
    input_tokens: Schema.Int.annotate({ description: "input tokens besides the cache's reads and writes (Anthropic's convention)" }),
    cache_creation_input_tokens: Schema.Int,
    cache_read_input_tokens: Schema.Int,
    output_tokens: Schema.Int
  }),
  gateway_episode_id: Schema.String,
  gateway_variant_name: Schema.String
})

const BlockDelta = Schema.Union([
  Schema.Struct({ type: Schema.Literal("text_delta"), text: Schema.String }),
  Schema.Struct({ type: Schema.Literal("thinking_delta"), thinking: Schema.String }),
  Schema.Struct({ type: Schema.Literal("signature_delta"), signature: Schema.String }),
  Schema.Struct({ type: Schema.Literal("input_json_delta"), partial_json: Schema.String })
])

/** the data of each event of a streamed answer; its `type` is also the event's name */
export const AnthropicStreamEvent = Schema.Union([
  Schema.Struct({
    type: Schema.Literal("message_start"),
    message: AnthropicMessage.mapFields((fields) => ({ ...fields, gateway_variant_name: Schema.optional(fields.gateway_variant_name) }))
      .annotate({ description: "no content yet and zero usage; no `gateway_variant_name` in a stream committed before its provider started" })
  }),
  Schema.Struct({ type: Schema.Literal("content_block_start"), index: Schema.Int, content_block: AnthropicContentBlock }),
  Schema.Struct({ type: Schema.Literal("content_block_delta"), index: Schema.Int, delta: BlockDelta }),
  Schema.Struct({ type: Schema.Literal("content_block_stop"), index: Schema.Int }),
  Schema.Struct({
    type: Schema.Literal("message_delta"),
    delta: AnthropicMessage.mapFields((fields) => ({ stop_reason: fields.stop_reason, stop_sequence: fields.stop_sequence })),
    usage: AnthropicMessage.fields.usage
  }),
  Schema.Struct({ type: Schema.Literal("message_stop") }),
  Schema.Struct({ type: Schema.Literal("ping") }),
  AnthropicErrorBody.annotate({ description: "a stream that failed after its answer was committed: the last event" })
]).annotate({
  description:
    "The data of each event (`event: <type>`): message_start, then each content block's content_block_start, content_block_delta and content_block_stop, then message_delta and message_stop; ping whenever the stream is quiet; error for a stream cut short."
})
