/**
 * The one-shot API key commands: `--create-api-key [--expiration <UTC timestamp>] [--admin]` and
 * `--disable-api-key <public_id>` (also `gateway api-key create|disable`), on the use case of
 * src/auth/keyAdministration.ts. What can be checked without the database is, before connecting.
 */
import * as Clock from "effect/Clock"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Result from "effect/Result"
import type * as Scope from "effect/Scope"
import { checkPublicId, createKey, disableKey, keyStoreMissing, parseExpiration } from "../../src/auth/keyAdministration.ts"
import type { ApiKeyStore } from "../../src/auth/store.ts"
import { configuredRelationalStore, migrateRelationalStore } from "../access.ts"
import { type LogFormat, LoggingLive } from "../logging.ts"
import { StartupError } from "../startup.ts"
import { commandEnv } from "./configuration.ts"
import { failWith } from "./exit.ts"

type Env = Readonly<Record<string, string | undefined>>

/** the key store of the relational database, migrated, or an error saying the variable is missing */
const keyStore = (env: Env): Effect.Effect<ApiKeyStore, StartupError, Scope.Scope> =>
  Effect.flatMap(configuredRelationalStore(env), (store) =>
    store === undefined
      ? Effect.fail(new StartupError({ message: keyStoreMissing }))
      : Effect.as(migrateRelationalStore(store), store.keys))

/** Creates a key and returns it (the only time the whole key is ever seen). */
export const createApiKey = (env: Env, expiration: string | undefined, admin = false): Effect.Effect<string, StartupError, Scope.Scope> =>
  Effect.gen(function*() {
    let expiresAt: number | undefined
    if (expiration !== undefined) {
      const parsed = parseExpiration("--expiration", expiration, yield* Clock.currentTimeMillis)
      if (Result.isFailure(parsed)) return yield* new StartupError({ message: parsed.failure.message })
      expiresAt = parsed.success
    }
    const store = yield* keyStore(env)
    const created = yield* Effect.mapError(
      createKey(store, { expiresAt, admin }),
      (error) => new StartupError({ message: `could not store the API key: ${error.message}` })
    )
    return created.apiKey
  })

export const disableApiKey = (env: Env, publicId: string): Effect.Effect<void, StartupError, Scope.Scope> =>
  Effect.gen(function*() {
    const checked = checkPublicId(publicId)
    if (Result.isFailure(checked)) return yield* new StartupError({ message: checked.failure.message })
    const store = yield* keyStore(env)
    yield* Effect.mapError(
      disableKey(store, publicId),
      // an unknown key is the user's mistake, said as it is; the database's failure is said with what failed
      (error) => new StartupError({ message: error._tag === "ServiceUnavailable" ? `could not disable the API key: ${error.message}` : error.message })
    )
    yield* Effect.logInfo(`API key ${publicId} is disabled`)
  })

/** `--create-api-key`: the new key on stdout, alone, so that scripts can capture it */
export const apiKeyCreate = (expiration: Option.Option<string>, admin: boolean, logFormat: LogFormat) =>
  Effect.flatMap(commandEnv, (env) => createApiKey(env, Option.getOrUndefined(expiration), admin)).pipe(
    Effect.flatMap((key) => Console.log(key)),
    Effect.scoped,
    Effect.catchTag("StartupError", (error) => failWith(1, [error.message])),
    Effect.provide(LoggingLive(logFormat))
  )

/** `--disable-api-key <public_id>` */
export const apiKeyDisable = (publicId: string, logFormat: LogFormat) =>
  Effect.flatMap(commandEnv, (env) => disableApiKey(env, publicId)).pipe(
    Effect.scoped,
    Effect.catchTag("StartupError", (error) => failWith(1, [error.message])),
    Effect.provide(LoggingLive(logFormat))
  )
