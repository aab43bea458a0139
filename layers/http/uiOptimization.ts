/**
 * `GET /v1/ui/optimization/gepa/{task_id}/export`: a completed GEPA task's configuration files, as
 * the CLI's export writes them; a task of another workspace than the caller's is unknown.
 */
import * as Effect from "effect/Effect"
import * as HttpRouter from "effect/http/HttpRouter"
import type { UiGepaExport } from "../../src/api/uiOptimization.ts"
import { gepaTaskExport } from "../../src/optimization/gepa/service.ts"
import { Tasks } from "../../src/tasks/service.ts"
import { jsonResponse } from "./respond.ts"
import type { Caller } from "../../src/workspace.ts"

export const exportGepaTaskHandler = (caller: Caller) =>
  Effect.gen(function*() {
    const taskId = (yield* HttpRouter.params).task_id ?? ""
    const tasks = yield* Tasks
    const exported = yield* gepaTaskExport(caller.workspace, taskId, yield* tasks.get(taskId))
    const body: UiGepaExport = { task_id: taskId, function_name: exported.functionName, variants: exported.variantCount, files: exported.files }
    return jsonResponse(JSON.stringify(body))
  })
