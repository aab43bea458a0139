/**
 * Single sign-on for the web UI (`[gateway.ui.oidc]`): OpenID Connect's authorization code flow
 * with PKCE, the client being oauth4webapi (which checks the ID token's signature, issuer,
 * audience, expiry and nonce).
 *
 * `GET /v1/ui/oidc/start` makes a state, a nonce and a code verifier, keeps them in the relational
 * database (so that any gateway on it can serve the callback), binds them to this browser with a
 * short-lived HttpOnly cookie, and sends the browser to the identity provider. That cookie is
 * SameSite=Lax: the callback is a cross-site navigation, on which a Strict cookie is not sent.
 *
 * `GET /v1/ui/oidc/callback` takes the state once (a replay finds nothing), checks the binding
 * cookie (a sign-in started by another browser, login CSRF, is refused), exchanges the code,
 * reads the userinfo endpoint when the ID token lacks a claim the rules read, maps the claims
 * through the rules (src/auth/oidcRules.ts; none matching is a 403) and starts a session with
 * the same cookies as the API-key sign-in. It answers a small page of the gateway's own that
 * goes on to the UI: after a cross-site chain of redirects, a 302 would not carry the new
 * SameSite=Strict cookies on its next request; a page of this origin does.
 *
 * Every sign-in, refused or not, is in the audit log (action `ui.sign_in`, actor kind `oidc`).
 * The identity provider's discovery document is fetched when first needed and kept for an hour;
 * an identity provider that cannot be reached is a 503 of the sign-in alone. Its calls go through
 * `fetch` (the global one, with a timeout), not the providers' HTTP client: a sign-in is rare,
 * off the hot path, and oauth4webapi speaks the Fetch API.
 */
import { queryParams } from "./query.ts"
import { createHash, randomBytes, timingSafeEqual } from "node:crypto"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as HttpServerRequest from "effect/http/HttpServerRequest"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as oauth from "oauth4webapi"
import { oidcBindingCookie } from "../../src/api/uiSession.ts"
import type { AuditAct } from "../../src/audit/service.ts"
import { AuditLog } from "../../src/audit/service.ts"
import { Authentication } from "../../src/auth/authenticate.ts"
import { claimsRead, identityName, mapIdentity, type OidcSettings } from "../../src/auth/oidcRules.ts"
import { UiSessions } from "../../src/auth/uiSessions.ts"
import { Configuration } from "../../src/services.ts"
import { defaultWorkspace } from "../../src/workspace.ts"
import { sessionIdOf } from "./authorize.ts"
import { overHttps, withSessionCookies } from "./uiSession.ts"

/** how long a sign-in may take at the identity provider (the state's and the binding cookie's life) */
const loginLifetimeS = 600
/** how long a discovery document is kept */
const discoveryTtlMs = 60 * 60 * 1000
/** the longest wait on the identity provider */
const providerTimeoutMs = 10_000

const hash = (text: string): Uint8Array => createHash("sha256").update(text, "utf8").digest()

const escapeHtml = (text: string) =>
  text.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", "\"": "&quot;", "'": "&#39;" })[c]!)

const pageHeaders = {
  "content-security-policy": "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'",
  "cache-control": "no-store",
  "referrer-policy": "no-referrer",
  "x-content-type-options": "nosniff"
}

/** a small page of the gateway's: `title`, `text`, a link to `href`, and (`refresh`) going there at once */
const page = (status: number, title: string, text: string, href: string, refresh = false) =>
  HttpServerResponse.text(
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(title)}</title>` +
      `${refresh ? `<meta http-equiv="refresh" content="0;url=${escapeHtml(href)}">` : ""}` +
      `<meta name="viewport" content="width=device-width"></head><body style="font-family:sans-serif;margin:2rem">` +
      `<h1>${escapeHtml(title)}</h1><p>${escapeHtml(text)}</p><p><a href="${escapeHtml(href)}">${refresh ? "Continue" : "Back to sign-in"}</a></p>` +
      `</body></html>`,
    { status, contentType: "text/html; charset=utf-8", headers: pageHeaders }
  )

/** The identity provider as oauth4webapi needs it, discovered once an hour per configuration (a reload makes a new one). */
interface Provider {
  readonly as: oauth.AuthorizationServer
  readonly client: oauth.Client
  readonly clientAuth: oauth.ClientAuth
  /** http:// to a loopback address (config/uiOidc.ts allows nothing else without TLS) */
  readonly options: { readonly [oauth.allowInsecureRequests]?: boolean; readonly signal?: () => AbortSignal }
}

const discovered = new WeakMap<OidcSettings, { readonly at: number; readonly provider: Promise<Provider> }>()

const providerOf = (settings: OidcSettings): Promise<Provider> => {
  const cached = discovered.get(settings)
  if (cached !== undefined && Date.now() - cached.at < discoveryTtlMs) return cached.provider
  const issuer = new URL(settings.issuerUrl)
  const insecure = issuer.protocol === "http:"
  const options = insecure ? { [oauth.allowInsecureRequests]: true } : {}
  const provider = (async (): Promise<Provider> => {
    const response = await oauth.discoveryRequest(issuer, { ...options, algorithm: "oidc", signal: AbortSignal.timeout(providerTimeoutMs) })
    const as = await oauth.processDiscoveryResponse(issuer, response)
    const secret = settings.clientSecret.kind === "static" ? settings.clientSecret.value.trim() : ""
    return { as, client: { client_id: settings.clientId }, clientAuth: oauth.ClientSecretBasic(secret), options }
  })()
  // a failed discovery is not kept: the next sign-in tries again
  provider.catch(() => discovered.delete(settings))
  discovered.set(settings, { at: Date.now(), provider })
  return provider
}

/** a sign-in refused: its status, the audit log's reason, the page's message, and whom it was of when known */
class SignInRefused {
  readonly status: number
  readonly reason: string
  readonly message: string
  readonly who: { readonly actor?: string | undefined; readonly workspace?: string | undefined; readonly details?: Record<string, unknown> } | undefined
  constructor(status: number, reason: string, message: string, who?: SignInRefused["who"]) {
    this.status = status
    this.reason = reason
    this.message = message
    this.who = who
  }
}

const providerCall = <A>(what: string, call: () => Promise<A>) =>
  Effect.tryPromise({
    try: call,
    catch: (error) => {
      // the provider's refusal (a bad code, a token that does not verify) or its absence
      const reached = error instanceof oauth.ResponseBodyError || error instanceof oauth.AuthorizationResponseError ||
        error instanceof oauth.WWWAuthenticateChallengeError || error instanceof oauth.OperationProcessingError
      const message = error instanceof Error ? error.message : String(error)
      return reached
        ? new SignInRefused(401, "provider_refused", `the identity provider's answer to the ${what} was refused: ${message}`)
        : new SignInRefused(503, "provider_unavailable", `the identity provider could not be reached (${what}): ${message}`)
    }
  })

