/**
 * The relational database (Postgres, GATEWAY_RELATIONAL_DB_URL): API keys, the web UI's
 * sessions, rate limit buckets, budget counters, the audit log and run-time budgets, shared by every gateway process. It applies the same
 * migration sequence as the Postgres analytics database, so both may live in one database.
 */
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import type { AuditStore } from "./audit/store.ts"
import type { ApiKeyStore } from "./auth/store.ts"
import type { UiSessionStore } from "./auth/sessionStore.ts"
import type { BudgetStore } from "./budgets/runtimeStore.ts"
import type { BudgetCounters } from "./budgets/store.ts"
import type { RateLimitBuckets } from "./ratelimit/store.ts"
import type { StoreError } from "./storeError.ts"

/** the variable naming the relational database (Postgres, or the embedded one) */
export const relationalUrlVariable = "GATEWAY_RELATIONAL_DB_URL"

export interface RelationalStore {
  /** applies pending migrations; the names of those applied */
  readonly migrate: Effect.Effect<ReadonlyArray<string>, StoreError>
  /** a cheap query, for /health and start-up checks */
  readonly ping: Effect.Effect<void, StoreError>
  readonly keys: ApiKeyStore
  readonly buckets: RateLimitBuckets
  /** the budgets' spend counters (when Redis does not hold them) */
  readonly budgetCounters: BudgetCounters
  readonly sessions: UiSessionStore
  readonly audit: AuditStore
  /** budgets set at run time (`/v1/budgets`) */
  readonly budgets: BudgetStore
}

/** the relational database's probe for `GET /health`: undefined when GATEWAY_RELATIONAL_DB_URL is unset */
export class RelationalDatabase extends Context.Service<RelationalDatabase, {
  readonly ping: Effect.Effect<void, StoreError> | undefined
}>()("gateway/RelationalDatabase") {}
