/** `GET /v1/ui/datasets/:dataset_name/datapoints/:datapoint_id/history`: a datapoint's versions, newest first. */
import * as Effect from "effect/Effect"
import * as HttpRouter from "effect/http/HttpRouter"
import { datapointJson } from "../../src/datasets/json.ts"
import { DatasetService } from "../../src/datasets/service.ts"
import type { Caller } from "../../src/workspace.ts"
import { datasetNameParam } from "./datasets.ts"
import { jsonResponse } from "./respond.ts"

export const getDatapointHistoryHandler = (caller: Caller) => Effect.gen(function*() {
  const name = yield* datasetNameParam
  const { datapoint_id } = yield* HttpRouter.params
  const versions = yield* (yield* DatasetService).history(caller.workspace, name, datapoint_id ?? "")
  return jsonResponse(JSON.stringify({ versions: versions.map(datapointJson) }))
})
