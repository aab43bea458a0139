/**
 * The one-shot API key commands: `--create-api-key [--expiration <UTC timestamp>] [--admin]
 * [--workspace <name> | --global]` and
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
import { userInfo } from "node:os"
import { makeAuditLog } from "../../src/audit/service.ts"
import type { RelationalStore } from "../../src/relational.ts"
import { configuredRelationalStore, migrateRelationalStore } from "../access.ts"
import { type LogFormat, LoggingLive } from "../logging.ts"
import { StartupError } from "../startup.ts"
import { commandEnv } from "./configuration.ts"
import { failWith } from "./exit.ts"
import { checkWorkspaceName, defaultWorkspace } from "../../src/workspace.ts"

type Env = Readonly<Record<string, string | undefined>>

/** the relational database, migrated, or an error saying the variable is missing */
const relationalStore = (env: Env): Effect.Effect<RelationalStore, StartupError, Scope.Scope> =>
  Effect.flatMap(configuredRelationalStore(env), (store) =>
    store === undefined
      ? Effect.fail(new StartupError({ message: keyStoreMissing }))
      : Effect.as(migrateRelationalStore(store), store))

/** who runs the command, as the audit log names the command line's acts */
export const operator = () => {
  try {
    return userInfo().username
  } catch {
    return process.env.USER
  }
}

/** records a key command's act in the audit log of `store` */
const audited = (store: RelationalStore, act: { readonly action: string; readonly target: string; readonly workspace: string }) =>
  makeAuditLog(store.audit, Date.now).record({ ...act, actorKind: "cli", actor: operator(), outcome: "success" })

/** What `--create-api-key` was given besides itself. */
export interface KeyOptions {
  readonly expiration?: string | undefined
  readonly admin?: boolean | undefined
  /** the key's workspace (`default` when undefined) */
  readonly workspace?: string | undefined
  /** a global admin (with `admin`; its home workspace is `default`) */
  readonly global?: boolean | undefined
}

/** why `options` do not go together (a usage error), or undefined */
export const keyOptionsConflict = (options: KeyOptions): string | undefined => {
  if (options.global === true && options.admin !== true) return "--global goes with --admin: a global admin is an admin of every workspace"
  if (options.global === true && options.workspace !== undefined) return "--global and --workspace exclude each other: a global admin acts on any workspace"
  return undefined
}

/** Creates a key and returns it (the only time the whole key is ever seen). */
export const createApiKey = (env: Env, options: KeyOptions = {}): Effect.Effect<string, StartupError, Scope.Scope> =>
  Effect.gen(function*() {
    let expiresAt: number | undefined
    if (options.expiration !== undefined) {
      const parsed = parseExpiration("--expiration", options.expiration, yield* Clock.currentTimeMillis)
      if (Result.isFailure(parsed)) return yield* new StartupError({ message: parsed.failure.message })
      expiresAt = parsed.success
    }
    const workspace = checkWorkspaceName(options.workspace ?? defaultWorkspace, "--workspace")
    if (Result.isFailure(workspace)) return yield* new StartupError({ message: workspace.failure.message })
    const relational = yield* relationalStore(env)
    const created = yield* Effect.mapError(
      createKey(relational.keys, { expiresAt, admin: options.admin, global: options.global, workspace: workspace.success }),
      (error) => new StartupError({ message: `could not store the API key: ${error.message}` })
    )
    yield* audited(relational, { action: "api_key.create", target: created.info.publicId, workspace: created.info.workspace })
    return created.apiKey
  })

export const disableApiKey = (env: Env, publicId: string): Effect.Effect<void, StartupError, Scope.Scope> =>
  Effect.gen(function*() {
    const checked = checkPublicId(publicId)
    if (Result.isFailure(checked)) return yield* new StartupError({ message: checked.failure.message })
    const relational = yield* relationalStore(env)
    const disabled = yield* Effect.mapError(
      disableKey(relational.keys, publicId),
      // an unknown key is the user's mistake, said as it is; the database's failure is said with what failed
      (error) => new StartupError({ message: error._tag === "ServiceUnavailable" ? `could not disable the API key: ${error.message}` : error.message })
    )
    yield* audited(relational, { action: "api_key.disable", target: publicId, workspace: disabled.workspace })
    yield* Effect.logInfo(`API key ${publicId} is disabled`)
  })

/** `--create-api-key`: the new key on stdout, alone, so that scripts can capture it */
export const apiKeyCreate = (
  flags: {
    readonly expiration: Option.Option<string>
    readonly admin: boolean
    readonly workspace: Option.Option<string>
    readonly global: boolean
  },
  logFormat: LogFormat
) => {
  const options = { expiration: Option.getOrUndefined(flags.expiration), admin: flags.admin, workspace: Option.getOrUndefined(flags.workspace), global: flags.global }
  const conflict = keyOptionsConflict(options)
  if (conflict !== undefined) return failWith(2, [conflict])
  return Effect.flatMap(commandEnv, (env) => createApiKey(env, options)).pipe(
    Effect.flatMap((key) => Console.log(key)),
    Effect.scoped,
    Effect.catchTag("StartupError", (error) => failWith(1, [error.message])),
    Effect.provide(LoggingLive(logFormat))
  )
}

/** `--disable-api-key <public_id>` */
export const apiKeyDisable = (publicId: string, logFormat: LogFormat) =>
  Effect.flatMap(commandEnv, (env) => disableApiKey(env, publicId)).pipe(
    Effect.scoped,
    Effect.catchTag("StartupError", (error) => failWith(1, [error.message])),
    Effect.provide(LoggingLive(logFormat))
  )
