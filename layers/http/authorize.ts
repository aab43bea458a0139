/**
 * Who a request is, for the routes behind a key: the `Authorization` header's key, or else the
 * UI's session cookie. A request on the session is checked against the relational database
 * every time (src/auth/uiSessions.ts: signed out, expired, or its key disabled, it is refused at
 * once), must be an admin's (the session is only given to admin keys, and a key can lose the
 * role since) and, unless it only reads, carry the session's CSRF token in `x-gateway-csrf` (a
 * page of another site can make the browser send the cookie nowhere, SameSite=Strict, and
 * cannot read the token). Groups marked `AdminOnly` require the role of a header's key too.
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type * as HttpServerRequest from "effect/http/HttpServerRequest"
import { csrfHeader, sessionCookie } from "../../src/api/uiSession.ts"
import type { Authentication } from "../../src/auth/authenticate.ts"
import { csrfMatches, type UiSessions } from "../../src/auth/uiSessions.ts"
import { Forbidden } from "../../src/errors.ts"

const readOnlyMethods: ReadonlySet<string> = new Set(["GET", "HEAD", "OPTIONS"])

/** The refusal of a valid key without the role (the sign-in's and every admin route's), naming what requires it. */
export const notAdmin = (publicId: string, purpose = "the UI") =>
  new Forbidden({ message: `API key ${publicId} does not have the admin role, which ${purpose} requires: create one with \`gateway --create-api-key --admin\`` })

const requireAdmin = (auth: Authentication["Service"], purpose?: string) => (publicId: string): Effect.Effect<string, Forbidden> =>
  auth.isAdmin(publicId) ? Effect.succeed(publicId) : Effect.fail(notAdmin(publicId, purpose))

/** the session id the request's cookie holds; undefined when it has none */
export const sessionIdOf = (request: HttpServerRequest.HttpServerRequest): string | undefined => {
  const session = request.cookies[sessionCookie]
  return session === undefined || session === "" ? undefined : session
}

/** The public id of the admin key of the live session `sessionId`, or why not (401, 403, 429, 503). */
export const sessionAuthentication = (sessions: UiSessions["Service"], sessionId: string, address: string | undefined) =>
  Effect.flatMap(sessions.check(sessionId, address), (key) => key.admin ? Effect.succeed(key.publicId) : Effect.fail(notAdmin(key.publicId)))

/**
 * The public id of the request's key, or why it has none (401), or why it may not call the route
 * (403); `adminOnly` is what the route is for when it needs the admin role (the 403 names it).
 * With `apiKeyHeader`, a key in `x-api-key` counts when there is no `Authorization` header
 * (Anthropic's clients send it there).
 */
export const authorize = (
  auth: Authentication["Service"],
  sessions: UiSessions["Service"],
  request: HttpServerRequest.HttpServerRequest,
  adminOnly: string | undefined,
  apiKeyHeader = false
) => {
  // the socket's peer: a client can write X-Forwarded-For, not its address
  const address = Option.getOrUndefined(request.peerAddress)
  const apiKey = apiKeyHeader ? request.headers["x-api-key"] : undefined
  const header = request.headers.authorization ?? (apiKey === undefined ? undefined : `Bearer ${apiKey}`)
  if (header !== undefined) {
    const authenticated = auth.authenticate(header, address)
    return adminOnly !== undefined ? Effect.flatMap(authenticated, requireAdmin(auth, adminOnly)) : authenticated
  }
  // parsed only when there is no header: the API's clients never pay for it
  const sessionId = sessionIdOf(request)
  if (sessionId === undefined) return auth.authenticate(header, address)
  // checked before the database is asked: a forged request costs no query
  if (!readOnlyMethods.has(request.method) && !csrfMatches(request.headers[csrfHeader], sessionId)) {
    return Effect.fail(new Forbidden({ message: `the UI's session needs its CSRF token in the ${csrfHeader} header on a request that changes something` }))
  }
  return sessionAuthentication(sessions, sessionId, address)
}
