/**
 * Datapoints built from stored inferences (spec 4.5 `from_inferences`): by ids, or by the
 * criteria of list_inferences. Each datapoint takes the inference's function, input, episode,
 * tags and tools (chat) or output schema (json), and as output the inference's, its latest
 * demonstration, or none; it remembers the inference (`sourceInferenceId`) and is not custom.
 *
 * A query may cover every stored inference (up to `maxFromInferences`): it is read a page at a
 * time (newest first, keyset paging on the id) and each page's datapoints written before the
 * next is read, so memory holds one page and the new ids. By ids the request is all or nothing:
 * every id is found before anything is written. By query each page is written as it comes: a
 * database failure half-way leaves the pages already written (the answer is then a 503).
 *
 * An inference whose function is no longer configured (or is now of the other type) gives no
 * datapoint: a datapoint of it could not be checked, updated, imported back or evaluated. By
 * ids that is refused (404 naming the id), by query such inferences are skipped.
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import { checkDatasetName, type FromInferencesRequest, maxFromInferences } from "../api/datasets.ts"
import { filterBoundsProblem, InferenceFilter } from "../api/inferences.ts"
import type { GatewayConfig } from "../config/types.ts"
import { formatFieldIssues, makeDecoder } from "../decode.ts"
import { InvalidRequest, NotFound } from "../errors.ts"
import { uuidv7 } from "../ids.ts"
import type { ChatOutputBlock, JsonOutput } from "../inference/output.ts"
import { defaultFunctionName, isUuidV7 } from "../inference/prepare.ts"
import { toInferenceCriteria } from "../storedInferences/criteria.ts"
import type { StoreFilter } from "../storedInferences/store.ts"
import type { StoredFeedback, StoredInference } from "../analytics/records.ts"
import { storeFailure, type StoreFailure } from "../analytics/stores.ts"
import type { StoreError } from "../storeError.ts"
import { searchTextOf } from "./search.ts"
import type { DatasetDeps, DatasetTransfers } from "./operations.ts"
import type { DatapointToolParams, NewDatapoint } from "./store.ts"
import { isRecord } from "../isRecord.ts"

/** inferences read (and datapoints written) at a time: large enough that a round trip costs little per row */
export const inferencePageSize = 1000

type OutputSource = "inference" | "demonstration" | "none"

const decodeFilter = makeDecoder(InferenceFilter)

/** the function type a datapoint of `functionName` has now, or undefined when it is not configured */
const configuredType = (config: GatewayConfig, functionName: string): "chat" | "json" | undefined =>
  // the default function of model calls is always there
  functionName === defaultFunctionName ? "chat" : config.functions.get(functionName)?.type

/**
 * A chat inference's tools (`tools_available`, the choice, `parallel_tool_calls`,
 * `allowed_tools`, as src/storedInferences/rows.ts stores them) as a datapoint's: the tools
 * not configured in `[tools]` are the ones the request added (`additional_tools`).
 * `parallel_tool_calls` is false unless the inference says otherwise, as create makes it (spec 4.5).
 */
export const datapointToolParams = (stored: unknown, config: GatewayConfig): DatapointToolParams => {
  if (!isRecord(stored)) return { parallel_tool_calls: false }
  const configured = new Set<string>()
  for (const tool of config.tools.values()) configured.add(tool.name)
  const available = Array.isArray(stored.tools_available) ? stored.tools_available : []
  const additional = available.filter((tool) => isRecord(tool) && typeof tool.name === "string" && !configured.has(tool.name))
  const allowed = Array.isArray(stored.allowed_tools) ? stored.allowed_tools.filter((name): name is string => typeof name === "string") : null
  return {
    allowed_tools: allowed,
    tool_choice: stored.tool_choice ?? null,
    parallel_tool_calls: typeof stored.parallel_tool_calls === "boolean" ? stored.parallel_tool_calls : false,
    additional_tools: additional.length === 0 ? null : additional
  }
}

/**
 * A demonstration (src/feedback/validate.ts: json, the value; chat, text and tool call blocks
 * given by `name` and `arguments`) as a datapoint's output: a tool call gets the `id` and raw
 * fields a model's would have, so that it reads (and imports back) like one.
 */
