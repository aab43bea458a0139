/**
 * Workflow evaluation runs, newest first (`GET /workflow_evaluation_runs`): the variant each
 * pins per function, their names and tags, each opening its page of episodes and metrics.
 */
import { useQuery } from "@tanstack/react-query"
import { useState } from "react"
import { Link } from "react-router"
import type { RunsResponse } from "../../../../src/api/workflowEvaluations.ts"
import { api, query } from "../../api.ts"
import { TagList } from "../inference/content.tsx"
import { Card, ErrorNotice, formatTime, Loading, Pager, shortId, Table } from "../ui.tsx"

const pageSize = 20

export type WorkflowRunJson = (typeof RunsResponse.Type)["runs"][number]

/** "function: variant" pairs */
export const PinnedVariants = (props: { variants: Readonly<Record<string, string>> }) => (
  <span className="means">
    {Object.entries(props.variants).map(([fn, variant]) => <span key={fn}><code>{fn}</code>: {variant}</span>)}
  </span>
)

export const WorkflowRunsList = () => {
  const [offset, setOffset] = useState(0)
  const runs = useQuery({
    queryKey: ["workflow-runs", offset],
    queryFn: () => api<typeof RunsResponse.Type>(`/workflow_evaluation_runs${query({ limit: pageSize, offset })}`)
  })
  return (
    <Card title="Workflow evaluation runs">
      <p className="muted">
        Runs started by applications (<code>POST /workflow_evaluation_run</code>): each pins a variant per function for the inferences of its episodes.
      </p>
      {runs.isPending && <Loading what="the workflow runs" />}
      <ErrorNotice error={runs.error} />
      {runs.data !== undefined && (
        <>
          <Table<WorkflowRunJson>
            caption="Workflow evaluation runs, newest first"
            rows={runs.data.runs}
            rowKey={(run) => run.run_id}
            empty="No workflow evaluation run yet."
            columns={[
              { header: "Run", cell: (run) => <Link className="mono" to={`/evaluations/workflow/${run.run_id}`}>{shortId(run.run_id)}</Link> },
              { header: "Name", cell: (run) => run.display_name ?? <span className="muted">—</span> },
              { header: "Project", cell: (run) => run.project_name ?? <span className="muted">—</span> },
              { header: "Variants", cell: (run) => <PinnedVariants variants={run.variants} /> },
              { header: "Tags", cell: (run) => <TagList tags={run.tags} /> },
              { header: "Started", cell: (run) => formatTime(run.timestamp) }
            ]}
          />
          <Pager label="Pages of workflow runs" offset={offset} limit={pageSize} count={runs.data.runs.length} onChange={setOffset} />
        </>
      )}
    </Card>
  )
}
