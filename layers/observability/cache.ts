/**
 * Where the model answer cache lives (`[gateway.cache] backend`): the analytics database's
 * model inferences (`auto`; `clickhouse` and `postgres` say which it must be), or Valkey/Redis
 * at GATEWAY_REDIS_URL (`valkey`), which keeps entries of its own for
 * `[gateway.cache.valkey] ttl_s` and works with observability off too. A backend that cannot be
 * had is a start-up error: a cache silently off would bill every repeated request.
 */
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import { analyticsUrlVariable } from "../../src/analytics/stores.ts"
import type { CacheStore } from "../../src/cache/store.ts"
import type { GatewayConfig } from "../../src/config/types.ts"
import { redisUrlOf, redisUrlVariable } from "../redis/url.ts"
import { StartupError } from "../startup.ts"
import type { AnalyticsStores } from "./stores.ts"

type Env = Readonly<Record<string, string | undefined>>

export const configuredCache = (
  config: GatewayConfig,
  env: Env,
  stores: AnalyticsStores | undefined
): Effect.Effect<CacheStore | undefined, StartupError, Scope.Scope> => {
  const { backend, valkeyTtlS } = config.gateway.cache
  if (backend === "auto") return Effect.succeed(stores?.cache)
  if (backend === "valkey") {
    const redis = redisUrlOf(env)
    if (redis === undefined) {
      return Effect.fail(new StartupError({ message: `[gateway.cache] backend = "valkey" needs ${redisUrlVariable} (a redis:// URL of Valkey or Redis)` }))
    }
    return Effect.promise(() => import("../redis/cache.ts")).pipe(
      Effect.flatMap((module) => module.makeRedisCacheStore(redis.url, valkeyTtlS)),
      Effect.mapError((error) => new StartupError({ message: `${redis.variable}: ${error.message}` })),
      Effect.tap(() => Effect.logInfo(`cache: in valkey, entries kept ${valkeyTtlS} s`))
    )
  }
  if (stores === undefined) {
    return Effect.fail(new StartupError({
      message: `[gateway.cache] backend = "${backend}" keeps the cache in the analytics database, but observability is off: set ${analyticsUrlVariable}`
    }))
  }
  if (stores.database.backend !== backend) {
    return Effect.fail(new StartupError({
      message: `[gateway.cache] backend = "${backend}", but ${analyticsUrlVariable} names a ${stores.database.backend} database`
    }))
  }
  return Effect.succeed(stores.cache)
}
