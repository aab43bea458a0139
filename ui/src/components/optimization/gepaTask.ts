/** A GEPA task as the gateway answers it (`GET /v1/optimization/gepa/{task_id}`), under one query key for the list and the task's page. */
import type { GepaTaskResponse } from "../../../../src/api/gepa.ts"
import { api } from "../../api.ts"

export const gepaTaskPath = (taskId: string) => `/v1/optimization/gepa/${encodeURIComponent(taskId)}`

export const gepaTaskKey = (taskId: string) => ["gepa-task", taskId]

export const fetchGepaTask = (taskId: string) => api<GepaTaskResponse>(gepaTaskPath(taskId))
