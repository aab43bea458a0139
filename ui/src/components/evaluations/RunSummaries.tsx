/** The runs compared, and per evaluator each run's mean, interval and count side by side. */
import type { UiConfig } from "../../../../src/api/uiConfig.ts"
import { Card, formatTime, shortId, Table } from "../ui.tsx"
import { bestRuns, evaluatorsOf, type RunDetail, runLabel } from "./compare.ts"
import { RunStatus, SummaryFigure } from "./scores.tsx"

export const RunSummaries = (props: { details: ReadonlyArray<RunDetail>; config: UiConfig | undefined }) => {
  const { details } = props
  const evaluators = evaluatorsOf(details)
  const functions = new Set(details.map((detail) => detail.run.function_name))
  const datasets = new Set(details.map((detail) => detail.run.dataset_name))
  return (
    <>
      <Card title={details.length > 1 ? "Runs compared" : "Run"}>
        {(functions.size > 1 || datasets.size > 1) && (
          <p className="notice error" role="status">These runs are of different functions or datasets: their datapoints do not line up.</p>
        )}
        <Table<RunDetail>
          caption={details.length > 1 ? "Runs compared" : "The run"}
          rows={details}
          rowKey={(detail) => detail.run.run_id}
          columns={[
            { header: "Run", cell: (detail) => <code title={detail.run.run_id}>{shortId(detail.run.run_id)}</code> },
            { header: "Variant", cell: (detail) => detail.run.variant_name },
            { header: "Function", cell: (detail) => detail.run.function_name },
            { header: "Dataset", cell: (detail) => detail.run.dataset_name ?? <span className="muted">datapoint ids</span> },
            { header: "Status", cell: (detail) => <RunStatus run={detail.run} /> },
            {
              header: "Datapoints",
              numeric: true,
              cell: (detail) => `${detail.run.completed} / ${detail.run.datapoint_count}${detail.run.errors > 0 ? ` (${detail.run.errors} failed)` : ""}`
            },
            { header: "Started", cell: (detail) => formatTime(detail.run.started_at) },
            { header: "Finished", cell: (detail) => formatTime(detail.run.finished_at) }
          ]}
        />
        {details.some((detail) => detail.run.failure !== undefined) && (
          <ul>
            {details.flatMap((detail) => detail.run.failure === undefined ? [] : [<li key={detail.run.run_id}>{runLabel(detail)}: {detail.run.failure}</li>])}
          </ul>
        )}
      </Card>
      <Card title="Scores by evaluator">
        <p className="muted">The mean of each evaluator's scores (booleans as 0 and 1) ± the half-width of its 95% confidence interval, over n scored datapoints.</p>
        <Table<string>
          caption="Scores by evaluator, one column per run"
          rows={evaluators}
          rowKey={(evaluator) => evaluator}
          empty="The runs have no evaluator."
          columns={[
            { header: "Evaluator", cell: (evaluator) => <code>{evaluator}</code> },
            ...details.map((detail) => ({
              header: runLabel(detail),
              cell: (evaluator: string) => (
                <SummaryFigure summary={detail.run.summary[evaluator]} best={bestRuns(details, evaluator, props.config).has(detail.run.run_id)} />
              )
            }))
          ]}
        />
      </Card>
    </>
  )
}
