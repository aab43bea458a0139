/**
 * Who a request is, for the routes behind a key: the `Authorization` header's key, or else the
 * UI's session cookie. A request on the session is checked against the relational database
 * every time (src/auth/uiSessions.ts: signed out, expired, or its key disabled, it is refused at
 * once), must be an admin's (the session is only given to admin keys, and a key can lose the
 * role since) and, unless it only reads, carry the session's CSRF token in `x-gateway-csrf` (a
 * page of another site can make the browser send the cookie nowhere, SameSite=Strict, and
 * cannot read the token). Groups marked `AdminOnly` require the role of a header's key too, and
 * those marked `GlobalAdminOnly` a global admin's. The answer is the request's `Caller`: its key,
 * role and the workspace it acts on (src/auth/caller.ts decides which).
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type * as HttpServerRequest from "effect/http/HttpServerRequest"
import { csrfHeader, sessionCookie } from "../../src/api/uiSession.ts"
import type { Authentication } from "../../src/auth/authenticate.ts"
import { callerOf, oidcCallerOf } from "../../src/auth/caller.ts"
import { identityName } from "../../src/auth/oidcRules.ts"
import type { SessionPrincipal } from "../../src/auth/sessionStore.ts"
import type { ApiKeyInfo } from "../../src/auth/store.ts"
import { csrfMatches, type UiSessions } from "../../src/auth/uiSessions.ts"
import { Forbidden, type InvalidRequest } from "../../src/errors.ts"
import { type Caller, isAdmin, workspaceHeader } from "../../src/workspace.ts"

const readOnlyMethods: ReadonlySet<string> = new Set(["GET", "HEAD", "OPTIONS"])

/** The refusal of a valid key without the role (the sign-in's and every admin route's), naming what requires it. */
export const notAdmin = (publicId: string, purpose = "the UI") =>
  new Forbidden({ message: `API key ${publicId} does not have the admin role, which ${purpose} requires: create one with \`gateway --create-api-key --admin\`` })

/** The refusal of a key that is not a global admin's on a route only global admins may call. */
export const notGlobalAdmin = (publicId: string | undefined, purpose: string) =>
  new Forbidden({
    message: `API key ${publicId} is not a global admin's, which ${purpose} requires: create one with \`gateway --create-api-key --admin --global\``
  })

/** What a route requires of its caller beyond a valid key: the admin role (and what for, as the 403 says it), or a global admin. */
export interface RouteAccess {
  readonly adminOnly: string | undefined
  readonly globalOnly: boolean
  /** a route that changes nothing whatever its method (a search by `POST`): a single sign-on viewer may call it */
  readonly readsOnly?: boolean | undefined
}

/** the caller of a request with `key`, if it may call a route requiring `access` */
const callerFor = (
  key: ApiKeyInfo,
  request: HttpServerRequest.HttpServerRequest,
  access: RouteAccess,
  viaSession = false
): Effect.Effect<Caller, Forbidden | InvalidRequest> => {
  const caller = callerOf(key, request.headers[workspaceHeader])
  if (caller._tag === "Failure") return Effect.fail(caller.failure)
  const success: Caller = viaSession ? { ...caller.success, via: "session" } : caller.success
  if (access.globalOnly && success.role !== "global") return Effect.fail(notGlobalAdmin(key.publicId, access.adminOnly ?? "this route"))
  if (access.adminOnly !== undefined && !isAdmin(success)) return Effect.fail(notAdmin(key.publicId, access.adminOnly))
  return Effect.succeed(success)
}

/** the session id the request's cookie holds; undefined when it has none */
export const sessionIdOf = (request: HttpServerRequest.HttpServerRequest): string | undefined => {
  const session = request.cookies[sessionCookie]
  return session === undefined || session === "" ? undefined : session
}

/** Whom the live session `sessionId` is of (an admin key, or a single sign-on identity), or why not (401, 403, 429, 503). */
export const sessionAuthentication = (sessions: UiSessions["Service"], sessionId: string, address: string | undefined) =>
  Effect.flatMap(
    sessions.check(sessionId, address),
    (principal): Effect.Effect<SessionPrincipal, Forbidden> =>
      principal.kind === "oidc" || principal.key.admin ? Effect.succeed(principal) : Effect.fail(notAdmin(principal.key.publicId))
  )

/** the caller of a request on a session of `principal`; a viewer's request that changes something is refused */
const sessionCaller = (principal: SessionPrincipal, request: HttpServerRequest.HttpServerRequest, access: RouteAccess) => {
  if (principal.kind === "key") return callerFor(principal.key, request, access, true)
  const { identity } = principal
  if (identity.role === "viewer" && !readOnlyMethods.has(request.method) && access.readsOnly !== true) {
    return Effect.fail(
      new Forbidden({ message: `${identityName(identity)} signed in as a viewer of workspace "${identity.workspace}": a viewer may read, not change anything` })
    )
  }
  const caller = oidcCallerOf(identity, request.headers[workspaceHeader])
  if (caller._tag === "Failure") return Effect.fail(caller.failure)
  if (access.globalOnly) return Effect.fail(new Forbidden({ message: `${identityName(identity)} is not a global admin, which ${access.adminOnly ?? "this route"} requires` }))
  return Effect.succeed(caller.success)
}

/**
 * The request's caller, or why it has none (401, or 400 for a malformed workspace header), or why
 * it may not call the route (403): what `access` requires, or another workspace than its own.
 * With `apiKeyHeader`, a key in `x-api-key` counts when there is no `Authorization` header
 * (Anthropic's clients send it there).
 */
export const authorize = (
  auth: Authentication["Service"],
  sessions: UiSessions["Service"],
  request: HttpServerRequest.HttpServerRequest,
  access: RouteAccess,
  apiKeyHeader = false
) => {
  // the socket's peer: a client can write X-Forwarded-For, not its address
  const address = Option.getOrUndefined(request.peerAddress)
  const apiKey = apiKeyHeader ? request.headers["x-api-key"] : undefined
  const header = request.headers.authorization ?? (apiKey === undefined ? undefined : `Bearer ${apiKey}`)
  // without a header or a session: the header's 401
  const byHeader = () => Effect.flatMap(auth.authenticate(header, address), (key) => callerFor(key, request, access))
  if (header !== undefined) return byHeader()
  // parsed only when there is no header: the API's clients never pay for it
  const sessionId = sessionIdOf(request)
  if (sessionId === undefined) return byHeader()
  // checked before the database is asked: a forged request costs no query
  if (!readOnlyMethods.has(request.method) && !csrfMatches(request.headers[csrfHeader], sessionId)) {
    return Effect.fail(new Forbidden({ message: `the UI's session needs its CSRF token in the ${csrfHeader} header on a request that changes something` }))
  }
  return Effect.flatMap(sessionAuthentication(sessions, sessionId, address), (principal) => sessionCaller(principal, request, access))
}
