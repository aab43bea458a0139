/**
 * The datapoint operations of the DatasetService (spec 3, 4.5): create, read, list, update as
 * new versions, rename in place, stale. Every change is checked whole before anything is
 * written, and written all or nothing; ids are UUIDv7 minted at the Clock's time, in input
 * order. An update that loses to a concurrent one (its datapoint stale by the time it writes)
 * is a 409, and writes nothing.
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import { checkDatasetName, type CreateDatapoint, type UpdateDatapoint } from "../api/datasets.ts"
import type { Input } from "../api/inference.ts"
import type { GatewayConfig } from "../config/types.ts"
import { Conflict, InvalidRequest, NotFound } from "../errors.ts"
import { isUuid, uuidv7 } from "../ids.ts"
import { holdsNul, toDatapointStoreFilter } from "../storedInferences/filter.ts"
import { storeFailure } from "../analytics/stores.ts"
import type { StoreError } from "../storeError.ts"
import { searchTerms, searchTextOf } from "./search.ts"
import type { DatasetDeps, DatasetOperations } from "./operations.ts"
import type { DatapointOrder, NewDatapoint, Replacement, StoredDatapoint } from "./store.ts"
import { type CheckedDatapoint, checkDatapoint, datapointSizeProblem } from "./validate.ts"

const invalid = (message: string) => new InvalidRequest({ message })

const shown = (id: string) => JSON.stringify(id.slice(0, 100))

/** ids as the store keeps them (lower-case), or the 400 naming the first that is not a UUID */
const checkIds = (ids: ReadonlyArray<string>, path: (index: number) => string): Result.Result<ReadonlyArray<string>, InvalidRequest> => {
  const checked: Array<string> = []
  for (let i = 0; i < ids.length; i++) {
    if (!isUuid(ids[i])) return Result.fail(invalid(`${path(i)}: ${shown(ids[i])} is not a datapoint id (a UUID)`))
    checked.push(ids[i].toLowerCase())
  }
  return Result.succeed(checked)
}

/** ids that must name distinct datapoints (each gets one change) */
const checkDistinctIds = (ids: ReadonlyArray<string>, path: (index: number) => string): Result.Result<ReadonlyArray<string>, InvalidRequest> =>
  Result.flatMap(checkIds(ids, path), (checked) => {
    const seen = new Map<string, number>()
    for (let i = 0; i < checked.length; i++) {
      const first = seen.get(checked[i])
      if (first !== undefined) return Result.fail(invalid(`${path(i)}: ${shown(ids[i])} is also ${path(first)}: give each datapoint once`))
      seen.set(checked[i], i)
    }
    return Result.succeed(checked)
  })

const notInDataset = (path: string, id: string, datasetName: string) =>
  new NotFound({ message: `${path}: no datapoint ${shown(id)} in dataset "${datasetName}"` })

const staleConflict = (path: string, id: string) =>
  new Conflict({
    message: `${path}: datapoint ${shown(id)} was updated or deleted concurrently or before this request: it is stale, ` +
      `and nothing was written; read the dataset again and update its live version`
  })

const given = <A>(value: A | undefined, kept: A): A => (value === undefined ? kept : value)

/** an update over the stored version: an omitted field stays, null clears, a value replaces (tags: all of them) */
const merged = (stored: StoredDatapoint, update: UpdateDatapoint): CreateDatapoint => {
  const common = {
    function_name: stored.functionName,
    input: update.input ?? (stored.input as Input),
    episode_id: given(update.episode_id, stored.episodeId),
    tags: update.tags ?? stored.tags,
    name: given(update.name, stored.name)
  }
  if (update.type === "json") {
    return {
      type: "json",
      ...common,
      output: given(update.output, stored.output),
      output_schema: (update.output_schema ?? stored.outputSchema) as Record<string, unknown> | undefined
    }
  }
  const kept = stored.toolParams ?? {}
  return {
    type: "chat",
    ...common,
    output: given(update.output, stored.output as Extract<CreateDatapoint, { type: "chat" }>["output"]),
    allowed_tools: given(update.allowed_tools, kept.allowed_tools),
    tool_choice: given(update.tool_choice, kept.tool_choice as Extract<CreateDatapoint, { type: "chat" }>["tool_choice"]),
    parallel_tool_calls: given(update.parallel_tool_calls, kept.parallel_tool_calls),
    additional_tools: given(
      update.additional_tools,
      kept.additional_tools as Extract<CreateDatapoint, { type: "chat" }>["additional_tools"]
    )
  }
}

/** a new version: a first one, or the next of `previous` (its source inference and first version kept) */
export const version = (
  datasetName: string,
  checked: CheckedDatapoint,
  id: string,
  now: number,
  previous: StoredDatapoint | undefined
): NewDatapoint => ({
  ...checked,
  id,
  datasetName,
  sourceInferenceId: previous?.sourceInferenceId,
  firstVersionId: previous === undefined ? undefined : previous.firstVersionId ?? previous.id,
  // made or edited through this API: by hand, not as an inference gave it
  isCustom: true,
  updatedAt: now,
  searchText: searchTextOf(checked.input, checked.output)
})

