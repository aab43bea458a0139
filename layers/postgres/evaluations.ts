/** The EvaluationStore on Postgres: placeholder until its adapter lands (issue 15). */
import * as Effect from "effect/Effect"
import type { EvaluationStore } from "../../src/evaluations/store.ts"
import type * as PgClient from "@effect/sql-pg/PgClient"

export const makePostgresEvaluationStore = (_sql: PgClient.PgClient): EvaluationStore => ({
  saveRun: () => Effect.die("not built yet"),
  insertResults: () => Effect.die("not built yet"),
  getRun: () => Effect.die("not built yet"),
  listRuns: () => Effect.die("not built yet"),
  getResults: () => Effect.die("not built yet")
})
