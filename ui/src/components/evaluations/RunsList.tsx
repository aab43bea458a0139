/**
 * The evaluation runs, newest first (`GET /v1/evaluations/runs`), of one function or all, with
 * their evaluators' means; runs checked here open side by side on the comparison page. Asked
 * again every few seconds while one of them is still running.
 */
import { useQuery } from "@tanstack/react-query"
import { useState } from "react"
import { Link, useNavigate } from "react-router"
import type { EvaluationRunsResponse } from "../../../../src/api/evaluations.ts"
import type { UiConfig } from "../../../../src/api/uiConfig.ts"
import { api, query } from "../../api.ts"
import { Button, Card, ErrorNotice, formatTime, Loading, Pager, SelectField, shortId, Table } from "../ui.tsx"
import { comparisonPath, type EvaluationRunJson } from "./launch.ts"
import { meanText, RunStatus } from "./scores.tsx"

const pageSize = 20

export const evaluationRunsKey = ["evaluation-runs"] as const

export const RunsList = (props: { config: UiConfig }) => {
  const navigate = useNavigate()
  const [functionName, setFunctionName] = useState("")
  const [offset, setOffset] = useState(0)
  const [selected, setSelected] = useState<ReadonlyArray<string>>([])
  const runs = useQuery({
    queryKey: [...evaluationRunsKey, functionName, offset],
    queryFn: () => api<typeof EvaluationRunsResponse.Type>(`/v1/evaluations/runs${query({ function_name: functionName, limit: pageSize, offset })}`),
    refetchInterval: (current) => current.state.data?.runs.some((run) => run.status === "running") === true ? 2000 : false
  })
  const select = (runId: string, checked: boolean) =>
    setSelected((current) => checked ? [...current, runId] : current.filter((id) => id !== runId))
  const functions = props.config.functions.filter((fn) => !fn.builtin).map((fn) => fn.name)

  return (
    <Card title="Runs">
      <div className="row">
        <SelectField
          label="Function of the runs"
          value={functionName}
          onChange={(name) => {
            setFunctionName(name)
            setOffset(0)
          }}
          empty="(every function)"
          options={functions}
        />
        <Button kind="primary" disabled={selected.length === 0} onClick={() => void navigate(comparisonPath(selected))}>
          {selected.length > 1 ? `Compare ${selected.length} selected runs` : "Compare selected runs"}
        </Button>
        {selected.length > 0 && <Button onClick={() => setSelected([])}>Clear the selection</Button>}
      </div>
      {runs.isPending && <Loading what="the runs" />}
      <ErrorNotice error={runs.error} />
      {runs.data !== undefined && (
        <>
          <Table<EvaluationRunJson>
            caption="Evaluation runs, newest first"
            rows={runs.data.runs}
            rowKey={(run) => run.run_id}
            empty="No evaluation run yet."
            columns={[
              {
                header: "Compare",
                cell: (run) => (
                  <input
                    type="checkbox"
                    aria-label={`Compare run ${shortId(run.run_id)} (${run.variant_name})`}
                    checked={selected.includes(run.run_id)}
                    onChange={(event) => select(run.run_id, event.target.checked)}
                  />
                )
              },
              { header: "Run", cell: (run) => <Link className="mono" to={comparisonPath([run.run_id])}>{shortId(run.run_id)}</Link> },
              { header: "Function", cell: (run) => run.function_name },
              { header: "Variant", cell: (run) => run.variant_name },
              { header: "Dataset", cell: (run) => run.dataset_name ?? <span className="muted">datapoint ids</span> },
              { header: "Started", cell: (run) => formatTime(run.started_at) },
              { header: "Status", cell: (run) => <RunStatus run={run} /> },
              {
                header: "Datapoints",
                numeric: true,
                cell: (run) => `${run.completed} / ${run.datapoint_count}${run.errors > 0 ? ` (${run.errors} failed)` : ""}`
              },
              {
                header: "Means",
                cell: (run) => (
                  <span className="means">
                    {run.evaluator_names.map((evaluator) => (
                      <span key={evaluator}>{`${evaluator}: ${meanText(run.summary[evaluator])}`}</span>
                    ))}
                  </span>
                )
              }
            ]}
          />
          <Pager label="Pages of runs" offset={offset} limit={pageSize} count={runs.data.runs.length} onChange={setOffset} />
        </>
      )}
    </Card>
  )
}
