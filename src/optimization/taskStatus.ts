/**
 * The status of an optimization task as its routes answer it (spec 3: `pending`, `completed`,
 * `error`), the same for every kind (DICL examples, GEPA, any later one), from the durable
 * task's state: queued or running is pending; failed and cancelled are errors, with a message.
 */
import type { OptimizationTaskStatus } from "../api/optimization.ts"
import type { TaskInfo, TaskState } from "../tasks/service.ts"

const statuses: Record<TaskState, OptimizationTaskStatus> = {
  queued: "pending",
  running: "pending",
  completed: "completed",
  failed: "error",
  cancelled: "error"
}

export const optimizationTaskStatus = (state: TaskState): OptimizationTaskStatus => statuses[state]

/** why a task whose status is `error` ended: the failure's message, or "cancelled" */
export const optimizationTaskError = (info: TaskInfo): string =>
  info.state === "cancelled" ? "cancelled" : info.error ?? "the task failed"
