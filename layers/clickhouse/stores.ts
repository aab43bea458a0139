/**
 * The analytics database on ClickHouse, for an http(s) GATEWAY_ANALYTICS_DB_URL: one client
 * shared by the adapter of every capability. Tables come from `migrations/clickhouse/*.sql`.
 */
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import { defaultMaxRowBytes } from "../../src/config/gateway.ts"
import type { AnalyticsStores } from "../observability/stores.ts"
import { clickHouseClusterVariable } from "../../src/analytics/stores.ts"
import { StoreError } from "../../src/storeError.ts"
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
import { makeClickHouseSpendStore } from "./spend.ts"
import { isClusterName } from "./replicated.ts"
import { makeClickHouseWorkflowEvaluationStore } from "./workflowEvaluations.ts"

/**
 * `url`: one URL, or a cluster's replicas separated by commas; `maxRowBytes`: `[gateway.observability]
 * max_row_bytes`, the largest row written; `clusterName`: GATEWAY_CLICKHOUSE_CLUSTER_NAME, the
 * replicated cluster the migrations run on (layers/clickhouse/replicated.ts)
 */
export const makeClickHouseStores = (
  url: string,
  maxRowBytes = defaultMaxRowBytes,
  clusterName?: string
): Effect.Effect<AnalyticsStores, StoreError, Scope.Scope> =>
  Effect.gen(function*() {
    if (clusterName !== undefined && !isClusterName(clusterName)) {
      return yield* new StoreError({ message: `${clickHouseClusterVariable} must be a cluster name of <remote_servers>: ${JSON.stringify(clusterName)}` })
    }
    return yield* makeClickHouse(url)
  }).pipe(Effect.map((clickhouse) => ({
    database: makeClickHouseDatabase(clickhouse, maxRowBytes, clusterName),
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
    spend: makeClickHouseSpendStore(clickhouse),
    responseDeletions: makeClickHouseResponseDeletionStore(clickhouse)
  })))
