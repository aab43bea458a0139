/**
 * Evaluations: run a function's variants on a dataset with its evaluators (one run per variant,
 * progress as it streams), the runs so far (check some to compare them), and the workflow
 * evaluation runs applications started.
 */
import { useQueryClient } from "@tanstack/react-query"
import { useCallback } from "react"
import { evaluationRunsKey, RunsList } from "../components/evaluations/RunsList.tsx"
import { RunForm } from "../components/evaluations/RunForm.tsx"
import { WorkflowRunsList } from "../components/evaluations/WorkflowRunsList.tsx"
import "../components/evaluations/evaluations.css"
import { ErrorNotice, Loading, Page } from "../components/ui.tsx"
import { useUiConfig } from "../config.ts"

export default function Evaluations() {
  const config = useUiConfig()
  const client = useQueryClient()
  const refreshRuns = useCallback(() => void client.invalidateQueries({ queryKey: evaluationRunsKey }), [client])
  return (
    <Page title="Evaluations">
      {config.isPending && <Loading what="the configuration" />}
      <ErrorNotice error={config.error} />
      {config.data !== undefined && (
        <>
          <RunForm config={config.data} onRunEnded={refreshRuns} />
          <RunsList config={config.data} />
        </>
      )}
      <WorkflowRunsList />
    </Page>
  )
}
