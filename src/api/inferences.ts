/**
 * The request and answer Schemas of reading stored inferences back: `POST /v1/inferences/get_inferences`
 * and `POST /v1/inferences/list_inferences`, and of the filters they (and later the dataset
 * endpoints) take: tags, time, metrics and demonstrations, combined with and/or/not (datapoints:
 * tags and time); the inferences answered, and the endpoints.
 */
import * as Schema from "effect/Schema"
import { ContentBlock, FinishReason, JsonOutput, ThoughtBlock } from "./inference.ts"

/** A tree of `Leaf` conditions combined with and/or/not, as sent. */
export type FilterTreeJson<Leaf> =
  | Leaf
  | { readonly type: "and" | "or"; readonly children: ReadonlyArray<FilterTreeJson<Leaf>> }
  | { readonly type: "not"; readonly child: FilterTreeJson<Leaf> }

const comparisonOperators = ["<", "<=", "=", ">", ">=", "!="] as const

const TagFilter = Schema.Struct({
  type: Schema.Literal("tag"),
  key: Schema.String,
  value: Schema.String,
  comparison_operator: Schema.optional(Schema.Literals(["=", "!="]))
})
export type TagFilterJson = typeof TagFilter.Type

/** on the time of the row's id */
const TimeFilter = Schema.Struct({
  type: Schema.Literal("time"),
  time: Schema.String,
  comparison_operator: Schema.Literals(comparisonOperators)
})
export type TimeFilterJson = typeof TimeFilter.Type

/** the latest value of the metric on the inference (or on its episode, for an episode-level metric) */
const BooleanMetricFilter = Schema.Struct({
  type: Schema.Literal("boolean_metric"),
  metric_name: Schema.String,
  value: Schema.Boolean
})

const FloatMetricFilter = Schema.Struct({
  type: Schema.Literal("float_metric"),
  metric_name: Schema.String,
  value: Schema.Finite,
  comparison_operator: Schema.Literals(comparisonOperators)
})

/** the inference has at least one demonstration */
const DemonstrationFilter = Schema.Struct({ type: Schema.Literal("demonstration") })

export type InferenceFilterLeaf =
  | TagFilterJson
  | TimeFilterJson
  | typeof BooleanMetricFilter.Type
  | typeof FloatMetricFilter.Type
  | typeof DemonstrationFilter.Type
export type InferenceFilter = FilterTreeJson<InferenceFilterLeaf>

export type DatapointFilterLeaf = TagFilterJson | TimeFilterJson
export type DatapointFilter = FilterTreeJson<DatapointFilterLeaf>

/** The schema of a filter tree whose leaves are `leaves`. */
const filterTree = <Leaf>(
  leaves: ReadonlyArray<Schema.Codec<Leaf>>,
  annotations: { readonly identifier: string; readonly expected: string }
): Schema.Codec<FilterTreeJson<Leaf>> => {
  const self = (): Schema.Codec<FilterTreeJson<Leaf>> => tree
  const tree: Schema.Codec<FilterTreeJson<Leaf>> = Schema.Union([
    ...leaves,
    Schema.Struct({ type: Schema.Literal("and"), children: Schema.Array(Schema.suspend(self)) }),
    Schema.Struct({ type: Schema.Literal("or"), children: Schema.Array(Schema.suspend(self)) }),
    Schema.Struct({ type: Schema.Literal("not"), child: Schema.suspend(self) })
  ]).annotate(annotations)
  return tree
}

/** The filters of stored inferences (list_inferences, and datasets built from inferences). */
export const InferenceFilter: Schema.Codec<InferenceFilter> = filterTree<InferenceFilterLeaf>(
  [TagFilter, TimeFilter, BooleanMetricFilter, FloatMetricFilter, DemonstrationFilter],
  {
    identifier: "InferenceFilter",
    expected: `a filter of type "tag", "time", "boolean_metric", "float_metric", "demonstration", "and", "or" or "not"`
  }
)

/** The filters of datapoints (list_datapoints): tags and time only. */
export const DatapointFilter: Schema.Codec<DatapointFilter> = filterTree<DatapointFilterLeaf>([TagFilter, TimeFilter], {
  identifier: "DatapointFilter",
  expected: `a filter of type "tag", "time", "and", "or" or "not"`
})

/**
 * Bounds on a filter tree, checked on the raw JSON before it is decoded (decoding and building
 * the SQL both recurse over it, and thousands of levels overflow the stack): a real filter is a
 * few levels deep and holds a few conditions. ClickHouse takes time superlinear in the number of
 * conditions to plan a query (100: ~0.5 s, 200: ~3 s, 500: minutes of a CPU, the query going on
 * after the gateway gave up), hence the low count. The text bound keeps the ClickHouse query
 * under its 256 KiB maximum (strings go hex-encoded, up to 6 bytes per character).
 */
export const filterLimits = { depth: 32, nodes: 100, textChars: 16_384 } as const

const filterTextFields = ["key", "value", "time", "metric_name"] as const

/**
 * Why the raw `filters` value exceeds `filterLimits` (the message names the field), or undefined.
 * Follows only what decoding recurses into (`children`, `child`) and stops at the first limit crossed.
 */