/** the UI's address in this gateway, and where a sign-in may return to: a path under it, nothing else */
const uiPathOf = (basePath: string) => `${basePath}/ui/`

export const safeReturnTo = (basePath: string, requested: string | null): string => {
  const ui = uiPathOf(basePath)
  if (requested === null || requested === "") return ui
  // a path of this origin only: no scheme, host, `//` or backslash, and no way out of the UI by `..`
  if (!requested.startsWith("/") || requested.startsWith("//") || requested.includes("\\")) return ui
  try {
    const url = new URL(requested, "http://gateway.invalid")
    if (url.origin !== "http://gateway.invalid") return ui
    const path = url.pathname + url.search + url.hash
    return url.pathname === ui.slice(0, -1) || url.pathname.startsWith(ui) ? path : ui
  } catch {
    return ui
  }
}

const notConfigured = (basePath: string) =>
  page(404, "Single sign-on is not configured", "This gateway has no [gateway.ui.oidc]: sign in with an admin API key.", uiPathOf(basePath))

/** `GET /v1/ui/oidc/start?return_to=`: keeps the sign-in's secrets and sends the browser to the identity provider */
export const oidcStartHandler = Effect.gen(function*() {
  const config = yield* Configuration
  const auth = yield* Authentication
  const basePath = config.gateway.basePath
  const settings = config.gateway.ui.oidc
  if (settings === undefined || !auth.enabled) return notConfigured(basePath)
  const request = yield* HttpServerRequest.HttpServerRequest
  const returnTo = safeReturnTo(basePath, (yield* queryParams).get("return_to"))
  const provider = yield* Effect.result(providerCall("discovery", () => providerOf(settings)))
  if (provider._tag === "Failure") return page(503, "The identity provider is unavailable", provider.failure.message, uiPathOf(basePath))
  const { as } = provider.success
  if (as.authorization_endpoint === undefined) {
    return page(503, "The identity provider is unavailable", "its discovery document names no authorization_endpoint", uiPathOf(basePath))
  }
  const state = oauth.generateRandomState()
  const nonce = oauth.generateRandomNonce()
  const codeVerifier = oauth.generateRandomCodeVerifier()
  const binding = randomBytes(32).toString("base64url")
  const challenge = yield* Effect.promise(() => oauth.calculatePKCECodeChallenge(codeVerifier))
  yield* (yield* UiSessions).saveLogin({ stateHash: hash(state), bindingHash: hash(binding), codeVerifier, nonce, returnTo }, loginLifetimeS)
  const target = new URL(as.authorization_endpoint)
  for (
    const [name, value] of Object.entries({
      response_type: "code",
      client_id: settings.clientId,
      redirect_uri: settings.redirectUrl,
      scope: settings.scopes,
      state,
      nonce,
      code_challenge: challenge,
      code_challenge_method: "S256"
    })
  ) target.searchParams.set(name, value)
  return HttpServerResponse.redirect(target, { status: 302, headers: { "cache-control": "no-store" } }).pipe(
    HttpServerResponse.setCookieUnsafe(oidcBindingCookie, binding, {
      path: `${basePath}/v1/ui/oidc/`,
      httpOnly: true,
      sameSite: "lax",
      secure: overHttps(request),
      maxAge: `${loginLifetimeS} seconds`
    })
  )
})

