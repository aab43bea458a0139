/**
 * The web UI's sessions (`/v1/ui/session`), with authentication on. Signing in with an admin key
 * starts one: its id (32 bytes from the CSPRNG, base64url) goes into the HttpOnly cookie, and the
 * relational database keeps only the id's SHA-256, with the key it was made for and when it ends
 * (absolute, on the database's clock, which every gateway shares). The cookie holds nothing the
 * key can be derived from, nor the key anything the session can.
 *
 * Every request on the cookie asks the database, which answers with the session's key (one
 * indexed query joining the two): signing out (the row deleted) and disabling the key take
 * effect at once in every process of every gateway on that database. No cache, so no
 * invalidation to get right across processes; the cost is one primary-key query per UI request,
 * which is little traffic. A well-formed id that names no live session counts as a failed
 * authentication of the client's address, as a guessed key does (`FailedAttempts`).
 *
 * The CSRF token is bound to the session: an HMAC of a fixed text keyed by the session id. The
 * page reads it from a cookie and echoes it in a header; the gateway recomputes it from the
 * session cookie rather than comparing two cookies, so that a cookie planted by a neighbouring
 * origin (which can set cookies but not read the HttpOnly one) does not pass, and the token
 * dies with its session.
 */
import { createHash, createHmac, randomBytes, timingSafeEqual } from "node:crypto"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import { type RateLimited, ServiceUnavailable, Unauthorized } from "../errors.ts"
import type { StoreError } from "../storeError.ts"
import { tooMany, usableKey } from "./authenticate.ts"
import type { FailedAttempts } from "./failedAttempts.ts"
import type { OidcIdentity } from "./oidcRules.ts"
import type { OidcLogin, SessionPrincipal, UiSessionStore } from "./sessionStore.ts"


/** 32 random bytes, base64url (no padding) */
const sessionIdPattern = /^[A-Za-z0-9_-]{43}$/

export const newSessionId = (): string => randomBytes(32).toString("base64url")

export const hashSessionId = (sessionId: string): Uint8Array => createHash("sha256").update(sessionId, "utf8").digest()

/** the CSRF token of a session: what the page must send back in `x-gateway-csrf` */
export const csrfTokenOf = (sessionId: string): string => createHmac("sha256", sessionId).update("gateway_ui_csrf").digest("base64url")

/** whether `sent` is the CSRF token of `sessionId` (compared in constant time) */
export const csrfMatches = (sent: string | undefined, sessionId: string): boolean => {
  if (sent === undefined || sent === "") return false
  const a = Buffer.from(sent)
  const b = Buffer.from(csrfTokenOf(sessionId))
  return a.length === b.length && timingSafeEqual(a, b)
}

const sessionStoreUnavailable = (what: "start" | "check" | "end", error: StoreError) =>
  new ServiceUnavailable({ message: `cannot ${what} the UI's session: the relational database is unavailable: ${error.message}` })

const signInAgain = (why: string) => new Unauthorized({ message: `${why}: sign in again` })

/** What sessions offer the routes; made by `makeUiSessions` when authentication is on. */
export class UiSessions extends Context.Service<UiSessions, {
  /** starts a session of the key `publicId` (or of a single sign-on `identity`) lasting `lifetimeS` seconds: its id, for the cookie */
  readonly start: (of: { readonly publicId: string } | { readonly identity: OidcIdentity }, lifetimeS: number) => Effect.Effect<string, ServiceUnavailable>
  /** whom the live session `sessionId` is of (a key that may not have the admin role), or why there is none */
  readonly check: (sessionId: string, address: string | undefined) => Effect.Effect<SessionPrincipal, Unauthorized | RateLimited | ServiceUnavailable>
  /** ends the session `sessionId` in every gateway on the database (nothing when it names none) */
  readonly end: (sessionId: string) => Effect.Effect<void, ServiceUnavailable>
  /** keeps a single sign-on under way for `lifetimeS` seconds, for whichever gateway serves its callback */
  readonly saveLogin: (login: OidcLogin, lifetimeS: number) => Effect.Effect<void, ServiceUnavailable>
  /** the sign-on whose state hashes to `stateHash`, taken: a second call with the same state finds nothing */
  readonly takeLogin: (stateHash: Uint8Array) => Effect.Effect<OidcLogin | undefined, ServiceUnavailable>
}>()("gateway/UiSessions") {}

/**
 * The session `sessionId`'s key, or why not: a malformed id (a cookie of an earlier version,
 * which held the key itself) gets a 401 without a query and without counting; a session that
 * ended or never was, or whose key is disabled or expired, counts against the address (taken up
 * front, given back when the session is valid, so that concurrent guesses cannot overshoot).
 */
export const checkSession = (
  sessionId: string,
  address: string | undefined,
  store: UiSessionStore,
  attempts: FailedAttempts | undefined,
  now: number
): Effect.Effect<SessionPrincipal, Unauthorized | RateLimited | ServiceUnavailable> => {
  if (!sessionIdPattern.test(sessionId)) return Effect.fail(signInAgain("the UI's session cookie is not a session of this gateway"))
  const counted = attempts !== undefined && address !== undefined
  if (counted && !attempts.take(address, now)) return Effect.fail(tooMany(attempts, address, now))
  const giveBack = () => {
    if (counted) attempts.giveBack(address, now)
  }
  return store.find(hashSessionId(sessionId)).pipe(
    // the store's failure is not the client's
    Effect.tapError(() => Effect.sync(giveBack)),
    Effect.mapError((error) => sessionStoreUnavailable("check", error)),
    Effect.flatMap((principal) => {
      if (principal === undefined) return Effect.fail(signInAgain("the UI's session has ended (signed out, expired, or unknown)"))
      // a single sign-on session holds what its rule granted; a key's is as good as the key now
      if (principal.kind === "key") {
        const usable = usableKey(principal.key, now)
        if (Result.isFailure(usable)) return Effect.fail(usable.failure)
      }
      giveBack()
      return Effect.succeed(principal)
    })
  )
}

export const makeUiSessions = (store: UiSessionStore, attempts: FailedAttempts | undefined, now: () => number): UiSessions["Service"] => ({
  start: (of, lifetimeS) =>
    Effect.suspend(() => {
      const sessionId = newSessionId()
      return store.create({ idHash: hashSessionId(sessionId), lifetimeS, ...of }).pipe(
        Effect.mapError((error) => sessionStoreUnavailable("start", error)),
        Effect.as(sessionId)
      )
    }),
  check: (sessionId, address) => Effect.suspend(() => checkSession(sessionId, address, store, attempts, now())),
  end: (sessionId) =>
    // a malformed id names no row
    sessionIdPattern.test(sessionId)
      ? Effect.mapError(store.delete(hashSessionId(sessionId)), (error) => sessionStoreUnavailable("end", error))
      : Effect.void,
  saveLogin: (login, lifetimeS) => Effect.mapError(store.saveLogin(login, lifetimeS), (error) => sessionStoreUnavailable("start", error)),
  takeLogin: (stateHash) => Effect.mapError(store.takeLogin(stateHash), (error) => sessionStoreUnavailable("start", error))
})

