/**
 * The ClickHouse migration sequence: `migrations/clickhouse/NNNN_name.sql`, applied in version
 * order and recorded in `GatewayMigration`, in the database the URL names (created when
 * missing). With a cluster name (GATEWAY_CLICKHOUSE_CLUSTER_NAME) each statement runs on every
 * replica, its tables replicated (layers/clickhouse/replicated.ts), `GatewayMigration` too, so
 * that a gateway on any replica sees what another applied.
 */
import { readdir, readFile } from "node:fs/promises"
import type * as Effect from "effect/Effect"
import { StoreError } from "../../src/storeError.ts"
import { type ClickHouse, clientFor } from "./client.ts"
import { type Cluster, clusterStatement, createDatabaseStatement, doneOnClusterCheck } from "./replicated.ts"
import { sqlInteger, sqlString } from "./sql.ts"

const migrationsDirectory = new URL("../../migrations/clickhouse/", import.meta.url)

interface Migration {
  readonly version: number
  readonly name: string
  readonly statements: ReadonlyArray<string>
}

/** `NNNN_name.sql` files in version order; statements end with `;` at the end of a line. */
const loadMigrations = async (): Promise<Array<Migration>> => {
  const files = (await readdir(migrationsDirectory)).filter((file) => /^\d+_\w+\.sql$/.test(file)).sort()
  return Promise.all(files.map(async (file) => ({
    version: parseInt(file, 10),
    name: file.slice(0, -".sql".length),
    statements: migrationStatements(await readFile(new URL(file, migrationsDirectory), "utf8"))
  })))
}

/** the statements of a migration file, comments dropped */
export const migrationStatements = (script: string): Array<string> =>
  script.replace(/^\s*--.*$/gm, "").split(/;[ \t]*$/m).map((statement) => statement.trim()).filter((statement) => statement !== "")

/** the bookkeeping table, in a migration's form (rewritten for a cluster like the others) */
const migrationTable = "CREATE TABLE IF NOT EXISTS GatewayMigration (version UInt32, name String, applied_at DateTime) " +
  "ENGINE = ReplacingMergeTree ORDER BY version"

/** another gateway applying the same migration at once added the column first (18.16 has no ADD COLUMN IF NOT EXISTS) */
const addedByAnother = (statement: string, error: unknown) =>
  /^ALTER TABLE .* ADD COLUMN /s.test(statement) && /column with this name already exists/.test(String(error))

/**
 * Applies the pending migrations; the names of those it applied. Concurrent gateways may both
 * apply a migration: every statement is IF NOT EXISTS, or an ADD COLUMN whose column the other
 * gateway added (18.16 has no IF NOT EXISTS there), so that is harmless, and a version
 * recorded twice is read once. On a cluster the same holds: a replica runs the distributed
 * statements one after the other, and an `ON CLUSTER` statement answers once every replica
 * ran it (or failed, or `distributed_ddl_task_timeout` passed); a statement another gateway
 * queued already is not queued again (`doneOnClusterCheck`). A database up to date gets no
 * DDL at all: a gateway starts while a replica is down.
 */
export const migrate = (
  { connections, command, run, select }: ClickHouse,
  clusterName?: string
): Effect.Effect<ReadonlyArray<string>, StoreError> => {
  const database = connections[0].database
  const cluster: Cluster | undefined = clusterName === undefined ? undefined : { name: clusterName, database }
  const forCluster = (statement: string) => (cluster === undefined ? statement : clusterStatement(cluster, statement))

  /**
   * `work` through the `default` database (the gateway's may not exist yet), on each replica in
   * turn until one answers: one of them may be down.
   */
  const throughDefault = async <A>(work: (admin: ReturnType<typeof clientFor>) => Promise<A>, signal: AbortSignal): Promise<A> => {
    let failure: unknown
    for (const connection of connections) {
      const admin = clientFor(connection, "default")
      try {
        return await work(admin)
      } catch (error) {
        failure = error
        if (signal.aborted) break
      } finally {
        await admin.close().catch(() => undefined)
      }
    }
    throw failure
  }

  const createDatabase = (signal: AbortSignal) =>
    throughDefault((admin) => admin.command({ query: createDatabaseStatement(database, cluster), abort_signal: signal }), signal)

  /** a cluster name the servers do not know would otherwise pass unnoticed while no DDL runs */
  const checkCluster = async (signal: AbortSignal) => {
    if (cluster === undefined) return
    const [row] = await throughDefault(async (admin) => {
      const result = await admin.query({
        query: `SELECT count() AS count FROM system.clusters WHERE cluster = ${sqlString(cluster.name)}`,
        format: "JSONEachRow",
        abort_signal: signal
      })
      return result.json<{ count: string }>()
    }, signal)
    if (Number(row.count) === 0) {
      throw new StoreError({ message: `the ClickHouse servers have no cluster \`${cluster.name}\` in their <remote_servers> (GATEWAY_CLICKHOUSE_CLUSTER_NAME)` })
    }
  }

  /** on a cluster, whether another gateway queued `statement` on every replica already */
  const doneByAnother = async (statement: string, signal: AbortSignal): Promise<boolean> => {
    const check = cluster === undefined ? undefined : doneOnClusterCheck(cluster, statement)
    if (check === undefined) return false
    const [row] = await select<{ count: string }>(check.query, signal)
    return check.doneWhen(Number(row.count))
  }

  const recordedVersions = async (signal: AbortSignal) =>
    new Set((await select<{ version: number }>("SELECT DISTINCT version FROM GatewayMigration", signal)).map((row) => row.version))

  return run("migrate", async (signal) => {
    await checkCluster(signal)
    const migrations = await loadMigrations()
    // Up to date: no DDL at all. On a cluster a distributed statement waits for every replica,
    // so a gateway (re)started while one is down would wait for it.
    const already = await recordedVersions(signal).catch(() => new Set<number>())
    if (migrations.every((migration) => already.has(migration.version))) return []
    await createDatabase(signal)
    await command(forCluster(migrationTable), signal)
    const recorded = await recordedVersions(signal)
    const applied: Array<string> = []
    for (const migration of migrations) {
      if (recorded.has(migration.version)) continue
      for (const statement of migration.statements) {
        if (await doneByAnother(statement, signal)) continue
        const query = forCluster(statement)
        await command(query, signal).catch((error: unknown) => {
          if (!addedByAnother(query, error)) throw error
        })
      }
      await command(`INSERT INTO GatewayMigration SELECT ${sqlInteger(migration.version)}, ${sqlString(migration.name)}, now()`, signal)
      applied.push(migration.name)
    }
    return applied
  })
}
