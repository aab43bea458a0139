/**
 * `gateway import-tensorzero --from <url> [--to <url>] [--workspace <name>] [--dry-run]
 * [--strict] [--copy-files]`: a TensorZero deployment's stored data into this gateway's databases
 * (layers/tensorzeroImport/). The destination is GATEWAY_ANALYTICS_DB_URL and
 * GATEWAY_RELATIONAL_DB_URL, or `--to` for both (a ClickHouse `--to` is the analytics database
 * alone: keys still go to GATEWAY_RELATIONAL_DB_URL). The destination is migrated first.
 */
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import { analyticsUrlVariable } from "../../src/analytics/stores.ts"
import { relationalUrlVariable } from "../../src/relational.ts"
import { workspaceNameProblem } from "../../src/workspace.ts"
import type { TensorZeroSource } from "../../src/tensorzeroImport/source.ts"
import { configuredRelationalStore, migrateRelationalStore } from "../access.ts"
import { withEmbeddedDatabases } from "../embedded/pglite.ts"
import { LoggingLive } from "../logging.ts"
import { configuredStores, migrateDatabase } from "../observability/index.ts"
import { StartupError } from "../startup.ts"
import { makeWriters } from "../tensorzeroImport/destination.ts"
import { makeFileCopier } from "../tensorzeroImport/files.ts"
import { filesystemStore } from "../objectStorage/filesystem.ts"
import { s3Store } from "../objectStorage/s3.ts"
import type { ObjectStorageSettings } from "../../src/config/types.ts"
import { clickHousePositions, type ImportPositions, postgresPositions } from "../tensorzeroImport/positions.ts"
import { summaryText } from "../tensorzeroImport/progress.ts"
import { runImport } from "../tensorzeroImport/run.ts"
import { openTensorZeroSource, sourceName } from "../tensorzeroImport/open.ts"
import { configFromFlags, defaultConfig, type SharedFlags } from "./configuration.ts"
import { failWith } from "./exit.ts"

export interface ImportFlags extends SharedFlags {
  readonly from: string
  readonly to: Option.Option<string>
  readonly workspace: string
  readonly dryRun: boolean
  readonly strict: boolean
  readonly pageRows: Option.Option<number>
  readonly copyFiles: boolean
}

const isPostgresLike = (url: string) => /^(postgres(ql)?|pglite):\/\//i.test(url)

/** the destination's variables: `--to` for both databases (a ClickHouse one for the analytics database alone), else the environment's */
const destinationEnv = (to: string | undefined): Readonly<Record<string, string | undefined>> =>
  to === undefined
    ? process.env
    : { ...process.env, [analyticsUrlVariable]: to, [relationalUrlVariable]: isPostgresLike(to) ? to : process.env[relationalUrlVariable] }

/** `--copy-files`: into the configuration's `[object_storage]`, which it needs */
const fileCopier = (settings: ObjectStorageSettings | undefined) => {
  if (settings === undefined || settings.kind.type === "disabled") {
    return Effect.fail(new StartupError({ message: "--copy-files: the configuration (--config-file) has no [object_storage] to copy the files into" }))
  }
  const store = settings.kind.type === "filesystem" ? Effect.succeed(filesystemStore(settings.kind.path)) : s3Store(settings)
  return Effect.map(store, (destination) => makeFileCopier(destination, settings))
}

const opened = (flags: ImportFlags, source: TensorZeroSource) =>
  Effect.gen(function*() {
    const named = Option.isSome(flags.configFile) || Option.isSome(flags.configPath) || flags.defaultConfig
    const { config } = named ? yield* configFromFlags(flags) : yield* defaultConfig
    // before the destination is touched: the flag needs a storage to copy into
    const files = flags.copyFiles ? yield* fileCopier(config.objectStorage) : undefined
    const env = yield* withEmbeddedDatabases(destinationEnv(Option.getOrUndefined(flags.to)), { shareRunning: true })
    const stores = yield* configuredStores(config, env)
    if (stores === undefined) {
      return yield* new StartupError({ message: `no database to import into: pass --to <url>, or set ${analyticsUrlVariable} (and ${relationalUrlVariable} for the API keys)` })
    }
    const relational = yield* configuredRelationalStore(env)
    yield* migrateDatabase(stores.database)
    if (relational !== undefined) yield* migrateRelationalStore(relational)
    const analyticsUrl = env[analyticsUrlVariable]!
    const positions: ImportPositions = yield* Effect.mapError(
      stores.database.backend === "clickhouse" ? clickHousePositions(analyticsUrl) : postgresPositions(analyticsUrl),
      (error) => new StartupError({ message: `${analyticsUrlVariable}: ${error.message}` })
    )
    yield* Console.log(`into ${stores.database.backend} (${sourceName(analyticsUrl)})${relational === undefined ? ", without a relational database: API keys are skipped" : ""}, workspace ${flags.workspace}`)
    return { writers: makeWriters(stores, relational, flags.workspace, files), positions }
  })

const importing = (flags: ImportFlags): Effect.Effect<void, StartupError, Scope.Scope> =>
  Effect.gen(function*() {
    const problem = workspaceNameProblem(flags.workspace)
    if (problem !== undefined) return yield* new StartupError({ message: `--${problem}` })
    if (Option.isSome(flags.pageRows) && !(flags.pageRows.value >= 1 && flags.pageRows.value <= 100_000)) {
      return yield* new StartupError({ message: "--page-rows: a number of rows from 1 to 100000" })
    }
    const source = yield* openTensorZeroSource(flags.from)
    yield* Console.log(`reading ${source.description} at ${sourceName(flags.from)}${flags.dryRun ? " (dry run: nothing is written)" : ""}`)
    const destination = flags.dryRun ? undefined : yield* opened(flags, source)
    const tallies = yield* runImport({
      source,
      sourceName: sourceName(flags.from),
      writers: destination?.writers,
      positions: destination?.positions,
      workspace: flags.workspace,
      strict: flags.strict,
      pageSize: Option.getOrUndefined(flags.pageRows),
      output: { write: (text) => process.stdout.write(text), isTTY: process.stdout.isTTY === true }
    }).pipe(Effect.mapError((error) => new StartupError({ message: error.message })))
    yield* Console.log(`\n${summaryText(tallies, flags.dryRun)}`)
  })

export const importTensorzero = (flags: ImportFlags) =>
  importing(flags).pipe(
    Effect.scoped,
    Effect.catchTag("StartupError", (error) => failWith(1, [error.message])),
    Effect.provide(LoggingLive(flags.logFormat))
  )