export const demonstrationOutput = (value: unknown, functionType: "chat" | "json", newId: () => string): unknown => {
  if (functionType === "json" || !Array.isArray(value)) return value
  return value.map((block) => {
    if (!isRecord(block) || block.type !== "tool_call") return block
    const name = typeof block.name === "string" ? block.name : null
    return {
      type: "tool_call",
      id: typeof block.id === "string" ? block.id : newId(),
      name,
      arguments: block.arguments ?? null,
      raw_name: name ?? "",
      raw_arguments: JSON.stringify(block.arguments ?? null)
    }
  })
}

/** the inference's own output as a datapoint's: chat, its blocks; json, the parsed value (none when it did not parse) */
const inferenceOutput = (inference: StoredInference): unknown =>
  inference.functionType === "chat"
    ? inference.output as ReadonlyArray<ChatOutputBlock>
    : (inference.output as JsonOutput).parsed ?? undefined

/** the newest demonstration (by feedback id, a UUIDv7: its text order is time order) of each inference */
export const latestDemonstrations = (feedback: ReadonlyArray<StoredFeedback>): Map<string, StoredFeedback> => {
  const latest = new Map<string, StoredFeedback>()
  for (const item of feedback) {
    if (item.kind !== "demonstration" || item.targetType !== "inference") continue
    const seen = latest.get(item.targetId)
    if (seen === undefined || item.id.toLowerCase() > seen.id.toLowerCase()) latest.set(item.targetId, item)
  }
  return latest
}

