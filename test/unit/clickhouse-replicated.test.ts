/**
 * The migrations' statements on a replicated cluster (layers/clickhouse/replicated.ts): every
 * statement of every migration has a cluster form, in the SQL of ClickHouse 18.16 (explicit
 * Replicated engine arguments, real database and table names); and the URLs of a cluster's
 * replicas (layers/clickhouse/client.ts). test/cluster/clickhouse-replicated.test.ts runs them
 * on a real cluster.
 */
import { describe, expect, it } from "vitest"
import * as fs from "node:fs"
import { migrationStatements } from "../../layers/clickhouse/migrator.ts"
import { parseUrls } from "../../layers/clickhouse/client.ts"
import { clusterStatement, createDatabaseStatement, doneOnClusterCheck, isClusterName } from "../../layers/clickhouse/replicated.ts"

const directory = new URL("../../migrations/clickhouse/", import.meta.url)
const statements = fs.readdirSync(directory).filter((file) => file.endsWith(".sql")).sort()
  .flatMap((file) => migrationStatements(fs.readFileSync(new URL(file, directory), "utf8")))
const cluster = { name: "analytics", database: "gateway" }

describe("the migrations on a replicated ClickHouse cluster", () => {
  it("every statement of every migration runs ON CLUSTER, its tables qualified by the database", () => {
    expect(statements.length).toBeGreaterThan(30)
    for (const statement of statements) {
      const onCluster = clusterStatement(cluster, statement)
      expect(onCluster).toMatch(/^(CREATE TABLE IF NOT EXISTS|CREATE MATERIALIZED VIEW IF NOT EXISTS|ALTER TABLE|DROP TABLE IF EXISTS) `gateway`\.\w+ ON CLUSTER `analytics`/)
    }
  })

  it("every table gets the Replicated variant of its engine, with its own ZooKeeper path and the engine's arguments after", () => {
    const tables = statements.filter((statement) => statement.startsWith("CREATE TABLE"))
    expect(tables.length).toBeGreaterThan(20)
    for (const statement of tables) {
      const table = /^CREATE TABLE IF NOT EXISTS (\w+)/.exec(statement)![1]
      const [, engine, args] = /ENGINE = (\w+)(?:\(([^)]*)\))?/.exec(statement)!
      const replicated = clusterStatement(cluster, statement)
      const expected = [`'/clickhouse/tables/{shard}/gateway/${table}'`, "'{replica}'", ...(args ? [args] : [])].join(", ")
      expect(replicated).toContain(`ENGINE = Replicated${engine}(${expected})`)
    }
    const datapoint = statements.find((statement) => statement.startsWith("CREATE TABLE IF NOT EXISTS Datapoint "))!
    expect(clusterStatement(cluster, datapoint)).toContain(
      "ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/gateway/Datapoint', '{replica}', version) ORDER BY (dataset_name, id)"
    )
  })

  it("a materialized view reads and writes the database's tables on every replica", () => {
    const view = statements.find((statement) => statement.startsWith("CREATE MATERIALIZED VIEW IF NOT EXISTS ChatInferenceById "))!
    const onCluster = clusterStatement(cluster, view)
    expect(onCluster).toMatch(/^CREATE MATERIALIZED VIEW IF NOT EXISTS `gateway`\.ChatInferenceById ON CLUSTER `analytics` TO `gateway`\.InferenceById AS/)
    expect(onCluster).toMatch(/FROM `gateway`\.ChatInference$/)
  })

  it("a statement kind without a cluster form is refused rather than run on one replica", () => {
    expect(() => clusterStatement(cluster, "RENAME TABLE A TO B")).toThrow(/no form for a replicated cluster/)
    expect(() => clusterStatement(cluster, "CREATE TABLE IF NOT EXISTS A (x UInt8) ENGINE = Log")).toThrow(/MergeTree/)
  })

  it("what another gateway migrating at the same time created (or dropped) is found on a replica, not queued again", () => {
    for (const statement of statements) expect(doneOnClusterCheck(cluster, statement), statement).toBeDefined()
    const created = doneOnClusterCheck(cluster, "CREATE TABLE IF NOT EXISTS ModelInference (\n  id UUID\n) ENGINE = ReplacingMergeTree ORDER BY id")!
    expect(created.query).toBe("SELECT count() AS count FROM system.tables WHERE database = 'gateway' AND name = 'ModelInference'")
    expect([created.doneWhen(0), created.doneWhen(1)]).toEqual([false, true])
    const column = doneOnClusterCheck(cluster, "ALTER TABLE ModelInference ADD COLUMN cost Nullable(Float64)")!
    expect(column.query).toBe("SELECT count() AS count FROM system.columns WHERE database = 'gateway' AND table = 'ModelInference' AND name = 'cost'")
    const dropped = doneOnClusterCheck(cluster, "DROP TABLE IF EXISTS ModelInferenceCache")!
    expect([dropped.doneWhen(0), dropped.doneWhen(1)]).toEqual([true, false])
  })

  it("the database is created on every replica, or on the one server", () => {
    expect(createDatabaseStatement("gateway", cluster)).toBe("CREATE DATABASE IF NOT EXISTS `gateway` ON CLUSTER `analytics`")
    expect(createDatabaseStatement("gateway", undefined)).toBe("CREATE DATABASE IF NOT EXISTS `gateway`")
  })

  it("cluster names are those <remote_servers> can hold", () => {
    expect(["analytics", "gateway_cluster", "c-1", "prod.eu"].every(isClusterName)).toBe(true)
    expect(["", "a b", "a`b", "x;DROP"].some(isClusterName)).toBe(false)
  })
})

describe("the URLs of a cluster's replicas", () => {
  it("several comma-separated URLs, each with its credentials, all naming one database", () => {
    const connections = parseUrls("http://u:p@one:8123/gateway, http://two:8124/gateway")
    expect(connections).toEqual([
      { url: "http://one:8123", username: "u", password: "p", database: "gateway" },
      { url: "http://two:8124", username: "default", password: "", database: "gateway" }
    ])
    expect(parseUrls("http://one:8123/gateway")).toHaveLength(1)
    expect(() => parseUrls("http://one:8123/a,http://two:8123/b")).toThrow(/same database/)
  })
})
