/**
 * The storage port of stored responses' deletions (issue 37, design 4): a deleted response is
 * marked in a table of its own rather than its analytics rows rewritten, so the inference stays
 * an ordinary one for feedback and datasets while the Responses routes no longer see it.
 * Implemented by layers/clickhouse/responses.ts and layers/postgres/responses.ts.
 */
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import type { AnalyticsPort, AnalyticsStore } from "../analytics/stores.ts"
import type { StoreError } from "../storeError.ts"

export interface ResponseDeletionStore extends AnalyticsStore {
  /** marks the response of `workspace` deleted; `atMs`: epoch milliseconds; marking one twice is no error */
  readonly markDeleted: (workspace: string, inferenceId: string, atMs: number) => Effect.Effect<void, StoreError>
  /** which of `inferenceIds` are marked deleted in `workspace` */
  readonly deleted: (workspace: string, inferenceIds: ReadonlyArray<string>) => Effect.Effect<ReadonlySet<string>, StoreError>
}

/** The ResponseDeletionStore of the analytics database, absent while observability is off. */
export class ResponseDeletionStoreService
  extends Context.Service<ResponseDeletionStoreService, AnalyticsPort<ResponseDeletionStore>>()("gateway/ResponseDeletionStore")
{}
