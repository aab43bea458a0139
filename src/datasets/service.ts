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
import { observabilityDisabled } from "../analytics/stores.ts"
import { FeedbackStoreService } from "../feedback/store.ts"
import { InferenceStoreService } from "../storedInferences/store.ts"
import { Configuration } from "../services.ts"
import { makeDatapointOperations } from "./datapoints.ts"
import { makeFromInferences } from "./fromInferences.ts"
import { makeJsonLines } from "./jsonLines.ts"
import type { DatasetDeps, DatasetOperations, DatasetTransfers } from "./operations.ts"
import { DatasetStoreService } from "./store.ts"

export class DatasetService extends Context.Service<DatasetService, DatasetOperations & DatasetTransfers>()("gateway/DatasetService") {
  static readonly layer = Layer.effect(
    DatasetService,
    Effect.gen(function*() {
      const config = yield* Configuration
      const { store: datasetStore } = yield* DatasetStoreService
      const { store: inferenceStore } = yield* InferenceStoreService
      const { store: feedbackStore } = yield* FeedbackStoreService
      if (datasetStore === undefined || inferenceStore === undefined || feedbackStore === undefined) {
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
      const deps: DatasetDeps = { config, datasetStore, inferenceStore, feedbackStore }
      const operations = makeDatapointOperations(deps)
      return DatasetService.of({ ...operations, ...makeFromInferences(deps), ...makeJsonLines(deps) })
    })
  )
}
