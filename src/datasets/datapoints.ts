// placeholder until helper C1 lands the datapoint operations
import * as Effect from "effect/Effect"
import type { DatasetDeps, DatasetOperations } from "./service.ts"

const notYet = Effect.die("not built yet")
export const makeDatapointOperations = (_deps: DatasetDeps): DatasetOperations => ({
  create: () => notYet,
  get: () => notYet,
  list: () => notYet,
  update: () => notYet,
  updateMetadata: () => notYet,
  delete: () => notYet,
  deleteDataset: () => notYet,
  listDatasets: () => notYet
})
