/** The WorkflowEvaluationStore on ClickHouse: placeholder until its adapter lands (issue 15). */
import * as Effect from "effect/Effect"
import type { WorkflowEvaluationStore } from "../../src/workflowEvaluations/store.ts"
import type { ClickHouse } from "./client.ts"

export const makeClickHouseWorkflowEvaluationStore = (_clickhouse: ClickHouse): WorkflowEvaluationStore => ({
  insertRun: () => Effect.die("not built yet"),
  insertEpisode: () => Effect.die("not built yet"),
  getRun: () => Effect.die("not built yet"),
  findEpisode: () => Effect.die("not built yet"),
  listRuns: () => Effect.die("not built yet"),
  listEpisodes: () => Effect.die("not built yet"),
  metricSummaries: () => Effect.die("not built yet")
})
