/**
 * A database of its own on the Postgres server of the run, reached through a PgBouncer of its
 * own in transaction pooling mode (scripts/pgbouncer.ts): `url` goes through PgBouncer, `direct`
 * is the same database reached straight (to count its server connections). `drop` stops
 * PgBouncer and drops the database.
 */
import { startPgBouncer } from "../../scripts/pgbouncer.ts"
import { freshDatabase, type TestDatabase } from "./databases.ts"

export interface PooledDatabase extends TestDatabase {
  readonly direct: TestDatabase
}

export const freshDatabaseBehindPgBouncer = async (options: { readonly poolSize?: number } = {}): Promise<PooledDatabase> => {
  const direct = await freshDatabase("postgres")
  const server = new URL(direct.url)
  try {
    const bouncer = await startPgBouncer({ host: server.hostname, port: Number(server.port || 5432) }, options)
    return {
      backend: "postgres",
      name: direct.name,
      url: `${bouncer.url}/${direct.name}`,
      direct,
      drop: async () => {
        await bouncer.stop()
        await direct.drop()
      }
    }
  } catch (error) {
    await direct.drop()
    throw error
  }
}
