/**
 * `GET /v1/ui/datasets/:dataset_name/datapoints/:datapoint_id/history`: every version of a
 * datapoint, for the UI's datapoint page. An update writes a new version with a new id and
 * stales the old one; the public routes read a version by its id but cannot say which versions
 * belong together. The store ties them by their first version's id.
 */
import * as Schema from "effect/Schema"
import { ChatDatapoint, DatasetsResponse, JsonDatapoint } from "./datasets.ts"

export const DatapointHistory = Schema.Struct({
  versions: Schema.Array(Schema.Union([ChatDatapoint, JsonDatapoint])).annotate({
    description: "the datapoint's versions, newest first: the live one (if any) and the stale ones (`staled_at` set)"
  })
}).annotate({ identifier: "DatapointHistory" })
export type DatapointHistory = typeof DatapointHistory.Type

/** a datapoint version as the dataset routes answer it */
export type Datapoint = typeof ChatDatapoint.Type | typeof JsonDatapoint.Type
/** `GET /v1/datasets` */
export type DatasetsList = typeof DatasetsResponse.Type
