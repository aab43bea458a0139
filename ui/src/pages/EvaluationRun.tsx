/**
 * An evaluation run (`/evaluations/runs/:runId`), or several side by side
 * (`?compare=<id>,<id>`): their summaries per evaluator, then per datapoint each run's output
 * and scores. Asked again every few seconds while a run is still running.
 */
import { useQueries } from "@tanstack/react-query"
import { Link, useParams, useSearchParams } from "react-router"
import { maxResultsListed } from "../../../src/api/evaluationLimits.ts"
import { api } from "../api.ts"
import { comparedRunIds, type RunDetail } from "../components/evaluations/compare.ts"
import { DatapointResults } from "../components/evaluations/DatapointResults.tsx"
import { RunSummaries } from "../components/evaluations/RunSummaries.tsx"
import "../components/evaluations/evaluations.css"
import { ErrorNotice, Loading, Page } from "../components/ui.tsx"
import { useUiConfig } from "../config.ts"

export default function EvaluationRun() {
  const { runId = "" } = useParams()
  const [search] = useSearchParams()
  const config = useUiConfig()
  const runIds = comparedRunIds(runId, search.get("compare"))
  const runs = useQueries({
    queries: runIds.map((id) => ({
      queryKey: ["evaluation-run", id],
      queryFn: () => api<RunDetail>(`/v1/evaluations/runs/${encodeURIComponent(id)}?limit=${maxResultsListed}`),
      refetchInterval: (current: { state: { data?: RunDetail } }) => current.state.data?.run.status === "running" ? 2000 : false
    }))
  })
  const failed = runs.find((run) => run.isError)
  const details = runs.flatMap((run) => run.data === undefined ? [] : [run.data])
  return (
    <Page title="Evaluation run" actions={<Link to="/evaluations">All runs</Link>}>
      {failed !== undefined && <ErrorNotice error={failed.error} />}
      {failed === undefined && details.length < runIds.length && <Loading what="the runs" />}
      {failed === undefined && details.length === runIds.length && (
        <>
          <RunSummaries details={details} config={config.data} />
          <DatapointResults details={details} />
        </>
      )}
    </Page>
  )
}
