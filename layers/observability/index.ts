/**
 * Observability as configured: the analytics database named by GATEWAY_ANALYTICS_DB_URL
 * (ClickHouse for an http(s) URL, Postgres for a postgres URL) with its write queue, or both
 * off when the variable is unset. The backends load only when used, so start-up stays fast.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Result from "effect/Result"
import * as Scope from "effect/Scope"
import * as path from "node:path"
import type { DurableQueueSettings, GatewayConfig } from "../../src/config/types.ts"
import { type AnalyticsDatabase, analyticsDatabase } from "../../src/analytics/analyticsDatabase.ts"
import type { ObservabilityDatabase } from "../../src/analytics/database.ts"
import { analyticsUrlVariable, clickHouseClusterVariable } from "../../src/analytics/stores.ts"
import { WriteQueue } from "../../src/analytics/writeQueue.ts"
import type { StoreError } from "../../src/storeError.ts"
import { embeddedDatabaseAt, pausingWrites } from "../embedded/pglite.ts"
import { postgresConnectionsOf } from "../postgres/connectionBudget.ts"
import { StartupError } from "../startup.ts"
import { makeWriteQueue, type WriterOptions } from "../writeQueue.ts"
import { openQueueLog, type QueueLog } from "../durableQueue/log.ts"
import { configuredCache } from "./cache.ts"
import { type AnalyticsStores, storeServices } from "./stores.ts"

export { StartupError } from "../startup.ts"

type Env = Readonly<Record<string, string | undefined>>

/** The stores of the analytics database `analyticsDatabase` chose (its URL already checked). */
const makeStores = ({ backend, url }: AnalyticsDatabase, config: GatewayConfig, env: Env): Effect.Effect<AnalyticsStores, StoreError, Scope.Scope> => {
  const { maxRowBytes } = config.gateway.observability
  const clusterName = env[clickHouseClusterVariable] || undefined
  return backend === "clickhouse"
    ? Effect.flatMap(Effect.promise(() => import("../clickhouse/stores.ts")), (module) => module.makeClickHouseStores(url, maxRowBytes, clusterName))
    : Effect.flatMap(Effect.promise(() => import("../postgres/stores.ts")), (module) => module.makePostgresStores(url, maxRowBytes, postgresConnectionsOf(config, env).analytics))
}

/** The configured stores, not migrated yet, or undefined when observability is off. */
export const configuredStores = (config: GatewayConfig, env: Env): Effect.Effect<AnalyticsStores | undefined, StartupError, Scope.Scope> =>
  Effect.gen(function*() {
    if (!config.gateway.observability.enabled) return undefined
    const database = analyticsDatabase(config.gateway.observability.backend, env)
    if (Result.isFailure(database)) return yield* new StartupError({ message: database.failure })
    if (database.success === undefined) return undefined
    const chosen = database.success
    const stores = yield* Effect.mapError(makeStores(chosen, config, env), (error) => new StartupError({ message: `${chosen.variable}: ${error.message}` }))
    const embedded = embeddedDatabaseAt(chosen.url)
    return embedded === undefined ? stores : { ...stores, database: pausingWrites(stores.database, embedded) }
  })

/**
 * This process's durable log in `folder` (the configured path, resolved), closed after the write
 * queue's final flush (its finalizer is added first, so it runs last).
 */
const durableLog = (settings: DurableQueueSettings, folder: string): Effect.Effect<QueueLog, StartupError, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.try({
      try: () =>
        openQueueLog({
          folder,
          fsync: settings.fsync,
          maxBytes: settings.maxBytes,
          segmentBytes: settings.segmentBytes,
          syncIntervalMs: settings.fsyncIntervalMs
        }),
      catch: (error) =>
        new StartupError({ message: `[gateway.observability.durable_queue] path: cannot keep the durable queue in ${settings.path}: ${error instanceof Error ? error.message : String(error)}` })
    }),
    (log) => Effect.sync(() => log.close())
  )

/** Applies pending migrations, naming each in the log. */
export const migrateDatabase = (database: ObservabilityDatabase): Effect.Effect<void, StartupError> =>
  database.migrate.pipe(
    Effect.mapError((error) => new StartupError({ message: `${database.backend} migrations failed: ${error.message}` })),
    Effect.flatMap((applied) =>
      Effect.logInfo(
        applied.length === 0
          ? `${database.backend}: the database is up to date`
          : `${database.backend}: applied migrations ${applied.join(", ")}`
      )
    )
  )

/** The service of each store (layers/observability/stores.ts) and the `WriteQueue` in front of them, all off when observability is. */
export const ObservabilityLive = (config: GatewayConfig, env: Env) =>
  Layer.effectContext(
    Effect.gen(function*() {
      // The stores (their connection pool) live in a scope of their own, closed only after the
      // write queue's final flush: finalizers run once their scope is closed, and a pool whose
      // scope is closed cannot open a connection (Postgres would hang the flush on shutdown).
      const storesScope = yield* Scope.make()
      yield* Effect.addFinalizer((exit) => Scope.close(storesScope, exit))
      const stores = yield* Scope.provide(storesScope)(configuredStores(config, env))
      const cache = yield* configuredCache(config, env, stores)
      if (stores === undefined) {
        yield* Effect.logInfo(`observability is off: set ${analyticsUrlVariable} to store inferences and feedback`)
        return storeServices(undefined, cache).pipe(Context.add(WriteQueue, WriteQueue.off))
      }
      const { database } = stores
      const settings = config.gateway.observability
      if (!settings.disableAutomaticMigrations) yield* migrateDatabase(database)
      const durable = settings.durableQueue
      let log: WriterOptions["log"]
      if (durable !== undefined) {
        const folder = path.resolve(durable.path)
        log = { log: yield* durableLog(durable, folder), folder, replayIntervalMs: durable.replayIntervalMs }
      }
      const writeQueue = yield* makeWriteQueue(database, {
        maxRows: settings.maxRows,
        maxBatchBytes: settings.maxBatchBytes,
        flushIntervalMs: settings.flushIntervalMs,
        maxQueued: settings.maxQueued,
        maxQueuedBytes: settings.maxQueuedBytes,
        shutdownTimeoutMs: 10_000,
        // far longer than a batch of max_bytes takes to write; a connection that hangs is left for a new one
        writeTimeoutMs: 60_000,
        log
      })
      yield* Effect.logInfo(`observability: storing in ${database.backend}` + (durable === undefined ? "" : `, the write queue kept on disk in ${durable.path} (fsync: ${durable.fsync})`))
      return storeServices(stores, cache).pipe(Context.add(WriteQueue, writeQueue))
    })
  )
