/**
 * Observability as configured: the store named by GATEWAY_ANALYTICS_DB_URL (ClickHouse for an
 * http(s) URL, Postgres for a postgres URL) with its write queue, or a disabled service when
 * the variable is unset. The backends load only when used, so start-up stays fast.
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Scope from "effect/Scope"
import * as Result from "effect/Result"
import type { GatewayConfig } from "../../src/config/types.ts"
import { analyticsDatabase } from "../../src/observability/analyticsDatabase.ts"
import { analyticsUrlVariable, backendOf, Observability, type Store, type StoreError } from "../../src/observability/store.ts"
import { StartupError } from "../startup.ts"
import { makeWriter } from "./writer.ts"

export { StartupError } from "../startup.ts"

/** The store of a GATEWAY_ANALYTICS_DB_URL value. */
export const makeStore = (url: string): Effect.Effect<Store, StoreError | StartupError, Scope.Scope> => {
  switch (backendOf(url)) {
    case "clickhouse":
      return Effect.flatMap(Effect.promise(() => import("./clickhouse.ts")), (module) => module.makeClickHouseStore(url))
    case "postgres":
      return Effect.flatMap(Effect.promise(() => import("./postgres.ts")), (module) => module.makePostgresStore(url))
    default:
      return Effect.fail(
        new StartupError({
          message: `${analyticsUrlVariable} must be an http(s):// URL (ClickHouse) or a postgres:// URL (Postgres)`
        })
      )
  }
}

const disabled = Observability.of({
  store: undefined,
  submit: () => "off",
  stats: () => ({ queued: 0, queuedBytes: 0, written: 0, dropped: 0, rejected: 0, failedAttempts: 0 }),
  queuedInference: () => undefined,
  queuedEpisode: () => false
})

/** The configured store, migrated, or undefined when observability is off. */
export const configuredStore = (
  config: GatewayConfig,
  env: Readonly<Record<string, string | undefined>>
): Effect.Effect<Store | undefined, StartupError, Scope.Scope> =>
  Effect.gen(function*() {
    if (!config.gateway.observability.enabled) return undefined
    const database = analyticsDatabase(config.gateway.observability.backend, env)
    if (Result.isFailure(database)) return yield* new StartupError({ message: database.failure })
    if (database.success === undefined) return undefined
    const { url, variable } = database.success
    return yield* Effect.mapError(makeStore(url), (error) =>
      error._tag === "StartupError" ? error : new StartupError({ message: `${variable}: ${error.message}` }))
  })

/** Applies pending migrations, naming each in the log. */
export const migrateStore = (store: Store): Effect.Effect<void, StartupError> =>
  store.migrate.pipe(
    Effect.mapError((error) => new StartupError({ message: `${store.backend} migrations failed: ${error.message}` })),
    Effect.flatMap((applied) =>
      Effect.logInfo(
        applied.length === 0
          ? `${store.backend}: the database is up to date`
          : `${store.backend}: applied migrations ${applied.join(", ")}`
      )
    )
  )

export const ObservabilityLive = (config: GatewayConfig, env: Readonly<Record<string, string | undefined>>) =>
  Layer.effect(
    Observability,
    Effect.gen(function*() {
      // The store (its connection pool) lives in a scope of its own, closed only after the
      // writer's final flush: finalizers run once their scope is closed, and a pool whose scope
      // is closed cannot open a connection (Postgres would hang the flush on shutdown).
      const storeScope = yield* Scope.make()
      yield* Effect.addFinalizer((exit) => Scope.close(storeScope, exit))
      const store = yield* Scope.provide(storeScope)(configuredStore(config, env))
      if (store === undefined) {
        yield* Effect.logInfo(`observability is off: set ${analyticsUrlVariable} to store inferences and feedback`)
        return disabled
      }
      const settings = config.gateway.observability
      if (!settings.disableAutomaticMigrations) yield* migrateStore(store)
      const writer = yield* makeWriter(store, {
        maxRows: settings.maxRows,
        maxBatchBytes: settings.maxBatchBytes,
        flushIntervalMs: settings.flushIntervalMs,
        maxQueued: settings.maxQueued,
        maxQueuedBytes: settings.maxQueuedBytes,
        shutdownTimeoutMs: 10_000,
        // far longer than a batch of max_bytes takes to write; a connection that hangs is left for a new one
        writeTimeoutMs: 60_000
      })
      yield* Effect.logInfo(`observability: storing in ${store.backend}`)
      return Observability.of({ store, ...writer })
    })
  )
