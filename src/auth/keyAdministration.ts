/**
 * Managing API keys: the use case the command line (layers/commands/apiKeys.ts) and the UI's routes
 * (layers/http/uiApiKeys.ts) share. What an expiration and a public id must be, creating a key
 * (the only moment its whole text exists), disabling one. Failures are the gateway's errors; the
 * command line words them as its own.
 */
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import { InvalidRequest, NotFound, ServiceUnavailable } from "../errors.ts"
import type { StoreError } from "../storeError.ts"
import { parseRfc3339 } from "../time.ts"
import { generateApiKey, publicIdPattern } from "./apiKey.ts"
import { type ApiKeyInfo, type ApiKeyStore } from "./store.ts"
import { relationalUrlVariable } from "../relational.ts"

/** why keys cannot be managed at all: there is no relational database to hold them */
export const keyStoreMissing = `${relationalUrlVariable} is not set: API keys live in Postgres; set it to a postgres:// URL`

/** The store, or the 503 saying it is not configured. */
export const requireKeyStore = (store: ApiKeyStore | undefined): Effect.Effect<ApiKeyStore, ServiceUnavailable> =>
  store === undefined ? Effect.fail(new ServiceUnavailable({ message: keyStoreMissing })) : Effect.succeed(store)

/**
 * An expiration given as `field`: an RFC 3339 time with its offset, in the future (epoch ms), or
 * why not. A key that is already expired when made would be a key nobody can use.
 */
export const parseExpiration = (field: string, text: string, now: number): Result.Result<number, InvalidRequest> => {
  const time = parseRfc3339(text)
  if (time === undefined) {
    return Result.fail(new InvalidRequest({ message: `${field}: expected a UTC timestamp such as 2026-12-31T23:59:59Z, got "${text}"` }))
  }
  if (time <= now) return Result.fail(new InvalidRequest({ message: `${field}: ${text} is in the past` }))
  return Result.succeed(time)
}

/** `publicId` when it is one (checked before the store is asked), or why not. */
export const checkPublicId = (publicId: string): Result.Result<string, InvalidRequest> =>
  publicIdPattern.test(publicId)
    ? Result.succeed(publicId)
    : Result.fail(new InvalidRequest({ message: `"${publicId}" is not a public id (12 letters and digits)` }))

const unavailable = (error: StoreError) => new ServiceUnavailable({ message: `the relational database is unavailable: ${error.message}` })

/** the key as stored, without the hash of its secret */
const stored = (store: ApiKeyStore, publicId: string): Effect.Effect<ApiKeyInfo, NotFound | ServiceUnavailable> =>
  store.find(publicId).pipe(
    Effect.mapError(unavailable),
    Effect.flatMap((key) => {
      if (key === undefined) return Effect.fail(new NotFound({ message: `no API key has the public id ${publicId}` }))
      const { secretHash: _, ...info } = key
      return Effect.succeed(info)
    })
  )

/** The keys of `workspace` (every key when undefined), newest first, without the hashes of their secrets. */
export const listKeys = (store: ApiKeyStore, workspace: string | undefined): Effect.Effect<ReadonlyArray<ApiKeyInfo>, ServiceUnavailable> =>
  Effect.mapError(store.list(workspace), unavailable)

/** The workspaces that have keys, and `default`, sorted. */
export const listWorkspaces = (store: ApiKeyStore): Effect.Effect<ReadonlyArray<string>, ServiceUnavailable> =>
  Effect.mapError(store.workspaces(), unavailable)

export interface CreatedApiKey {
  /** the whole key: shown to its owner now, never again (only the hash of its secret is kept) */
  readonly apiKey: string
  readonly info: ApiKeyInfo
}

/**
 * Makes a key of `workspace` (a name `checkWorkspaceName` accepted), with the `admin` role when asked
 * (`global`: a global admin); `expiresAt` is a time `parseExpiration` accepted.
 */
export const createKey = (
  store: ApiKeyStore,
  options: {
    readonly workspace: string
    readonly expiresAt?: number | undefined
    readonly admin?: boolean | undefined
    readonly global?: boolean | undefined
  }
): Effect.Effect<CreatedApiKey, ServiceUnavailable> => {
  const key = generateApiKey()
  const global = options.global === true
  return store.create({
    publicId: key.publicId,
    secretHash: key.secretHash,
    expiresAt: options.expiresAt,
    admin: options.admin === true || global,
    workspace: options.workspace,
    global
  }).pipe(
    Effect.mapError(unavailable),
    // read back: the database's clock gave it its creation time
    Effect.andThen(stored(store, key.publicId)),
    Effect.catchTag("NotFound", () => Effect.fail(new ServiceUnavailable({ message: `the API key ${key.publicId} was not found right after it was stored` }))),
    Effect.map((info) => ({ apiKey: key.key, info }))
  )
}

/**
 * Disables a key for good: requests with it are refused once the gateways' key caches let go
 * of it (`[gateway.auth] cache_ttl_ms`). Disabling a disabled key keeps its first time.
 */
export const disableKey = (
  store: ApiKeyStore,
  publicId: string,
  /** the workspace the key must be in (another workspace's key answers as no key); undefined: any */
  workspace?: string | undefined
): Effect.Effect<ApiKeyInfo, InvalidRequest | NotFound | ServiceUnavailable> => {
  const checked = checkPublicId(publicId)
  if (Result.isFailure(checked)) return Effect.fail(checked.failure)
  return store.disable(publicId, workspace).pipe(
    Effect.mapError(unavailable),
    Effect.flatMap((found) => found ? stored(store, publicId) : Effect.fail(new NotFound({ message: `no API key has the public id ${publicId}` })))
  )
}
