/**
 * The answers of the OpenAI Responses surface (`POST /openai/v1/responses`, issue 37): the
 * `response` object, its output items and usage, and the events of a streamed one (each with
 * its `sequence_number`). Errors take OpenAI's body, as on the chat route
 * (`OpenAiErrorResponse`, src/api/openaiCompatible.ts).
 */
import * as Schema from "effect/Schema"

const Count = Schema.Int.check(Schema.isGreaterThanOrEqualTo(0))
const ItemStatus = Schema.Literals(["in_progress", "completed", "incomplete"])

export const OutputTextPart = Schema.Struct({
  type: Schema.Literal("output_text"),
  text: Schema.String,
  annotations: Schema.Array(Schema.Unknown),
  logprobs: Schema.Array(Schema.Unknown)
})

export const MessageOutput = Schema.Struct({
  id: Schema.String,
  type: Schema.Literal("message"),
  role: Schema.Literal("assistant"),
  status: ItemStatus,
  content: Schema.Array(OutputTextPart)
})

export const FunctionCallOutput = Schema.Struct({
  id: Schema.String,
  type: Schema.Literal("function_call"),
  call_id: Schema.String,
  name: Schema.String,
  arguments: Schema.String.annotate({ description: "the arguments as the model wrote them (JSON text as a rule)" }),
  status: ItemStatus
})

export const CustomToolCallOutput = Schema.Struct({
  id: Schema.String,
  type: Schema.Literal("custom_tool_call"),
  call_id: Schema.String,
  name: Schema.String,
  input: Schema.String
})

export const SummaryText = Schema.Struct({ type: Schema.Literal("summary_text"), text: Schema.String })

export const ReasoningOutput = Schema.Struct({
  id: Schema.String,
  type: Schema.Literal("reasoning"),
  summary: Schema.Array(SummaryText).annotate({ description: "the thought's text, when the model gave one" }),
  encrypted_content: Schema.optional(Schema.NullOr(Schema.String)).annotate({
    description: "the thought's signature, with `include: [\"reasoning.encrypted_content\"]`: send the item back to continue"
  })
})

export type MessageOutputItem = typeof MessageOutput.Type
export type FunctionOutputItem = typeof FunctionCallOutput.Type | typeof CustomToolCallOutput.Type
export type ReasoningOutputItem = typeof ReasoningOutput.Type

export const ResponseOutputItem = Schema.Union([MessageOutput, FunctionCallOutput, CustomToolCallOutput, ReasoningOutput])
export type ResponseOutputItem = typeof ResponseOutputItem.Type

export const ResponseUsage = Schema.Struct({
  input_tokens: Count.annotate({ description: "every input token, the cache's reads among them (OpenAI's convention)" }),
  input_tokens_details: Schema.Struct({ cached_tokens: Count }),
  output_tokens: Count,
  output_tokens_details: Schema.Struct({ reasoning_tokens: Count.annotate({ description: "0 where the provider does not tell" }) }),
  total_tokens: Count
})
export type ResponseUsage = typeof ResponseUsage.Type

