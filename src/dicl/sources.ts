/**
 * Where the examples of a DICL variant come from: the live datapoints of the function in a
 * dataset (those with an output), or the function's stored inferences a list_inferences-style
 * query lists (newest first), each with its own output or its latest demonstration. Read a page
 * at a time, up to a number of examples; items whose function is now of the other type, or whose
 * output makes no example (src/dicl/examples.ts), are skipped.
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import { checkDatasetName } from "../api/datasets.ts"
import { filterBoundsProblem, InferenceFilter } from "../api/inferences.ts"
import type { DiclInferenceQuery } from "../api/optimization.ts"
import type { GatewayConfig } from "../config/types.ts"
import { demonstrationOutput, latestDemonstrations } from "../datasets/fromInferences.ts"
import { formatFieldIssues, makeDecoder } from "../decode.ts"
import { InvalidRequest } from "../errors.ts"
import { uuidv7 } from "../ids.ts"
import { type InferenceCriteria, toInferenceCriteria } from "../storedInferences/criteria.ts"
import type { StoreFilter } from "../storedInferences/store.ts"
import { storeFailure, type StoreFailure } from "../analytics/stores.ts"
import type { DatasetStores } from "../datasets/operations.ts"
import type { StoreError } from "../storeError.ts"
import { diclOutputOfInference, diclOutputOfValue } from "./examples.ts"
import { type DiclOutput } from "./store.ts"

/** rows read at a time */
export const sourcePageSize = 1000

export type DiclSource =
  | { readonly datasetName: string }
  | { readonly query: typeof DiclInferenceQuery.Type }

/** An example to embed: an input and its output. */
export interface SourceItem {
  readonly input: unknown
  readonly output: DiclOutput
}

const decodeFilter = makeDecoder(InferenceFilter)

/** the query's criteria for the store, of `functionName`; a 400 naming the field otherwise */
export const queryCriteria = (
  config: GatewayConfig,
  functionName: string,
  query: typeof DiclInferenceQuery.Type
): Result.Result<InferenceCriteria, InvalidRequest> => {
  let filters: InferenceFilter | undefined
  if (query.filters !== undefined) {
    // before decoding, which recurses over the tree
    const tooBig = filterBoundsProblem(query.filters, "inference_query.filters")
    if (tooBig !== undefined) return Result.fail(new InvalidRequest({ message: tooBig }))
    const decoded = decodeFilter(query.filters)
    if (!decoded.ok) return Result.fail(new InvalidRequest({ message: formatFieldIssues(decoded.issues, ["inference_query", "filters"]) }))
    filters = decoded.value
  }
  return Result.mapError(
    toInferenceCriteria({ ...query, function_name: functionName, filters }, config.metrics),
    (problem) => new InvalidRequest({ message: `inference_query.${problem.message}` })
  )
}

/** the source as given, checked: a dataset name, or a query whose filters decode */
export const checkSource = (
  config: GatewayConfig,
  functionName: string,
  source: DiclSource
): Effect.Effect<void, InvalidRequest> => {
  if ("datasetName" in source) return Effect.asVoid(checkDatasetName(source.datasetName))
  return Effect.asVoid(Effect.fromResult(queryCriteria(config, functionName, source.query)))
}

/**
 * Up to `max` examples of the source, for a function of `functionType`. A query that no longer
 * decodes (the configuration's metrics changed since it was queued) is a 400.
 */
export const readSource = (
  workspace: string,
  config: GatewayConfig,
  { datasetStore, inferenceStore, feedbackStore }: DatasetStores,
  functionName: string,
  functionType: "chat" | "json",
  source: DiclSource,
  max: number
): Effect.Effect<Array<SourceItem>, InvalidRequest | StoreFailure> => {
  const read = <A>(effect: Effect.Effect<A, StoreError>) => Effect.mapError(effect, storeFailure(datasetStore))

  const fromDataset = (datasetName: string) =>
    Effect.gen(function*() {
      const items: Array<SourceItem> = []
      let after: string | undefined
      while (items.length < max) {
        const page = yield* read(datasetStore.listDatapoints(workspace, { datasetName, functionName, orderBy: [], after, limit: sourcePageSize, offset: 0 }))
        for (const datapoint of page) {
          if (items.length >= max) break
          const output = datapoint.functionType === functionType ? diclOutputOfValue(functionType, datapoint.output) : undefined
          if (output !== undefined) items.push({ input: datapoint.input, output })
        }
        if (page.length < sourcePageSize) break
        after = page[page.length - 1].id
      }
      return items
    })

  const fromInferences = (query: typeof DiclInferenceQuery.Type) =>
    Effect.gen(function*() {
      const criteria = yield* Effect.fromResult(queryCriteria(config, functionName, query))
      const demonstrated = query.output_source === "demonstration"
      // only inferences with a demonstration are read then
      const filter: StoreFilter | undefined = !demonstrated
        ? criteria.filter
        : criteria.filter === undefined
        ? { type: "demonstration" }
        : { type: "and", children: [criteria.filter, { type: "demonstration" }] }
      const now = yield* Clock.currentTimeMillis
      const items: Array<SourceItem> = []
      let before: string | undefined
      while (items.length < max) {
        const page = yield* read(inferenceStore.listInferences(workspace, { ...criteria, filter, before, limit: sourcePageSize, offset: 0 }))
        const usable = page.filter((inference) => inference.functionType === functionType)
        const demonstrations = demonstrated && usable.length > 0
          ? latestDemonstrations(yield* read(feedbackStore.getFeedback(workspace, usable.map((inference) => inference.id))))
          : undefined
        for (const inference of usable) {
          if (items.length >= max) break
          let output: DiclOutput | undefined
          if (demonstrations === undefined) {
            output = diclOutputOfInference(functionType, inference.output)
          } else {
            const demonstration = demonstrations.get(inference.id)
            output = demonstration === undefined
              ? undefined
              : diclOutputOfValue(functionType, demonstrationOutput(demonstration.value, functionType, () => uuidv7(now)))
          }
          if (output !== undefined) items.push({ input: inference.input, output })
        }
        if (page.length < sourcePageSize) break
        before = page[page.length - 1].id
      }
      return items
    })

  return "datasetName" in source ? fromDataset(source.datasetName) : fromInferences(source.query)
}
