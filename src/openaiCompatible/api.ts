/**
 * The wire contract of `POST /openai/v1/chat/completions` (spec 4.2): OpenAI's Chat
 * Completions request, plus the `gateway::` fields clients send as extra body fields. Nested
 * objects are decoded leniently (OpenAI clients send fields the gateway has no use for);
 * unknown root fields are reported apart (`gateway::deny_unknown_fields`).
 */
import * as Schema from "effect/Schema"
import { gatewayRequestFields } from "../api/gatewayFields.ts"
import { ChatCompletionParams } from "../api/inference.ts"

const JsonObject = Schema.Record(Schema.String, Schema.Unknown)
const Detail = Schema.Literals(["low", "high", "auto"])

export const TextPart = Schema.Struct({
  type: Schema.Literal("text"),
  text: Schema.optional(Schema.String),
  "gateway::arguments": Schema.optional(JsonObject)
})

export const ContentPart = Schema.Union([
  TextPart,
  Schema.Struct({
    type: Schema.Literal("image_url"),
    image_url: Schema.Struct({ url: Schema.String, detail: Schema.optional(Detail) })
  }),
  Schema.Struct({
    type: Schema.Literal("input_audio"),
    input_audio: Schema.Struct({ data: Schema.String, format: Schema.String })
  }),
  Schema.Struct({
    type: Schema.Literal("file"),
    file: Schema.Struct({ file_data: Schema.String, filename: Schema.optional(Schema.String) })
  }),
  Schema.Struct({ type: Schema.Literal("gateway::raw_text"), value: Schema.String }),
  Schema.Struct({ type: Schema.Literal("gateway::template"), name: Schema.String, arguments: JsonObject })
]).annotate({
  expected: `a content part of type "text", "image_url", "input_audio", "file", "gateway::raw_text" or "gateway::template"`
})
export type ContentPart = typeof ContentPart.Type

const Content = Schema.Union([Schema.String, Schema.Array(ContentPart)]).annotate({
  expected: "a string or a list of content parts"
})

export const ToolCall = Schema.Union([
  Schema.Struct({
    id: Schema.String,
    type: Schema.optional(Schema.Literal("function")),
    function: Schema.Struct({ name: Schema.String, arguments: Schema.String })
  }),
  Schema.Struct({
    id: Schema.String,
    type: Schema.Literal("custom"),
    custom: Schema.Struct({ name: Schema.String, input: Schema.String })
  })
])
export type ToolCall = typeof ToolCall.Type

export const ExtraContentBlock = Schema.Struct({
  type: Schema.Literals(["thought", "unknown"]),
  insert_index: Schema.optional(Schema.Int.check(Schema.isGreaterThanOrEqualTo(0))),
  text: Schema.optional(Schema.String),
  signature: Schema.optional(Schema.String),
  summary: Schema.optional(Schema.Array(Schema.Unknown)),
  provider_type: Schema.optional(Schema.String),
  extra_data: Schema.optional(Schema.Unknown),
  data: Schema.optional(Schema.Unknown),
  model_name: Schema.optional(Schema.String),
  provider_name: Schema.optional(Schema.String)
})
export type ExtraContentBlock = typeof ExtraContentBlock.Type

export const Message = Schema.Union([
  Schema.Struct({ role: Schema.Literals(["system", "developer"]), content: Content }),
  Schema.Struct({ role: Schema.Literal("user"), content: Content }),
  Schema.Struct({
    role: Schema.Literal("assistant"),
    content: Schema.optional(Schema.NullOr(Content)),
    tool_calls: Schema.optional(Schema.NullOr(Schema.Array(ToolCall))),
    gateway_extra_content: Schema.optional(Schema.Array(ExtraContentBlock))
  }),
  Schema.Struct({
    role: Schema.Literal("tool"),
    content: Schema.optional(Schema.NullOr(Content)),
    tool_call_id: Schema.String
  })
]).annotate({ expected: `a message with role "system", "developer", "user", "assistant" or "tool"` })
export type Message = typeof Message.Type

const CustomFormat = Schema.Union([
  Schema.Struct({ type: Schema.Literal("text") }),
  Schema.Struct({
    type: Schema.Literal("grammar"),
    grammar: Schema.Struct({ syntax: Schema.Literals(["lark", "regex"]), definition: Schema.String })
  })
])

