/**
 * The analytics database on Postgres, for a `postgres://` GATEWAY_ANALYTICS_DB_URL: one
 * connection pool shared by the adapter of every capability. Tables come from
 * `migrations/postgres/*.sql`; JSON values are JSONB.
 */
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import { defaultMaxRowBytes } from "../../src/config/gateway.ts"
import type { AnalyticsStores } from "../observability/stores.ts"
import type { StoreError } from "../../src/storeError.ts"
import { makePostgresBatchStore } from "./batches.ts"
import { makePostgresCacheStore } from "./cache.ts"
import { makePgClient } from "./client.ts"
import { makePostgresDatabase } from "./database.ts"
import { makePostgresDatasetStore } from "./datasets.ts"
import { makePostgresDiclStore } from "./dicl.ts"
import { makePostgresEvaluationStore } from "./evaluations.ts"
import { makePostgresExperimentationStore } from "./experimentation.ts"
import { makePostgresFeedbackStore } from "./feedback.ts"
import { makePostgresInferenceStore } from "./inferences.ts"
import { makePostgresOverviewStore } from "./overview.ts"
import { makePostgresResponseDeletionStore } from "./responses.ts"
import { makePostgresSpendStore } from "./spend.ts"
import { makePostgresWorkflowEvaluationStore } from "./workflowEvaluations.ts"

/**
 * `maxRowBytes`: `[gateway.observability] max_row_bytes`, the largest row written; `poolSize`:
 * `[postgres] connection_pool_size` (the driver's default when undefined)
 */
export const makePostgresStores = (url: string, maxRowBytes = defaultMaxRowBytes, poolSize?: number): Effect.Effect<AnalyticsStores, StoreError, Scope.Scope> =>
  // The pool connects lazily; a connection attempt gives up after a few seconds, since the
  // write queue retries on its own.
  Effect.map(makePgClient(url, { maxConnections: poolSize }), (sql) => ({
    database: makePostgresDatabase(sql, maxRowBytes),
    inferences: makePostgresInferenceStore(sql),
    feedback: makePostgresFeedbackStore(sql),
    cache: makePostgresCacheStore(sql),
    datasets: makePostgresDatasetStore(sql),
    evaluations: makePostgresEvaluationStore(sql),
    workflowEvaluations: makePostgresWorkflowEvaluationStore(sql),
    batches: makePostgresBatchStore(sql),
    experimentation: makePostgresExperimentationStore(sql),
    dicl: makePostgresDiclStore(sql),
    overview: makePostgresOverviewStore(sql),
    spend: makePostgresSpendStore(sql),
    responseDeletions: makePostgresResponseDeletionStore(sql)
  }))
