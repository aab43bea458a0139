/**
 * A database of its own for a test, on the servers of the run (test/support/globalSetup.ts),
 * with the URL the gateway reads from GATEWAY_ANALYTICS_DB_URL:
 *   ClickHouse `http://default:@127.0.0.1:<port>/gw_test_<random>`
 *   Postgres   `postgres://postgres@127.0.0.1:5432/gw_test_<random>`
 * `drop()` removes it; `queryDatabase` and `tablesOf` look inside it, asking the server directly.
 */
import { createClient } from "@clickhouse/client"
import { execFile } from "node:child_process"
import { randomBytes } from "node:crypto"
import { promisify } from "node:util"

export type TestBackend = "clickhouse" | "postgres"

export interface TestDatabase {
  readonly backend: TestBackend
  readonly url: string
  readonly name: string
  readonly drop: () => Promise<void>
}

const serverUrl = (variable: "GATEWAY_TEST_CLICKHOUSE_URL" | "GATEWAY_TEST_POSTGRES_URL"): URL => {
  const value = process.env[variable]
  if (value === undefined || value === "") throw new Error(`${variable} is not set: run the tests through vitest (test/support/globalSetup.ts)`)
  return new URL(value)
}

/** user and password of the ClickHouse server of the run: `default` without a password unless its URL says otherwise */
const clickHouseCredentials = (server: URL) => ({
  username: decodeURIComponent(server.username) || "default",
  password: decodeURIComponent(server.password)
})

/** runs one statement on the ClickHouse server of the run */
export const clickHouseCommand = async (query: string): Promise<void> => {
  const server = serverUrl("GATEWAY_TEST_CLICKHOUSE_URL")
  const client = createClient({ url: server.origin, ...clickHouseCredentials(server) })
  try {
    await client.command({ query })
  } finally {
    await client.close()
  }
}

/** runs one statement on the Postgres server of the run, in its `postgres` database */
export const postgresCommand = async (query: string): Promise<void> => {
  const server = serverUrl("GATEWAY_TEST_POSTGRES_URL")
  await promisify(execFile)("psql", [
    "-h", server.hostname, "-p", server.port || "5432", "-U", decodeURIComponent(server.username) || "postgres", "-d", "postgres",
    "-v", "ON_ERROR_STOP=1", "-q", "-c", query
  ])
}

export const freshDatabase = async (backend: TestBackend): Promise<TestDatabase> => {
  const name = `gw_test_${randomBytes(6).toString("hex")}`
  if (backend === "clickhouse") {
    const server = serverUrl("GATEWAY_TEST_CLICKHOUSE_URL")
    await clickHouseCommand(`CREATE DATABASE ${name}`)
    const { username, password } = clickHouseCredentials(server)
    return {
      backend,
      url: `${server.protocol}//${encodeURIComponent(username)}:${encodeURIComponent(password)}@${server.host}/${name}`,
      name,
      drop: () => clickHouseCommand(`DROP DATABASE IF EXISTS ${name}`)
    }
  }
  const server = serverUrl("GATEWAY_TEST_POSTGRES_URL")
  await postgresCommand(`CREATE DATABASE ${name}`)
  return {
    backend,
    url: `postgres://${server.username || "postgres"}@${server.host}/${name}`,
    name,
    // FORCE: a pool a test did not close must not keep its database alive
    drop: () => postgresCommand(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
  }
}

/** the rows `query` (a SELECT) gives on `database`, as JSON objects (ClickHouse gives 64-bit integers as strings) */
export const queryDatabase = async (database: TestDatabase, query: string): Promise<Array<Record<string, any>>> => {
  const url = new URL(database.url)
  if (database.backend === "clickhouse") {
    const client = createClient({ url: url.origin, ...clickHouseCredentials(url), database: database.name })
    try {
      return await (await client.query({ query, format: "JSONEachRow" })).json<Record<string, any>>()
    } finally {
      await client.close()
    }
  }
  const { stdout } = await promisify(execFile)("psql", [
    "-h", url.hostname, "-p", url.port || "5432", "-U", decodeURIComponent(url.username) || "postgres", "-d", database.name,
    "-v", "ON_ERROR_STOP=1", "-At", "-c", `SELECT coalesce(json_agg(found), '[]') FROM (${query}) AS found`
  ])
  return JSON.parse(stdout)
}

/** the tables (and ClickHouse's materialized views) of `database`, sorted */
export const tablesOf = async (database: TestDatabase): Promise<Array<string>> => {
  const rows = database.backend === "clickhouse"
    ? await queryDatabase(database, "SHOW TABLES")
    : await queryDatabase(database, "SELECT table_name AS name FROM information_schema.tables WHERE table_schema = 'public'")
  return rows.map((row) => String(row.name)).sort()
}
