/**
 * The storage port of feedback (spec 4.3): reading back the feedback given on inferences and
 * episodes. Feedback is written through the write queue like every row; whether its target
 * exists is asked of the inference store (src/storedInferences/store.ts). Implemented by
 * layers/clickhouse/feedback.ts and layers/postgres/feedback.ts.
 */
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import type { StoredFeedback } from "../analytics/records.ts"
import type { StoreError } from "../storeError.ts"
import type { AnalyticsPort, AnalyticsStore } from "../analytics/stores.ts"

export interface FeedbackStore extends AnalyticsStore {
  /** the feedback of `workspace` whose target is one of `targetIds` (inference or episode ids), in id order */
  readonly getFeedback: (workspace: string, targetIds: ReadonlyArray<string>) => Effect.Effect<ReadonlyArray<StoredFeedback>, StoreError>
}

/** The FeedbackStore of the analytics database, absent while observability is off (provided by layers/observability/). */
export class FeedbackStoreService extends Context.Service<FeedbackStoreService, AnalyticsPort<FeedbackStore>>()("gateway/FeedbackStore") {}
