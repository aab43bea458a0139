/**
 * A Postgres connection pool as every Postgres adapter opens it: from a URL, giving up on a
 * connection attempt after a few seconds, and the one mapping of its failures to one-line
 * StoreErrors. Shared by the analytics database (GATEWAY_ANALYTICS_DB_URL, layers/postgres/stores.ts)
 * and the relational database (GATEWAY_RELATIONAL_DB_URL, layers/postgres/relational.ts).
 */
import * as PgClient from "@effect/sql-pg/PgClient"
import * as PgProtocol from "@effect/sql-pg/PgProtocol"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Reactivity from "effect/reactivity/Reactivity"
import * as Redacted from "effect/Redacted"
import type * as Scope from "effect/Scope"
import type { SqlError } from "effect/sql/SqlError"
import { StoreError } from "../../src/storeError.ts"

/** The reason Postgres gave (its own message, or the socket error) on one line, never a stack. */
/** a value the database cannot hold (not a UUID, say), refused before it is sent */
export const refused = (message: string) => new StoreError({ message: `postgres refused a value: ${message}` })

/** the refusal of `id` where a UUID belongs */
export const notAUuid = (id: string) => refused(`not a UUID: ${JSON.stringify(id.slice(0, 100))}`)

export const storeError = (operation: string) => (error: SqlError | StoreError): StoreError => {
  if (error._tag === "StoreError") return error
  const cause = error.reason.cause
  if (isTooLargeToRead(error)) {
    return new StoreError({
      message: `postgres ${operation} failed: a stored row is larger than the driver reads (${(cause as Error).message})`,
      outage: false
    })
  }
  const detail = cause instanceof Error && cause.message !== "" ? cause.message : error.message
  return new StoreError({ message: `postgres ${operation} failed: ${detail.replace(/\s*[\r\n]+\s*/g, " ")}`, outage: isOutage(error) })
}

/** The SQLSTATE of a failed query, when Postgres gave one. */
export const sqlState = (error: SqlError): string | undefined => (error.reason.cause as { code?: string } | undefined)?.code

/**
 * A row (one DataRow message) over the driver's `maxMessageSize` (16 MiB): the driver drops the
 * connection, but the database is fine; only reads of that row fail.
 */
const isTooLargeToRead = (error: SqlError): boolean =>
  error.reason.cause instanceof PgProtocol.ParseError && /exceeds maxMessageSize/.test(error.reason.cause.message)

/**
 * SQLSTATE classes of a database that cannot answer now: 08 connection exception, 25006
 * read-only (a failover), 40 transaction rollback (serialization, deadlock), 53 insufficient
 * resources (disk full, out of memory, too many connections), 57 operator intervention (shutting
 * down, a statement timeout), 58 system error (I/O).
 */
const outageState = /^(08|40|53|57|58)|^25006$/

/** whether `error` means the database is out (a 503) rather than this query failing against a working one (a 500) */
const isOutage = (error: SqlError): boolean => {
  switch (error.reason._tag) {
    case "ConnectionError":
    case "AuthenticationError":
    case "AuthorizationError":
    case "StatementTimeoutError":
    case "LockTimeoutError":
    case "DeadlockError":
    case "SerializationError":
      return true
    default:
      return outageState.test(sqlState(error) ?? "")
  }
}

export interface PoolOptions {
  /** the most connections the pool opens (its share of `[postgres] connection_pool_size`) */
  readonly maxConnections?: number | undefined
  /** `application_name` of its connections (`llm-gateway` by default), seen in `pg_stat_activity` */
  readonly applicationName?: string | undefined
}

/**
 * The pool connects lazily; a connection attempt gives up after 3 seconds.
 *
 * Nothing of a session is relied on, so the pool works the same straight to Postgres and
 * through a pooler in transaction mode (PgBouncer's `pool_mode = transaction`), where each
 * transaction may land on another server connection: statements are not prepared by name
 * (`prepare: false`: each is parsed again, a few microseconds, and the unnamed statement lives
 * only until its Sync), and no setting travels in the startup packet (PgBouncer refuses unknown
 * startup parameters): the statement timeout is the client's (`withStatementTimeout`), and
 * settings a transaction needs are `SET LOCAL` inside it.
 */
export const makePgClient = (url: string, options: PoolOptions = {}): Effect.Effect<PgClient.PgClient, StoreError, Scope.Scope> =>
  PgClient.make({
    url: Redacted.make(url),
    connectTimeout: Duration.seconds(3),
    applicationName: options.applicationName ?? "llm-gateway",
    prepare: false,
    ...(options.maxConnections !== undefined && { maxConnections: options.maxConnections })
  }).pipe(
    Effect.provideServiceEffect(Reactivity.Reactivity, Reactivity.make),
    Effect.mapError(storeError("connect"))
  )

/**
 * `effect` (one call of a store) given up after `timeout`: the driver cancels the statement it
 * was running (a CancelRequest, which PgBouncer forwards to the right server connection) and
 * the call fails as an outage (a 503). The timeout counts the wait for a pool connection too,
 * so a request never waits on a stuck or exhausted database for longer than that. Client-side
 * rather than the `statement_timeout` setting, which a pooler in transaction mode cannot carry
 * per client.
 */
export const withStatementTimeout = (operation: string, timeout: Duration.Duration) =>
<A, R>(effect: Effect.Effect<A, StoreError, R>): Effect.Effect<A, StoreError, R> =>
  Effect.timeoutOrElse(effect, {
    duration: timeout,
    orElse: () =>
      Effect.fail(
        new StoreError({
          message: `postgres ${operation} failed: canceling statement due to statement timeout (no answer within ${Duration.toMillis(timeout)} ms)`,
          outage: true
        })
      )
  })
