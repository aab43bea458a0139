/**
 * `/v1/ui/session`: signs the web UI in and out (src/api/uiSession.ts). Signing in checks the
 * key exactly as a request's `Authorization` header is checked (failed attempts count against
 * the address), then requires the `admin` role, and starts a session (src/auth/uiSessions.ts):
 * its random id goes into an HttpOnly cookie (never the key, and never back to the page's
 * scripts), its CSRF token into a cookie the page reads. Signing out ends the session in the
 * database, so that the cookie is refused everywhere from then on, then expires both cookies.
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as HttpServerRequest from "effect/http/HttpServerRequest"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import { csrfCookie, sessionCookie, SignInRequest, type UiSession } from "../../src/api/uiSession.ts"
import { parseApiKey } from "../../src/auth/apiKey.ts"
import { Authentication } from "../../src/auth/authenticate.ts"
import { AuditLog } from "../../src/audit/service.ts"
import { defaultWorkspace } from "../../src/workspace.ts"
import { identityName } from "../../src/auth/oidcRules.ts"
import type { SessionPrincipal } from "../../src/auth/sessionStore.ts"
import { csrfTokenOf, UiSessions } from "../../src/auth/uiSessions.ts"
import { makeDecoder } from "../../src/decode.ts"
import { InvalidRequest } from "../../src/errors.ts"
import { Configuration } from "../../src/services.ts"
import { notAdmin, sessionAuthentication, sessionIdOf } from "./authorize.ts"
import { jsonResponse, readJsonBody } from "./respond.ts"

const decodeSignIn = makeDecoder(SignInRequest)

/**
 * The largest sign-in body: it is read before anything is authenticated (the key is in it), and
 * `{"api_key": "..."}` is under 200 bytes; a larger one is a 413 before its bytes are read.
 */
export const signInBodyBytes = 4 * 1024

/** who `principal` is, as the audit log says it */
export const principalActor = (principal: SessionPrincipal) =>
  principal.kind === "key"
    ? { workspace: principal.key.workspace, actorKind: "ui_session" as const, actor: principal.key.publicId }
    : { workspace: principal.identity.workspace, actorKind: "oidc" as const, actor: identityName(principal.identity) }

/** Served over HTTPS (directly, or behind a proxy that says so): the cookies are then Secure. */
export const overHttps = (request: HttpServerRequest.HttpServerRequest) =>
  request.headers["x-forwarded-proto"]?.split(",")[0].trim() === "https" || request.url.startsWith("https:")

export const cookiePath = Effect.map(Configuration, (config) => `${config.gateway.basePath}/`)

const answer = (session: UiSession) => jsonResponse(JSON.stringify(session))

/** the answer of a browser signed in with `key`, or as a single sign-on identity */
const signedIn = (principal: SessionPrincipal, oidc: boolean): UiSession =>
  principal.kind === "key"
    ? {
      authentication: true,
      signed_in: true,
      ...oidcField(oidc),
      public_id: principal.key.publicId,
      workspace: principal.key.workspace,
      role: principal.key.global ? "global" : "admin"
    }
    : {
      authentication: true,
      signed_in: true,
      ...oidcField(oidc),
      identity: identityName(principal.identity),
      workspace: principal.identity.workspace,
      role: principal.identity.role
    }

/** `oidc: true` when the UI offers single sign-on (absent otherwise, as before it existed) */
const oidcConfigured = Effect.map(Configuration, (config) => config.gateway.ui.oidc !== undefined)
const oidcField = (oidc: boolean) => oidc ? { oidc: true } : {}

/** without authentication the UI is open, as a global admin's */
const open: UiSession = { authentication: false, signed_in: true, role: "global" }

export const getUiSessionHandler = Effect.gen(function*() {
  const auth = yield* Authentication
  if (!auth.enabled) return answer(open)
  const oidc = yield* oidcConfigured
  const request = yield* HttpServerRequest.HttpServerRequest
  // signed in while the session lasts and its key is still valid and an admin's
  const sessionId = sessionIdOf(request)
  if (sessionId === undefined) return answer({ authentication: true, signed_in: false, ...oidcField(oidc) })
  const check = sessionAuthentication(yield* UiSessions, sessionId, Option.getOrUndefined(request.peerAddress))
  const principal = yield* Effect.orElseSucceed(check, () => undefined)
  return answer(principal === undefined ? { authentication: true, signed_in: false, ...oidcField(oidc) } : signedIn(principal, oidc))
})

