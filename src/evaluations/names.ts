/**
 * The names evaluations store under: the metric each evaluator's scores are feedback of, the
 * built-in json function each judge runs as, and the tags on a run's inferences and feedback.
 * All start with `gateway::`, which clients may not use (src/api/tags.ts).
 */

/** every inference and score of an inference evaluation run */
export const evaluationRunIdTag = "gateway::evaluation_run_id"
/** the datapoint an inference (or a judge's) answered */
export const datapointIdTag = "gateway::datapoint_id"
export const datasetNameTag = "gateway::dataset_name"
/** with `--evaluation-name`: the configured evaluation */
export const evaluationNameTag = "gateway::evaluation_name"
/** on a score and on a judge's inference: the evaluator */
export const evaluatorNameTag = "gateway::evaluator_name"
/** on a judge's inference: the inference it judged */
export const judgedInferenceIdTag = "gateway::judged_inference_id"
/** on a judge's score: the judge's inference */
export const evaluatorInferenceIdTag = "gateway::evaluator_inference_id"

/** Where an evaluator is defined: under a function, or under a configured evaluation. */
export type EvaluatorScope =
  | { readonly kind: "function"; readonly functionName: string }
  | { readonly kind: "evaluation"; readonly evaluationName: string }

/** `gateway::function_name::<fn>::evaluator_name::<ev>`, or TensorZero's `gateway::evaluation_name::<e>::evaluator_name::<ev>` */
export const evaluatorMetricName = (scope: EvaluatorScope, evaluatorName: string): string =>
  scope.kind === "function"
    ? `gateway::function_name::${scope.functionName}::evaluator_name::${evaluatorName}`
    : `gateway::evaluation_name::${scope.evaluationName}::evaluator_name::${evaluatorName}`

/** `gateway::llm_judge::<function or evaluation>::<evaluator>`: a judge's built-in json function */
export const judgeFunctionName = (scope: EvaluatorScope, evaluatorName: string): string =>
  `gateway::llm_judge::${scope.kind === "function" ? scope.functionName : scope.evaluationName}::${evaluatorName}`

/** What every judge answers: its reasoning, then its score (a number, or a boolean for boolean judges). */
export const judgeOutputSchema = (outputType: "boolean" | "float"): Record<string, unknown> => ({
  type: "object",
  properties: {
    thinking: { type: "string" },
    score: { type: outputType === "boolean" ? "boolean" : "number" }
  },
  required: ["thinking", "score"],
  additionalProperties: false
})
