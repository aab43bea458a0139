/**
 * The request and answer Schemas of datasets (spec 2.5, 3, 4.5): creating datapoints by hand or from stored
 * inferences, reading them by id or listed with filters, search and order, new versions
 * (update), names in place (metadata), staling (delete), and beyond the spec every dataset with
 * its counts, and a dataset's live datapoints exported and imported as JSON Lines.
 */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { RawToolChoice } from "../inference/params.ts"
import { InvalidRequest } from "../errors.ts"
import { AdditionalTool, Input, ThoughtBlock, ToolCallBlock } from "./inference.ts"
import { DatapointFilter } from "./inferences.ts"

/** `dataset_name` in every path: what `datasetNameProblem` accepts */
export const datasetNameRule = {
  pattern: /^[A-Za-z0-9_.-]{1,128}$/,
  maxLength: 128,
  description: "1 to 128 characters among letters, digits, `_`, `-` and `.`, not only dots"
} as const

/** why `name` is not a dataset name, or undefined */
export const datasetNameProblem = (name: string): string | undefined =>
  datasetNameRule.pattern.test(name) && !/^\.+$/.test(name)
    ? undefined
    : `dataset_name: "${name.slice(0, 140)}" is not a dataset name (${datasetNameRule.description})`

/** `name` when it is a dataset name, or the 400 saying why not */
export const checkDatasetName = (name: string): Effect.Effect<string, InvalidRequest> => {
  const problem = datasetNameProblem(name)
  return problem === undefined ? Effect.succeed(name) : Effect.fail(new InvalidRequest({ message: problem }))
}

/** `list_datapoints` `limit`: default 20 (spec 8), at most this */
export const maxDatapointsListed = 1000
/** `from_inferences` with a query: the inferences one call takes at most (and by default) */
export const maxFromInferences = 100_000

const JsonObject = Schema.Record(Schema.String, Schema.Unknown)
const Tags = Schema.Record(Schema.String, Schema.String)
const Timestamp = Schema.String.annotate({ description: "RFC 3339, UTC" })
const Id = Schema.String.annotate({ description: "a datapoint id (UUIDv7)" })

/** A block of a chat datapoint's output: what a chat inference answers, tool calls given by `name` and `arguments`. */
export const DatapointOutputBlock = Schema.Union([
  Schema.Struct({ type: Schema.Literal("text"), text: Schema.String }),
  ToolCallBlock,
  ThoughtBlock,
  Schema.Struct({ type: Schema.Literal("unknown"), data: Schema.Unknown, model_provider_name: Schema.optional(Schema.String) })
]).annotate({ identifier: "DatapointOutputBlock" })

const createdCommon = {
  function_name: Schema.String,
  input: Input,
  episode_id: Schema.optional(Schema.NullOr(Schema.String)),
  tags: Schema.optional(Tags),
  name: Schema.optional(Schema.NullOr(Schema.String))
}

export const CreateChatDatapoint = Schema.Struct({
  type: Schema.Literal("chat"),
  ...createdCommon,
  output: Schema.optional(Schema.NullOr(Schema.Array(DatapointOutputBlock))),
  allowed_tools: Schema.optional(Schema.NullOr(Schema.Array(Schema.String))),
  tool_choice: Schema.optional(Schema.NullOr(RawToolChoice)),
  parallel_tool_calls: Schema.optional(Schema.NullOr(Schema.Boolean)).annotate({ description: "default false" }),
  additional_tools: Schema.optional(Schema.NullOr(Schema.Array(AdditionalTool)))
}).annotate({ identifier: "CreateChatDatapoint" })

export const CreateJsonDatapoint = Schema.Struct({
  type: Schema.Literal("json"),
  ...createdCommon,
  output: Schema.optional(Schema.Unknown).annotate({ description: "a value that fits the output schema (the datapoint's, else the function's); null: none" }),
  output_schema: Schema.optional(Schema.NullOr(JsonObject))
}).annotate({ identifier: "CreateJsonDatapoint" })

