/**
 * A database of its own for a test, on the servers of the run (test/support/globalSetup.ts),
 * with the URL the gateway reads from GATEWAY_ANALYTICS_DB_URL:
 *   ClickHouse `http://default:@127.0.0.1:<port>/gw_test_<random>`
 *   Postgres   `postgres://postgres@127.0.0.1:5432/gw_test_<random>`
 *   PGlite     `postgres://postgres@127.0.0.1:<port>/postgres`: an embedded database of its own
 *              (layers/embedded/pglite.ts) in a temporary folder, served by this process
 * `drop()` removes it; `queryDatabase` and `tablesOf` look inside it, asking the server directly.
 */
import { createClient } from "@clickhouse/client"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Scope from "effect/Scope"
import { execFile } from "node:child_process"
import { randomBytes } from "node:crypto"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { promisify } from "node:util"
import { startEmbedded } from "../../layers/embedded/pglite.ts"

export type TestBackend = "clickhouse" | "postgres" | "pglite"

/** the stores' backend on `backend`: an embedded database is reached with the Postgres adapters */
export const engineOf = (backend: TestBackend): "clickhouse" | "postgres" => backend === "clickhouse" ? "clickhouse" : "postgres"

/** whether `backend` speaks Postgres (the server or the embedded database) */
export const isPostgresLike = (backend: TestBackend): boolean => backend !== "clickhouse"

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

/**
 * An embedded database in a temporary folder, served on a local port by this process in a scope
 * of its own (about 3 s: initdb runs in WebAssembly). It has one database, `postgres`, which any
 * database name reaches; `drop` stops it and removes the folder.
 */
const freshEmbeddedDatabase = async (): Promise<TestDatabase> => {
  const folder = fs.mkdtempSync(path.join(os.tmpdir(), "gw-test-pglite-"))
  const scope = Effect.runSync(Scope.make())
  const exit = await Effect.runPromiseExit(Scope.provide(scope)(startEmbedded(folder)))
  const drop = async () => {
    await Effect.runPromise(Scope.close(scope, Exit.void))
    fs.rmSync(folder, { recursive: true, force: true })
  }
  if (Exit.isFailure(exit)) {
    await drop()
    return Effect.runPromise(Effect.failCause(exit.cause))
  }
  return { backend: "pglite", url: exit.value, name: "postgres", drop }
}

export const freshDatabase = async (backend: TestBackend): Promise<TestDatabase> => {
  if (backend === "pglite") return freshEmbeddedDatabase()
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
