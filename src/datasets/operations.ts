/**
 * What the datasets use case offers (DatasetOperations, DatasetTransfers) and what each part
 * works with (DatasetDeps): the interfaces its modules (datapoints.ts, fromInferences.ts,
 * jsonLines.ts) implement and service.ts composes, apart so the parts need not import the service.
 */
import type * as Effect from "effect/Effect"
import type * as Stream from "effect/Stream"
import type {
  CreateDatapoint,
  FromInferencesRequest,
  ListDatapointsRequest,
  UpdateDatapointsRequest,
  UpdateMetadataRequest
} from "../api/datasets.ts"
import type { GatewayConfig } from "../config/types.ts"
import type { Conflict, InvalidRequest, NotFound, PayloadTooLarge } from "../errors.ts"
import type { StoreFailure } from "../analytics/stores.ts"
import type { FeedbackStore } from "../feedback/store.ts"
import type { InferenceStore } from "../storedInferences/store.ts"
import type { DatasetStore, DatasetSummary, StoredDatapoint } from "./store.ts"

/** The stores of datapoints and of the inferences and feedback they are built from (DICL reads its examples from them too). */
export interface DatasetStores {
  readonly datasetStore: DatasetStore
  readonly inferenceStore: InferenceStore
  readonly feedbackStore: FeedbackStore
}

/** What every operation works with: the configuration (functions, tools, metrics) and the stores. */
export interface DatasetDeps extends DatasetStores {
  readonly config: GatewayConfig
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
  readonly fromInferences: (workspace: string, datasetName: string, request: FromInferencesRequest) => Effect.Effect<ReadonlyArray<string>, Failure>
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
