/**
 * The request and answer Schemas of `POST /inference` (spec 2.2, 4.1): the request body as a Schema (unknown
 * fields are rejected, so a misspelt option is a 400 rather than silently ignored), the answer,
 * plain or streamed, and the endpoint.
 */
import * as Schema from "effect/Schema"
import { inferenceParamFields, JsonModeSchema, RawToolChoice } from "../inference/params.ts"

const JsonObject = Schema.Record(Schema.String, Schema.Unknown)
const Detail = Schema.Literals(["low", "high", "auto"])

/**
 * A tool call sent back (in an input, or as a datapoint's output): given by `name` and
 * `arguments`, or in the output block's shape (`raw_name`, `raw_arguments`), so that a response
 * can be sent back as it came.
 */
export const ToolCallBlock = Schema.Struct({
  type: Schema.Literal("tool_call"),
  id: Schema.String,
  name: Schema.optional(Schema.NullOr(Schema.String)),
  arguments: Schema.optional(Schema.Unknown),
  raw_name: Schema.optional(Schema.String),
  raw_arguments: Schema.optional(Schema.String),
  cache_control: Schema.optional(JsonObject)
})

/**
 * Where an input file is kept (TensorZero's `StorageKind`, serialised with its `type` tag; an
 * absent option is `null`, as serde writes it): the object storage the gateway wrote it to.
 */
export const StorageKind = Schema.Union([
  Schema.Struct({ type: Schema.Literal("filesystem"), path: Schema.String }),
  Schema.Struct({
    type: Schema.Literal("s3_compatible"),
    bucket_name: Schema.optional(Schema.NullOr(Schema.String)),
    region: Schema.optional(Schema.NullOr(Schema.String)),
    endpoint: Schema.optional(Schema.NullOr(Schema.String)),
    allow_http: Schema.optional(Schema.NullOr(Schema.Boolean))
  }),
  Schema.Struct({ type: Schema.Literal("disabled") })
]).annotate({ expected: `a storage kind of type "filesystem", "s3_compatible" or "disabled"` })
export type StorageKind = typeof StorageKind.Type

/** TensorZero's `StoragePath`: the storage and the object's key in it */
export const StoragePath = Schema.Struct({ kind: StorageKind, path: Schema.String })
export type StoragePath = typeof StoragePath.Type

/** an input file kept in object storage (as a stored inference has it): the gateway reads it for the provider */
export const ObjectStorageFileBlock = Schema.Struct({
  type: Schema.Literal("file"),
  file_type: Schema.Literal("object_storage"),
  mime_type: Schema.String,
  storage_path: StoragePath,
  source_url: Schema.optional(Schema.NullOr(Schema.String)),
  detail: Schema.optional(Detail)
})
export type ObjectStorageFileBlock = typeof ObjectStorageFileBlock.Type

export const InputBlock = Schema.Union([
  Schema.Struct({
    type: Schema.Literal("text"),
    text: Schema.optional(Schema.String),
    arguments: Schema.optional(JsonObject),
    cache_control: Schema.optional(JsonObject)
  }),
  Schema.Struct({ type: Schema.Literal("template"), name: Schema.String, arguments: JsonObject }),
  Schema.Struct({ type: Schema.Literal("raw_text"), value: Schema.String }),
  ToolCallBlock,
  Schema.Struct({
    type: Schema.Literal("tool_result"),
    id: Schema.String,
    name: Schema.String,
    result: Schema.String,
    is_error: Schema.optional(Schema.Boolean),
    cache_control: Schema.optional(JsonObject)
  }),
  Schema.Struct({
    type: Schema.Literal("file"),
    file_type: Schema.Literal("url"),
    url: Schema.String,
    mime_type: Schema.optional(Schema.String),
    detail: Schema.optional(Detail),
    cache_control: Schema.optional(JsonObject)
  }),
  Schema.Struct({
    type: Schema.Literal("file"),
    file_type: Schema.Literal("base64"),
    data: Schema.String,
    mime_type: Schema.String,
    detail: Schema.optional(Detail),
    cache_control: Schema.optional(JsonObject)
  }),
  ObjectStorageFileBlock,
  Schema.Struct({
    type: Schema.Literal("thought"),
    text: Schema.optional(Schema.String),
    signature: Schema.optional(Schema.String),
    /** the type of the provider that made it: its signature goes back only to providers that can read it */
    provider_type: Schema.optional(Schema.String)
  }),
  Schema.Struct({
    type: Schema.Literal("unknown"),
    data: Schema.Unknown,
    model_provider_name: Schema.optional(Schema.String),
    /** the type of the provider that made it: sent only to providers of its family */
    provider_type: Schema.optional(Schema.String)
  })
]).annotate({
  expected:
    `a content block of type "text", "template", "raw_text", "tool_call", "tool_result", "file" (file_type "url", "base64" or "object_storage"), "thought" or "unknown"`
})
export type InputBlock = typeof InputBlock.Type

