/**
 * A workflow evaluation run (`GET /workflow_evaluation_run/:id`): the variant it pins per
 * function, its tags, per metric the count and mean of the feedback on its episodes and their
 * inferences, and its episodes a page at a time (each opening the episode's page).
 */
import { keepPreviousData, useQuery } from "@tanstack/react-query"
import { useState } from "react"
import { Link, useParams } from "react-router"
import type { RunDetailsResponse } from "../../../src/api/workflowEvaluations.ts"
import { api, query } from "../api.ts"
import "../components/evaluations/evaluations.css"
import { PinnedVariants } from "../components/evaluations/WorkflowRunsList.tsx"
import { TagList } from "../components/inference/content.tsx"
import { Card, ErrorNotice, Facts, formatNumber, formatTime, Loading, Page, Pager, shortId, Table } from "../components/ui.tsx"

type Details = typeof RunDetailsResponse.Type
const pageSize = 50

export default function WorkflowRun() {
  const { runId = "" } = useParams()
  const [offset, setOffset] = useState(0)
  const details = useQuery({
    queryKey: ["workflow-run", runId, offset],
    queryFn: () => api<Details>(`/workflow_evaluation_run/${encodeURIComponent(runId)}${query({ limit: pageSize, offset })}`),
    placeholderData: keepPreviousData
  })
  const actions = <Link to="/evaluations">All runs</Link>
  if (details.isPending) return <Page title="Workflow evaluation run" actions={actions}><Loading what="the run" /></Page>
  if (details.isError) return <Page title="Workflow evaluation run" actions={actions}><ErrorNotice error={details.error} /></Page>
  const { run, episodes, metrics } = details.data
  return (
    <Page title="Workflow evaluation run" actions={actions}>
      <Card>
        <Facts
          facts={[
            ["Id", <code key="id">{run.run_id}</code>],
            ["Name", run.display_name ?? "—"],
            ["Project", run.project_name ?? "—"],
            ["Started", formatTime(run.timestamp)],
            ["Variants", <PinnedVariants key="variants" variants={run.variants} />],
            ["Tags", <TagList key="tags" tags={run.tags} />]
          ]}
        />
      </Card>
      <Card title="Metrics">
        <Table<Details["metrics"][number]>
          caption="Feedback per metric on the run's episodes and their inferences"
          rows={metrics}
          rowKey={(metric) => metric.metric_name}
          empty="No feedback on this run yet."
          columns={[
            { header: "Metric", cell: (metric) => <code>{metric.metric_name}</code> },
            { header: "Feedback", numeric: true, cell: (metric) => formatNumber(metric.count) },
            { header: "Mean", numeric: true, cell: (metric) => formatNumber(metric.mean) }
          ]}
        />
      </Card>
      <Card title="Episodes">
        <Table<Details["episodes"][number]>
          caption="Episodes of the run, oldest first"
          rows={episodes}
          rowKey={(episode) => episode.episode_id}
          empty="No episode in this run yet."
          columns={[
            { header: "Episode", cell: (episode) => <Link className="mono" to={`/episodes/${episode.episode_id}`}>{shortId(episode.episode_id)}</Link> },
            { header: "Task", cell: (episode) => episode.task_name ?? <span className="muted">—</span> },
            { header: "Tags", cell: (episode) => <TagList tags={episode.tags} /> },
            { header: "Started", cell: (episode) => formatTime(episode.timestamp) }
          ]}
        />
        <Pager label="Pages of episodes" offset={offset} limit={pageSize} count={episodes.length} onChange={setOffset} />
      </Card>
    </Page>
  )
}
