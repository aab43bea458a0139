/**
 * Who may call the gateway and how much: the relational database (API keys, the UI's sessions,
 * and rate limit buckets unless Redis holds them), authentication with a short-lived key cache
 * (src/auth/keyCache.ts), the UI's sessions (src/auth/uiSessions.ts, never cached), and the rate
 * limiter with the budgets. Everything here is checked at start-up: a gateway that should check keys or limits
 * and cannot reach where they live does not start.
 */
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import { ApiKeys, Authentication, authenticateGuarded } from "../src/auth/authenticate.ts"
import { AuditLog, makeAuditLog } from "../src/audit/service.ts"
import { FailedAttempts } from "../src/auth/failedAttempts.ts"
import type { Budget } from "../src/budgets/budget.ts"
import { BudgetTable } from "../src/budgets/budget.ts"
import { BudgetAdministration, makeRuntimeBudgets } from "../src/budgets/runtime.ts"
import { uuidv7 } from "../src/ids.ts"
import { cachedKeyLookup } from "../src/auth/keyCache.ts"
import { RelationalDatabase, type RelationalStore, relationalUrlVariable } from "../src/relational.ts"
import { makeUiSessions, UiSessions } from "../src/auth/uiSessions.ts"
import type { GatewayConfig } from "../src/config/types.ts"
import type { BudgetCounting } from "../src/budgets/reservation.ts"
import type { BudgetCounters } from "../src/budgets/store.ts"
import { withBatchedSettlements } from "../src/budgets/batchedSettlements.ts"
import { RateLimiter, type RateLimits } from "../src/ratelimit/limiter.ts"
import type { RateLimitBuckets } from "../src/ratelimit/store.ts"
import type { StoreError } from "../src/storeError.ts"
import { postgresConnectionsOf } from "./postgres/connectionBudget.ts"
import { redisUrlOf } from "./redis/url.ts"
import { StartupError } from "./startup.ts"

type Env = Readonly<Record<string, string | undefined>>

/** The relational store GATEWAY_RELATIONAL_DB_URL names, answering, its pool `poolSize` connections at most (the driver's default when undefined: a one-shot command); undefined when unset. */
export const configuredRelationalStore = (env: Env, poolSize?: number): Effect.Effect<RelationalStore | undefined, StartupError, Scope.Scope> => {
  const url = env[relationalUrlVariable]
  if (url === undefined || url === "") return Effect.succeed(undefined)
  if (!/^postgres(ql)?:\/\//i.test(url)) {
    return Effect.fail(new StartupError({ message: `${relationalUrlVariable} must be a postgres:// URL` }))
  }
  return Effect.promise(() => import("./postgres/relational.ts")).pipe(
    Effect.flatMap((module) => module.makeRelationalStore(url, { maxConnections: poolSize })),
    Effect.tap((store) => store.ping),
    Effect.mapError((error) => new StartupError({ message: `${relationalUrlVariable}: ${error.message}` }))
  )
}

export const migrateRelationalStore = (store: RelationalStore): Effect.Effect<void, StartupError> =>
  store.migrate.pipe(
    Effect.mapError((error) => new StartupError({ message: `relational database migrations failed: ${error.message}` })),
    Effect.flatMap((applied) =>
      Effect.logInfo(
        applied.length === 0
          ? "relational database: up to date"
          : `relational database: applied migrations ${applied.join(", ")}`
      )
    )
  )

/** the relational store, or a start-up error saying what needs it */
const requireRelational = (store: RelationalStore | undefined, what: string) =>
  store === undefined
    ? Effect.fail(new StartupError({ message: `${what} needs ${relationalUrlVariable} (a postgres:// URL)` }))
    : Effect.succeed(store)

/** how often buckets that do not expire by themselves (Postgres) are swept */
const bucketSweepInterval = Duration.minutes(1)

/** Runs `sweep` every `interval` for as long as the scope lasts; a failed sweep is logged and tried again next time. */
export const sweepBucketsEvery = (
  sweep: Effect.Effect<number, StoreError>,
  interval: Duration.Input,
  what = "rate limit: idle buckets"
): Effect.Effect<never> =>
  Effect.forever(Effect.sleep(interval).pipe(
    Effect.andThen(sweep),
    Effect.flatMap((deleted) => deleted > 0 ? Effect.logDebug(`${what}: deleted ${deleted}`) : Effect.void),
    Effect.catch((error) => Effect.logWarning(`${what}: could not delete them: ${error.message}`))
  ))

const bucketStoreFor = (
  env: Env,
  relational: RelationalStore | undefined
): Effect.Effect<RateLimitBuckets, StartupError, Scope.Scope> => {
  const redis = redisUrlOf(env)
  if (redis === undefined) return Effect.map(requireRelational(relational, "[[rate_limiting.rules]]"), (store) => store.buckets)
  return Effect.promise(() => import("./redis/rateLimitBuckets.ts")).pipe(
    Effect.flatMap((module) => module.makeRedisRateLimitBuckets(redis.url)),
    Effect.mapError((error) => new StartupError({ message: `${redis.variable}: ${error.message}` }))
  )
}

/**
 * The budgets in force (`BudgetTable`) and their administration: the configuration's
 * `configBudgets` and, with a relational database, those set at run time, polled. Without
 * either the table stays empty (the hot path skips budgets at once).
 */
