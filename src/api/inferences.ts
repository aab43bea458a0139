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

/**
 * Bounds on a filter tree, checked on the raw JSON before it is decoded (decoding and building
 * the SQL both recurse over it, and thousands of levels overflow the stack): a real filter is a
 * few levels deep and holds a few conditions. ClickHouse takes time superlinear in the number of
 * conditions to plan a query (100: ~0.5 s, 200: ~3 s, 500: minutes of a CPU, the query going on
 * after the gateway gave up), hence the low count. The text bound keeps the ClickHouse query
 * under its 256 KiB maximum (strings go hex-encoded, up to 6 bytes per character).
 */
export const filterLimits = { depth: 32, nodes: 100, textChars: 16_384 } as const

const filterTextFields = ["key", "value", "time"] as const

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
        return `${at}.${field}: the keys, values and times of filters exceed ${filterLimits.textChars} characters in all`
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
