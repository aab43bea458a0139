/**
 * OpenAI's Responses API as the gateway reads it (`POST /openai/v1/responses`): the request
 * body, lenient as OpenAI's SDKs and agents send it (unknown fields are taken and ignored; an
 * input item or a tool of a kind the gateway does not read is a 400 naming it).
 */
import * as Schema from "effect/Schema"
import { gatewayRequestFields } from "../api/gatewayFields.ts"

const JsonObject = Schema.Record(Schema.String, Schema.Unknown)
const OptionalString = Schema.optional(Schema.NullOr(Schema.String))

export const InputText = Schema.Struct({ type: Schema.Literal("input_text"), text: Schema.String })
export const InputImage = Schema.Struct({
  type: Schema.Literal("input_image"),
  image_url: OptionalString,
  file_id: OptionalString,
  detail: OptionalString
})
export const InputFile = Schema.Struct({
  type: Schema.Literal("input_file"),
  file_data: OptionalString,
  file_url: OptionalString,
  file_id: OptionalString,
  filename: OptionalString
})
const OutputText = Schema.Struct({ type: Schema.Literal("output_text"), text: Schema.String })
const Refusal = Schema.Struct({ type: Schema.Literal("refusal"), refusal: Schema.String })

export const ContentPart = Schema.Union([InputText, InputImage, InputFile, OutputText, Refusal]).annotate({
  expected: `a content part of type "input_text", "input_image", "input_file", "output_text" or "refusal"`
})
export type ContentPart = typeof ContentPart.Type

const ToolOutput = Schema.Union([
  Schema.String,
  Schema.Array(Schema.Union([InputText, InputImage, InputFile]).annotate({
    expected: `an output part of type "input_text", "input_image" or "input_file"`
  }))
]).annotate({ expected: "a string or a list of output parts" })
export type ToolOutput = typeof ToolOutput.Type

export const MessageItem = Schema.Struct({
  type: Schema.optional(Schema.Literal("message")),
  role: Schema.Literals(["user", "assistant", "system", "developer"]),
  content: Schema.Union([Schema.String, Schema.Array(ContentPart)]).annotate({ expected: "a string or a list of content parts" })
})

export const FunctionCallItem = Schema.Struct({
  type: Schema.Literal("function_call"),
  call_id: Schema.String,
  name: Schema.String,
  arguments: Schema.String
})

export const FunctionCallOutputItem = Schema.Struct({ type: Schema.Literal("function_call_output"), call_id: Schema.String, output: ToolOutput })

export const CustomToolCallItem = Schema.Struct({
  type: Schema.Literal("custom_tool_call"),
  call_id: Schema.String,
  name: Schema.String,
  input: Schema.String
})

export const CustomToolCallOutputItem = Schema.Struct({ type: Schema.Literal("custom_tool_call_output"), call_id: Schema.String, output: ToolOutput })

export const ReasoningItem = Schema.Struct({
  type: Schema.Literal("reasoning"),
  summary: Schema.optional(Schema.Array(Schema.Struct({ type: Schema.Literal("summary_text"), text: Schema.String }))),
  encrypted_content: OptionalString
})

/** read to refuse it with a hint: it points into stored responses, not served yet */
export const ItemReference = Schema.Struct({ type: Schema.Literal("item_reference"), id: Schema.String })

/** the items of `input` by their type, each decoded alone when the request does not decode (src/openaiResponses/decode.ts) */
export const inputItems = {
  message: MessageItem,
  function_call: FunctionCallItem,
  function_call_output: FunctionCallOutputItem,
  custom_tool_call: CustomToolCallItem,
  custom_tool_call_output: CustomToolCallOutputItem,
  reasoning: ReasoningItem,
  item_reference: ItemReference
} as const

export const InputItem = Schema.Union(Object.values(inputItems)).annotate({
  expected:
    `an input item: a message (role "user", "assistant", "system" or "developer"), or of type "function_call", "function_call_output", "custom_tool_call", "custom_tool_call_output" or "reasoning"`
})
export type InputItem = typeof InputItem.Type

export const FunctionTool = Schema.Struct({
  type: Schema.Literal("function"),
  name: Schema.String,
  description: OptionalString,
  parameters: Schema.optional(Schema.NullOr(JsonObject)),
  strict: Schema.optional(Schema.NullOr(Schema.Boolean))
})

export const CustomTool = Schema.Struct({
  type: Schema.Literal("custom"),
  name: Schema.String,
  description: OptionalString,
  format: Schema.optional(Schema.Unknown)
})

