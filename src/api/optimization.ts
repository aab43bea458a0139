/**
 * The request and answer Schemas of optimization (beyond the spec's endpoint list): creating the examples of
 * a dynamic in-context learning variant (`POST /v1/optimization/dicl`) from a dataset's
 * datapoints or from stored inferences, as a durable task, and reading the task back
 * (`GET /v1/optimization/dicl/{task_id}`).
 */
import * as Schema from "effect/Schema"
import { maxFromInferences } from "./datasets.ts"
import { maxEmbeddingInputs } from "./embeddings.ts"

/** the most examples one task embeds (and its default cap) */
export const maxDiclExamples = maxFromInferences
export const defaultDiclExamples = 10_000
export const defaultDiclBatchSize = 64
export const maxDiclConcurrency = 64
export const defaultDiclConcurrency = 4

const between = (minimum: number, maximum: number) => Schema.Int.check(Schema.isBetween({ minimum, maximum }))

export const DiclInferenceQuery = Schema.Struct({
  variant_name: Schema.optional(Schema.String).annotate({ description: "only the inferences of this variant (default: any variant of the function)" }),
  episode_id: Schema.optional(Schema.String),
  // the grammar of list_inferences (src/api/inferences.ts), with its metric filters, checked by the service
  filters: Schema.optional(Schema.Unknown).annotate({ description: "as list_inferences' `filters`" }),
  output_source: Schema.optional(Schema.Literals(["inference", "demonstration"])).annotate({
    description: "each example's output: the inference's (default), or its latest demonstration (inferences without one are skipped)"
  })
}).annotate({ identifier: "DiclInferenceQuery" })

export const CreateDiclExamplesRequest = Schema.Struct({
  function_name: Schema.String,
  variant_name: Schema.String.annotate({ description: "the variant of the function whose examples these are" }),
  embedding_model: Schema.optional(Schema.String).annotate({
    description: "a configured `[embedding_models]` name or a short-hand (`openai::text-embedding-3-small`); default: the variant's `embedding_model`"
  }),
  dataset_name: Schema.optional(Schema.String).annotate({ description: "the examples: the live datapoints of the function in this dataset that have an output" }),
  inference_query: Schema.optional(DiclInferenceQuery).annotate({ description: "the examples: the function's stored inferences this query lists, newest first" }),
  append: Schema.optional(Schema.Boolean).annotate({
    description: "add to the variant's examples; default false: the new examples replace them, at once when the task completes"
  }),
  batch_size: Schema.optional(between(1, maxEmbeddingInputs)).annotate({ description: `inputs per embedding call (default ${defaultDiclBatchSize})` }),
  max_concurrency: Schema.optional(between(1, maxDiclConcurrency)).annotate({ description: `embedding calls at once (default ${defaultDiclConcurrency})` }),
  max_examples: Schema.optional(between(1, maxDiclExamples)).annotate({ description: `the most examples taken from the source (default ${defaultDiclExamples})` })
}).annotate({ identifier: "CreateDiclExamplesRequest" })
export type CreateDiclExamplesRequest = typeof CreateDiclExamplesRequest.Type

export const CreateDiclExamplesResponse = Schema.Struct({ task_id: Schema.String }).annotate({ identifier: "CreateDiclExamplesResponse" })

const Count = Schema.Int.check(Schema.isGreaterThanOrEqualTo(0))

/** the status of every optimization task (spec 3): queued or running, completed, or ended in error (failed or cancelled) */
export const OptimizationTaskStatus = Schema.Literals(["pending", "completed", "error"])
export type OptimizationTaskStatus = typeof OptimizationTaskStatus.Type

export const DiclTaskResponse = Schema.Struct({
  task_id: Schema.String,
  status: OptimizationTaskStatus,
  progress: Schema.optional(Schema.Struct({ embedded: Count, total: Count })).annotate({
    description: "examples embedded so far, of those the source gave (once the task has read its source)"
  }),
  result: Schema.optional(Schema.Struct({
    examples_written: Count,
    function_name: Schema.String,
    variant_name: Schema.String,
    embedding_model: Schema.String
  })).annotate({ description: "when completed" }),
  error: Schema.optional(Schema.String).annotate({ description: "when `error`: why (the failure, or `cancelled`)" })
}).annotate({ identifier: "DiclTask" })
