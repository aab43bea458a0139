/**
 * `gateway evaluate`'s flags, one per field of the evaluation run request they build: the
 * command line defines its flags from this table (bin/gateway.ts), and says them in place of
 * the fields the run's refusals name (`namingFlags`).
 */
import type { EvaluationRunRequest } from "../../src/api/evaluations.ts"

export const evaluateFlagOf: { readonly [Field in keyof EvaluationRunRequest]-?: string } = {
  function_name: "function-name",
  evaluator_names: "evaluator-names",
  evaluation_name: "evaluation-name",
  dataset_name: "dataset-name",
  datapoint_ids: "datapoint-ids",
  variant_name: "variant-name",
  concurrency: "concurrency",
  max_datapoints: "max-datapoints",
  inference_cache: "inference-cache",
  cutoffs: "cutoffs",
  adaptive_stopping_precision: "adaptive-stopping-precision"
}