export const CreateDatapoint = Schema.Union([CreateChatDatapoint, CreateJsonDatapoint])
export type CreateDatapoint = typeof CreateDatapoint.Type

export const CreateDatapointsRequest = Schema.Struct({ datapoints: Schema.Array(CreateDatapoint) })
export type CreateDatapointsRequest = typeof CreateDatapointsRequest.Type

export const DatapointIds = Schema.Struct({ ids: Schema.Array(Id) }).annotate({ identifier: "DatapointIds" })
export type DatapointIds = typeof DatapointIds.Type

export const GetDatapointsRequest = Schema.Struct({ ids: Schema.Array(Schema.String) })
export type GetDatapointsRequest = typeof GetDatapointsRequest.Type

export const DatapointOrder = Schema.Union([
  Schema.Struct({ by: Schema.Literal("timestamp"), direction: Schema.optional(Schema.Literals(["ascending", "descending"])) }),
  Schema.Struct({ by: Schema.Literal("search_relevance") })
]).annotate({ identifier: "DatapointOrder" })

export const ListDatapointsRequest = Schema.Struct({
  function_name: Schema.optional(Schema.String),
  limit: Schema.optional(Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: maxDatapointsListed }))),
  offset: Schema.optional(Schema.Int.check(Schema.isGreaterThanOrEqualTo(0))),
  filter: Schema.optional(DatapointFilter),
  order_by: Schema.optional(Schema.Array(DatapointOrder)).annotate({ description: "criteria in order; default newest first" }),
  search_query: Schema.optional(Schema.String).annotate({
    description: "only datapoints whose input or output text holds one of its words; `search_relevance` ranks by how many"
  }),
  after: Schema.optional(Schema.String).annotate({ description: "keyset paging: datapoints with ids after this one, oldest first" })
})
export type ListDatapointsRequest = typeof ListDatapointsRequest.Type

const OutputSource = Schema.Literals(["inference", "demonstration", "none"]).annotate({
  description: "the datapoints' output: the inference's (default), its latest demonstration (inferences without one are skipped), or none"
})

export const FromInferencesRequest = Schema.Union([
  Schema.Struct({
    type: Schema.Literal("inference_ids"),
    inference_ids: Schema.Array(Schema.String),
    output_source: Schema.optional(OutputSource)
  }),
  Schema.Struct({
    type: Schema.Literal("inference_query"),
    function_name: Schema.optional(Schema.String),
    variant_name: Schema.optional(Schema.String),
    episode_id: Schema.optional(Schema.String),
    // the grammar of list_inferences (src/api/inferences.ts), with its metric filters
    filters: Schema.optional(Schema.Unknown),
    limit: Schema.optional(Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: maxFromInferences }))),
    offset: Schema.optional(Schema.Int.check(Schema.isGreaterThanOrEqualTo(0))),
    output_source: Schema.optional(OutputSource)
  })
]).annotate({ identifier: "FromInferencesRequest" })
export type FromInferencesRequest = typeof FromInferencesRequest.Type

export const UpdateChatDatapoint = Schema.Struct({
  id: Id,
  type: Schema.Literal("chat"),
  input: Schema.optional(Input),
  output: Schema.optional(Schema.NullOr(Schema.Array(DatapointOutputBlock))),
  allowed_tools: Schema.optional(Schema.NullOr(Schema.Array(Schema.String))),
  tool_choice: Schema.optional(Schema.NullOr(RawToolChoice)),
  parallel_tool_calls: Schema.optional(Schema.NullOr(Schema.Boolean)),
  additional_tools: Schema.optional(Schema.NullOr(Schema.Array(AdditionalTool))),
  episode_id: Schema.optional(Schema.NullOr(Schema.String)),
  tags: Schema.optional(Tags).annotate({ description: "replaces every tag" }),
  name: Schema.optional(Schema.NullOr(Schema.String))
}).annotate({ identifier: "UpdateChatDatapoint" })

