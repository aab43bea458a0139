/**
 * `gateway migrate-data --from <url> --to <postgres url>`: moving to a Postgres server. The
 * target is migrated to the gateway's schema, must hold no data yet, and receives every row of
 * every table of the source's `public` schema (inferences, feedback, datasets, evaluations,
 * batches, DICL examples, API keys, rate limit buckets, task progress), page by page in ctid
 * order, as JSON rows (`row_to_json` there, `json_populate_recordset` here), so that it works
 * across Postgres versions (PGlite 0.5 is PostgreSQL 18; a server may be older) and across the two
 * ways of storing DICL embeddings (a pgvector `vector` is read as `real[]`, which either column
 * type accepts). The durable tasks' own queue (pg-boss's schema) is not moved: let running tasks
 * finish first. The source is a `pglite://` folder (opened, or reached through the gateway
 * holding it) or any Postgres URL.
 */
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import { makePgClient } from "../postgres/client.ts"
import { makePostgresStores } from "../postgres/stores.ts"
import { StartupError } from "../startup.ts"
import { withEmbeddedDatabases } from "./pglite.ts"

/** rows copied per statement */
const pageRows = 500
/** bookkeeping the target has its own of: the migrator's, and the budgets' version (moved by the budgets copied in) */
const skippedTables = new Set(["gateway_migrations", "budgets_version"])

const connect = (url: string, which: string) =>
  Effect.mapError(makePgClient(url, { maxConnections: 1 }), (error) => new StartupError({ message: `${which}: cannot connect: ${error.message}` }))

const quoted = (name: string) => `"${name.replaceAll('"', '""')}"`

export interface CopiedTable {
  readonly table: string
  readonly rows: number
}

export const migrateData = (from: string, to: string): Effect.Effect<ReadonlyArray<CopiedTable>, StartupError, Scope.Scope> =>
  Effect.gen(function*() {
    if (!to.startsWith("postgres://") && !to.startsWith("postgresql://")) {
      return yield* new StartupError({ message: "--to: a postgres:// URL (the server to move to)" })
    }
    const sourceUrl = (yield* withEmbeddedDatabases({ GATEWAY_ANALYTICS_DB_URL: from }, { shareRunning: true })).GATEWAY_ANALYTICS_DB_URL!
    const failed = (what: string) => (error: { readonly message: string }) => new StartupError({ message: `${what}: ${error.message}` })
    // the target gets the gateway's schema first (its migrations)
    const stores = yield* Effect.mapError(makePostgresStores(to), failed("--to"))
    yield* Effect.mapError(stores.database.migrate, failed("--to: migrations"))
    const source = yield* connect(sourceUrl, "--from")
    const target = yield* connect(to, "--to")

    const tables = (yield* Effect.mapError(
      source.unsafe<{ table_name: string }>(
        "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE' ORDER BY table_name"
      ),
      failed("--from")
    )).map((row) => row.table_name).filter((name) => !skippedTables.has(name))

    const copied: Array<CopiedTable> = []
    for (const table of tables) {
      const existing = yield* Effect.mapError(target.unsafe<{ n: string }>(`SELECT count(*) AS n FROM (SELECT 1 FROM ${quoted(table)} LIMIT 1) AS any_row`), failed(`--to: table ${table}`))
      if (Number(existing[0]?.n ?? 0) > 0) {
        return yield* new StartupError({ message: `--to: table ${table} already holds rows: move into a database the gateway has not written to yet` })
      }
      const columns = yield* Effect.mapError(
        source.unsafe<{ column_name: string; udt_name: string }>(
          "SELECT column_name, udt_name FROM information_schema.columns WHERE table_schema = 'public' AND table_name = $1 ORDER BY ordinal_position",
          [table]
        ),
        failed(`--from: table ${table}`)
      )
      const selected = columns.map(({ column_name, udt_name }) =>
        udt_name === "vector" ? `${quoted(column_name)}::real[] AS ${quoted(column_name)}` : quoted(column_name)).join(", ")
      let after = "(0,0)"
      let rows = 0
      for (;;) {
        const page = yield* Effect.mapError(
          source.unsafe<{ at: string; row: string }>(
            `SELECT ctid::text AS at, row_to_json(picked)::text AS row FROM (SELECT ctid, ${selected} FROM ${quoted(table)} WHERE ctid > $1::tid ORDER BY ctid LIMIT ${pageRows}) AS picked`,
            [after]
          ),
          failed(`--from: table ${table}`)
        )
        if (page.length === 0) break
        yield* Effect.mapError(
          target.unsafe(`INSERT INTO ${quoted(table)} SELECT * FROM json_populate_recordset(NULL::${quoted(table)}, $1::json)`, [
            `[${page.map((entry) => entry.row).join(",")}]`
          ]),
          failed(`--to: table ${table}`)
        )
        rows += page.length
        after = page[page.length - 1].at
      }
      copied.push({ table, rows })
    }
    return copied
  })
