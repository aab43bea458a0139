/**
 * The analytics database as the capabilities see it: the database named by
 * GATEWAY_ANALYTICS_DB_URL (ClickHouse or Postgres), reached through one store per capability,
 * each an Effect service declared in its capability's folder (src/<capability>/store.ts) and
 * provided by the shell (layers/observability/). While the variable is unset every store is
 * absent: then nothing is stored, and reads answer 503. Writes go through the write queue
 * (src/analytics/writeQueue.ts). This module knows no capability: they build on it.
 */
import type * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import { InternalError, ServiceUnavailable } from "../errors.ts"
import type { StoreError } from "../storeError.ts"

/** The analytics database's engine: an http(s) URL is ClickHouse, a postgres:// one Postgres. */
export type Backend = "clickhouse" | "postgres"

/** What every store of the analytics database says of itself: the backend its failures name. */
export interface AnalyticsStore {
  readonly backend: Backend
}

/** The value of a capability's store service: its store, or undefined while observability is off. */
export interface AnalyticsPort<S extends AnalyticsStore> {
  readonly store: S | undefined
}

export const analyticsUrlVariable = "GATEWAY_ANALYTICS_DB_URL"

/** a replicated ClickHouse cluster's name (docs/deploying.md): the migrations run `ON CLUSTER` it, tables Replicated */
export const clickHouseClusterVariable = "GATEWAY_CLICKHOUSE_CLUSTER_NAME"

export const backendOf = (url: string): Backend | undefined =>
  /^https?:\/\//i.test(url) ? "clickhouse" : /^postgres(ql)?:\/\//i.test(url) ? "postgres" : undefined

/** The 503 of a read while observability is off, naming the variable that would turn it on. */
export const observabilityDisabled = () =>
  new ServiceUnavailable({
    message:
      `observability is disabled: set ${analyticsUrlVariable} (and leave [gateway.observability] enabled) to store and read inferences and feedback`
  })

/** The store of a capability's `service`, or the 503 of observability off. */
export const storeOf = <I, S extends AnalyticsStore>(service: Context.Key<I, AnalyticsPort<S>>): Effect.Effect<S, ServiceUnavailable, I> =>
  Effect.flatMap(service, ({ store }) => (store === undefined ? Effect.fail(observabilityDisabled()) : Effect.succeed(store)))

/** The 503 of a read the database failed. */
export const storeUnavailable = (backend: Backend, message: string) =>
  new ServiceUnavailable({ message: `the ${backend} database is unavailable: ${message}` })

/** How a read of the analytics database fails: a 503 (off, or out), or a 500 (this read failed on a working database). */
export type StoreFailure = ServiceUnavailable | InternalError

/**
 * A failure of `store`, naming its backend: a 503 when the database is out
 * (`StoreError.outage`), a 500 when a working database failed this request (a stored row too
 * large to read, a query refused), which waiting would not mend.
 */
export const storeFailure = (store: AnalyticsStore) => (error: StoreError): StoreFailure =>
  error.outage === true
    ? storeUnavailable(store.backend, error.message)
    : new InternalError({ message: `the ${store.backend} database failed this request: ${error.message}` })
