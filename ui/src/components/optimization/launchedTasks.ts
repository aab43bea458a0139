/**
 * The GEPA tasks launched from this browser, newest first, kept in localStorage: the gateway
 * keeps tasks in its job queue, which reads them one by one (by id), not as a list. A task
 * launched elsewhere (the API, the CLI) opens by its id.
 */
import { uiBase } from "../../api.ts"

export interface LaunchedTask {
  readonly task_id: string
  readonly function_name: string
  /** epoch milliseconds */
  readonly launched_at: number
}

// per gateway base path: two gateways behind one origin keep their own lists
const storageKey = `${uiBase}:gepa-tasks`
const kept = 50

export const launchedTasks = (): ReadonlyArray<LaunchedTask> => {
  try {
    const parsed = JSON.parse(localStorage.getItem(storageKey) ?? "[]")
    return Array.isArray(parsed) ? parsed.filter((task) => typeof task?.task_id === "string") : []
  } catch {
    return []
  }
}

const save = (tasks: ReadonlyArray<LaunchedTask>) => localStorage.setItem(storageKey, JSON.stringify(tasks.slice(0, kept)))

export const rememberTask = (task: LaunchedTask) => save([task, ...launchedTasks().filter((other) => other.task_id !== task.task_id)])

export const forgetTask = (taskId: string) => save(launchedTasks().filter((task) => task.task_id !== taskId))

export const launchedTask = (taskId: string) => launchedTasks().find((task) => task.task_id === taskId)
