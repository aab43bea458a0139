/** The batch store (src/batch/store.ts) on Postgres: PLACEHOLDER, replaced by the storage work of issue 16. */
import * as Effect from "effect/Effect"
import type { BatchStore } from "../../src/batch/store.ts"
import { StoreError } from "../../src/storeError.ts"
import type { PgClient } from "@effect/sql-pg/PgClient"

const notYet = Effect.fail(new StoreError({ message: "batch storage is not built yet" }))

export const makePostgresBatchStore = (_sql: PgClient): BatchStore => ({
  insertBatch: () => notYet,
  getBatch: () => notYet,
  getBatchInferences: () => notYet,
  updateBatch: () => notYet,
  listPendingBatches: () => notYet
})
