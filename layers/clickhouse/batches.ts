/** The batch store (src/batch/store.ts) on ClickHouse: PLACEHOLDER, replaced by the storage work of issue 16. */
import * as Effect from "effect/Effect"
import type { BatchStore } from "../../src/batch/store.ts"
import { StoreError } from "../../src/storeError.ts"
import type { ClickHouse } from "./client.ts"

const notYet = Effect.fail(new StoreError({ message: "batch storage is not built yet" }))

export const makeClickHouseBatchStore = (_clickhouse: ClickHouse): BatchStore => ({
  insertBatch: () => notYet,
  getBatch: () => notYet,
  getBatchInferences: () => notYet,
  updateBatch: () => notYet,
  listPendingBatches: () => notYet
})
