/**
 * `GET /v1/ui/config`: the configuration as the gateway loaded it, for the UI's Configuration
 * page, its forms (metrics for feedback, variants and evaluators for evaluations, schemas for the
 * playground) and its pickers. Read-only. No secret leaves: credentials are shown by kind and
 * variable name, extra headers by name only.
 */
import * as Schema from "effect/Schema"

const JsonObject = Schema.Record(Schema.String, Schema.Unknown)

export const UiEvaluator = Schema.Struct({
  name: Schema.String,
  type: Schema.Literals(["exact_match", "regex", "tool_use", "llm_judge"]),
  /** the metric its scores are stored under as feedback */
  metric_name: Schema.String,
  output_type: Schema.Literals(["boolean", "float"]),
  optimize: Schema.Literals(["max", "min"]),
  cutoff: Schema.optional(Schema.Finite),
  /** the type's own fields (a regex's patterns, a judge's input format...) */
  settings: JsonObject
}).annotate({ identifier: "UiEvaluator" })

export const UiVariant = Schema.Struct({
  name: Schema.String,
  type: Schema.String,
  weight: Schema.Finite,
  /** the model it calls itself (a sampling variant's evaluator or fuser) */
  model: Schema.String,
  /** template name -> MiniJinja source */
  templates: Schema.Record(Schema.String, Schema.String),
  /** the rest of its configuration: parameters, JSON mode, retries, candidates, k... */
  settings: JsonObject
}).annotate({ identifier: "UiVariant" })

export const UiFunction = Schema.Struct({
  name: Schema.String,
  type: Schema.Literals(["chat", "json"]),
  description: Schema.optional(Schema.String),
  /** a function of the gateway's own (`gateway::...`: LLM judges, prompt optimization) */
  builtin: Schema.Boolean,
  /** schema name (`system`, `user`, `assistant` or custom) -> JSON Schema of its template arguments */
  schemas: Schema.Record(Schema.String, JsonObject),
  output_schema: Schema.optional(JsonObject),
  tools: Schema.Array(Schema.String),
  tool_choice: Schema.Unknown,
  parallel_tool_calls: Schema.optional(Schema.Boolean),
  variants: Schema.Array(UiVariant),
  evaluators: Schema.Array(UiEvaluator),
  experimentation: Schema.optional(JsonObject)
}).annotate({ identifier: "UiFunction" })

export const UiProvider = Schema.Struct({
  name: Schema.String,
  type: Schema.String,
  model_name: Schema.String,
  /** where its key comes from: "env::NAME", "dynamic::NAME", "none", ... (never the key) */
  credential: Schema.String,
  settings: JsonObject
}).annotate({ identifier: "UiProvider" })

export const UiModel = Schema.Struct({
  name: Schema.String,
  routing: Schema.Array(Schema.String),
  providers: Schema.Array(UiProvider)
}).annotate({ identifier: "UiModel" })

export const UiTool = Schema.Struct({
  name: Schema.String,
  description: Schema.String,
  parameters: JsonObject,
  strict: Schema.Boolean
}).annotate({ identifier: "UiTool" })

export const UiMetric = Schema.Struct({
  name: Schema.String,
  type: Schema.Literals(["boolean", "float"]),
  level: Schema.Literals(["inference", "episode"]),
  optimize: Schema.Literals(["max", "min"]),
  description: Schema.optional(Schema.String)
}).annotate({ identifier: "UiMetric" })

export const UiEvaluation = Schema.Struct({
  name: Schema.String,
  function_name: Schema.String,
  description: Schema.optional(Schema.String),
  evaluators: Schema.Array(UiEvaluator)
}).annotate({ identifier: "UiEvaluation" })

export const UiConfig = Schema.Struct({
  functions: Schema.Array(UiFunction),
  models: Schema.Array(UiModel),
  embedding_models: Schema.Array(UiModel),
  tools: Schema.Array(UiTool),
  metrics: Schema.Array(UiMetric),
  evaluations: Schema.Array(UiEvaluation)
}).annotate({ identifier: "UiConfig" })
export type UiConfig = typeof UiConfig.Type
export type UiFunction = typeof UiFunction.Type
export type UiVariant = typeof UiVariant.Type
export type UiEvaluator = typeof UiEvaluator.Type
export type UiModel = typeof UiModel.Type
export type UiMetric = typeof UiMetric.Type
export type UiTool = typeof UiTool.Type
