/**
 * The datasets use case (spec 2.5, 3, 4.5): datapoints created by hand, from stored inferences
 * or from JSON Lines, each checked against its function; read by id or listed; updated as new
 * versions; renamed in place; staled. The operations live in their own modules
 * (datapoints.ts, fromInferences.ts, jsonLines.ts); this composes them over the analytics
 * database, and answers 503 for all of them while observability is off.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"
import type {
  CreateDatapoint,
  FromInferencesRequest,
  ListDatapointsRequest,
  UpdateDatapointsRequest,
  UpdateMetadataRequest
} from "../api/datasets.ts"
import type { GatewayConfig } from "../config/types.ts"
import type { Conflict, InvalidRequest, NotFound, PayloadTooLarge } from "../errors.ts"
import { Observability, observabilityDisabled, type ObservabilityStores, type StoreFailure } from "../observability/stores.ts"
import { Configuration } from "../services.ts"
import { makeDatapointOperations } from "./datapoints.ts"
import { makeFromInferences } from "./fromInferences.ts"
import { makeJsonLines } from "./jsonLines.ts"
import type { DatasetSummary, StoredDatapoint } from "./store.ts"

/** What every operation works with: the configuration (functions, tools, metrics) and the analytics database. */
export interface DatasetDeps {
  readonly config: GatewayConfig
  readonly stores: ObservabilityStores
}

type Failure = InvalidRequest | NotFound | StoreFailure

export interface DatasetOperations {
  /** checks and writes new datapoints (all or nothing); their ids in input order. 413: one is larger than a stored row may be. */
  readonly create: (datasetName: string, datapoints: ReadonlyArray<CreateDatapoint>) => Effect.Effect<ReadonlyArray<string>, Failure | PayloadTooLarge>
  /** the versions with these ids in the dataset, stale ones included, in the order asked for */
  readonly get: (datasetName: string, ids: ReadonlyArray<string>) => Effect.Effect<ReadonlyArray<StoredDatapoint>, Failure>
  readonly list: (datasetName: string, request: ListDatapointsRequest) => Effect.Effect<ReadonlyArray<StoredDatapoint>, Failure>
  /** new versions (all or nothing); their ids in input order. Conflict: one was updated concurrently first; 413 as create's */
  readonly update: (datasetName: string, request: UpdateDatapointsRequest) => Effect.Effect<ReadonlyArray<string>, Failure | Conflict | PayloadTooLarge>
  /** names set in place; the same ids */
  readonly updateMetadata: (datasetName: string, request: UpdateMetadataRequest) => Effect.Effect<ReadonlyArray<string>, Failure>
  /** how many live datapoints became stale */
  readonly delete: (datasetName: string, ids: ReadonlyArray<string>) => Effect.Effect<number, Failure>
  readonly deleteDataset: (datasetName: string) => Effect.Effect<number, Failure>
  /** every version of the datapoint `id` is a version of, stale ones included, newest first (404 when none) */
  readonly history: (datasetName: string, id: string) => Effect.Effect<ReadonlyArray<StoredDatapoint>, Failure>
  readonly listDatasets: () => Effect.Effect<ReadonlyArray<DatasetSummary>, Failure>
}

export interface DatasetTransfers {
  /** datapoints built from stored inferences; their ids */
  readonly fromInferences: (datasetName: string, request: FromInferencesRequest) => Effect.Effect<ReadonlyArray<string>, Failure>
  /** the dataset's live datapoints as JSON Lines, oldest first, read a page at a time */
  readonly exportDatapoints: (datasetName: string) => Stream.Stream<string, StoreFailure>
  /**
   * JSON Lines as create takes them (or as export writes them), checked like create, all or
   * nothing, read from `body` as it arrives; their ids in line order. 413: a line longer than a
   * request body may be, or a datapoint larger than a stored row may be.
   */
  readonly importDatapoints: <E>(
    datasetName: string,
    body: Stream.Stream<Uint8Array, E>
  ) => Effect.Effect<ReadonlyArray<string>, Failure | PayloadTooLarge | E>
}

export class DatasetService extends Context.Service<DatasetService, DatasetOperations & DatasetTransfers>()("gateway/DatasetService") {
  static readonly layer = Layer.effect(
    DatasetService,
    Effect.gen(function*() {
      const config = yield* Configuration
      const { stores } = yield* Observability
      if (stores === undefined) {
        const off = Effect.fail(observabilityDisabled())
        return DatasetService.of({
          create: () => off,
          get: () => off,
          list: () => off,
          update: () => off,
          updateMetadata: () => off,
          delete: () => off,
          deleteDataset: () => off,
          history: () => off,
          listDatasets: () => off,
          fromInferences: () => off,
          exportDatapoints: () => Stream.fail(observabilityDisabled()),
          importDatapoints: () => off
        })
      }
      const deps: DatasetDeps = { config, stores }
      const operations = makeDatapointOperations(deps)
      return DatasetService.of({ ...operations, ...makeFromInferences(deps), ...makeJsonLines(deps) })
    })
  )
}