export const Tool = Schema.Union([
  Schema.Struct({
    type: Schema.Literal("function"),
    function: Schema.Struct({
      name: Schema.String,
      description: Schema.optional(Schema.String),
      parameters: Schema.optional(JsonObject),
      strict: Schema.optional(Schema.NullOr(Schema.Boolean))
    })
  }),
  Schema.Struct({
    type: Schema.Literal("custom"),
    custom: Schema.Struct({
      name: Schema.String,
      description: Schema.optional(Schema.String),
      format: Schema.optional(CustomFormat)
    })
  })
]).annotate({ expected: `a tool of type "function" or "custom"` })
export type Tool = typeof Tool.Type

const NamedTool = Schema.Union([
  Schema.Struct({ type: Schema.Literal("function"), function: Schema.Struct({ name: Schema.String }) }),
  Schema.Struct({ type: Schema.Literal("custom"), custom: Schema.Struct({ name: Schema.String }) })
])

export const ToolChoice = Schema.Union([
  Schema.Literals(["none", "auto", "required"]),
  NamedTool,
  Schema.Struct({
    type: Schema.Literal("allowed_tools"),
    allowed_tools: Schema.Struct({ mode: Schema.Literals(["auto", "required"]), tools: Schema.Array(NamedTool) })
  })
]).annotate({
  expected: `"none", "auto", "required", {"type": "function", "function": {"name"}} or {"type": "allowed_tools", ...}`
})
export type ToolChoice = typeof ToolChoice.Type

export const ResponseFormat = Schema.Union([
  Schema.Literals(["text", "json_object"]),
  Schema.Struct({ type: Schema.Literals(["text", "json_object"]) }),
  Schema.Struct({
    type: Schema.Literal("json_schema"),
    json_schema: Schema.optional(Schema.Struct({
      name: Schema.optional(Schema.String),
      description: Schema.optional(Schema.String),
      schema: Schema.optional(JsonObject),
      strict: Schema.optional(Schema.NullOr(Schema.Boolean))
    })),
    schema: Schema.optional(JsonObject)
  })
]).annotate({ expected: `"text", "json_object" or {"type": "json_schema", "json_schema": {"schema": ...}}` })
export type ResponseFormat = typeof ResponseFormat.Type

const OptionalNumber = Schema.optional(Schema.NullOr(Schema.Finite))
const OptionalInt = Schema.optional(Schema.NullOr(Schema.Int))

export const ChatCompletionRequest = Schema.Struct({
  model: Schema.String,
  messages: Schema.Array(Message),
  frequency_penalty: OptionalNumber,
  presence_penalty: OptionalNumber,
  temperature: OptionalNumber,
  top_p: OptionalNumber,
  max_tokens: OptionalInt,
  max_completion_tokens: OptionalInt,
  seed: OptionalInt,
  stop: Schema.optional(Schema.NullOr(Schema.Union([Schema.String, Schema.Array(Schema.String)]))),
  stop_sequences: Schema.optional(Schema.NullOr(Schema.Array(Schema.String))),
  parallel_tool_calls: Schema.optional(Schema.NullOr(Schema.Boolean)),
  response_format: Schema.optional(Schema.NullOr(ResponseFormat)),
  stream: Schema.optional(Schema.NullOr(Schema.Boolean)),
  stream_options: Schema.optional(Schema.NullOr(Schema.Struct({ include_usage: Schema.optional(Schema.Boolean) }))),
  tools: Schema.optional(Schema.NullOr(Schema.Array(Tool))),
  tool_choice: Schema.optional(Schema.NullOr(ToolChoice)),
  n: OptionalInt,
  reasoning_effort: Schema.optional(Schema.NullOr(Schema.String)),
  service_tier: Schema.optional(Schema.NullOr(Schema.String)),
  verbosity: Schema.optional(Schema.NullOr(Schema.String)),
  ...gatewayRequestFields,
  "gateway::deny_unknown_fields": Schema.optional(Schema.Boolean),
  "gateway::include_raw_response": Schema.optional(Schema.Boolean),
  "gateway::include_raw_usage": Schema.optional(Schema.Boolean),
  "gateway::params": Schema.optional(Schema.Struct({ chat_completion: Schema.optional(ChatCompletionParams) }))
})
export type ChatCompletionRequest = typeof ChatCompletionRequest.Type

/** The root fields the gateway knows; any other is reported (or refused with `gateway::deny_unknown_fields`). */
export const knownRootFields: ReadonlySet<string> = new Set(Object.keys(ChatCompletionRequest.fields))
