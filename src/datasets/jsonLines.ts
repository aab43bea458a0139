// placeholder until helper C2 lands export and import
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import type { DatasetDeps, DatasetOperations, DatasetTransfers } from "./service.ts"

export const makeJsonLines = (
  _deps: DatasetDeps,
  _operations: DatasetOperations
): Pick<DatasetTransfers, "exportDatapoints" | "importDatapoints"> => ({
  exportDatapoints: () => Stream.die("not built yet"),
  importDatapoints: () => Effect.die("not built yet")
})