export const InputMessage = Schema.Struct({
  role: Schema.Literals(["user", "assistant"]),
  content: Schema.Union([Schema.String, Schema.Array(InputBlock)]).annotate({ expected: "a string or a list of content blocks" })
})
export type InputMessage = typeof InputMessage.Type

export const Input = Schema.Struct({
  system: Schema.optional(
    Schema.Union([Schema.String, JsonObject]).annotate({ expected: "a string or an object of template arguments" })
  ),
  messages: Schema.optional(Schema.Array(InputMessage))
})
export type Input = typeof Input.Type

export const AdditionalTool = Schema.Struct({
  name: Schema.String,
  description: Schema.String,
  parameters: JsonObject,
  strict: Schema.optional(Schema.Boolean),
  /** Anthropic's prompt-caching mark, for the providers that honour it (ignored by the others) */
  cache_control: Schema.optional(JsonObject)
})

/** An `extra_body` edit with its optional scope (spec 4.1.1). */
export const ExtraBodyRequestEdit = Schema.Struct({
  pointer: Schema.String,
  value: Schema.optional(Schema.Unknown),
  delete: Schema.optional(Schema.Boolean),
  variant_name: Schema.optional(Schema.String),
  model_name: Schema.optional(Schema.String),
  provider_name: Schema.optional(Schema.String)
})
export type ExtraBodyRequestEdit = typeof ExtraBodyRequestEdit.Type

export const ExtraHeaderRequestEdit = Schema.Struct({
  name: Schema.String,
  value: Schema.optional(Schema.String),
  delete: Schema.optional(Schema.Boolean),
  variant_name: Schema.optional(Schema.String),
  model_name: Schema.optional(Schema.String),
  provider_name: Schema.optional(Schema.String)
})
export type ExtraHeaderRequestEdit = typeof ExtraHeaderRequestEdit.Type

export const ChatCompletionParams = Schema.Struct({
  ...inferenceParamFields,
  json_mode: Schema.optional(JsonModeSchema)
})
export type ChatCompletionParams = typeof ChatCompletionParams.Type

export const CacheOptions = Schema.Struct({
  enabled: Schema.optional(Schema.Literals(["write_only", "read_only", "on", "off"])),
  max_age_s: Schema.optional(Schema.NullOr(Schema.Int.check(Schema.isGreaterThanOrEqualTo(0))))
})

export const InferenceRequest = Schema.Struct({
  function_name: Schema.optional(Schema.String),
  model_name: Schema.optional(Schema.String),
  input: Input,
  episode_id: Schema.optional(Schema.NullOr(Schema.String)),
  variant_name: Schema.optional(Schema.String),
  stream: Schema.optional(Schema.Boolean),
  dryrun: Schema.optional(Schema.Boolean),
  tags: Schema.optional(Schema.Record(Schema.String, Schema.String)),
  additional_tools: Schema.optional(Schema.Array(AdditionalTool)),
  allowed_tools: Schema.optional(Schema.Array(Schema.String)),
  tool_choice: Schema.optional(RawToolChoice),
  parallel_tool_calls: Schema.optional(Schema.Boolean),
  output_schema: Schema.optional(JsonObject),
  params: Schema.optional(Schema.Struct({ chat_completion: Schema.optional(ChatCompletionParams) })),
  cache_options: Schema.optional(CacheOptions),
  credentials: Schema.optional(Schema.Record(Schema.String, Schema.String)),
  include_original_response: Schema.optional(Schema.Boolean),
  extra_body: Schema.optional(Schema.Array(ExtraBodyRequestEdit)),
  extra_headers: Schema.optional(Schema.Array(ExtraHeaderRequestEdit)),
  provider_tools: Schema.optional(Schema.Array(Schema.Struct({
    scope: Schema.optional(Schema.Struct({
      model_name: Schema.optional(Schema.String),
      model_provider_name: Schema.optional(Schema.String)
    })),
    tool: JsonObject
  }))),
  otlp_traces_extra_headers: Schema.optional(Schema.Record(Schema.String, Schema.String))
})
export type InferenceRequest = typeof InferenceRequest.Type

