/** Evaluation runs and results as the wire shows them (src/api/evaluations.ts). */
import { confidenceHalfWidth } from "./statistics.ts"
import type { EvaluationResultRecord, EvaluationRunRecord, EvaluatorSummary } from "./store.ts"

const summaryJson = (summary: EvaluatorSummary) => ({
  count: summary.count,
  mean: summary.mean ?? null,
  stderr: summary.stderr ?? null,
  ci_half_width: confidenceHalfWidth(summary) ?? null,
  errors: summary.errors,
  ...(summary.cutoff === undefined ? {} : { cutoff: summary.cutoff, cutoff_met: summary.cutoffMet ?? false })
})

export const runJson = (run: EvaluationRunRecord) => ({
  run_id: run.id,
  function_name: run.functionName,
  variant_name: run.variantName,
  dataset_name: run.datasetName === "" ? null : run.datasetName,
  evaluation_name: run.evaluationName ?? null,
  evaluator_names: run.evaluatorNames,
  datapoint_count: run.datapointCount,
  status: run.status,
  completed: run.completed,
  errors: run.errors,
  summary: Object.fromEntries(Object.entries(run.summary).map(([name, summary]) => [name, summaryJson(summary)])),
  started_at: new Date(run.startedAt).toISOString(),
  finished_at: run.finishedAt === undefined ? null : new Date(run.finishedAt).toISOString(),
  ...(run.failure === undefined ? {} : { failure: run.failure })
})

export const resultJson = (result: EvaluationResultRecord) => ({
  datapoint_id: result.datapointId,
  inference_id: result.inferenceId ?? null,
  scores: result.scores,
  evaluator_errors: result.evaluatorErrors,
  ...(result.error === undefined ? {} : { error: result.error })
})
