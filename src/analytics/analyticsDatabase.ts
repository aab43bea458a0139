/**
 * Which database stores observability (inferences, feedback, the cache), from
 * `[gateway.observability] backend` and the two database URLs:
 * - `auto` (the default): GATEWAY_ANALYTICS_DB_URL decides, ClickHouse for http(s)://,
 *   Postgres for postgres://; unset, nothing is stored.
 * - `postgres`: a postgres:// GATEWAY_ANALYTICS_DB_URL, else the relational database
 *   (GATEWAY_RELATIONAL_DB_URL), so that a deployment with a ClickHouse analytics URL and a
 *   relational Postgres can keep its observability in Postgres (TensorZero's `backend`).
 * - `clickhouse`: GATEWAY_ANALYTICS_DB_URL must be a ClickHouse URL.
 * Pure: the environment is passed in.
 */
import * as Result from "effect/Result"
import { relationalUrlVariable } from "../relational.ts"
import type { ObservabilityBackend } from "../config/types.ts"
import { analyticsUrlVariable, type Backend, backendOf } from "./stores.ts"

export interface AnalyticsDatabase {
  readonly backend: Backend
  readonly url: string
  /** the environment variable the URL comes from, for messages */
  readonly variable: string
}

const setting = (backend: ObservabilityBackend) => `gateway.observability.backend = "${backend}"`

const valueOf = (env: Readonly<Record<string, string | undefined>>, variable: string): string | undefined => {
  const value = env[variable]
  return value === undefined || value === "" ? undefined : value
}

/** The database to store observability in; undefined when none is configured; a failure names what is wrong. */
export const analyticsDatabase = (
  backend: ObservabilityBackend,
  env: Readonly<Record<string, string | undefined>>
): Result.Result<AnalyticsDatabase | undefined, string> => {
  const analytics = valueOf(env, analyticsUrlVariable)
  const analyticsBackend = analytics === undefined ? undefined : backendOf(analytics)
  if (analytics !== undefined && analyticsBackend === undefined) {
    return Result.fail(`${analyticsUrlVariable} must be an http(s):// URL (ClickHouse) or a postgres:// URL (Postgres)`)
  }
  switch (backend) {
    case "auto":
      return Result.succeed(
        analytics === undefined ? undefined : { backend: analyticsBackend!, url: analytics, variable: analyticsUrlVariable }
      )
    case "clickhouse":
      return analyticsBackend === "clickhouse"
        ? Result.succeed({ backend: "clickhouse", url: analytics!, variable: analyticsUrlVariable })
        : Result.fail(`${setting(backend)} needs ${analyticsUrlVariable} to be a ClickHouse http(s):// URL (it is ${
          analytics === undefined ? "unset" : "a postgres:// URL"
        })`)
    case "postgres": {
      if (analyticsBackend === "postgres") return Result.succeed({ backend: "postgres", url: analytics!, variable: analyticsUrlVariable })
      const relational = valueOf(env, relationalUrlVariable)
      if (relational === undefined) {
        return analytics === undefined
          ? Result.succeed(undefined)
          : Result.fail(`${setting(backend)} needs a postgres:// URL: ${analyticsUrlVariable} is a ClickHouse URL and ${relationalUrlVariable} is unset`)
      }
      return backendOf(relational) === "postgres"
        ? Result.succeed({ backend: "postgres", url: relational, variable: relationalUrlVariable })
        : Result.fail(`${setting(backend)}: ${relationalUrlVariable} must be a postgres:// URL`)
    }
  }
}