export const filterBoundsProblem = (raw: unknown, path: string): string | undefined => {
  let nodes = 0
  let text = 0
  const walk = (value: unknown, at: string, depth: number): string | undefined => {
    // anything else is for the decoder to refuse
    if (typeof value !== "object" || value === null || Array.isArray(value)) return undefined
    if (depth > filterLimits.depth) return `${at}: filters nest deeper than ${filterLimits.depth} levels`
    if (++nodes > filterLimits.nodes) return `${at}: filters hold more than ${filterLimits.nodes} conditions in all`
    const node = value as Record<string, unknown>
    for (const field of filterTextFields) {
      const string = node[field]
      if (typeof string === "string" && (text += string.length) > filterLimits.textChars) {
        return `${at}.${field}: the keys, values, times and metric names of filters exceed ${filterLimits.textChars} characters in all`
      }
    }
    const children = node.children
    if (Array.isArray(children)) {
      for (let i = 0; i < children.length; i++) {
        const problem = walk(children[i], `${at}.children[${i}]`, depth + 1)
        if (problem !== undefined) return problem
      }
    }
    return node.child === undefined ? undefined : walk(node.child, `${at}.child`, depth + 1)
  }
  return walk(raw, path, 1)
}

export const GetInferencesRequest = Schema.Struct({
  ids: Schema.Array(Schema.String),
  include_feedback: Schema.optional(Schema.Boolean),
  include_model_inferences: Schema.optional(Schema.Boolean)
})
export type GetInferencesRequest = typeof GetInferencesRequest.Type

export const maxListLimit = 1000

export const ListInferencesRequest = Schema.Struct({
  function_name: Schema.optional(Schema.String),
  variant_name: Schema.optional(Schema.String),
  episode_id: Schema.optional(Schema.String),
  filters: Schema.optional(InferenceFilter),
  limit: Schema.optional(Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: maxListLimit }))),
  offset: Schema.optional(Schema.Int.check(Schema.isGreaterThanOrEqualTo(0))),
  include_feedback: Schema.optional(Schema.Boolean),
  include_model_inferences: Schema.optional(Schema.Boolean)
})
export type ListInferencesRequest = typeof ListInferencesRequest.Type

// ---- the answer: stored inferences, with their feedback and model calls when asked

const Tags = Schema.Record(Schema.String, Schema.String)
const Milliseconds = Schema.Int.check(Schema.isGreaterThanOrEqualTo(0))
const Timestamp = Schema.String.annotate({ description: "RFC 3339, UTC" })

export const StoredFeedbackResponse = Schema.Struct({
  feedback_id: Schema.String,
  metric_name: Schema.String,
  kind: Schema.Literals(["boolean", "float", "comment", "demonstration"]),
  target_type: Schema.Literals(["inference", "episode"]),
  target_id: Schema.String,
  value: Schema.Unknown,
  tags: Tags,
  timestamp: Timestamp
}).annotate({ identifier: "StoredFeedback" })

/** A block of a model's answer, before the function checked it. */
export const ModelOutputBlock = Schema.Union([
  Schema.Struct({ type: Schema.Literal("text"), text: Schema.String }),
  Schema.Struct({ type: Schema.Literal("tool_call"), id: Schema.String, raw_name: Schema.String, raw_arguments: Schema.String }),
  ThoughtBlock,
  Schema.Struct({ type: Schema.Literal("unknown"), data: Schema.Unknown, model_provider_name: Schema.String })
]).annotate({ identifier: "ModelOutputBlock" })

export const StoredModelInferenceResponse = Schema.Struct({
  model_inference_id: Schema.String,
  model_name: Schema.String,
  model_provider_name: Schema.String,
  raw_request: Schema.String,
  raw_response: Schema.String,
  system: Schema.NullOr(Schema.String),
  input_messages: Schema.Unknown,
  output: Schema.Array(ModelOutputBlock),
  input_tokens: Schema.Int,
  output_tokens: Schema.Int,
  cached_input_tokens: Schema.NullOr(Schema.Int).annotate({ description: "input tokens read from the provider's prompt cache, when it says" }),
  cost: Schema.NullOr(Schema.Finite).annotate({ description: "the provider's `cost` rules applied to its raw usage; null when it has none or they read nothing" }),
  response_time_ms: Milliseconds,
  ttft_ms: Schema.NullOr(Milliseconds),
  finish_reason: Schema.NullOr(FinishReason),
  cached: Schema.Boolean,
  timestamp: Timestamp
}).annotate({ identifier: "StoredModelInference" })

const storedHead = {
  inference_id: Schema.String,
  episode_id: Schema.String,
  function_name: Schema.String,
  variant_name: Schema.String,
  input: Schema.Unknown.annotate({ description: "the request's `input`, as received" })
}

const storedTail = {
  inference_params: Schema.Unknown,
  tags: Tags,
  timestamp: Timestamp,
  processing_time_ms: Milliseconds,
  ttft_ms: Schema.NullOr(Milliseconds),
  /** with `include_feedback` */
  feedback: Schema.optional(Schema.Array(StoredFeedbackResponse)),
  /** with `include_model_inferences` */
  model_inferences: Schema.optional(Schema.Array(StoredModelInferenceResponse))
}

export const StoredChatInference = Schema.Struct({
  type: Schema.Literal("chat"),
  ...storedHead,
  output: Schema.Array(ContentBlock),
  tool_params: Schema.Unknown,
  ...storedTail
}).annotate({ identifier: "StoredChatInference" })

export const StoredJsonInference = Schema.Struct({
  type: Schema.Literal("json"),
  ...storedHead,
  output: JsonOutput,
  output_schema: Schema.Unknown,
  ...storedTail
}).annotate({ identifier: "StoredJsonInference" })

export const InferencesResponse = Schema.Struct({
  inferences: Schema.Array(Schema.Union([StoredChatInference, StoredJsonInference]))
}).annotate({ identifier: "InferencesResponse" })
export type InferencesResponse = typeof InferencesResponse.Type
