// placeholder until helper C2 lands from_inferences
import * as Effect from "effect/Effect"
import type { DatasetDeps, DatasetOperations, DatasetTransfers } from "./service.ts"

export const makeFromInferences = (_deps: DatasetDeps, _operations: DatasetOperations): Pick<DatasetTransfers, "fromInferences"> => ({
  fromInferences: () => Effect.die("not built yet")
})