/** a `type` other than the function and custom tools' (whose malformed ones are then no built-in tool) */
const BuiltinType = Schema.String.check(Schema.makeFilter((type: string) =>
  type === "function" || type === "custom" ? `a ${type} tool takes its own fields` : undefined
))

/** built-in tools (`web_search`, `file_search`, ...): refused naming them */
const BuiltinTool = Schema.Struct({ type: BuiltinType }).annotate({ description: "a built-in tool: not served yet (a 400 naming it)" })

export const Tool = Schema.Union([FunctionTool, CustomTool, BuiltinTool])
export type Tool = typeof Tool.Type

const NamedTool = Schema.Struct({ type: Schema.Literals(["function", "custom"]), name: Schema.String })

export const ToolChoice = Schema.Union([
  Schema.Literals(["none", "auto", "required"]),
  NamedTool,
  Schema.Struct({
    type: Schema.Literal("allowed_tools"),
    mode: Schema.Literals(["auto", "required"]),
    tools: Schema.Array(Schema.Struct({ type: Schema.String, name: Schema.optional(Schema.String) }))
  }),
  // a built-in tool's choice (`{"type": "web_search"}`), refused naming it
  Schema.Struct({ type: BuiltinType })
]).annotate({ expected: `"none", "auto", "required", {"type": "function", "name": ...} or {"type": "allowed_tools", ...}` })
export type ToolChoice = typeof ToolChoice.Type

export const TextFormat = Schema.Union([
  Schema.Struct({ type: Schema.Literals(["text", "json_object"]) }),
  Schema.Struct({
    type: Schema.Literal("json_schema"),
    name: Schema.optional(Schema.String),
    description: Schema.optional(Schema.String),
    schema: JsonObject,
    strict: Schema.optional(Schema.NullOr(Schema.Boolean))
  })
]).annotate({ expected: `a format of type "text", "json_object" or "json_schema" (with its schema)` })
export type TextFormat = typeof TextFormat.Type

const requestFields = {
  model: Schema.String,
  instructions: OptionalString,
  tool_choice: Schema.optional(Schema.NullOr(ToolChoice)),
  parallel_tool_calls: Schema.optional(Schema.NullOr(Schema.Boolean)),
  max_output_tokens: Schema.optional(Schema.NullOr(Schema.Int)),
  temperature: Schema.optional(Schema.NullOr(Schema.Finite)),
  top_p: Schema.optional(Schema.NullOr(Schema.Finite)),
  text: Schema.optional(Schema.NullOr(Schema.Struct({ format: Schema.optional(Schema.NullOr(TextFormat)), verbosity: OptionalString }))),
  reasoning: Schema.optional(Schema.NullOr(Schema.Struct({ effort: OptionalString, summary: OptionalString }))),
  service_tier: OptionalString,
  stream: Schema.optional(Schema.NullOr(Schema.Boolean)),
  include: Schema.optional(Schema.NullOr(Schema.Array(Schema.String))),
  metadata: Schema.optional(Schema.NullOr(Schema.Record(Schema.String, Schema.String))),
  user: OptionalString,
  store: Schema.optional(Schema.NullOr(Schema.Boolean)),
  // read to refuse them by name: not served yet
  previous_response_id: OptionalString,
  background: Schema.optional(Schema.NullOr(Schema.Boolean)),
  conversation: Schema.optional(Schema.Unknown),
  prompt: Schema.optional(Schema.Unknown),
  ...gatewayRequestFields
}

/** the request, as the contract documents it and the handler decodes it */
export const CreateResponseRequest = Schema.Struct({
  ...requestFields,
  input: Schema.optional(Schema.Union([Schema.String, Schema.Array(InputItem)])),
  tools: Schema.optional(Schema.NullOr(Schema.Array(Tool)))
})
export type CreateResponseRequest = typeof CreateResponseRequest.Type

/**
 * The request with its input items and tools left as they came: what is decoded when the request
 * does not decode, before each item and tool is decoded alone by its type
 * (src/openaiResponses/decode.ts).
 */
export const CreateResponseBody = Schema.Struct({
  ...requestFields,
  input: Schema.optional(Schema.Union([Schema.String, Schema.Array(Schema.Unknown)]).annotate({ expected: "a string or a list of input items" })),
  tools: Schema.optional(Schema.NullOr(Schema.Array(Schema.Unknown)))
})
