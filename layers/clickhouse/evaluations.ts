/** The EvaluationStore on ClickHouse: placeholder until its adapter lands (issue 15). */
import * as Effect from "effect/Effect"
import type { EvaluationStore } from "../../src/evaluations/store.ts"
import type { ClickHouse } from "./client.ts"

export const makeClickHouseEvaluationStore = (_clickhouse: ClickHouse): EvaluationStore => ({
  saveRun: () => Effect.die("not built yet"),
  insertResults: () => Effect.die("not built yet"),
  getRun: () => Effect.die("not built yet"),
  listRuns: () => Effect.die("not built yet"),
  getResults: () => Effect.die("not built yet")
})
