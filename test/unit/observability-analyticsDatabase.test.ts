import * as Result from "effect/Result"
import { describe, expect, it } from "vitest"
import { analyticsDatabase } from "../../src/analytics/analyticsDatabase.ts"
import { type ObservabilityBackend } from "../../src/config/types.ts"

const clickhouse = "http://default:@127.0.0.1:8123/gateway"
const postgres = "postgres://gateway@127.0.0.1:5432/analytics"
const relational = "postgres://gateway@127.0.0.1:5432/relational"

const databaseOf = (backend: ObservabilityBackend, env: Record<string, string | undefined>) => {
  const result = analyticsDatabase(backend, env)
  if (Result.isFailure(result)) throw new Error(`expected a database, got: ${result.failure}`)
  return result.success
}

const failureOf = (backend: ObservabilityBackend, env: Record<string, string | undefined>) => {
  const result = analyticsDatabase(backend, env)
  if (Result.isSuccess(result)) throw new Error(`expected a failure, got ${JSON.stringify(result.success)}`)
  return result.failure
}

describe("analyticsDatabase: where observability is stored", () => {
  it("auto: the analytics URL decides, whatever the relational URL; none, nothing is stored", () => {
    expect(databaseOf("auto", { GATEWAY_ANALYTICS_DB_URL: clickhouse, GATEWAY_RELATIONAL_DB_URL: relational }))
      .toEqual({ backend: "clickhouse", url: clickhouse, variable: "GATEWAY_ANALYTICS_DB_URL" })
    expect(databaseOf("auto", { GATEWAY_ANALYTICS_DB_URL: postgres })).toEqual({ backend: "postgres", url: postgres, variable: "GATEWAY_ANALYTICS_DB_URL" })
    expect(databaseOf("auto", { GATEWAY_RELATIONAL_DB_URL: relational })).toBeUndefined()
    expect(databaseOf("auto", { GATEWAY_ANALYTICS_DB_URL: "" })).toBeUndefined()
  })

  it("postgres: a ClickHouse analytics URL gives way to the relational Postgres", () => {
    expect(databaseOf("postgres", { GATEWAY_ANALYTICS_DB_URL: clickhouse, GATEWAY_RELATIONAL_DB_URL: relational }))
      .toEqual({ backend: "postgres", url: relational, variable: "GATEWAY_RELATIONAL_DB_URL" })
    // a Postgres analytics URL is used as it is
    expect(databaseOf("postgres", { GATEWAY_ANALYTICS_DB_URL: postgres, GATEWAY_RELATIONAL_DB_URL: relational }))
      .toEqual({ backend: "postgres", url: postgres, variable: "GATEWAY_ANALYTICS_DB_URL" })
    expect(databaseOf("postgres", { GATEWAY_RELATIONAL_DB_URL: relational })).toEqual({ backend: "postgres", url: relational, variable: "GATEWAY_RELATIONAL_DB_URL" })
    expect(databaseOf("postgres", {})).toBeUndefined()
  })

  it("postgres: refuses a ClickHouse analytics URL without a relational one, naming the setting", () => {
    const message = failureOf("postgres", { GATEWAY_ANALYTICS_DB_URL: clickhouse })
    expect(message).toContain(`gateway.observability.backend = "postgres"`)
    expect(message).toContain("GATEWAY_RELATIONAL_DB_URL is unset")
    expect(failureOf("postgres", { GATEWAY_ANALYTICS_DB_URL: clickhouse, GATEWAY_RELATIONAL_DB_URL: "mysql://x" }))
      .toContain("GATEWAY_RELATIONAL_DB_URL must be a postgres:// URL")
  })

  it("clickhouse: needs a ClickHouse analytics URL, naming the setting otherwise", () => {
    expect(databaseOf("clickhouse", { GATEWAY_ANALYTICS_DB_URL: clickhouse })).toEqual({ backend: "clickhouse", url: clickhouse, variable: "GATEWAY_ANALYTICS_DB_URL" })
    for (const env of [{ GATEWAY_ANALYTICS_DB_URL: postgres }, {}, { GATEWAY_RELATIONAL_DB_URL: relational }]) {
      const message = failureOf("clickhouse", env)
      expect(message).toContain(`gateway.observability.backend = "clickhouse"`)
      expect(message).toContain("GATEWAY_ANALYTICS_DB_URL")
    }
  })

  it("refuses an analytics URL of neither kind, whatever the setting", () => {
    for (const backend of ["auto", "clickhouse", "postgres"] as const) {
      expect(failureOf(backend, { GATEWAY_ANALYTICS_DB_URL: "redis://localhost" })).toBe(
        "GATEWAY_ANALYTICS_DB_URL must be an http(s):// URL (ClickHouse) or a postgres:// URL (Postgres)"
      )
    }
  })
})
