/**
 * The ClickHouse migration sequence: `migrations/clickhouse/NNNN_name.sql`, applied in version
 * order and recorded in `GatewayMigration`, in the database the URL names (created when
 * missing).
 */
import { readdir, readFile } from "node:fs/promises"
import type * as Effect from "effect/Effect"
import type { StoreError } from "../../src/storeError.ts"
import { type ClickHouse, clientFor } from "./client.ts"
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

/**
 * Applies the pending migrations; the names of those it applied. Concurrent gateways may both
 * apply a migration: every statement is IF NOT EXISTS, or an ADD COLUMN whose column the other
 * gateway added (18.16 has no IF NOT EXISTS there), so that is harmless, and a version
 * recorded twice is read once.
 */
export const migrate = ({ connection, client, run, select }: ClickHouse): Effect.Effect<ReadonlyArray<string>, StoreError> => {
  /** CREATE DATABASE goes through the `default` database: the gateway's may not exist yet. */
  const createDatabase = async (signal: AbortSignal) => {
    const admin = clientFor(connection, "default")
    try {
      await admin.command({ query: `CREATE DATABASE IF NOT EXISTS \`${connection.database}\``, abort_signal: signal })
    } finally {
      await admin.close().catch(() => undefined)
    }
  }

  return run("migrate", async (signal) => {
    const migrations = await loadMigrations()
    await createDatabase(signal)
    await client.command({
      query: "CREATE TABLE IF NOT EXISTS GatewayMigration (version UInt32, name String, applied_at DateTime) " +
        "ENGINE = ReplacingMergeTree ORDER BY version",
      abort_signal: signal
    })
    const recorded = new Set(
      (await select<{ version: number }>("SELECT DISTINCT version FROM GatewayMigration", signal)).map((row) => row.version)
    )
    const applied: Array<string> = []
    for (const migration of migrations) {
      if (recorded.has(migration.version)) continue
      for (const statement of migration.statements) {
        await client.command({ query: statement, abort_signal: signal }).catch((error: unknown) => {
          if (!(/^ALTER TABLE .* ADD COLUMN /s.test(statement) && /column with this name already exists/.test(String(error)))) throw error
        })
      }
      await client.command({
        query: `INSERT INTO GatewayMigration SELECT ${sqlInteger(migration.version)}, ${sqlString(migration.name)}, now()`,
        abort_signal: signal
      })
      applied.push(migration.name)
    }
    return applied
  })
}