/** a datapoint to create, checked against its function as create checks it; `path` names it in messages */
export const checkNewDatapoint = (datapoint: CreateDatapoint, config: GatewayConfig, path: string) =>
  checkDatapoint(
    // false unless given (spec 4.5)
    datapoint.type === "chat" ? { ...datapoint, parallel_tool_calls: datapoint.parallel_tool_calls ?? false } : datapoint,
    config,
    path
  )

const toOrder = (order: NonNullable<Parameters<DatasetOperations["list"]>[2]["order_by"]>[number]): DatapointOrder =>
  order.by === "timestamp" ? { by: "timestamp", direction: order.direction ?? "descending" } : order

export const makeDatapointOperations = ({ config, datasetStore: store }: DatasetDeps): DatasetOperations => {
  const { maxRowBytes } = config.gateway.observability
  const run = <A>(effect: Effect.Effect<A, StoreError>) => Effect.mapError(effect, storeFailure(store))

  /** `ids` of the dataset that are not live: 404 for the first missing, else 409 */
  const whyNotLive = (workspace: string, datasetName: string, notLive: ReadonlyArray<string>, ids: ReadonlyArray<string>, path: (index: number) => string) =>
    Effect.gen(function*() {
      const found = new Set((yield* run(store.getDatapoints(workspace, datasetName, notLive))).map((datapoint) => datapoint.id))
      const indexes = notLive.map((id) => ids.indexOf(id)).sort((a, b) => a - b)
      const missing = indexes.find((index) => !found.has(ids[index]))
      if (missing !== undefined) return yield* notInDataset(path(missing), ids[missing], datasetName)
      return yield* staleConflict(path(indexes[0]), ids[indexes[0]])
    })

  return {
    create: (workspace, datasetName, datapoints) =>
      Effect.gen(function*() {
        yield* checkDatasetName(datasetName)
        if (datapoints.length === 0) return yield* invalid("datapoints: is empty; give at least one datapoint")
        const checked: Array<CheckedDatapoint> = []
        for (let i = 0; i < datapoints.length; i++) {
          const result = yield* Effect.fromResult(checkNewDatapoint(datapoints[i], config, `datapoints[${i}]`))
          const tooLarge = datapointSizeProblem(result, maxRowBytes, `datapoints[${i}]`)
          if (tooLarge !== undefined) return yield* tooLarge
          checked.push(result)
        }
        const now = yield* Clock.currentTimeMillis
        const written = checked.map((datapoint) => version(datasetName, datapoint, uuidv7(now), now, undefined))
        yield* run(store.insertDatapoints(workspace, written))
        return written.map((datapoint) => datapoint.id)
      }),

    get: (workspace, datasetName, ids) =>
      Effect.gen(function*() {
        yield* checkDatasetName(datasetName)
        const checked = yield* Effect.fromResult(checkIds(ids, (index) => `ids[${index}]`))
        if (checked.length === 0) return []
        const found = yield* run(store.getDatapoints(workspace, datasetName, [...new Set(checked)]))
        // in the order asked for
        const byId = new Map(found.map((datapoint) => [datapoint.id, datapoint]))
        return checked.flatMap((id) => byId.get(id) ?? [])
      }),

    list: (workspace, datasetName, request) =>
      Effect.gen(function*() {
        yield* checkDatasetName(datasetName)
        if (request.function_name?.includes("\0")) return yield* invalid(`function_name: ${holdsNul}`)
        let search: ReadonlyArray<string> | undefined
        if (request.search_query !== undefined) {
          const terms = searchTerms(request.search_query, "search_query")
          if ("problem" in terms) return yield* invalid(terms.problem)
          search = terms
        }
        const orderBy = request.order_by ?? []
        const relevance = orderBy.findIndex((order) => order.by === "search_relevance")
        if (relevance >= 0 && search === undefined) {
          return yield* invalid(`order_by[${relevance}]: search_relevance ranks by the words of search_query, which is missing`)
        }
        let after: string | undefined
        if (request.after !== undefined) {
          if (!isUuid(request.after)) return yield* invalid(`after: ${shown(request.after)} is not a datapoint id (a UUID)`)
          if (orderBy.length > 0) return yield* invalid("after: pages in the order of ids, so it takes no order_by")
          after = request.after.toLowerCase()
        }
        const filter = request.filter === undefined ? undefined : yield* Effect.fromResult(toDatapointStoreFilter(request.filter, "filter"))
        return yield* run(store.listDatapoints(workspace, {
          datasetName,
          functionName: request.function_name,
          filter,
          search,
          orderBy: orderBy.map(toOrder),
          after,
          limit: request.limit ?? 20,
          offset: request.offset ?? 0
        }))
      }),

    update: (workspace, datasetName, request) =>
      Effect.gen(function*() {
        yield* checkDatasetName(datasetName)
        const updates = request.datapoints
        if (updates.length === 0) return yield* invalid("datapoints: is empty; give at least one datapoint to update")
        const path = (index: number) => `datapoints[${index}].id`
        const ids = yield* Effect.fromResult(checkDistinctIds(updates.map((update) => update.id), path))
        const found = yield* run(store.getDatapoints(workspace, datasetName, ids))
        const byId = new Map(found.map((datapoint) => [datapoint.id, datapoint]))
        const now = yield* Clock.currentTimeMillis
        const replacements: Array<Replacement> = []
        for (let i = 0; i < updates.length; i++) {
          const stored = byId.get(ids[i])
          if (stored === undefined) return yield* notInDataset(path(i), ids[i], datasetName)
          if (stored.staledAt !== undefined) return yield* staleConflict(path(i), ids[i])
          if (stored.functionType !== updates[i].type) {
            return yield* invalid(`datapoints[${i}].type: datapoint ${shown(ids[i])} is a ${stored.functionType} datapoint`)
          }
          const checked = yield* Effect.fromResult(checkDatapoint(merged(stored, updates[i]), config, `datapoints[${i}]`))
          const tooLarge = datapointSizeProblem(checked, maxRowBytes, `datapoints[${i}]`)
          if (tooLarge !== undefined) return yield* tooLarge
          replacements.push({ previousId: ids[i], next: version(datasetName, checked, uuidv7(now), now, stored) })
        }
        const applied = yield* run(store.replaceDatapoints(workspace, datasetName, replacements, now))
        if (applied.notLive.length > 0) return yield* whyNotLive(workspace, datasetName, applied.notLive, ids, path)
        return replacements.map((replacement) => replacement.next.id)
      }),

    updateMetadata: (workspace, datasetName, request) =>
      Effect.gen(function*() {
        yield* checkDatasetName(datasetName)
        const items = request.datapoints
        if (items.length === 0) return yield* invalid("datapoints: is empty; give at least one datapoint to rename")
        const path = (index: number) => `datapoints[${index}].id`
        const ids = yield* Effect.fromResult(checkDistinctIds(items.map((item) => item.id), path))
        const nul = items.findIndex((item) => item.name?.includes("\0"))
        if (nul >= 0) return yield* invalid(`datapoints[${nul}].name: ${holdsNul}`)
        // every id must name a live datapoint, renamed or not
        const live = new Set(
          (yield* run(store.getDatapoints(workspace, datasetName, ids))).filter((datapoint) => datapoint.staledAt === undefined).map((datapoint) => datapoint.id)
        )
        const notLive = ids.findIndex((id) => !live.has(id))
        if (notLive >= 0) return yield* notLiveToRename(path(notLive), ids[notLive], datasetName)
        const names = items.flatMap((item, i) => item.name === undefined ? [] : [{ id: ids[i], name: item.name ?? undefined }])
        if (names.length > 0) {
          const applied = yield* run(store.renameDatapoints(workspace, datasetName, names, yield* Clock.currentTimeMillis))
          if (applied.notLive.length > 0) {
            const first = ids.findIndex((id) => applied.notLive.includes(id))
            return yield* notLiveToRename(path(first), ids[first], datasetName)
          }
        }
        return items.map((item) => item.id)
      }),

    delete: (workspace, datasetName, ids) =>
      Effect.gen(function*() {
        yield* checkDatasetName(datasetName)
        const checked = yield* Effect.fromResult(checkIds(ids, (index) => `ids[${index}]`))
        if (checked.length === 0) return 0
        return yield* run(store.staleDatapoints(workspace, datasetName, [...new Set(checked)], yield* Clock.currentTimeMillis))
      }),

    deleteDataset: (workspace, datasetName) =>
      Effect.gen(function*() {
        yield* checkDatasetName(datasetName)
        return yield* run(store.staleDatapoints(workspace, datasetName, "all", yield* Clock.currentTimeMillis))
      }),

    history: (workspace, datasetName, id) =>
      Effect.gen(function*() {
        yield* checkDatasetName(datasetName)
        if (!isUuid(id)) return yield* invalid(`datapoint_id: ${shown(id)} is not a datapoint id (a UUID)`)
        const versions = yield* run(store.datapointVersions(workspace, datasetName, id.toLowerCase()))
        if (versions.length === 0) return yield* notInDataset("datapoint_id", id, datasetName)
        return versions
      }),

    listDatasets: (workspace) => run(store.listDatasets(workspace))
  }
}

/** renaming applies to live datapoints only: a stale one (updated or deleted) has a newer version or none */
const notLiveToRename = (path: string, id: string, datasetName: string) =>
  new NotFound({ message: `${path}: no live datapoint ${shown(id)} in dataset "${datasetName}" (missing, or stale: updated or deleted)` })
