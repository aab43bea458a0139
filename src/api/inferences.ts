/**
 * The wire contract of reading stored inferences back: `POST /v1/inferences/get_inferences`
 * and `POST /v1/inferences/list_inferences`, and of the filters they (and later the dataset
 * endpoints) take: tags and time, combined with and/or/not.
 */
import * as Schema from "effect/Schema"

export type InferenceFilter =
  | { readonly type: "tag"; readonly key: string; readonly value: string; readonly comparison_operator?: "=" | "!=" | undefined }
  | { readonly type: "time"; readonly time: string; readonly comparison_operator: "<" | "<=" | ">" | ">=" }
  | { readonly type: "and" | "or"; readonly children: ReadonlyArray<InferenceFilter> }
  | { readonly type: "not"; readonly child: InferenceFilter }

export const InferenceFilter: Schema.Codec<InferenceFilter> = Schema.Union([
  Schema.Struct({
    type: Schema.Literal("tag"),
    key: Schema.String,
    value: Schema.String,
    comparison_operator: Schema.optional(Schema.Literals(["=", "!="]))
  }),
  Schema.Struct({
    type: Schema.Literal("time"),
    time: Schema.String,
    comparison_operator: Schema.Literals(["<", "<=", ">", ">="])
  }),
  Schema.Struct({
    type: Schema.Literal("and"),
    children: Schema.Array(Schema.suspend((): Schema.Codec<InferenceFilter> => InferenceFilter))
  }),
  Schema.Struct({
    type: Schema.Literal("or"),
    children: Schema.Array(Schema.suspend((): Schema.Codec<InferenceFilter> => InferenceFilter))
  }),
  Schema.Struct({
    type: Schema.Literal("not"),
    child: Schema.suspend((): Schema.Codec<InferenceFilter> => InferenceFilter)
  })
]).annotate({ expected: `a filter of type "tag", "time", "and", "or" or "not"` })

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
