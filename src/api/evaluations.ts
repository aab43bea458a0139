/**
 * The request and answer Schemas of inference evaluation runs: `POST /v1/evaluations/run` runs a function's
 * variant on a dataset's datapoints and scores each output with evaluators, answering a stream
 * of Server-Sent Events; runs are listed and read back with their per-datapoint results.
 */
import * as Schema from "effect/Schema"

const PositiveInt = Schema.Int.check(Schema.isGreaterThan(0))
const Timestamp = Schema.String.annotate({ description: "RFC 3339, UTC" })
const EvaluatorNumbers = Schema.Record(Schema.String, Schema.Finite)

import { defaultConcurrency, maxConcurrency, maxResultsListed } from "./evaluationLimits.ts"

export { defaultConcurrency, maxConcurrency, maxResultsListed }

export const InferenceCacheMode = Schema.Literals(["on", "off", "read_only", "write_only"])
export type InferenceCacheMode = typeof InferenceCacheMode.Type

export const EvaluationRunRequest = Schema.Struct({
  function_name: Schema.optional(Schema.String).annotate({ description: "the function evaluated (implied by `evaluation_name`)" }),
  evaluator_names: Schema.optional(Schema.Array(Schema.String)).annotate({
    description: "evaluators of the function, or of the evaluation; default: all of them"
  }),
  evaluation_name: Schema.optional(Schema.String).annotate({ description: "a configured `[evaluations.<name>]`: its function and evaluators" }),
  dataset_name: Schema.optional(Schema.String).annotate({ description: "every live datapoint of the function in it (exclusive with `datapoint_ids`)" }),
  datapoint_ids: Schema.optional(Schema.Array(Schema.String)).annotate({ description: "these live datapoints" }),
  variant_name: Schema.optional(Schema.String).annotate({ description: "default: one variant sampled by weight for the whole run" }),
  concurrency: Schema.optional(PositiveInt).annotate({ description: `inferences at once (default ${defaultConcurrency}, at most ${maxConcurrency})` }),
  max_datapoints: Schema.optional(PositiveInt).annotate({ description: "the first datapoints only (in id order)" }),
  inference_cache: Schema.optional(InferenceCacheMode).annotate({ description: "the cache's use by the run's inferences (default `on`)" }),
  cutoffs: Schema.optional(EvaluatorNumbers).annotate({
    description: "evaluator -> the mean it must reach (`optimize = \"max\"`) or stay under (`\"min\"`); the summary says which were met"
  }),
  adaptive_stopping_precision: Schema.optional(EvaluatorNumbers).annotate({
    description: "evaluator -> a 95% confidence interval half-width: the run stops once every named evaluator's is below it"
  })
}).annotate({ identifier: "EvaluationRunRequest" })
export type EvaluationRunRequest = typeof EvaluationRunRequest.Type

const Score = Schema.NullOr(Schema.Union([Schema.Boolean, Schema.Finite])).annotate({
  description: "null when the evaluator does not apply (no reference output)"
})

export const EvaluatorSummaryJson = Schema.Struct({
  count: Schema.Int.annotate({ description: "scores counted (booleans as 0 and 1)" }),
  mean: Schema.NullOr(Schema.Finite),
  stderr: Schema.NullOr(Schema.Finite).annotate({ description: "the standard error of the mean (null under two scores)" }),
  ci_half_width: Schema.NullOr(Schema.Finite).annotate({ description: "of the 95% confidence interval: 1.96 standard errors" }),
  errors: Schema.Int.annotate({ description: "datapoints it could not score" }),
  cutoff: Schema.optional(Schema.Finite),
  cutoff_met: Schema.optional(Schema.Boolean)
}).annotate({ identifier: "EvaluatorSummary" })

export const EvaluationRun = Schema.Struct({
  run_id: Schema.String,
  function_name: Schema.String,
  variant_name: Schema.String,
  dataset_name: Schema.NullOr(Schema.String),
  evaluation_name: Schema.NullOr(Schema.String),
  evaluator_names: Schema.Array(Schema.String),
  datapoint_count: Schema.Int,
  status: Schema.Literals(["running", "completed", "stopped_early", "failed"]),
  completed: Schema.Int.annotate({ description: "datapoints done (scored or failed)" }),
  errors: Schema.Int.annotate({ description: "datapoints whose inference failed" }),
  summary: Schema.Record(Schema.String, EvaluatorSummaryJson),
  started_at: Timestamp,
  finished_at: Schema.NullOr(Timestamp),
  failure: Schema.optional(Schema.String)
}).annotate({ identifier: "EvaluationRun" })

export const EvaluationResult = Schema.Struct({
  datapoint_id: Schema.String,
  inference_id: Schema.NullOr(Schema.String),
  scores: Schema.Record(Schema.String, Score),
  evaluator_errors: Schema.Record(Schema.String, Schema.String),
  error: Schema.optional(Schema.String).annotate({ description: "why the inference failed" })
}).annotate({ identifier: "EvaluationResult" })

/** the events of a run: `start`, one `result` per datapoint, then `summary` (or `error` when the run itself failed) */
export const EvaluationEvent = Schema.Union([
  Schema.Struct({ type: Schema.Literal("start"), run_id: Schema.String, datapoint_count: Schema.Int, variant_name: Schema.String }),
  Schema.Struct({ type: Schema.Literal("result"), ...EvaluationResult.fields }),
  Schema.Struct({ type: Schema.Literal("summary"), ...EvaluationRun.fields }),
  Schema.Struct({ type: Schema.Literal("error"), error: Schema.String })
]).annotate({ identifier: "EvaluationEvent", description: "each event's name (`event:`) is its `type`" })

export const EvaluationRunsResponse = Schema.Struct({ runs: Schema.Array(EvaluationRun) }).annotate({ identifier: "EvaluationRuns" })

export const EvaluationRunResponse = Schema.Struct({
  run: EvaluationRun,
  results: Schema.Array(EvaluationResult).annotate({ description: "in datapoint id order, `limit` from `offset`" })
}).annotate({ identifier: "EvaluationRunDetail" })
