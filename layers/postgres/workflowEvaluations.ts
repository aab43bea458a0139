/** The WorkflowEvaluationStore on Postgres: placeholder until its adapter lands (issue 15). */
import * as Effect from "effect/Effect"
import type { WorkflowEvaluationStore } from "../../src/workflowEvaluations/store.ts"
import type * as PgClient from "@effect/sql-pg/PgClient"

export const makePostgresWorkflowEvaluationStore = (_sql: PgClient.PgClient): WorkflowEvaluationStore => ({
  insertRun: () => Effect.die("not built yet"),
  insertEpisode: () => Effect.die("not built yet"),
  getRun: () => Effect.die("not built yet"),
  findEpisode: () => Effect.die("not built yet"),
  listRuns: () => Effect.die("not built yet"),
  listEpisodes: () => Effect.die("not built yet"),
  metricSummaries: () => Effect.die("not built yet")
})
