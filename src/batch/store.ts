/**
 * The storage port of batch inference (spec 4.4) in the analytics database: one row per batch
 * (what was sent to which provider, its status) and one per inference of the batch (what is
 * needed to store it as a regular inference once the provider answered). Implemented by
 * layers/clickhouse/batches.ts and layers/postgres/batches.ts, both checked by the same
 * conformance suite (test/integration/store-batches.test.ts).
 *
 * A batch's status changes by writing a new version of its row (the newest wins), so that both
 * backends keep one write path; the relational database's lock (`Tasks.exclusive`) makes sure
 * only one process completes a batch.
 */
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import type { StoreError } from "../storeError.ts"
import type { AnalyticsPort, AnalyticsStore } from "../analytics/stores.ts"

export type BatchStatus = "pending" | "completed" | "failed"

export interface StoredBatch {
  /** the gateway's batch id (UUIDv7) */
  readonly id: string
  /** the workspace of the key that submitted it (src/workspace.ts) */
  readonly workspace: string
  readonly functionName: string
  readonly functionType: "chat" | "json"
  readonly variantName: string
  readonly modelName: string
  readonly modelProviderName: string
  /** the provider's id of the batch */
  readonly providerBatchId: string
  /** what the provider's codec needs to poll it (`BatchHandle.data`), any JSON value */
  readonly providerBatchData: unknown
  /** the batch-level parameters the request gave (`params`, `tags`...), as JSON, for the record */
  readonly batchParams: unknown
  readonly status: BatchStatus
  /** `failed`: why; `completed`: absent */
  readonly errorMessage?: string | undefined
  /** `completed`: the inferences of the batch the provider gave no answer for, by inference id, with why */
  readonly failures?: Readonly<Record<string, string>> | undefined
  /** epoch milliseconds of the submission: always the time carried by the UUIDv7 `id` */
  readonly timestamp: number
  /** epoch milliseconds of this version of the row (a status change writes a newer one) */
  readonly updatedAt: number
}

/** One inference of a batch, as submitted: everything its stored inference and model inference need but the answer. */
export interface StoredBatchInference {
  readonly batchId: string
  /** the workspace of the key that submitted it (src/workspace.ts) */
  readonly workspace: string
  /** the inference id issued at submission (UUIDv7) */
  readonly inferenceId: string
  readonly episodeId: string
  /** position in the request's `inputs`, from 0 */
  readonly index: number
  readonly functionName: string
  readonly variantName: string
  /** the `input` of the request, as received */
  readonly input: unknown
  /** the rendered system prompt and messages sent to the model (`ModelRequest.system`/`messages`) */
  readonly system?: string | undefined
  readonly inputMessages: unknown
  /** chat: tools offered, choice, parallel calls (as `toolParamsOf` makes them) */
  readonly toolParams?: unknown
  /** json: the schema the output is checked against */
  readonly outputSchema?: unknown
  /** `{"chat_completion": {...}}`: the parameters the variant ran with */
  readonly inferenceParams: unknown
  /** the request body of this inference as sent to the provider inside the batch */
  readonly rawRequest: string
  readonly modelName: string
  readonly modelProviderName: string
  readonly tags: Readonly<Record<string, string>>
  /** epoch milliseconds: the time carried by the UUIDv7 `inferenceId` */
  readonly timestamp: number
}

export interface BatchStore extends AnalyticsStore {
  /** stores a new batch (status `pending`) and its inferences, all or nothing as far as the database allows */
  readonly insertBatch: (batch: StoredBatch, inferences: ReadonlyArray<StoredBatchInference>) => Effect.Effect<void, StoreError>
  /** the newest version of a batch's row, when the batch belongs to `workspace` (another workspace's batch reads as unknown) */
  readonly getBatch: (workspace: string, id: string) => Effect.Effect<StoredBatch | undefined, StoreError>
  /** a batch's inferences in input order, in `workspace` only; only the one with `inferenceId` when given (none when it is not in the batch) */
  readonly getBatchInferences: (workspace: string, batchId: string, inferenceId?: string) => Effect.Effect<ReadonlyArray<StoredBatchInference>, StoreError>
  /**
   * A page of a batch's inferences in input order: those whose `index` is above `afterIndex`
   * (-1 for the first page), at most `limit` (a large batch is read and answered a page at a time);
   * in `workspace` only.
   */
  readonly getBatchInferencePage: (workspace: string, batchId: string, afterIndex: number, limit: number) => Effect.Effect<ReadonlyArray<StoredBatchInference>, StoreError>
  /** writes a new version of the batch's row (status, error, failures, `updatedAt`) */
  readonly updateBatch: (batch: StoredBatch) => Effect.Effect<void, StoreError>
  /** pending batches of every workspace (the poller serves them all), oldest first, at most `limit` */
  readonly listPendingBatches: (limit: number) => Effect.Effect<ReadonlyArray<StoredBatch>, StoreError>
}

/** The BatchStore of the analytics database, absent while observability is off (provided by layers/observability/). */
export class BatchStoreService extends Context.Service<BatchStoreService, AnalyticsPort<BatchStore>>()("gateway/BatchStore") {}
