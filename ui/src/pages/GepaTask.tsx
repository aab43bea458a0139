/**
 * A GEPA task: while pending, its progress (polled every 1.5 s) and a cancel button; once
 * completed, the scores of its variants, the new variants with their templates, and the
 * configuration files to adopt them; in error, why.
 */
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query"
import { Link, useParams } from "react-router"
import type { GepaTaskResponse } from "../../../src/api/gepa.ts"
import { api } from "../api.ts"
import { fetchGepaTask, gepaTaskKey, gepaTaskPath } from "../components/optimization/gepaTask.ts"
import { launchedTask } from "../components/optimization/launchedTasks.ts"
import { GepaExportFiles, GepaStatisticsTable, GepaVariants } from "../components/optimization/GepaResults.tsx"
import { Badge, Button, Card, ErrorNotice, Facts, formatTime, Loading, Page } from "../components/ui.tsx"

const pollMs = 1500

const tones = { pending: "warn", completed: "good", error: "bad" } as const

export default function GepaTask() {
  const taskId = useParams().taskId ?? ""
  const client = useQueryClient()
  const task = useQuery({
    queryKey: gepaTaskKey(taskId),
    queryFn: () => fetchGepaTask(taskId),
    refetchInterval: (query) => query.state.data?.status === "pending" ? pollMs : false,
    staleTime: 0
  })
  const cancel = useMutation({
    mutationFn: () => api<GepaTaskResponse>(gepaTaskPath(taskId), { method: "DELETE" }),
    onSuccess: (body) => client.setQueryData(gepaTaskKey(taskId), body)
  })
  const launched = launchedTask(taskId)
  const status = task.data?.status

  return (
    <Page
      title="GEPA task"
      actions={status === "pending" && (
        <Button kind="danger" onClick={() => cancel.mutate()} disabled={cancel.isPending}>{cancel.isPending ? "Cancelling…" : "Cancel the task"}</Button>
      )}
    >
      <p><Link to="/optimization">All optimization tasks</Link></p>
      <ErrorNotice error={cancel.error} />
      {task.isPending && <Loading what="the task" />}
      <ErrorNotice error={task.error} />
      {task.data !== undefined && (
        <Card title="Status">
          <Facts facts={[
            ["Task", <code key="id">{taskId}</code>],
            ["Status", <span key="status" role="status"><Badge tone={tones[task.data.status]}>{task.data.status}</Badge></span>],
            ["Function", launched?.function_name ?? "—"],
            ["Launched", launched === undefined ? "—" : formatTime(launched.launched_at)]
          ]} />
          {task.data.status === "pending" && <Progress progress={task.data.progress} />}
          {task.data.status === "error" && <p role="alert" className="notice error">{task.data.error}</p>}
        </Card>
      )}
      {task.data?.status === "completed" && (
        <>
          <Card title="Statistics">
            <GepaStatisticsTable result={task.data} />
          </Card>
          <GepaVariants result={task.data} />
          <GepaExportFiles taskId={taskId} />
        </>
      )}
    </Page>
  )
}

const Progress = (props: { progress: Extract<GepaTaskResponse, { status: "pending" }>["progress"] }) => {
  const { current_iteration: iteration, max_iterations: max, current_step: step } = props.progress
  const text = `Iteration ${iteration} of ${max}: ${step.replaceAll("_", " ")}`
  return (
    <div className="progress">
      <progress value={iteration} max={Math.max(max, 1)} aria-label="Iterations done" />
      <p className="muted">{text}</p>
    </div>
  )
}
