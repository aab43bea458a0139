/**
 * `gateway migrate-data --from <pglite:// or postgres://> --to <postgres://>`: the copy
 * (layers/embedded/migrateData.ts, loaded by this command only), a line per table copied.
 */
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import { type LogFormat, LoggingLive } from "../logging.ts"
import { failWith } from "./exit.ts"

export const migrateData = (from: string, to: string, logFormat: LogFormat) =>
  Effect.gen(function*() {
    const { migrateData: copyRows } = yield* Effect.promise(() => import("../embedded/migrateData.ts"))
    const copied = yield* Effect.scoped(copyRows(from, to))
    for (const { table, rows } of copied) yield* Console.log(`${table}: ${rows} rows`)
  }).pipe(Effect.catchTag("StartupError", (error) => failWith(1, [error.message])), Effect.provide(LoggingLive(logFormat)))
