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
  /** session settings sent when each connection opens (`statement_timeout`, ...) */
  readonly startupParameters?: Readonly<Record<string, string>> | undefined
  readonly maxConnections?: number | undefined
}

/** The pool connects lazily; a connection attempt gives up after 3 seconds. */
export const makePgClient = (url: string, options: PoolOptions = {}): Effect.Effect<PgClient.PgClient, StoreError, Scope.Scope> =>
  PgClient.make({
    url: Redacted.make(url),
    connectTimeout: Duration.seconds(3),
    applicationName: "llm-gateway",
    ...(options.startupParameters !== undefined && { startupParameters: options.startupParameters }),
    ...(options.maxConnections !== undefined && { maxConnections: options.maxConnections })
  }).pipe(
    Effect.provideServiceEffect(Reactivity.Reactivity, Reactivity.make),
    Effect.mapError(storeError("connect"))
  )
