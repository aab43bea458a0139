/**
 * The inference parameters, defined once: the fields a variant fixes in the configuration and a
 * request sends in `params` (one Schema; the type and the list of names derive from it), with
 * the json modes and the tool choice as written.
 */
import * as Schema from "effect/Schema"

const PositiveInt = Schema.Int.check(Schema.isGreaterThan(0))

/** The parameters a `chat_completion` variant can fix (also accepted per request in `params`). */
export const inferenceParamFields = {
  temperature: Schema.optional(Schema.Finite),
  max_tokens: Schema.optional(PositiveInt),
  seed: Schema.optional(Schema.Int),
  top_p: Schema.optional(Schema.Finite),
  /** sampling from the k likeliest tokens: sent to the providers that take it (Anthropic, Gemini, Bedrock's Claude, vLLM, SGLang, Together, Fireworks, OpenRouter, Hyperbolic), left out elsewhere */
  top_k: Schema.optional(PositiveInt),
  presence_penalty: Schema.optional(Schema.Finite),
  frequency_penalty: Schema.optional(Schema.Finite),
  stop_sequences: Schema.optional(Schema.Array(Schema.String)),
  reasoning_effort: Schema.optional(Schema.String),
  service_tier: Schema.optional(Schema.String),
  thinking_budget_tokens: Schema.optional(PositiveInt),
  verbosity: Schema.optional(Schema.String)
}

/** how a json function's output is asked of the model */
export const JsonModeSchema = Schema.Literals(["off", "on", "strict", "tool"])
export type JsonMode = typeof JsonModeSchema.Type

export const InferenceParamsSchema = Schema.Struct(inferenceParamFields)
export type InferenceParams = typeof InferenceParamsSchema.Type

/** every parameter's name, in the Schema's order */
export const inferenceParamNames = Object.keys(inferenceParamFields) as ReadonlyArray<keyof InferenceParams>

export const RawToolChoice = Schema.Union([
  Schema.Literals(["none", "auto", "required"]),
  Schema.Struct({ specific: Schema.String })
]).annotate({ expected: `"none", "auto", "required" or { specific = "<tool name>" }` })
