/**
 * Optimization: launch GEPA on a function (the form), the tasks launched from this browser with
 * their status, and a task launched elsewhere opened by its id.
 */
import { useQuery } from "@tanstack/react-query"
import { type FormEvent, useState } from "react"
import { Link, useNavigate } from "react-router"
import type { UiConfig } from "../../../src/api/uiConfig.ts"
import { api } from "../api.ts"
import { useUiConfig } from "../config.ts"
import { fetchGepaTask, gepaTaskKey } from "../components/optimization/gepaTask.ts"
import { GepaLaunchForm } from "../components/optimization/GepaLaunchForm.tsx"
import { forgetTask, type LaunchedTask, launchedTasks } from "../components/optimization/launchedTasks.ts"
import { Badge, Button, Card, ErrorNotice, formatTime, Loading, Page, Table, TextField } from "../components/ui.tsx"

const TaskStatus = (props: { taskId: string }) => {
  const task = useQuery({
    queryKey: gepaTaskKey(props.taskId),
    queryFn: () => fetchGepaTask(props.taskId),
    retry: false
  })
  if (task.isPending) return <span className="muted">…</span>
  if (task.isError) return <Badge tone="bad">unreadable</Badge>
  const { data } = task
  if (data.status === "pending") return <Badge tone="warn">{`pending: iteration ${data.progress.current_iteration} of ${data.progress.max_iterations}`}</Badge>
  if (data.status === "completed") return <Badge tone="good">{`completed: ${Object.keys(data.variants).length} new variants`}</Badge>
  return <Badge tone="bad">{`error: ${data.error}`}</Badge>
}

const LaunchedTasks = () => {
  const [tasks, setTasks] = useState(launchedTasks)
  const [taskId, setTaskId] = useState("")
  const navigate = useNavigate()
  const open = (event: FormEvent) => {
    event.preventDefault()
    if (taskId.trim() !== "") void navigate(`/optimization/gepa/${encodeURIComponent(taskId.trim())}`)
  }
  return (
    <Card title="GEPA tasks">
      <Table<LaunchedTask>
        caption="GEPA tasks launched from this browser"
        rows={tasks}
        rowKey={(task) => task.task_id}
        empty="No task launched from this browser yet."
        columns={[
          { header: "Task", cell: (task) => <Link to={`/optimization/gepa/${task.task_id}`}>{task.task_id}</Link> },
          { header: "Function", cell: (task) => task.function_name },
          { header: "Launched", cell: (task) => formatTime(task.launched_at) },
          { header: "Status", cell: (task) => <TaskStatus taskId={task.task_id} /> },
          {
            header: "List",
            cell: (task) => (
              <Button label={`Forget task ${task.task_id}`} onClick={() => {
                forgetTask(task.task_id)
                setTasks(launchedTasks())
              }}>Forget</Button>
            )
          }
        ]}
      />
      <form className="row" onSubmit={open} aria-label="Open a task">
        <TextField label="Task id" value={taskId} onChange={setTaskId} hint="a task launched elsewhere (the API, another browser)" />
        <Button type="submit" disabled={taskId.trim() === ""}>Open</Button>
      </form>
    </Card>
  )
}

export default function Optimization() {
  const config = useUiConfig()
  return (
    <Page title="Optimization">
      {config.isPending && <Loading what="the configuration" />}
      <ErrorNotice error={config.error} />
      {config.data !== undefined && <GepaLaunchForm config={config.data} />}
      <LaunchedTasks />
    </Page>
  )
}
