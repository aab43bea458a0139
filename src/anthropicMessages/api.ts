/**
 * Anthropic's Messages API as the gateway reads it (`POST /anthropic/v1/messages`, and
 * `/count_tokens`): the request body, lenient as Anthropic's SDKs and agents send it (unknown
 * root fields are taken and passed on to Anthropic-type providers only; a block of a type the
 * gateway does not read is a 400 naming it).
 */
import * as Schema from "effect/Schema"
import * as Struct from "effect/Struct"
import { gatewayRequestFields } from "../api/gatewayFields.ts"

const JsonObject = Schema.Record(Schema.String, Schema.Unknown)
const CacheControl = Schema.optional(Schema.NullOr(JsonObject))

const Base64Source = Schema.Struct({ type: Schema.Literal("base64"), media_type: Schema.String, data: Schema.String })
const UrlSource = Schema.Struct({ type: Schema.Literal("url"), url: Schema.String })
const TextSource = Schema.Struct({ type: Schema.Literal("text"), media_type: Schema.optional(Schema.String), data: Schema.String })

export const TextBlock = Schema.Struct({
  type: Schema.Literal("text"),
  text: Schema.String,
  cache_control: CacheControl,
  citations: Schema.optional(Schema.Unknown)
})

export type TextBlock = typeof TextBlock.Type

export const ImageBlock = Schema.Struct({
  type: Schema.Literal("image"),
  source: Schema.Union([Base64Source, UrlSource]).annotate({ expected: `an image source of type "base64" or "url"` }),
  cache_control: CacheControl
})

export const DocumentBlock = Schema.Struct({
  type: Schema.Literal("document"),
  source: Schema.Union([Base64Source, UrlSource, TextSource]).annotate({ expected: `a document source of type "base64", "url" or "text"` }),
  title: Schema.optional(Schema.NullOr(Schema.String)),
  context: Schema.optional(Schema.NullOr(Schema.String)),
  citations: Schema.optional(Schema.Unknown),
  cache_control: CacheControl
})

export const ToolUseBlock = Schema.Struct({
  type: Schema.Literal("tool_use"),
  id: Schema.String,
  name: Schema.String,
  input: Schema.Unknown,
  cache_control: CacheControl
})

export const ToolResultBlock = Schema.Struct({
  type: Schema.Literal("tool_result"),
  tool_use_id: Schema.String,
  content: Schema.optional(Schema.Union([Schema.String, Schema.Array(Schema.Union([TextBlock, ImageBlock, DocumentBlock]))])),
  is_error: Schema.optional(Schema.Boolean),
  cache_control: CacheControl
})

export const ThinkingBlock = Schema.Struct({ type: Schema.Literal("thinking"), thinking: Schema.String, signature: Schema.optional(Schema.String) })
export const RedactedThinkingBlock = Schema.Struct({ type: Schema.Literal("redacted_thinking"), data: Schema.String })

export const ContentBlock = Schema.Union([TextBlock, ImageBlock, DocumentBlock, ToolUseBlock, ToolResultBlock, ThinkingBlock, RedactedThinkingBlock])
  .annotate({
    expected: `a content block of type "text", "image", "document", "tool_use", "tool_result", "thinking" or "redacted_thinking"`
  })
export type ContentBlock = typeof ContentBlock.Type

/**
 * A message of the conversation; `system` is a system message among them (Anthropic's newer API
 * takes them anywhere; Claude Code sends its context so to a model it does not know by name),
 * text blocks only.
 */
export const MessageParam = Schema.Struct({
  role: Schema.Literals(["user", "assistant", "system"]),
  content: Schema.Union([Schema.String, Schema.Array(ContentBlock)])
})
export type MessageParam = typeof MessageParam.Type

export const ToolParam = Schema.Struct({
  type: Schema.optional(Schema.NullOr(Schema.String)),
  name: Schema.String,
  description: Schema.optional(Schema.String),
  input_schema: Schema.optional(JsonObject),
  strict: Schema.optional(Schema.Boolean),
  cache_control: CacheControl
})
export type ToolParam = typeof ToolParam.Type

export const ToolChoiceParam = Schema.Union([
  Schema.Struct({ type: Schema.Literals(["auto", "any", "none"]), disable_parallel_tool_use: Schema.optional(Schema.Boolean) }),
  Schema.Struct({ type: Schema.Literal("tool"), name: Schema.String, disable_parallel_tool_use: Schema.optional(Schema.Boolean) })
]).annotate({ expected: `a tool choice of type "auto", "any", "none" or "tool" (with its name)` })

export const ThinkingParam = Schema.Union([
  Schema.Struct({ type: Schema.Literal("enabled"), budget_tokens: Schema.Int }),
  Schema.Struct({ type: Schema.Literal("disabled") }),
  Schema.Struct({ type: Schema.Literal("adaptive") })
]).annotate({ expected: `thinking of type "enabled" (with budget_tokens), "disabled" or "adaptive"` })

export const MessagesRequest = Schema.Struct({
  model: Schema.String,
  max_tokens: Schema.Int,
  messages: Schema.Array(MessageParam),
  system: Schema.optional(Schema.Union([Schema.String, Schema.Array(TextBlock)])),
  temperature: Schema.optional(Schema.Finite),
  top_p: Schema.optional(Schema.Finite),
  top_k: Schema.optional(Schema.Int),
  stop_sequences: Schema.optional(Schema.Array(Schema.String)),
  stream: Schema.optional(Schema.Boolean),
  tools: Schema.optional(Schema.Array(ToolParam)),
  tool_choice: Schema.optional(ToolChoiceParam),
  thinking: Schema.optional(ThinkingParam),
  metadata: Schema.optional(JsonObject),
  service_tier: Schema.optional(Schema.String),
  ...gatewayRequestFields
})
export type MessagesRequest = typeof MessagesRequest.Type

/** the root fields the gateway reads; any other is passed on as sent to Anthropic-type providers */
export const knownMessagesFields: ReadonlySet<string> = new Set(Object.keys(MessagesRequest.fields))

/**
 * `POST /anthropic/v1/messages/count_tokens`: a Messages request that is not run, so without
 * `max_tokens` and `stream` (taken and ignored when sent, as other unknown fields are).
 */
export const CountTokensRequest = MessagesRequest.mapFields(Struct.omit(["max_tokens", "stream"]))
export type CountTokensRequest = typeof CountTokensRequest.Type
