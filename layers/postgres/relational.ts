/**
 * The relational database on Postgres (GATEWAY_RELATIONAL_DB_URL): API keys
 * (layers/postgres/apiKeys.ts), the UI's sessions (layers/postgres/uiSessions.ts) and rate limit
 * buckets (layers/postgres/rateLimitBuckets.ts), the audit log and run-time budgets (layers/postgres/budgets.ts) on one pool, shared by every gateway process. Tables and functions come from
 * `migrations/postgres/` (the sequence the analytics database applies too). Every call has a
 * statement timeout (`withStatementTimeout`, the client's own, so that it holds through
 * PgBouncer too), so a request never waits on a stuck database for longer than that.
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import type { RelationalStore } from "../../src/relational.ts"
import type { StoreError } from "../../src/storeError.ts"
import { isEmbeddedServer } from "../embedded/pglite.ts"
import { makePostgresApiKeyStore } from "./apiKeys.ts"
import { makePgClient, storeError, withStatementTimeout } from "./client.ts"
import { migrate } from "./migrator.ts"
import { makePostgresBudgetCounters } from "./budgetCounters.ts"
import { makePostgresRateLimitBuckets } from "./rateLimitBuckets.ts"
import { makePostgresUiSessionStore } from "./uiSessions.ts"
import { makePostgresAuditStore } from "./audit.ts"
import { makePostgresBudgetStore } from "./budgets.ts"

export interface RelationalStoreOptions {
  /** the longest one call may take (waits for a connection and for row locks included); 5 seconds by default */
  readonly statementTimeout?: Duration.Input | undefined
  /** its share of `[postgres] connection_pool_size`; the driver's default when undefined */
  readonly maxConnections?: number | undefined
}

export const makeRelationalStore = (
  url: string,
  options: RelationalStoreOptions = {}
): Effect.Effect<RelationalStore, StoreError, Scope.Scope> =>
  Effect.gen(function*() {
    const sql = yield* makePgClient(url, { maxConnections: options.maxConnections })
    const keys = makePostgresApiKeyStore(sql)
    const buckets = makePostgresRateLimitBuckets(sql)
    const budgetCounters = makePostgresBudgetCounters(sql)
    const sessions = makePostgresUiSessionStore(sql)
    const audit = makePostgresAuditStore(sql)
    const budgets = makePostgresBudgetStore(sql)
    // The embedded database has one session, which another client's transaction holds whole: a
    // call waits in its queue (not on a row lock), cannot be cancelled there, and runs once the
    // transaction ends; it has no timer to enforce a timeout with either.
    const timeout = Duration.fromInputUnsafe(options.statementTimeout ?? Duration.seconds(5))
    const bounded = (operation: string) =>
      isEmbeddedServer(url)
        ? <A, R>(effect: Effect.Effect<A, StoreError, R>) => effect
        : withStatementTimeout(operation, timeout)
    return {
      // a migration may take long (and wait for another gateway's)
      migrate: migrate(sql),
      ping: sql`SELECT 1`.pipe(Effect.asVoid, Effect.mapError(storeError("ping")), bounded("ping")),
      keys: {
        create: (key) => bounded("create api key")(keys.create(key)),
        list: (workspace) => bounded("list api keys")(keys.list(workspace)),
        disable: (publicId, workspace) => bounded("disable api key")(keys.disable(publicId, workspace)),
        find: (publicId) => bounded("find api key")(keys.find(publicId)),
        workspaces: () => bounded("list workspaces")(keys.workspaces()),
        // a one-shot command's work, as long as its source has keys: no statement timeout
        importKeys: keys.importKeys
      },
      buckets: {
        backend: buckets.backend,
        consume: (requests) => bounded("consume")(buckets.consume(requests)),
        adjust: (requests) => bounded("adjust")(buckets.adjust(requests)),
        // in the background, never in a request's way; SKIP LOCKED keeps it off locked rows
        sweep: buckets.sweep
      },
      budgetCounters: {
        backend: budgetCounters.backend,
        reserve: (charges) => bounded("reserve budgets")(budgetCounters.reserve(charges)),
        settle: (settlements) => bounded("settle budgets")(budgetCounters.settle(settlements)),
        read: (counters) => bounded("read budgets")(budgetCounters.read(counters)),
        sweep: budgetCounters.sweep
      },
      sessions: {
        create: (session) => bounded("create ui session")(sessions.create(session)),
        find: (idHash) => bounded("find ui session")(sessions.find(idHash)),
        delete: (idHash) => bounded("delete ui session")(sessions.delete(idHash)),
        saveLogin: (login, lifetimeS) => bounded("save oidc login")(sessions.saveLogin(login, lifetimeS)),
        takeLogin: (stateHash) => bounded("take oidc login")(sessions.takeLogin(stateHash))
      },
      audit: {
        append: (entry) => bounded("append audit entry")(audit.append(entry)),
        list: (query) => bounded("list audit entries")(audit.list(query))
      },
      budgets: {
        version: bounded("read budgets version")(budgets.version),
        list: (workspace) => bounded("list budgets")(budgets.list(workspace)),
        upsert: (budget) => bounded("set budget")(budgets.upsert(budget)),
        remove: (id, workspace) => bounded("delete budget")(budgets.remove(id, workspace))
      }
    }
  })
