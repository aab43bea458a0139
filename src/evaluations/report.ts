/**
 * How `gateway evaluate` shows a run: a progress bar (or plain lines off a terminal), then a
 * table of each evaluator's figures, and whether the cutoffs were met. Text only, no I/O.
 */
import { confidenceHalfWidth } from "./statistics.ts"
import type { EvaluationRunRecord } from "./store.ts"

const barWidth = 30

/** `[#######.......]  45/100  2 errors`, to redraw in place on a terminal */
export const progressBar = (done: number, total: number, errors: number): string => {
  const filled = total === 0 ? barWidth : Math.round((done / total) * barWidth)
  return `[${"#".repeat(filled)}${".".repeat(barWidth - filled)}] ${done}/${total}  ${errors} error${errors === 1 ? "" : "s"}`
}

const figure = (value: number | undefined, digits = 4) => (value === undefined ? "-" : value.toFixed(digits))

const pad = (rows: ReadonlyArray<ReadonlyArray<string>>): string => {
  const widths = rows[0].map((_, column) => Math.max(...rows.map((row) => row[column].length)))
  return rows.map((row) => row.map((cell, column) => cell.padEnd(widths[column])).join("  ").trimEnd()).join("\n")
}

/** the run's header line and a table: evaluator, mean, standard error, 95% CI half-width, count, errors, cutoff */
export const summaryTable = (run: EvaluationRunRecord): string => {
  const rows = [["evaluator", "mean", "stderr", "ci95", "count", "errors", "cutoff"]]
  for (const name of run.evaluatorNames) {
    const summary = run.summary[name] ?? { count: 0, errors: 0 }
    const cutoff = summary.cutoff === undefined ? "-" : `${summary.cutoff} ${summary.cutoffMet === true ? "met" : "MISSED"}`
    rows.push([name, figure(summary.mean), figure(summary.stderr), figure(confidenceHalfWidth(summary)), String(summary.count), String(summary.errors), cutoff])
  }
  const status = run.status === "stopped_early" ? " (stopped early: precision reached)" : run.status === "failed" ? ` (FAILED: ${run.failure ?? "unknown"})` : ""
  return `run ${run.id}: function ${run.functionName}, variant ${run.variantName}, ${run.completed}/${run.datapointCount} datapoints, ${run.errors} inference errors${status}\n${pad(rows)}`
}

/** the evaluators whose cutoff the run missed */
export const missedCutoffs = (run: EvaluationRunRecord): ReadonlyArray<string> =>
  run.evaluatorNames.filter((name) => run.summary[name]?.cutoff !== undefined && run.summary[name]?.cutoffMet !== true)
