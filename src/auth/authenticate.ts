/**
 * Authentication (spec 5): `Authorization: Bearer sk-gw-<public_id>-<secret>` on every
 * endpoint but /status and /health, when `[gateway.auth] enabled = true` (or `sk-t0-...`, a key
 * imported from TensorZero, which works only with that prefix). Each way a request
 * can fail has its own message; none repeats the secret. Failed attempts with well-formed keys
 * are limited per client address (`max_failed_attempts_per_minute`), past which the address
 * gets 429s before the key store is asked.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import { RateLimited, ServiceUnavailable, Unauthorized } from "../errors.ts"
import type { StoreError } from "../storeError.ts"
import { type ParsedApiKey, parseApiKey, secretMatches } from "./apiKey.ts"
import type { FailedAttempts } from "./failedAttempts.ts"
import type { ApiKeyInfo, ApiKeyStore, StoredApiKey } from "./store.ts"

export class Authentication extends Context.Service<Authentication, {
  readonly enabled: boolean
  /** the request's valid key (its role and workspace with it); `address` is the client's (the socket's peer) */
  readonly authenticate: (
    authorization: string | undefined,
    address: string | undefined
  ) => Effect.Effect<ApiKeyInfo, Unauthorized | RateLimited | ServiceUnavailable>
}>()("gateway/Authentication") {}

/** The API keys of the relational database, for the UI's key management: undefined without one. */
export class ApiKeys extends Context.Service<ApiKeys, { readonly store: ApiKeyStore | undefined }>()("gateway/ApiKeys") {}

const unauthorized = (message: string): Result.Result<never, Unauthorized> => Result.fail(new Unauthorized({ message }))

/** The key an Authorization header names, or why it names none. */
export const parseAuthorization = (authorization: string | undefined): Result.Result<ParsedApiKey, Unauthorized> => {
  if (authorization === undefined || authorization.trim() === "") {
    return unauthorized(`missing API key: send the header "Authorization: Bearer <API key>"`)
  }
  const match = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(authorization)
  if (match === null) return unauthorized(`the Authorization header must be "Bearer <API key>"`)
  const parsed = parseApiKey(match[1])
  return parsed === undefined ? unauthorized("malformed API key: expected sk-gw-<12-character public id>-<secret>") : Result.succeed(parsed)
}

/** A key found in the store if it is usable at `now` (neither disabled nor expired), or why not. */
export const usableKey = <Key extends ApiKeyInfo>(key: Key, now: number): Result.Result<Key, Unauthorized> => {
  if (key.disabledAt !== undefined) return unauthorized(`API key ${key.publicId} is disabled`)
  if (key.expiresAt !== undefined && key.expiresAt <= now) {
    return unauthorized(`API key ${key.publicId} expired at ${new Date(key.expiresAt).toISOString()}`)
  }
  return Result.succeed(key)
}

/** `key` is the key `parsed` names, with its issuer's prefix and its secret (whether usable or not) */
export const sameKey = (parsed: ParsedApiKey, key: StoredApiKey): boolean =>
  key.issuer === parsed.issuer && secretMatches(parsed.secret, key.secretHash)

/** The stored key of `parsed` if it (undefined when there is none) lets `parsed` in, or why not. */
export const verifyKey = (parsed: ParsedApiKey, key: StoredApiKey | undefined, now: number): Result.Result<ApiKeyInfo, Unauthorized> => {
  // an unknown id, another issuer's prefix and a wrong secret look the same from outside
  if (key === undefined || !sameKey(parsed, key)) return unauthorized("unknown API key")
  return usableKey(key, now)
}

const storeUnavailable = (error: StoreError) =>
  new ServiceUnavailable({ message: `cannot check the API key: the relational database is unavailable: ${error.message}` })


/**
 * Checks an Authorization header against the key it names, found by `find` (which may
 * answer from a short-lived cache).
 */
export const checkAuthorization = (
  authorization: string | undefined,
  find: (publicId: string) => Effect.Effect<StoredApiKey | undefined, StoreError>,
  now: number
): Effect.Effect<ApiKeyInfo, Unauthorized | ServiceUnavailable> => {
  const header = parseAuthorization(authorization)
  if (Result.isFailure(header)) return Effect.fail(header.failure)
  const parsed = header.success
  return find(parsed.publicId).pipe(
    Effect.mapError(storeUnavailable),
    Effect.flatMap((key) => Effect.fromResult(verifyKey(parsed, key, now)))
  )
}

