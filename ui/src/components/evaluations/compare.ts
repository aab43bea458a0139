/**
 * The comparison of evaluation runs, computed from what `GET /v1/evaluations/runs/:id` answers:
 * the evaluators any of them ran, which run is best on each (by the evaluator's `optimize`), and
 * their results lined up by datapoint.
 */
import type { EvaluationResult, EvaluationRunResponse } from "../../../../src/api/evaluations.ts"
import type { UiConfig } from "../../../../src/api/uiConfig.ts"
import { shortId } from "../ui.tsx"

export type RunDetail = typeof EvaluationRunResponse.Type
export type ResultJson = typeof EvaluationResult.Type

/** the run ids of the page: its own, then `compare`'s (comma-separated), each once */
export const comparedRunIds = (runId: string, compare: string | null): ReadonlyArray<string> =>
  [...new Set([runId, ...(compare ?? "").split(",").map((id) => id.trim()).filter((id) => id !== "")])]

/** how a run is named in column headers: its variant and id, distinct even for two runs of one variant */
export const runLabel = (detail: RunDetail) => `${detail.run.variant_name} · ${shortId(detail.run.run_id)}`

/** every evaluator of the runs, in the order they first appear */
export const evaluatorsOf = (details: ReadonlyArray<RunDetail>): ReadonlyArray<string> =>
  [...new Set(details.flatMap((detail) => detail.run.evaluator_names))]

/** the run ids with the best mean on `evaluator` (none when under two runs have one) */
export const bestRuns = (details: ReadonlyArray<RunDetail>, evaluator: string, config: UiConfig | undefined): ReadonlySet<string> => {
  const scored = details.flatMap((detail) => {
    const mean = detail.run.summary[evaluator]?.mean
    return mean === null || mean === undefined ? [] : [{ runId: detail.run.run_id, mean }]
  })
  if (scored.length < 2) return new Set()
  const fn = config?.functions.find((candidate) => candidate.name === details[0].run.function_name)
  const minimize = fn?.evaluators.find((candidate) => candidate.name === evaluator)?.optimize === "min"
  const best = minimize ? Math.min(...scored.map((entry) => entry.mean)) : Math.max(...scored.map((entry) => entry.mean))
  // a tie everywhere singles out nobody
  if (scored.every((entry) => entry.mean === best)) return new Set()
  return new Set(scored.filter((entry) => entry.mean === best).map((entry) => entry.runId))
}

export interface DatapointRow {
  readonly datapointId: string
  /** by run id: that run's result on the datapoint, when it has one */
  readonly results: ReadonlyMap<string, ResultJson>
}

/** the datapoints of any of the runs, in id order (the order each run lists its results in) */
export const datapointRows = (details: ReadonlyArray<RunDetail>): ReadonlyArray<DatapointRow> => {
  const rows = new Map<string, Map<string, ResultJson>>()
  for (const detail of details) {
    for (const result of detail.results) {
      const row = rows.get(result.datapoint_id) ?? new Map<string, ResultJson>()
      row.set(detail.run.run_id, result)
      rows.set(result.datapoint_id, row)
    }
  }
  return [...rows.keys()].sort().map((datapointId) => ({ datapointId, results: rows.get(datapointId)! }))
}