export const UpdateJsonDatapoint = Schema.Struct({
  id: Id,
  type: Schema.Literal("json"),
  input: Schema.optional(Input),
  output: Schema.optional(Schema.Unknown).annotate({ description: "a value that fits the output schema; null clears it" }),
  output_schema: Schema.optional(JsonObject),
  episode_id: Schema.optional(Schema.NullOr(Schema.String)),
  tags: Schema.optional(Tags).annotate({ description: "replaces every tag" }),
  name: Schema.optional(Schema.NullOr(Schema.String))
}).annotate({ identifier: "UpdateJsonDatapoint" })

export const UpdateDatapoint = Schema.Union([UpdateChatDatapoint, UpdateJsonDatapoint])
export type UpdateDatapoint = typeof UpdateDatapoint.Type

export const UpdateDatapointsRequest = Schema.Struct({ datapoints: Schema.Array(UpdateDatapoint) })
export type UpdateDatapointsRequest = typeof UpdateDatapointsRequest.Type

export const UpdateMetadataRequest = Schema.Struct({
  datapoints: Schema.Array(Schema.Struct({
    id: Id,
    name: Schema.optional(Schema.NullOr(Schema.String)).annotate({ description: "omitted: unchanged; null: cleared" })
  }))
})
export type UpdateMetadataRequest = typeof UpdateMetadataRequest.Type

export const DeleteDatapointsRequest = Schema.Struct({ ids: Schema.Array(Schema.String) })
export type DeleteDatapointsRequest = typeof DeleteDatapointsRequest.Type

export const DeletedDatapoints = Schema.Struct({
  num_deleted_datapoints: Schema.Int.annotate({ description: "live datapoints made stale by this call" })
}).annotate({ identifier: "DeletedDatapoints" })

// ---- the answer: datapoints as stored

const datapointHead = {
  id: Id,
  dataset_name: Schema.String,
  function_name: Schema.String,
  input: Input,
  episode_id: Schema.NullOr(Schema.String),
  tags: Tags,
  name: Schema.NullOr(Schema.String)
}

const datapointTail = {
  source_inference_id: Schema.NullOr(Schema.String).annotate({ description: "the inference it was built from (`from_inferences`)" }),
  is_custom: Schema.Boolean.annotate({ description: "created or edited by hand rather than taken as it was from an inference" }),
  staled_at: Schema.NullOr(Timestamp).annotate({ description: "when it became stale (updated or deleted); null while live" }),
  updated_at: Timestamp,
  created_at: Timestamp.annotate({ description: "the time of its id: when this version was created" })
}

export const ChatDatapoint = Schema.Struct({
  type: Schema.Literal("chat"),
  ...datapointHead,
  output: Schema.NullOr(Schema.Array(DatapointOutputBlock)),
  allowed_tools: Schema.NullOr(Schema.Array(Schema.String)),
  tool_choice: Schema.NullOr(RawToolChoice),
  parallel_tool_calls: Schema.NullOr(Schema.Boolean),
  additional_tools: Schema.NullOr(Schema.Array(AdditionalTool)),
  ...datapointTail
}).annotate({ identifier: "ChatDatapoint" })

export const JsonDatapoint = Schema.Struct({
  type: Schema.Literal("json"),
  ...datapointHead,
  output: Schema.Unknown.annotate({ description: "the output value; null when none" }),
  output_schema: Schema.NullOr(JsonObject),
  ...datapointTail
}).annotate({ identifier: "JsonDatapoint" })

export const DatapointsResponse = Schema.Struct({
  datapoints: Schema.Array(Schema.Union([ChatDatapoint, JsonDatapoint]))
}).annotate({ identifier: "DatapointsResponse" })

export const DatasetsResponse = Schema.Struct({
  datasets: Schema.Array(Schema.Struct({
    name: Schema.String,
    datapoint_count: Schema.Int.annotate({ description: "live datapoints" }),
    functions: Schema.Array(Schema.Struct({ function_name: Schema.String, datapoint_count: Schema.Int })),
    last_updated: Timestamp
  }))
}).annotate({ identifier: "DatasetsResponse" })

/** export writes and import reads JSON Lines */
export const jsonLinesContentType = "application/jsonl"
