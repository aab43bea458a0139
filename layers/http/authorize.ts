/**
 * Who a request is, for the routes behind a key: the `Authorization` header's key, or else the
 * UI's session cookie. A request on the session must be an admin's (the cookie is only given to
 * admin keys, and a key can lose the role or be disabled since) and, unless it only reads, carry
 * the session's CSRF token in `x-gateway-csrf` (double submit: a page of another site can make the
 * browser send the cookie nowhere, SameSite=Strict, and cannot read the token). Groups marked
 * `AdminOnly` require the role of a header's key too.
 */
import { timingSafeEqual } from "node:crypto"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type * as HttpServerRequest from "effect/http/HttpServerRequest"
import { csrfCookie, csrfHeader, sessionCookie } from "../../src/api/uiSession.ts"
import type { Authentication } from "../../src/auth/authenticate.ts"
import { Forbidden } from "../../src/errors.ts"

const readOnlyMethods: ReadonlySet<string> = new Set(["GET", "HEAD", "OPTIONS"])

const sameToken = (sent: string | undefined, expected: string | undefined) => {
  if (sent === undefined || expected === undefined || sent === "") return false
  const a = Buffer.from(sent)
  const b = Buffer.from(expected)
  return a.length === b.length && timingSafeEqual(a, b)
}

/** The refusal of a valid key without the role (the sign-in's and every admin route's), naming what requires it. */
export const notAdmin = (publicId: string, purpose = "the UI") =>
  new Forbidden({ message: `API key ${publicId} does not have the admin role, which ${purpose} requires: create one with \`gateway --create-api-key --admin\`` })

const requireAdmin = (auth: Authentication["Service"], purpose?: string) => (publicId: string): Effect.Effect<string, Forbidden> =>
  auth.isAdmin(publicId) ? Effect.succeed(publicId) : Effect.fail(notAdmin(publicId, purpose))

/**
 * The public id of the admin key the UI's session cookie holds, or why it is not one (401, 403);
 * undefined when the request has no session.
 */
export const sessionAuthentication = (auth: Authentication["Service"], request: HttpServerRequest.HttpServerRequest, address: string | undefined) => {
  const session = request.cookies[sessionCookie]
  if (session === undefined || session === "") return undefined
  return Effect.flatMap(auth.authenticate(`Bearer ${session}`, address), requireAdmin(auth))
}

/**
 * The public id of the request's key, or why it has none (401), or why it may not call the route
 * (403); `adminOnly` is what the route is for when it needs the admin role (the 403 names it).
 */
export const authorize = (auth: Authentication["Service"], request: HttpServerRequest.HttpServerRequest, adminOnly: string | undefined) => {
  // the socket's peer: a client can write X-Forwarded-For, not its address
  const address = Option.getOrUndefined(request.peerAddress)
  const header = request.headers.authorization
  if (header !== undefined) {
    const authenticated = auth.authenticate(header, address)
    return adminOnly !== undefined ? Effect.flatMap(authenticated, requireAdmin(auth, adminOnly)) : authenticated
  }
  // parsed only when there is no header: the API's clients never pay for it
  const session = sessionAuthentication(auth, request, address)
  if (session === undefined) return auth.authenticate(header, address)
  if (!readOnlyMethods.has(request.method) && !sameToken(request.headers[csrfHeader], request.cookies[csrfCookie])) {
    return Effect.fail(new Forbidden({ message: `the UI's session needs its CSRF token in the ${csrfHeader} header on a request that changes something` }))
  }
  return session
}
