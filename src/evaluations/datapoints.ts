/**
 * The datapoints a run evaluates, and the inference request each one becomes. A run takes the
 * live datapoints of its function, in id order (the order they were created), from a dataset
 * or by id; a dataset is read page by page, up to `maxRunDatapoints`.
 */
import * as Effect from "effect/Effect"
import type { InferenceRequest, Input } from "../api/inference.ts"
import type { DatasetStore, StoredDatapoint } from "../datasets/store.ts"
import { InvalidRequest, NotFound } from "../errors.ts"
import { storeFailure, type StoreFailure } from "../analytics/stores.ts"
import type { RunPlan } from "./plan.ts"

/** datapoints one run evaluates at most: a larger dataset needs `max_datapoints` */
export const maxRunDatapoints = 100_000
const pageSize = 1000

const listDatasetPage = (store: DatasetStore, workspace: string, datasetName: string, functionName: string | undefined, after: string | undefined, limit: number) =>
  Effect.mapError(
    store.listDatapoints(workspace, { datasetName, functionName, orderBy: [], after, limit, offset: 0 }),
    storeFailure(store)
  )

/** what loading datapoints needs of a plan (GEPA loads its datasets with it too) */
export type DatapointSource = Pick<RunPlan, "functionName" | "maxDatapoints" | "source">

const fromDataset = (store: DatasetStore, workspace: string, plan: DatapointSource, datasetName: string) =>
  Effect.gen(function*() {
    const wanted = plan.maxDatapoints ?? maxRunDatapoints + 1
    const datapoints: Array<StoredDatapoint> = []
    let after: string | undefined
    while (datapoints.length < wanted) {
      const page = yield* listDatasetPage(store, workspace, datasetName, plan.functionName, after, Math.min(pageSize, wanted - datapoints.length))
      datapoints.push(...page)
      if (page.length < pageSize) break
      after = page[page.length - 1].id
    }
    if (datapoints.length > maxRunDatapoints) {
      return yield* new InvalidRequest({
        message: `dataset_name: "${datasetName}" holds more than ${maxRunDatapoints} datapoints of function "${plan.functionName}"; set max_datapoints`
      })
    }
    if (datapoints.length === 0) {
      const any = yield* listDatasetPage(store, workspace, datasetName, undefined, undefined, 1)
      return yield* any.length === 0
        ? new NotFound({ message: `dataset_name: no dataset "${datasetName}" (it has no datapoints)` })
        : new InvalidRequest({ message: `dataset_name: dataset "${datasetName}" has no live datapoints of function "${plan.functionName}"` })
    }
    return datapoints
  })

const byIds = (store: DatasetStore, workspace: string, plan: DatapointSource, ids: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const found = yield* Effect.mapError(store.getDatapoints(workspace, undefined, ids), storeFailure(store))
    const live = new Map(found.filter((datapoint) => datapoint.staledAt === undefined).map((datapoint) => [datapoint.id.toLowerCase(), datapoint]))
    const missing = ids.filter((id) => !live.has(id))
    if (missing.length > 0) {
      return yield* new NotFound({
        message: `datapoint_ids: not live datapoints (unknown or stale): ${missing.slice(0, 10).join(", ")}${missing.length > 10 ? ` and ${missing.length - 10} more` : ""}`
      })
    }
    const datapoints = [...live.values()].sort((a, b) => (a.id < b.id ? -1 : 1))
    const foreign = datapoints.find((datapoint) => datapoint.functionName !== plan.functionName)
    if (foreign !== undefined) {
      return yield* new InvalidRequest({
        message: `datapoint_ids: datapoint ${foreign.id} is of function "${foreign.functionName}", not "${plan.functionName}"`
      })
    }
    return plan.maxDatapoints === undefined ? datapoints : datapoints.slice(0, plan.maxDatapoints)
  })

/** the run's datapoints in `workspace` (another workspace's dataset or datapoint is a missing one), or why there are none to run */
export const loadDatapoints = (
  store: DatasetStore,
  workspace: string,
  plan: DatapointSource
): Effect.Effect<ReadonlyArray<StoredDatapoint>, InvalidRequest | NotFound | StoreFailure> =>
  plan.source.kind === "dataset" ? fromDataset(store, workspace, plan, plan.source.datasetName) : byIds(store, workspace, plan, plan.source.ids)

/** the inference a datapoint becomes: its input, tools and output schema, on the run's variant, tagged */
export const datapointInference = (
  plan: Pick<RunPlan, "functionName" | "variant" | "inferenceCache">,
  datapoint: StoredDatapoint,
  tags: Readonly<Record<string, string>>
): InferenceRequest => {
  const tools = datapoint.toolParams
  const request: Record<string, unknown> = {
    function_name: plan.functionName,
    variant_name: plan.variant.name,
    input: datapoint.input as Input,
    tags,
    cache_options: { enabled: plan.inferenceCache }
  }
  if (tools?.allowed_tools != null) request.allowed_tools = tools.allowed_tools
  if (tools?.additional_tools != null) request.additional_tools = tools.additional_tools
  if (tools?.tool_choice != null) request.tool_choice = tools.tool_choice
  if (tools?.parallel_tool_calls != null) request.parallel_tool_calls = tools.parallel_tool_calls
  if (datapoint.outputSchema != null) request.output_schema = datapoint.outputSchema
  return request as InferenceRequest
}
