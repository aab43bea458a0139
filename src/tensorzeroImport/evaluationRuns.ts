/**
 * An inference evaluation run of TensorZero as this gateway's run record and results. TensorZero
 * kept a run's results as inferences tagged with the run (and the datapoint each answered) and
 * its evaluators' scores as feedback on them, metric
 * `tensorzero::evaluation_name::<evaluation>::evaluator_name::<evaluator>`, the latest score of
 * an inference and metric winning (a person's correction over the judge's). Those come into this
 * gateway as they are (renamed); this builds, from them, the record and results that the
 * evaluations API lists and reads back. Pure.
 */
import type { StoredFeedback, StoredInference } from "../analytics/records.ts"
import { ScoreAccumulator } from "../evaluations/statistics.ts"
import type { EvaluationResultRecord, EvaluationRunRecord } from "../evaluations/store.ts"
import { datapointIdTag } from "../evaluations/names.ts"
import { gatewayName } from "./names.ts"
import type { TzEvaluationRun } from "./source.ts"

/** the evaluator a metric of the evaluation scores for, if it is one */
const evaluatorOf = (evaluationName: string, metricName: string): string | undefined => {
  const prefix = `gateway::evaluation_name::${evaluationName}::evaluator_name::`
  return metricName.startsWith(prefix) ? metricName.slice(prefix.length) : undefined
}

/** the evaluators the run's metadata names (`metrics`: `[{evaluator_name, ...}]`) */
const namedEvaluators = (metrics: unknown): ReadonlyArray<string> =>
  Array.isArray(metrics)
    ? metrics.flatMap((metric) => typeof metric === "object" && metric !== null && typeof (metric as { evaluator_name?: unknown }).evaluator_name === "string" ? [(metric as { evaluator_name: string }).evaluator_name] : [])
    : []

export interface ImportedEvaluationRun {
  readonly run: EvaluationRunRecord
  readonly results: ReadonlyArray<EvaluationResultRecord>
}

/**
 * `tzRun` with its results: `inferences` are the run's (tagged with its id), `feedback` the
 * feedback on them. Inferences of TensorZero's own judges (`gateway::...` functions) are not results.
 */
export const evaluationRunOf = (
  tzRun: TzEvaluationRun,
  inferences: ReadonlyArray<StoredInference>,
  feedback: ReadonlyArray<StoredFeedback>
): ImportedEvaluationRun => {
  const functionName = gatewayName(tzRun.functionName)
  const evaluated = inferences.filter((inference) => inference.functionName === functionName && inference.tags[datapointIdTag] !== undefined)
  // the latest score per inference and evaluator
  const latest = new Map<string, StoredFeedback>()
  for (const entry of feedback) {
    if (entry.kind !== "boolean" && entry.kind !== "float") continue
    const evaluator = evaluatorOf(tzRun.evaluationName, entry.metricName)
    if (evaluator === undefined) continue
    const key = `${entry.targetId}\0${evaluator}`
    const known = latest.get(key)
    // the later, by time then by id (UUIDv7: the order they were written in within one millisecond)
    if (known === undefined || known.timestamp < entry.timestamp || (known.timestamp === entry.timestamp && known.id < entry.id)) latest.set(key, entry)
  }
  const evaluators = new Set(namedEvaluators(tzRun.metrics))
  for (const key of latest.keys()) evaluators.add(key.slice(key.indexOf("\0") + 1))
  const accumulators = new Map([...evaluators].map((name) => [name, new ScoreAccumulator()]))

  const results = evaluated.map((inference): EvaluationResultRecord => {
    const scores: Record<string, boolean | number | null> = {}
    for (const name of evaluators) {
      const score = latest.get(`${inference.id}\0${name}`)
      if (score === undefined) continue
      scores[name] = score.value as boolean | number
      accumulators.get(name)!.add(score.value as boolean | number)
    }
    return { runId: tzRun.runId, datapointId: inference.tags[datapointIdTag]!, inferenceId: inference.id, scores, evaluatorErrors: {}, timestamp: inference.timestamp }
  })

  const variantNames = [...new Set(evaluated.map((inference) => inference.variantName))]
  return {
    run: {
      id: tzRun.runId,
      functionName,
      variantName: tzRun.variantNames[0] ?? variantNames[0] ?? "",
      datasetName: tzRun.datasetName,
      evaluationName: tzRun.evaluationName,
      evaluatorNames: [...evaluators],
      datapointCount: results.length,
      status: "completed",
      completed: results.length,
      errors: 0,
      summary: Object.fromEntries([...accumulators].map(([name, accumulator]) => [name, accumulator.summary()])),
      startedAt: tzRun.createdAt,
      finishedAt: tzRun.updatedAt
    },
    results
  }
}