export const tooMany = (attempts: FailedAttempts, address: string, now: number) => {
  const seconds = attempts.retryAfterS(address, now)
  return new RateLimited({
    message: `too many failed authentications from this address (at most ${attempts.perMinute} a minute): retry in ${seconds} s`,
    retryAfterS: seconds
  })
}

/** The keys as one process knows them: a short-lived cache in front of the key store. */
export interface KeyLookup {
  /** the cached answer for `publicId` while it is fresh (`key` undefined: no such key), or undefined when not cached */
  readonly cached: (publicId: string) => { readonly key: StoredApiKey | undefined } | undefined
  /** the key found for `publicId` before, cached however long ago (undefined: none known) */
  readonly known: (publicId: string) => StoredApiKey | undefined
  /** a query for `publicId` is under way: another ask joins it, at no cost to the store */
  readonly asking: (publicId: string) => boolean
  /** asks the store, and caches the answer */
  readonly find: (publicId: string) => Effect.Effect<StoredApiKey | undefined, StoreError>
}

/** the cached answer while it is fresh, else the store's */
const cachedFind = (lookup: KeyLookup) => (publicId: string): Effect.Effect<StoredApiKey | undefined, StoreError> => {
  const hit = lookup.cached(publicId)
  return hit === undefined ? lookup.find(publicId) : Effect.succeed(hit.key)
}

/**
 * `checkAuthorization`, with the store guarded against keys guessed by the thousand. A failed
 * check of a well-formed key counts against the client's address (a missing or malformed
 * header costs nothing, so it does not); an address with no attempts left gets a 429 instead
 * of a 401, and its keys reach the store only when they are known to this process with the
 * right secret (so a valid key in use keeps working there, and a 429 says nothing of whether a
 * key exists). A query for a key not known takes its attempt up front, given back when the key
 * is valid, so that concurrent guesses cannot overshoot the limit.
 */
export const authenticateGuarded = (
  authorization: string | undefined,
  address: string | undefined,
  lookup: KeyLookup,
  attempts: FailedAttempts | undefined,
  now: number
): Effect.Effect<ApiKeyInfo, Unauthorized | RateLimited | ServiceUnavailable> => {
  if (attempts === undefined || address === undefined) return checkAuthorization(authorization, cachedFind(lookup), now)
  const header = parseAuthorization(authorization)
  if (Result.isFailure(header)) return Effect.fail(header.failure)
  const parsed = header.success
  const { publicId } = parsed
  const hit = lookup.cached(publicId)
  /** a failure counted against the address: a 401, or a 429 once it has no attempts left */
  const counted = (outcome: Result.Result<ApiKeyInfo, Unauthorized>): Effect.Effect<ApiKeyInfo, Unauthorized | RateLimited> =>
    Result.isSuccess(outcome) || attempts.take(address, now) ? Effect.fromResult(outcome) : Effect.fail(tooMany(attempts, address, now))
  if (hit !== undefined) return counted(verifyKey(parsed, hit.key, now))
  const known = lookup.known(publicId)
  // a query under way costs nothing more; nor does a key this process found before asked with its secret
  if (lookup.asking(publicId) || (known !== undefined && sameKey(parsed, known))) {
    return Effect.flatMap(Effect.mapError(lookup.find(publicId), storeUnavailable), (key) => counted(verifyKey(parsed, key, now)))
  }
  if (!attempts.take(address, now)) return Effect.fail(tooMany(attempts, address, now))
  return lookup.find(publicId).pipe(
    // the store's failure is not the client's
    Effect.tapError(() => Effect.sync(() => attempts.giveBack(address, now))),
    Effect.mapError(storeUnavailable),
    Effect.flatMap((key) => {
      const outcome = verifyKey(parsed, key, now)
      if (Result.isSuccess(outcome)) attempts.giveBack(address, now)
      return Effect.fromResult(outcome)
    })
  )
}
