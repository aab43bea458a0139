/**
 * The request and answer Schemas of prompt optimization with GEPA (spec 4.7): launching a task
 * (`POST /v1/optimization/gepa`), reading it (`GET /v1/optimization/gepa/{task_id}`, a union on
 * `status`), and cancelling it (`DELETE`, beyond the spec).
 */
import * as Schema from "effect/Schema"

export const defaultGepaBatchSize = 5
export const defaultGepaConcurrency = 10
export const defaultGepaDatapoints = 1000
export const maxGepaIterations = 1000
export const maxGepaBatchSize = 100
export const maxGepaConcurrency = 100
export const maxGepaDatapoints = 100_000

const positiveAtMost = (maximum: number) => Schema.Int.check(Schema.isBetween({ minimum: 1, maximum }))

export const LaunchGepaRequest = Schema.Struct({
  function_name: Schema.String.annotate({ description: "the function whose templates are optimized" }),
  analysis_model: Schema.String.annotate({ description: "a configured model or a short-hand: reports on each inference GEPA scores" }),
  mutation_model: Schema.String.annotate({ description: "a configured model or a short-hand: writes the new templates" }),
  max_iterations: positiveAtMost(maxGepaIterations),
  dataset_name: Schema.optional(Schema.String).annotate({ description: "split 50/50 into training and validation, by `seed`" }),
  train_dataset_name: Schema.optional(Schema.String).annotate({ description: "with `val_dataset_name`, in place of `dataset_name`" }),
  val_dataset_name: Schema.optional(Schema.String),
  evaluators: Schema.optional(Schema.Array(Schema.String)).annotate({ description: "evaluator names under the function; or `evaluation_name`" }),
  evaluation_name: Schema.optional(Schema.String).annotate({ description: "a configured evaluation of the function, whose evaluators score" }),
  initial_variants: Schema.optional(Schema.Array(Schema.String)).annotate({
    description: "the variants to start from (default: every chat_completion variant of the function with at least one template)"
  }),
  variant_prefix: Schema.optional(Schema.String).annotate({ description: "the start of the new variants' names (default `gepa_<task>`)" }),
  batch_size: Schema.optional(positiveAtMost(maxGepaBatchSize)).annotate({
    description: `training datapoints analysed per iteration (default ${defaultGepaBatchSize})`
  }),
  seed: Schema.optional(Schema.Int).annotate({ description: "the split and the samples follow from it (default: drawn at launch)" }),
  max_concurrency: Schema.optional(positiveAtMost(maxGepaConcurrency)).annotate({
    description: `inference calls at once (default ${defaultGepaConcurrency})`
  }),
  max_datapoints: Schema.optional(positiveAtMost(maxGepaDatapoints)).annotate({
    description: `datapoints read from the datasets at most (default ${defaultGepaDatapoints})`
  }),
  include_inference_for_mutation: Schema.optional(Schema.Boolean).annotate({
    description: "the analyses the mutation model reads include each inference's input and output (default true)"
  })
}).annotate({ identifier: "LaunchGepaRequest" })
export type LaunchGepaRequest = typeof LaunchGepaRequest.Type

export const LaunchGepaResponse = Schema.Struct({ task_id: Schema.String }).annotate({ identifier: "LaunchGepaResponse" })

const Count = Schema.Int.check(Schema.isGreaterThanOrEqualTo(0))

export const GepaStatistics = Schema.Struct({
  mean: Schema.NullOr(Schema.Number),
  stdev: Schema.NullOr(Schema.Number),
  count: Count
}).annotate({ identifier: "GepaStatistics" })

export const GepaPending = Schema.Struct({
  status: Schema.Literal("pending"),
  progress: Schema.Struct({
    current_iteration: Count,
    max_iterations: Count,
    current_step: Schema.String.annotate({ description: "queued, loading, evaluating_initial, sampling, analyzing, mutating, evaluating_minibatch, evaluating_validation" })
  })
})

export const GepaCompleted = Schema.Struct({
  status: Schema.Literal("completed"),
  variants: Schema.Record(Schema.String, Schema.Record(Schema.String, Schema.Unknown)).annotate({
    description: "the new variants on the Pareto frontier: chat_completion variant tables with their templates inline (`templates.<name>.content`)"
  }),
  statistics: Schema.Record(Schema.String, Schema.Record(Schema.String, GepaStatistics)).annotate({
    description: "per variant evaluated on the validation set (the initial ones too), per evaluator"
  })
})

export const GepaError = Schema.Struct({
  status: Schema.Literal("error"),
  error: Schema.String
})

export const GepaTaskResponse = Schema.Union([GepaPending, GepaCompleted, GepaError]).annotate({ identifier: "GepaTask" })
export type GepaTaskResponse = typeof GepaTaskResponse.Type