// ---- the response (spec 2.3)

export const Usage = Schema.Struct({
  input_tokens: Schema.Int,
  output_tokens: Schema.Int,
  cached_input_tokens: Schema.optional(Schema.Int).annotate({ description: "of input_tokens, those the provider read from its prompt cache, when it says" }),
  cost: Schema.optional(Schema.Finite).annotate({
    description: "the sum of the model calls' costs by their providers' `cost` rules; absent when none is configured or they read nothing (a cached answer costs 0)"
  })
})

export const FinishReason = Schema.Literals(["stop", "stop_sequence", "length", "tool_call", "content_filter", "unknown"])

/** A thought of an answer (and of a stored answer, a datapoint's output, a model call's) */
export const ThoughtBlock = Schema.Struct({
  type: Schema.Literal("thought"),
  text: Schema.String,
  signature: Schema.optional(Schema.String),
  provider_type: Schema.optional(Schema.String).annotate({ description: "the type of the provider that made it, whose signature it carries" })
})

/** A block of a chat function's output. A tool call's `name` and `arguments` are null when they do not match a tool offered. */
export const ContentBlock = Schema.Union([
  Schema.Struct({ type: Schema.Literal("text"), text: Schema.String }),
  Schema.Struct({
    type: Schema.Literal("tool_call"),
    id: Schema.String,
    name: Schema.NullOr(Schema.String),
    arguments: Schema.Unknown,
    raw_name: Schema.String,
    raw_arguments: Schema.String
  }),
  ThoughtBlock,
  Schema.Struct({ type: Schema.Literal("unknown"), data: Schema.Unknown, model_provider_name: Schema.String })
]).annotate({ identifier: "ContentBlock" })

/** A json function's output: the model's text, and its parse (null when it is not JSON or fails the output schema). */
export const JsonOutput = Schema.Struct({ raw: Schema.String, parsed: Schema.Unknown }).annotate({ identifier: "JsonOutput" })

const responseHead = {
  inference_id: Schema.String,
  episode_id: Schema.String,
  variant_name: Schema.String
}

const responseTail = {
  usage: Usage,
  finish_reason: Schema.optional(FinishReason),
  /** with `include_original_response` */
  original_response: Schema.optional(Schema.String)
}

export const ChatInferenceResponse = Schema.Struct({ ...responseHead, content: Schema.Array(ContentBlock), ...responseTail })
  .annotate({ identifier: "ChatInferenceResponse" })

export const JsonInferenceResponse = Schema.Struct({ ...responseHead, output: JsonOutput, ...responseTail })
  .annotate({ identifier: "JsonInferenceResponse" })

export const InferenceResponse = Schema.Union([ChatInferenceResponse, JsonInferenceResponse])
export type InferenceResponse = typeof InferenceResponse.Type

// ---- the streamed response (`"stream": true`): Server-Sent Events, one chunk per event, then `data: [DONE]`

/** A piece of a chat function's streamed output. */
export const ContentDelta = Schema.Union([
  Schema.Struct({ type: Schema.Literal("text"), id: Schema.String, text: Schema.String }),
  Schema.Struct({ type: Schema.Literal("tool_call"), id: Schema.String, raw_name: Schema.String, raw_arguments: Schema.String }),
  Schema.Struct({ type: Schema.Literal("thought"), id: Schema.String, text: Schema.String, signature: Schema.optional(Schema.String) })
]).annotate({ identifier: "ContentDelta" })

const chunkTail = {
  /** the last chunk only */
  usage: Schema.optional(Usage),
  finish_reason: Schema.optional(FinishReason)
}

export const ChatInferenceChunk = Schema.Struct({ ...responseHead, content: Schema.Array(ContentDelta), ...chunkTail })
  .annotate({ identifier: "ChatInferenceChunk" })

export const JsonInferenceChunk = Schema.Struct({ ...responseHead, raw: Schema.String, ...chunkTail })
  .annotate({ identifier: "JsonInferenceChunk" })

/** the last event of a stream that failed after it started */
export const StreamFailure = Schema.Struct({ error: Schema.String }).annotate({ identifier: "StreamFailure" })

export const InferenceChunk = Schema.Union([ChatInferenceChunk, JsonInferenceChunk, StreamFailure]).annotate({
  description: "The data of each event; the stream ends with `data: [DONE]`. The last chunk carries `usage` and `finish_reason`."
})
export type InferenceChunk = typeof InferenceChunk.Type
