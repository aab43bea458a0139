/**
 * The datapoint routes of /v1/datasets: read the dataset's name from the path (a 400 before
 * anything else when it is not one), decode the body, run the DatasetService's operation,
 * answer JSON (datapoints as `datapointJson` writes them).
 */
import * as Effect from "effect/Effect"
import * as HttpRouter from "effect/http/HttpRouter"
import {
  checkDatasetName,
  CreateDatapointsRequest,
  DeleteDatapointsRequest,
  GetDatapointsRequest,
  ListDatapointsRequest,
  UpdateDatapointsRequest,
  UpdateMetadataRequest
} from "../../src/api/datasets.ts"
import { filterBoundsProblem } from "../../src/api/inferences.ts"
import { datapointJson } from "../../src/datasets/json.ts"
import { DatasetService } from "../../src/datasets/service.ts"
import type { StoredDatapoint } from "../../src/datasets/store.ts"
import { makeDecoder } from "../../src/decode.ts"
import { InvalidRequest } from "../../src/errors.ts"
import { Configuration } from "../../src/services.ts"
import type { Caller } from "../../src/workspace.ts"
import { decodeBody, jsonResponse, readJsonBody, readJsonObject } from "./respond.ts"

const decodeCreate = makeDecoder(CreateDatapointsRequest)
const decodeGet = makeDecoder(GetDatapointsRequest)
const decodeList = makeDecoder(ListDatapointsRequest)
const decodeUpdate = makeDecoder(UpdateDatapointsRequest)
const decodeMetadata = makeDecoder(UpdateMetadataRequest)
const decodeDelete = makeDecoder(DeleteDatapointsRequest)

/** `dataset_name` of the path, or the 400 saying why it is not a dataset name */
export const datasetNameParam = Effect.flatMap(HttpRouter.params, (params) => checkDatasetName(params.dataset_name ?? ""))

const maxBodyBytes = Effect.map(Configuration, (config) => config.gateway.maxRequestBodyBytes)

const idsJson = (ids: ReadonlyArray<string>) => jsonResponse(JSON.stringify({ ids }))
const datapointsJson = (datapoints: ReadonlyArray<StoredDatapoint>) =>
  jsonResponse(JSON.stringify({ datapoints: datapoints.map(datapointJson) }))
const deletedJson = (count: number) => jsonResponse(JSON.stringify({ num_deleted_datapoints: count }))

export const listDatasetsHandler = (caller: Caller) => Effect.gen(function*() {
  const datasets = yield* (yield* DatasetService).listDatasets(caller.workspace)
  return jsonResponse(JSON.stringify({
    datasets: datasets.map((dataset) => ({
      name: dataset.name,
      datapoint_count: dataset.functions.reduce((sum, fn) => sum + fn.count, 0),
      functions: dataset.functions.map((fn) => ({ function_name: fn.functionName, datapoint_count: fn.count })),
      last_updated: new Date(dataset.lastUpdated).toISOString()
    }))
  }))
})

export const createDatapointsHandler = (caller: Caller) => Effect.gen(function*() {
  const name = yield* datasetNameParam
  const request = yield* readJsonBody(decodeCreate, yield* maxBodyBytes)
  return idsJson(yield* (yield* DatasetService).create(caller.workspace, name, request.datapoints))
})

export const getDatapointsHandler = (caller: Caller) => Effect.gen(function*() {
  const name = yield* datasetNameParam
  const request = yield* readJsonBody(decodeGet, yield* maxBodyBytes)
  return datapointsJson(yield* (yield* DatasetService).get(caller.workspace, name, request.ids))
})

export const listDatapointsHandler = (caller: Caller) => Effect.gen(function*() {
  const name = yield* datasetNameParam
  const json = yield* readJsonObject(yield* maxBodyBytes)
  // before decoding, which recurses over the filter tree
  const tooBig = filterBoundsProblem(json.filter, "filter")
  if (tooBig !== undefined) return yield* new InvalidRequest({ message: tooBig })
  const request = yield* decodeBody(decodeList, json)
  return datapointsJson(yield* (yield* DatasetService).list(caller.workspace, name, request))
})

export const updateDatapointsHandler = (caller: Caller) => Effect.gen(function*() {
  const name = yield* datasetNameParam
  const request = yield* readJsonBody(decodeUpdate, yield* maxBodyBytes)
  return idsJson(yield* (yield* DatasetService).update(caller.workspace, name, request))
})

export const updateMetadataHandler = (caller: Caller) => Effect.gen(function*() {
  const name = yield* datasetNameParam
  const request = yield* readJsonBody(decodeMetadata, yield* maxBodyBytes)
  return idsJson(yield* (yield* DatasetService).updateMetadata(caller.workspace, name, request))
})

export const deleteDatapointsHandler = (caller: Caller) => Effect.gen(function*() {
  const name = yield* datasetNameParam
  const request = yield* readJsonBody(decodeDelete, yield* maxBodyBytes)
  return deletedJson(yield* (yield* DatasetService).delete(caller.workspace, name, request.ids))
})

export const deleteDatasetHandler = (caller: Caller) => Effect.gen(function*() {
  const name = yield* datasetNameParam
  return deletedJson(yield* (yield* DatasetService).deleteDataset(caller.workspace, name))
})