export const makeFromInferences = (deps: DatasetDeps): Pick<DatasetTransfers, "fromInferences"> => {
  const { config, datasetStore, inferenceStore, feedbackStore } = deps
  const read = <A>(effect: Effect.Effect<A, StoreError>) => Effect.mapError(effect, storeFailure(datasetStore))

  /** the datapoints of `inferences` (those whose function is configured as it was, and with an output to take) */
  const datapointsOf = (
    workspace: string,
    datasetName: string,
    inferences: ReadonlyArray<StoredInference>,
    source: OutputSource
  ): Effect.Effect<Array<NewDatapoint>, StoreFailure> =>
    Effect.gen(function*() {
      const usable = inferences.filter((inference) => configuredType(config, inference.functionName) === inference.functionType)
      const demonstrations = source === "demonstration" && usable.length > 0
        ? latestDemonstrations(yield* read(feedbackStore.getFeedback(workspace, usable.map((inference) => inference.id))))
        : undefined
      const now = yield* Clock.currentTimeMillis
      const newId = () => uuidv7(now)
      const datapoints: Array<NewDatapoint> = []
      for (const inference of usable) {
        let output: unknown
        if (demonstrations !== undefined) {
          const demonstration = demonstrations.get(inference.id)
          if (demonstration === undefined) continue
          output = demonstrationOutput(demonstration.value, inference.functionType, newId)
        } else if (source === "inference") {
          output = inferenceOutput(inference)
        }
        datapoints.push({
          id: newId(),
          datasetName,
          functionName: inference.functionName,
          functionType: inference.functionType,
          input: inference.input,
          ...(output !== undefined && { output }),
          episodeId: inference.episodeId,
          tags: inference.tags,
          ...(inference.functionType === "chat"
            ? { toolParams: datapointToolParams(inference.toolParams, config) }
            : { outputSchema: inference.outputSchema }),
          sourceInferenceId: inference.id,
          isCustom: false,
          updatedAt: now,
          searchText: searchTextOf(inference.input, output)
        })
      }
      return datapoints
    })

  /** written in the caller's workspace */
  const write = (workspace: string, datapoints: ReadonlyArray<NewDatapoint>) =>
    datapoints.length === 0 ? Effect.void : read(datasetStore.insertDatapoints(workspace, datapoints))

  const byIds = (workspace: string, datasetName: string, ids: ReadonlyArray<string>, source: OutputSource) =>
    Effect.gen(function*() {
      if (ids.length > maxFromInferences) {
        return yield* new InvalidRequest({ message: `inference_ids: more than ${maxFromInferences} ids; split them over several calls` })
      }
      const firstIndex = new Map<string, number>()
      for (let i = 0; i < ids.length; i++) {
        const id = ids[i]
        if (!isUuidV7(id)) return yield* new InvalidRequest({ message: `inference_ids[${i}]: "${id.slice(0, 100)}" is not an inference id (a UUIDv7)` })
        const key = id.toLowerCase()
        const seen = firstIndex.get(key)
        if (seen !== undefined) return yield* new InvalidRequest({ message: `inference_ids[${i}]: repeats inference_ids[${seen}]` })
        firstIndex.set(key, i)
      }
      /** the inferences of ids[start, start + page size), in that order; NotFound for the first missing or unusable */
      const page = (start: number) =>
        Effect.gen(function*() {
          const slice = ids.slice(start, start + inferencePageSize)
          const found = new Map((yield* read(inferenceStore.getInferences(workspace, slice))).map((inference) => [inference.id.toLowerCase(), inference]))
          const inferences: Array<StoredInference> = []
          for (let i = 0; i < slice.length; i++) {
            const inference = found.get(slice[i].toLowerCase())
            const at = `inference_ids[${start + i}]`
            if (inference === undefined) return yield* new NotFound({ message: `${at}: no stored inference "${slice[i]}"` })
            const type = configuredType(config, inference.functionName)
            if (type === undefined) {
              return yield* new NotFound({ message: `${at}: the inference's function "${inference.functionName}" is no longer configured` })
            }
            if (type !== inference.functionType) {
              return yield* new NotFound({
                message: `${at}: the inference's function "${inference.functionName}" is now a ${type} function, the inference is ${inference.functionType}`
              })
            }
            inferences.push(inference)
          }
          return inferences
        })
      // all or nothing: past one page, every page is checked before the first is written (and read again then)
      if (ids.length > inferencePageSize) {
        for (let start = 0; start < ids.length; start += inferencePageSize) yield* page(start)
      }
      const created: Array<string> = []
      for (let start = 0; start < ids.length; start += inferencePageSize) {
        const datapoints = yield* datapointsOf(workspace, datasetName, yield* page(start), source)
        yield* write(workspace, datapoints)
        for (const datapoint of datapoints) created.push(datapoint.id)
      }
      return created
    })

  const byQuery = (workspace: string, datasetName: string, request: Extract<FromInferencesRequest, { type: "inference_query" }>, source: OutputSource) =>
    Effect.gen(function*() {
      let filters: InferenceFilter | undefined
      if (request.filters !== undefined) {
        // before decoding, which recurses over the tree
        const tooBig = filterBoundsProblem(request.filters, "filters")
        if (tooBig !== undefined) return yield* new InvalidRequest({ message: tooBig })
        const decoded = decodeFilter(request.filters)
        if (!decoded.ok) return yield* new InvalidRequest({ message: formatFieldIssues(decoded.issues, ["filters"]) })
        filters = decoded.value
      }
      const criteria = yield* Effect.fromResult(toInferenceCriteria({ ...request, filters }, config.metrics))
      if (request.function_name !== undefined && configuredType(config, request.function_name) === undefined) {
        return yield* new NotFound({ message: `function_name: unknown function "${request.function_name.slice(0, 200)}"` })
      }
      // only inferences with a demonstration count towards `limit`
      const demonstrated: StoreFilter = { type: "demonstration" }
      const filter: StoreFilter | undefined = source !== "demonstration"
        ? criteria.filter
        : criteria.filter === undefined
        ? demonstrated
        : { type: "and", children: [criteria.filter, demonstrated] }

      const created: Array<string> = []
      let remaining = request.limit ?? maxFromInferences
      let offset = request.offset ?? 0
      let before: string | undefined
      while (remaining > 0) {
        const limit = Math.min(inferencePageSize, remaining)
        const inferences = yield* read(inferenceStore.listInferences(workspace, { ...criteria, filter, before, limit, offset }))
        const datapoints = yield* datapointsOf(workspace, datasetName, inferences, source)
        yield* write(workspace, datapoints)
        for (const datapoint of datapoints) created.push(datapoint.id)
        if (inferences.length < limit) break
        remaining -= inferences.length
        before = inferences[inferences.length - 1].id
        offset = 0
      }
      return created
    })

  return {
    fromInferences: (workspace, datasetName, request) =>
      Effect.andThen(checkDatasetName(datasetName), () => {
        const source = request.output_source ?? "inference"
        return request.type === "inference_ids" ? byIds(workspace, datasetName, request.inference_ids, source) : byQuery(workspace, datasetName, request, source)
      })
  }
}