export const signInHandler = Effect.gen(function*() {
  const auth = yield* Authentication
  const config = yield* Configuration
  // a form of another site can post text/plain but not JSON (that needs a CORS preflight, which
  // the gateway never grants): no page elsewhere can sign a browser in with a key of its choosing
  const request = yield* HttpServerRequest.HttpServerRequest
  const contentType = request.headers["content-type"] ?? ""
  if (!/^application\/json\b/i.test(contentType.trim())) {
    return yield* new InvalidRequest({ message: `content-type: signing in takes application/json, not "${contentType}"` })
  }
  const { api_key } = yield* readJsonBody(decodeSignIn, Math.min(signInBodyBytes, config.gateway.maxRequestBodyBytes))
  if (!auth.enabled) return answer(open)
  const address = Option.getOrUndefined(request.peerAddress)
  const audit = yield* AuditLog
  // a failed sign-in is recorded with the public id it named (never the secret), when it named one
  const refused = (error: { readonly status: number }, workspace = defaultWorkspace) =>
    audit.record({
      workspace,
      actorKind: "ui_session",
      actor: parseApiKey(api_key.trim())?.publicId,
      action: "ui.sign_in",
      outcome: "failure",
      status: error.status,
      address
    })
  const key = yield* Effect.tapError(auth.authenticate(`Bearer ${api_key.trim()}`, address), (error) => refused(error))
  if (!key.admin) {
    const error = notAdmin(key.publicId)
    yield* refused(error, key.workspace)
    return yield* error
  }
  const sessions = yield* UiSessions
  // the session this browser held before is replaced: ended, so that no copy of its cookie outlives it
  const previous = sessionIdOf(request)
  if (previous !== undefined) yield* sessions.end(previous)
  const lifetimeS = config.gateway.ui.sessionTtlS
  const sessionId = yield* sessions.start({ publicId: key.publicId }, lifetimeS)
  yield* audit.record({ workspace: key.workspace, actorKind: "ui_session", actor: key.publicId, action: "ui.sign_in", outcome: "success", status: 200, address })
  return yield* withSessionCookies(answer(signedIn({ kind: "key", key }, yield* oidcConfigured)), sessionId)
})

/** `response` setting the cookies of the new session `sessionId` (HttpOnly id, readable CSRF token; SameSite=Strict, Secure over HTTPS) */
export const withSessionCookies = (response: HttpServerResponse.HttpServerResponse, sessionId: string) =>
  Effect.gen(function*() {
    const config = yield* Configuration
    const request = yield* HttpServerRequest.HttpServerRequest
    const lifetimeS = config.gateway.ui.sessionTtlS
    const options = { path: yield* cookiePath, sameSite: "strict" as const, secure: overHttps(request), maxAge: `${lifetimeS} seconds` as const }
    return response.pipe(
      HttpServerResponse.setCookieUnsafe(sessionCookie, sessionId, { ...options, httpOnly: true }),
      HttpServerResponse.setCookieUnsafe(csrfCookie, csrfTokenOf(sessionId), options)
    )
  })

export const signOutHandler = Effect.gen(function*() {
  const auth = yield* Authentication
  const path = yield* cookiePath
  if (auth.enabled) {
    // ended in the database first: if that fails (503) the cookies stay, and so does a way to retry
    const request = yield* HttpServerRequest.HttpServerRequest
    const sessionId = sessionIdOf(request)
    if (sessionId !== undefined) {
      const sessions = yield* UiSessions
      const address = Option.getOrUndefined(request.peerAddress)
      // whose session it was, for the audit log (a session already ended names no one)
      const principal = yield* Effect.orElseSucceed(sessions.check(sessionId, address), () => undefined)
      yield* sessions.end(sessionId)
      if (principal !== undefined) {
        yield* (yield* AuditLog).record({
          ...principalActor(principal),
          action: "ui.sign_out",
          outcome: "success",
          status: 200,
          address
        })
      }
    }
  }
  return answer({ authentication: auth.enabled, signed_in: !auth.enabled }).pipe(
    HttpServerResponse.expireCookieUnsafe(sessionCookie, { path }),
    HttpServerResponse.expireCookieUnsafe(csrfCookie, { path })
  )
})