const sameBinding = (cookie: string | undefined, expected: Uint8Array) => {
  if (cookie === undefined || cookie === "") return false
  const sent = hash(cookie)
  return sent.length === expected.length && timingSafeEqual(sent, expected)
}

/** `GET /v1/ui/oidc/callback?code&state`: finishes the sign-in, or refuses it with a page saying why (and an audit entry) */
export const oidcCallbackHandler = Effect.gen(function*() {
  const config = yield* Configuration
  const auth = yield* Authentication
  const basePath = config.gateway.basePath
  const settings = config.gateway.ui.oidc
  if (settings === undefined || !auth.enabled) return notConfigured(basePath)
  const request = yield* HttpServerRequest.HttpServerRequest
  const sessions = yield* UiSessions
  const audit = yield* AuditLog
  const address = Option.getOrUndefined(request.peerAddress)
  const query = yield* queryParams

  const signIn = Effect.gen(function*() {
    const state = query.get("state")
    if (state === null || state === "") return yield* Effect.fail(new SignInRefused(400, "no_state", "the callback carries no state: start the sign-in again"))
    const login = yield* sessions.takeLogin(hash(state))
    if (login === undefined) {
      return yield* Effect.fail(
        new SignInRefused(400, "unknown_state", "this sign-in is unknown, already used, or older than 10 minutes: start the sign-in again")
      )
    }
    if (!sameBinding(request.cookies[oidcBindingCookie], login.bindingHash)) {
      return yield* Effect.fail(
        new SignInRefused(400, "binding_mismatch", "this sign-in was not started by this browser (its binding cookie is missing or another's): start the sign-in again")
      )
    }
    const { as, client, clientAuth, options } = yield* providerCall("discovery", () => providerOf(settings))
    const signal = () => AbortSignal.timeout(providerTimeoutMs)
    const params = yield* providerCall("authorization", async () => oauth.validateAuthResponse(as, client, query, state))
    const tokens = yield* providerCall("code exchange", async () =>
      oauth.processAuthorizationCodeResponse(
        as,
        client,
        await oauth.authorizationCodeGrantRequest(as, client, clientAuth, params, settings.redirectUrl, login.codeVerifier, {
          ...options,
          signal: signal()
        }),
        { expectedNonce: login.nonce, requireIdToken: true }
      ))
    const idClaims = oauth.getValidatedIdTokenClaims(tokens)
    if (idClaims === undefined) return yield* Effect.fail(new SignInRefused(401, "no_id_token", "the identity provider gave no ID token"))
    let claims: Record<string, unknown> = { ...idClaims }
    // the ID token may carry only the `openid` scope's claims (many providers put email and groups in userinfo)
    const missing = claimsRead(settings.rules).some((claim) => !(claim in claims))
    if (missing && as.userinfo_endpoint !== undefined) {
      const userinfo = yield* providerCall("userinfo", async () =>
        oauth.processUserInfoResponse(
          as,
          client,
          idClaims.sub,
          await oauth.userInfoRequest(as, client, tokens.access_token, { ...options, signal: signal() })
        ))
      claims = { ...userinfo, ...idClaims }
    }
    const identity = mapIdentity(settings.rules, claims)
    const name = identityName({ subject: idClaims.sub, email: typeof claims.email === "string" ? claims.email : undefined })
    if (identity === undefined) {
      return yield* Effect.fail(
        new SignInRefused(403, "unmapped", `${name} is not allowed to use this gateway's UI: no [[gateway.ui.oidc.rules]] maps this identity`, {
          actor: name,
          details: { subject: idClaims.sub }
        })
      )
    }
    // the session this browser held before is replaced: ended, so that no copy of its cookie outlives it
    const previous = sessionIdOf(request)
    if (previous !== undefined) yield* sessions.end(previous)
    const sessionId = yield* sessions.start({ identity }, config.gateway.ui.sessionTtlS)
    yield* audit.record({
      workspace: identity.workspace,
      actorKind: "oidc",
      actor: identityName(identity),
      action: "ui.sign_in",
      outcome: "success",
      status: 200,
      address,
      details: { subject: identity.subject, role: identity.role }
    })
    return yield* withSessionCookies(page(200, "Signed in", `Signed in as ${identityName(identity)}.`, login.returnTo, true), sessionId)
  })

  return yield* signIn.pipe(
    Effect.catch((error) => {
      if (!(error instanceof SignInRefused)) return Effect.fail(error)
      const act: AuditAct = {
        workspace: error.who?.workspace ?? defaultWorkspace,
        actorKind: "oidc",
        actor: error.who?.actor,
        action: "ui.sign_in",
        outcome: "failure",
        status: error.status,
        address,
        details: { reason: error.reason, ...error.who?.details }
      }
      const title = error.status === 503 ? "The identity provider is unavailable" : "Sign-in refused"
      return Effect.as(audit.record(act), page(error.status, title, error.message, uiPathOf(basePath)))
    }),
    Effect.map((response) => HttpServerResponse.expireCookieUnsafe(response, oidcBindingCookie, { path: `${basePath}/v1/ui/oidc/` }))
  )
})
