/** How evaluation scores read: an evaluator's summary over a run, and one datapoint's score. */
import type { EvaluationRun, EvaluatorSummaryJson } from "../../../../src/api/evaluations.ts"
import { Badge, formatNumber } from "../ui.tsx"

export type EvaluatorSummary = typeof EvaluatorSummaryJson.Type

/** "mean ± 95% half-width" as text (no interval under two scores) */
export const meanText = (summary: EvaluatorSummary | undefined): string =>
  summary === undefined || summary.mean === null
    ? "—"
    : `${formatNumber(summary.mean)}${summary.ci_half_width === null ? "" : ` ± ${formatNumber(summary.ci_half_width)}`}`

/** An evaluator's figures over a run: the mean with its interval, the count, failures, the cutoff. */
export const SummaryFigure = (props: { summary: EvaluatorSummary | undefined; best?: boolean }) => {
  const summary = props.summary
  if (summary === undefined) return <span className="muted">not run</span>
  return (
    <span className="summary-figure">
      <strong>{meanText(summary)}</strong>
      <span className="muted"> n={summary.count}</span>
      {summary.errors > 0 && <> <Badge tone="warn">{`${summary.errors} unscored`}</Badge></>}
      {summary.cutoff_met !== undefined && (
        <> <Badge tone={summary.cutoff_met ? "good" : "bad"}>{`cutoff ${formatNumber(summary.cutoff)} ${summary.cutoff_met ? "met" : "missed"}`}</Badge></>
      )}
      {props.best === true && <> <Badge tone="good">best</Badge></>}
    </span>
  )
}

/** One datapoint's score: true/false, a number, n/a (the evaluator did not apply), or why it could not score. */
export const ScoreBadge = (props: { evaluator: string; score: boolean | number | null | undefined; error?: string | undefined }) => {
  if (props.error !== undefined) return <Badge tone="warn"><span title={props.error}>{`${props.evaluator}: error`}</span></Badge>
  const { score } = props
  if (score === undefined) return <Badge>{`${props.evaluator}: —`}</Badge>
  if (score === null) return <Badge>{`${props.evaluator}: n/a`}</Badge>
  if (typeof score === "boolean") return <Badge tone={score ? "good" : "bad"}>{`${props.evaluator}: ${score}`}</Badge>
  return <Badge>{`${props.evaluator}: ${formatNumber(score)}`}</Badge>
}

const statusTone = { running: "warn", completed: "good", stopped_early: "neutral", failed: "bad" } as const

/** a run's status: running, completed, stopped early (adaptive stopping), failed */
export const RunStatus = (props: { run: typeof EvaluationRun.Type }) => (
  <Badge tone={statusTone[props.run.status]}>{props.run.status.replace("_", " ")}</Badge>
)
