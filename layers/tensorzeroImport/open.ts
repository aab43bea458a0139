/**
 * The TensorZero database `--from` names, opened for reading: an http(s) URL is its ClickHouse
 * (clickhouseSource.ts), a postgres:// one its Postgres (postgresSource.ts); a `pglite://`
 * folder is opened as an embedded Postgres (how a test, or a copy, may hold one).
 */
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import type { TensorZeroSource } from "../../src/tensorzeroImport/source.ts"
import { analyticsUrlVariable } from "../../src/analytics/stores.ts"
import { withEmbeddedDatabases } from "../embedded/pglite.ts"
import { StartupError } from "../startup.ts"

/** the URL without its credentials, query or fragment: what the output and the saved positions name it by */
export const sourceName = (url: string): string => {
  try {
    const parsed = new URL(url)
    return `${parsed.protocol}//${parsed.host}${parsed.pathname}`
  } catch {
    return url.replace(/\/\/[^@/]*@/, "//")
  }
}

const failed = (error: { readonly message: string }) => new StartupError({ message: `--from: ${error.message}` })

export const openTensorZeroSource = (url: string): Effect.Effect<TensorZeroSource, StartupError, Scope.Scope> =>
  Effect.gen(function*() {
    if (/^https?:\/\//i.test(url)) {
      const { openTensorZeroClickHouse } = yield* Effect.promise(() => import("./clickhouseSource.ts"))
      return yield* Effect.mapError(openTensorZeroClickHouse(url), failed)
    }
    if (/^(postgres(ql)?|pglite):\/\//i.test(url)) {
      // an embedded folder is served like the gateway's own (the variable is only how the helper is told)
      const served = (yield* withEmbeddedDatabases({ [analyticsUrlVariable]: url }, { shareRunning: true }))[analyticsUrlVariable]!
      const { openTensorZeroPostgres } = yield* Effect.promise(() => import("./postgresSource.ts"))
      return yield* Effect.mapError(openTensorZeroPostgres(served), failed)
    }
    return yield* new StartupError({ message: "--from: a TensorZero database: its Postgres (postgres://...) or its ClickHouse (http(s)://...)" })
  })
