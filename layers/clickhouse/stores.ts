/**
 * The analytics database on ClickHouse, for an http(s) GATEWAY_ANALYTICS_DB_URL: one client
 * shared by the adapter of every capability. Tables come from `migrations/clickhouse/*.sql`.
 */
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import { defaultMaxRowBytes } from "../../src/config/gateway.ts"
import type { AnalyticsStores } from "../observability/stores.ts"
import type { StoreError } from "../../src/storeError.ts"
import { makeClickHouseBatchStore } from "./batches.ts"
import { makeClickHouseCacheStore } from "./cache.ts"
import { makeClickHouse } from "./client.ts"
import { makeClickHouseDatabase } from "./database.ts"
import { makeClickHouseDatasetStore } from "./datasets.ts"
import { makeClickHouseDiclStore } from "./dicl.ts"
import { makeClickHouseEvaluationStore } from "./evaluations.ts"
import { makeClickHouseExperimentationStore } from "./experimentation.ts"
import { makeClickHouseFeedbackStore } from "./feedback.ts"
import { makeClickHouseInferenceStore } from "./inferences.ts"
import { makeClickHouseOverviewStore } from "./overview.ts"
import { makeClickHouseResponseDeletionStore } from "./responses.ts"
import { makeClickHouseWorkflowEvaluationStore } from "./workflowEvaluations.ts"

/** `maxRowBytes`: `[gateway.observability] max_row_bytes`, the largest row written */
export const makeClickHouseStores = (url: string, maxRowBytes = defaultMaxRowBytes): Effect.Effect<AnalyticsStores, StoreError, Scope.Scope> =>
  Effect.map(makeClickHouse(url), (clickhouse) => ({
    database: makeClickHouseDatabase(clickhouse, maxRowBytes),
    inferences: makeClickHouseInferenceStore(clickhouse),
    feedback: makeClickHouseFeedbackStore(clickhouse),
    cache: makeClickHouseCacheStore(clickhouse),
    datasets: makeClickHouseDatasetStore(clickhouse),
    evaluations: makeClickHouseEvaluationStore(clickhouse),
    workflowEvaluations: makeClickHouseWorkflowEvaluationStore(clickhouse),
    batches: makeClickHouseBatchStore(clickhouse),
    experimentation: makeClickHouseExperimentationStore(clickhouse),
    dicl: makeClickHouseDiclStore(clickhouse),
    overview: makeClickHouseOverviewStore(clickhouse),
    responseDeletions: makeClickHouseResponseDeletionStore(clickhouse)
  }))
