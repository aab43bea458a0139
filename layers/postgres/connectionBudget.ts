/**
 * The connection budget of this process (src/config/postgresConnections.ts) as its configuration
 * and environment open pools: each pool's most connections. Loads no driver.
 */
import * as Result from "effect/Result"
import { analyticsDatabase } from "../../src/analytics/analyticsDatabase.ts"
import { type PostgresConnections, postgresConnections } from "../../src/config/postgresConnections.ts"
import type { GatewayConfig } from "../../src/config/types.ts"
import { relationalUrlVariable } from "../../src/relational.ts"

type Env = Readonly<Record<string, string | undefined>>

export const postgresConnectionsOf = (config: GatewayConfig, env: Env): PostgresConnections => {
  const relational = env[relationalUrlVariable]
  const analytics = analyticsDatabase(config.gateway.observability.backend, env)
  return postgresConnections(config.gateway.postgresPoolSize, {
    relational: relational !== undefined && relational !== "",
    analytics: config.gateway.observability.enabled && Result.isSuccess(analytics) && analytics.success?.backend === "postgres"
  })
}