const budgetsOf = (configBudgets: ReadonlyArray<Budget>, relational: RelationalStore | undefined) =>
  makeRuntimeBudgets({
    configBudgets,
    store: relational?.budgets,
    keyWorkspace: (publicId) => Effect.map(relational!.keys.find(publicId), (key) => key?.workspace),
    newId: () => uuidv7(Date.now())
  }).pipe(Effect.mapError((error) => new StartupError({ message: `budgets: could not read the run-time budgets: ${error.message}` })))

/** how long a settlement waits for others to be sent with it (src/budgets/batchedSettlements.ts) */
const settlementWindowMs = 5

/** where budgets are counted: beside the rate limit buckets (Redis when GATEWAY_REDIS_URL is set, else the relational database) */
const budgetCountersFor = (
  env: Env,
  relational: RelationalStore | undefined
): Effect.Effect<BudgetCounters, StartupError, Scope.Scope> => {
  const redis = redisUrlOf(env)
  if (redis === undefined) return Effect.map(requireRelational(relational, "[[rate_limiting.budgets]]"), (store) => store.budgetCounters)
  return Effect.promise(() => import("./redis/budgetCounters.ts")).pipe(
    Effect.flatMap((module) => module.makeRedisBudgetCounters(redis.url)),
    Effect.mapError((error) => new StartupError({ message: `${redis.variable}: ${error.message}` }))
  )
}

/** The RateLimiter, BudgetTable, BudgetAdministration, Authentication, UiSessions and AuditLog services, as configured. */
export const AccessLive = (config: GatewayConfig, env: Env) =>
  Layer.effectContext(Effect.gen(function*() {
    const relational = yield* configuredRelationalStore(env, postgresConnectionsOf(config, env).relational)
    if (relational !== undefined && !config.gateway.observability.disableAutomaticMigrations) {
      yield* migrateRelationalStore(relational)
    }

    let limits: RateLimits | undefined
    if (config.rateLimiting.enabled && config.rateLimiting.rules.length > 0) {
      const store = yield* bucketStoreFor(env, relational)
      limits = { rules: config.rateLimiting.rules, store, defaultCost: config.rateLimiting.defaultCost }
      if (store.sweep !== undefined) yield* Effect.forkScoped(sweepBucketsEvery(store.sweep, bucketSweepInterval))
      yield* Effect.logInfo(`rate limiting: ${config.rateLimiting.rules.length} rules, buckets in ${store.backend}`)
    }
    let budgets: BudgetCounting | undefined
    // budgets can exist when configured, or set at run time (kept in the relational database)
    if (config.rateLimiting.enabled && (config.rateLimiting.budgets.length > 0 || relational !== undefined)) {
      const counters = yield* budgetCountersFor(env, relational)
      budgets = { counters: yield* withBatchedSettlements(counters, settlementWindowMs), defaultCost: config.rateLimiting.defaultCost }
      if (counters.sweep !== undefined) yield* Effect.forkScoped(sweepBucketsEvery(counters.sweep, bucketSweepInterval, "budgets: counters of past periods"))
      yield* Effect.logInfo(`budgets: ${config.rateLimiting.budgets.length} configured, run-time ones ${relational === undefined ? "off (no relational database)" : "on"}, counted in ${counters.backend}`)
    }

    const auth = config.gateway.auth
    let authentication = Authentication.of({
      enabled: false,
      authenticate: () => Effect.die("authentication is off")
    })
    // without authentication the UI is open: there are no sessions
    let sessions = UiSessions.of({
      start: () => Effect.die("authentication is off"),
      check: () => Effect.die("authentication is off"),
      end: () => Effect.void,
      saveLogin: () => Effect.die("authentication is off"),
      takeLogin: () => Effect.die("authentication is off")
    })
    if (auth.enabled) {
      const store = yield* requireRelational(relational, "[gateway.auth] enabled = true")
      const clock = yield* Clock.Clock
      const now = () => clock.currentTimeMillisUnsafe()
      const lookup = cachedKeyLookup(store.keys, auth.cacheTtlMs, now)
      const attempts = auth.maxFailedAttemptsPerMinute > 0 ? new FailedAttempts(auth.maxFailedAttemptsPerMinute) : undefined
      authentication = Authentication.of({
        enabled: true,
        authenticate: (header, address) => Effect.suspend(() => authenticateGuarded(header, address, lookup, attempts, now()))
      })
      // never cached: signing out and disabling a key end a session at once in every process
      sessions = UiSessions.of(makeUiSessions(store.sessions, attempts, now))
      yield* Effect.logInfo(
        `authentication: on (keys cached for ${auth.cacheTtlMs} ms, ${
          attempts === undefined ? "failed attempts not limited" : `at most ${attempts.perMinute} failed attempts a minute per client address`
        })`
      )
    }

    const runtimeBudgets = yield* budgetsOf(config.rateLimiting.budgets, relational)

    return Context.make(RateLimiter, { limits, budgets }).pipe(
      Context.add(Authentication, authentication),
      Context.add(UiSessions, sessions),
      Context.add(ApiKeys, { store: relational?.keys }),
      Context.add(RelationalDatabase, { ping: relational?.ping }),
      Context.add(AuditLog, makeAuditLog(relational?.audit, Date.now)),
      Context.add(BudgetTable, runtimeBudgets.table),
      Context.add(BudgetAdministration, runtimeBudgets.administration)
    )
  }))
