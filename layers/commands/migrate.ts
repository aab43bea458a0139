/**
 * `gateway migrate` (`--run-migrations-only`, `--run-migrations`) and TensorZero's
 * `--run-clickhouse-migrations` / `--run-postgres-migrations`: the pending migrations of the
 * configured databases applied, then exit.
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type { GatewayConfig } from "../../src/config/types.ts"
import { relationalUrlVariable } from "../../src/relational.ts"
import { analyticsUrlVariable } from "../../src/analytics/stores.ts"
import { configuredRelationalStore, migrateRelationalStore } from "../access.ts"
import { logConfigWarnings } from "../configLoader.ts"
import { LoggingLive } from "../logging.ts"
import { configuredStores, migrateDatabase } from "../observability/index.ts"
import { postgresConnectionsOf } from "../postgres/connectionBudget.ts"
import { commandEnv, configFromFlags, defaultConfig, type SharedFlags } from "./configuration.ts"
import { failWith } from "./exit.ts"

/** the analytical database (observability) or the relational one (API keys, rate limits, tasks) */
export type Database = "analytical" | "relational"

/** the flag that migrates one database alone (TensorZero's names) */
export const migrationFlagOf: Record<Database, string> = { analytical: "--run-clickhouse-migrations", relational: "--run-postgres-migrations" }

const notConfigured = (database: Database, config: GatewayConfig): string =>
  database === "relational"
    ? `${migrationFlagOf.relational}: no relational database is configured: set ${relationalUrlVariable} (a postgres:// or pglite:// URL)`
    : config.gateway.observability.enabled
    ? `${migrationFlagOf.analytical}: no analytical database is configured: set ${analyticsUrlVariable} (a ClickHouse http(s):// URL, or a postgres:// or pglite:// URL)`
    : `${migrationFlagOf.analytical}: observability is off ([gateway.observability] enabled = false): there is no analytical database to migrate`

/**
 * Applies the pending migrations of every configured database, then exits; with `only`, those
 * of the databases it names, each of which must be configured (else exit 1 naming its variable).
 */
export const migrate = (flags: SharedFlags, only?: ReadonlyArray<Database>) =>
  Effect.gen(function*() {
    const named = Option.isSome(flags.configFile) || Option.isSome(flags.configPath) || flags.defaultConfig
    const { config, warnings } = named ? yield* configFromFlags(flags) : yield* defaultConfig
    yield* logConfigWarnings(warnings)
    const env = yield* commandEnv
    const wanted = (database: Database) => only === undefined || only.includes(database)
    const stores = wanted("analytical") ? yield* configuredStores(config, env) : undefined
    const relational = wanted("relational") ? yield* configuredRelationalStore(env, postgresConnectionsOf(config, env).relational) : undefined
    if (only !== undefined) {
      const missing = only.filter((database) => (database === "analytical" ? stores : relational) === undefined)
      if (missing.length > 0) return yield* failWith(1, missing.map((database) => notConfigured(database, config)))
      if (stores?.database.backend === "postgres") {
        // TensorZero's analytical database is ClickHouse; ours may be Postgres: the flag still means "the analytical database"
        yield* Effect.logInfo(`${migrationFlagOf.analytical}: the analytical database is a Postgres database: applying its migrations`)
      }
    } else if (stores === undefined && relational === undefined) {
      yield* Effect.logInfo(
        `no database is configured (${analyticsUrlVariable} and ${relationalUrlVariable} are unset); there are no migrations to apply`
      )
      return
    }
    if (stores !== undefined) yield* migrateDatabase(stores.database)
    if (relational !== undefined) yield* migrateRelationalStore(relational)
  }).pipe(Effect.scoped, Effect.catchTag("StartupError", (error) => failWith(1, [error.message])), Effect.provide(LoggingLive(flags.logFormat)))