export const ResponseObject = Schema.Struct({
  id: Schema.String.annotate({ description: "the gateway's inference id" }),
  object: Schema.Literal("response"),
  created_at: Schema.Int.annotate({ description: "Unix seconds" }),
  status: Schema.Literals(["in_progress", "completed", "incomplete"]),
  error: Schema.Null,
  incomplete_details: Schema.NullOr(Schema.Struct({ reason: Schema.Literals(["max_output_tokens", "content_filter"]) })),
  model: Schema.String.annotate({ description: "the `model` of the request" }),
  output: Schema.Array(ResponseOutputItem),
  output_text: Schema.String.annotate({ description: "the texts of the output's messages, joined" }),
  instructions: Schema.NullOr(Schema.String),
  tools: Schema.Array(Schema.Unknown),
  tool_choice: Schema.Unknown,
  parallel_tool_calls: Schema.Boolean,
  temperature: Schema.NullOr(Schema.Finite),
  top_p: Schema.NullOr(Schema.Finite),
  max_output_tokens: Schema.NullOr(Schema.Int),
  text: Schema.Struct({ format: Schema.Unknown, verbosity: Schema.optional(Schema.String) }),
  reasoning: Schema.Struct({ effort: Schema.NullOr(Schema.String), summary: Schema.NullOr(Schema.String) }),
  metadata: Schema.Record(Schema.String, Schema.String),
  store: Schema.Boolean.annotate({
    description: "whether the response is stored (readable by `GET /openai/v1/responses/{id}` and `previous_response_id`): only with an analytics database"
  }),
  previous_response_id: Schema.NullOr(Schema.String),
  truncation: Schema.Literal("disabled"),
  user: Schema.optional(Schema.String),
  service_tier: Schema.optional(Schema.String),
  usage: Schema.NullOr(ResponseUsage).annotate({ description: "null until the response is complete" }),
  gateway_episode_id: Schema.String,
  gateway_variant_name: Schema.String
}).annotate({ identifier: "OpenAiResponse" })
export type ResponseObject = typeof ResponseObject.Type

export const DeletedResponse = Schema.Struct({ id: Schema.String, object: Schema.Literal("response"), deleted: Schema.Literal(true) })

export const InputItemList = Schema.Struct({
  object: Schema.Literal("list"),
  data: Schema.Array(Schema.Record(Schema.String, Schema.Unknown)).annotate({
    description: "input items (`message`, `function_call`, `function_call_output`, `reasoning`), each with its `id`"
  }),
  first_id: Schema.NullOr(Schema.String),
  last_id: Schema.NullOr(Schema.String),
  has_more: Schema.Boolean
})

const event = <Type extends string, Fields extends Schema.Struct.Fields>(type: Type, fields: Fields) =>
  Schema.Struct({ type: Schema.Literal(type), sequence_number: Count, ...fields })

const itemEvent = { item_id: Schema.String, output_index: Count }
const partEvent = { ...itemEvent, content_index: Count }
const summaryEvent = { ...itemEvent, summary_index: Count }

export const ResponseStreamEvent = Schema.Union([
  event("response.created", { response: ResponseObject }),
  event("response.in_progress", { response: ResponseObject }),
  event("response.output_item.added", { output_index: Count, item: ResponseOutputItem }),
  event("response.content_part.added", { ...partEvent, part: OutputTextPart }),
  event("response.output_text.delta", { ...partEvent, delta: Schema.String, logprobs: Schema.Array(Schema.Unknown) }),
  event("response.output_text.done", { ...partEvent, text: Schema.String, logprobs: Schema.Array(Schema.Unknown) }),
  event("response.content_part.done", { ...partEvent, part: OutputTextPart }),
  event("response.function_call_arguments.delta", { ...itemEvent, delta: Schema.String }),
  event("response.function_call_arguments.done", { ...itemEvent, name: Schema.String, arguments: Schema.String }),
  event("response.custom_tool_call_input.delta", { ...itemEvent, delta: Schema.String }),
  event("response.custom_tool_call_input.done", { ...itemEvent, input: Schema.String }),
  event("response.reasoning_summary_part.added", { ...summaryEvent, part: SummaryText }),
  event("response.reasoning_summary_text.delta", { ...summaryEvent, delta: Schema.String }),
  event("response.reasoning_summary_text.done", { ...summaryEvent, text: Schema.String }),
  event("response.reasoning_summary_part.done", { ...summaryEvent, part: SummaryText }),
  event("response.output_item.done", { output_index: Count, item: ResponseOutputItem }),
  event("response.completed", { response: ResponseObject }),
  event("response.incomplete", { response: ResponseObject }),
  event("error", {
    code: Schema.Literal("server_error"),
    message: Schema.String,
    param: Schema.Null
  }).annotate({ description: "a failure after the stream started: its last event" })
]).annotate({
  description:
    "The data of each event, its `type` also the event's name (`event: <type>`); `sequence_number` counts the events from 0. The stream ends with `response.completed` (or `response.incomplete`), or with an `error` event."
})
