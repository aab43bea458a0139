/**
 * The relational database on Postgres (GATEWAY_RELATIONAL_DB_URL): API keys
 * (layers/postgres/apiKeys.ts), the UI's sessions (layers/postgres/uiSessions.ts) and rate limit
 * buckets (layers/postgres/rateLimitBuckets.ts) on one pool, shared by every gateway process. Tables and functions come from
 * `migrations/postgres/` (the sequence the analytics database applies too). Every connection
 * carries a statement timeout, so a request never waits on a stuck database for longer than
 * that.
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import type { RelationalStore } from "../../src/relational.ts"
import type { StoreError } from "../../src/storeError.ts"
import { makePostgresApiKeyStore } from "./apiKeys.ts"
import { makePgClient, storeError } from "./client.ts"
import { migrate } from "./migrator.ts"
import { makePostgresRateLimitBuckets } from "./rateLimitBuckets.ts"
import { makePostgresUiSessionStore } from "./uiSessions.ts"

export interface RelationalStoreOptions {
  /** the longest one statement may run (waits for row locks included); 5 seconds by default */
  readonly statementTimeout?: Duration.Input | undefined
  /** `[postgres] connection_pool_size`; the driver's default when undefined */
  readonly maxConnections?: number | undefined
}

export const makeRelationalStore = (
  url: string,
  options: RelationalStoreOptions = {}
): Effect.Effect<RelationalStore, StoreError, Scope.Scope> =>
  Effect.gen(function*() {
    const timeout = Duration.toMillis(Duration.fromInputUnsafe(options.statementTimeout ?? Duration.seconds(5)))
    const sql = yield* makePgClient(url, {
      startupParameters: { statement_timeout: String(Math.max(1, Math.round(timeout))) },
      maxConnections: options.maxConnections
    })
    return {
      migrate: migrate(sql),
      ping: sql`SELECT 1`.pipe(Effect.asVoid, Effect.mapError(storeError("ping"))),
      keys: makePostgresApiKeyStore(sql),
      buckets: makePostgresRateLimitBuckets(sql),
      sessions: makePostgresUiSessionStore(sql)
    }
  })
