/**
 * The stores of one analytics database, as its backend builds them (layers/clickhouse/stores.ts,
 * layers/postgres/stores.ts), and their split into the service of each capability: the shell is
 * the one place that sees them all together.
 */
import * as Context from "effect/Context"
import { AnalyticsDatabaseService, type ObservabilityDatabase } from "../../src/analytics/database.ts"
import { type BatchStore, BatchStoreService } from "../../src/batch/store.ts"
import { type CacheStore, CacheStoreService } from "../../src/cache/store.ts"
import { type DatasetStore, DatasetStoreService } from "../../src/datasets/store.ts"
import { type DiclExampleStore, DiclExampleStoreService } from "../../src/dicl/store.ts"
import { type EvaluationStore, EvaluationStoreService } from "../../src/evaluations/store.ts"
import { type ExperimentationStore, ExperimentationStoreService } from "../../src/experimentation/store.ts"
import { type FeedbackStore, FeedbackStoreService } from "../../src/feedback/store.ts"
import { type ResponseDeletionStore, ResponseDeletionStoreService } from "../../src/openaiResponses/store.ts"
import { type OverviewStore, OverviewStoreService } from "../../src/overview/store.ts"
import { type InferenceStore, InferenceStoreService } from "../../src/storedInferences/store.ts"
import { type SpendStore, SpendStoreService } from "../../src/budgets/spendStore.ts"
import { type WorkflowEvaluationStore, WorkflowEvaluationStoreService } from "../../src/workflowEvaluations/store.ts"

/** The stores of one analytics database, all on its backend. */
export interface AnalyticsStores {
  /** migrations, the health probe, and the write queue's writes */
  readonly database: ObservabilityDatabase
  readonly inferences: InferenceStore
  readonly feedback: FeedbackStore
  readonly cache: CacheStore
  readonly datasets: DatasetStore
  readonly evaluations: EvaluationStore
  readonly workflowEvaluations: WorkflowEvaluationStore
  readonly batches: BatchStore
  readonly experimentation: ExperimentationStore
  /** the examples of dynamic in-context learning variants */
  readonly dicl: DiclExampleStore
  /** the aggregates of the UI's Overview */
  readonly overview: OverviewStore
  /** what the stored model calls cost, per period (`GET /v1/spend`) */
  readonly spend: SpendStore
  /** which stored responses of the Responses surface are deleted */
  readonly responseDeletions: ResponseDeletionStore
}

/** The service of every store. */
export type StoreServices =
  | AnalyticsDatabaseService
  | InferenceStoreService
  | FeedbackStoreService
  | CacheStoreService
  | DatasetStoreService
  | EvaluationStoreService
  | WorkflowEvaluationStoreService
  | BatchStoreService
  | ExperimentationStoreService
  | DiclExampleStoreService
  | OverviewStoreService
  | SpendStoreService
  | ResponseDeletionStoreService

/**
 * Each store as its capability's service; all of them absent when `stores` is (observability
 * off), but the cache, which may live elsewhere (layers/observability/cache.ts).
 */
export const storeServices = (stores: AnalyticsStores | undefined, cache: CacheStore | undefined): Context.Context<StoreServices> =>
  Context.make(AnalyticsDatabaseService, { store: stores?.database }).pipe(
    Context.add(InferenceStoreService, { store: stores?.inferences }),
    Context.add(FeedbackStoreService, { store: stores?.feedback }),
    Context.add(CacheStoreService, { store: cache }),
    Context.add(DatasetStoreService, { store: stores?.datasets }),
    Context.add(EvaluationStoreService, { store: stores?.evaluations }),
    Context.add(WorkflowEvaluationStoreService, { store: stores?.workflowEvaluations }),
    Context.add(BatchStoreService, { store: stores?.batches }),
    Context.add(ExperimentationStoreService, { store: stores?.experimentation }),
    Context.add(DiclExampleStoreService, { store: stores?.dicl }),
    Context.add(OverviewStoreService, { store: stores?.overview }),
    Context.add(SpendStoreService, { store: stores?.spend }),
    Context.add(ResponseDeletionStoreService, { store: stores?.responseDeletions })
  )
