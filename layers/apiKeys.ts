/**
 * The one-shot API key commands: `--create-api-key [--expiration <UTC timestamp>]` and
 * `--disable-api-key <public_id>` (also `gateway api-key create|disable`).
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import { generateApiKey, publicIdPattern } from "../src/auth/apiKey.ts"
import { relationalUrlVariable } from "../src/auth/store.ts"
import type { RelationalStore } from "../src/relational.ts"
import { parseRfc3339 } from "../src/time.ts"
import { configuredRelationalStore, migrateRelationalStore } from "./access.ts"
import { StartupError } from "./startup.ts"

type Env = Readonly<Record<string, string | undefined>>

/** An expiration given on the command line: an RFC 3339 time with its offset, in the future. */
export const parseExpiration = (text: string, now: number): number | StartupError => {
  const time = parseRfc3339(text)
  if (time === undefined) {
    return new StartupError({ message: `--expiration: expected a UTC timestamp such as 2026-12-31T23:59:59Z, got "${text}"` })
  }
  if (time <= now) return new StartupError({ message: `--expiration: ${text} is in the past` })
  return time
}

/** the relational store, migrated, or an error saying the variable is missing */
const relationalStore = (env: Env): Effect.Effect<RelationalStore, StartupError, Scope.Scope> =>
  Effect.flatMap(configuredRelationalStore(env), (store) =>
    store === undefined
      ? Effect.fail(new StartupError({ message: `${relationalUrlVariable} is not set: API keys live in Postgres; set it to a postgres:// URL` }))
      : Effect.as(migrateRelationalStore(store), store))

/** Creates a key and returns it (the only time the whole key is ever seen). */
export const createApiKey = (env: Env, expiration: string | undefined): Effect.Effect<string, StartupError, Scope.Scope> =>
  Effect.gen(function*() {
    let expiresAt: number | undefined
    if (expiration !== undefined) {
      const parsed = parseExpiration(expiration, yield* Clock.currentTimeMillis)
      if (parsed instanceof StartupError) return yield* parsed
      expiresAt = parsed
    }
    const store = yield* relationalStore(env)
    const key = generateApiKey()
    yield* Effect.mapError(
      store.keys.create({ publicId: key.publicId, secretHash: key.secretHash, expiresAt }),
      (error) => new StartupError({ message: `could not store the API key: ${error.message}` })
    )
    return key.key
  })

export const disableApiKey = (env: Env, publicId: string): Effect.Effect<void, StartupError, Scope.Scope> =>
  Effect.gen(function*() {
    if (!publicIdPattern.test(publicId)) {
      return yield* new StartupError({ message: `"${publicId}" is not a public id (12 lowercase letters and digits)` })
    }
    const store = yield* relationalStore(env)
    const found = yield* Effect.mapError(
      store.keys.disable(publicId),
      (error) => new StartupError({ message: `could not disable the API key: ${error.message}` })
    )
    if (!found) return yield* new StartupError({ message: `no API key has the public id ${publicId}` })
    yield* Effect.logInfo(`API key ${publicId} is disabled`)
  })
