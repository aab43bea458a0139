/**
 * The web UI's session (`/v1/ui/session`): with authentication on, the UI signs in with an API
 * key of the `admin` role, and the gateway starts a session (src/auth/uiSessions.ts) whose
 * random id it keeps in an HttpOnly, SameSite=Strict cookie (Secure over HTTPS) beside the
 * session's CSRF token, which the UI echoes in `x-gateway-csrf` on every request that changes
 * something. The routes answer without a key: they are how one is given.
 */
import * as Schema from "effect/Schema"

/** the cookie holding the session's id, never the key (HttpOnly: scripts never read it) */
export const sessionCookie = "gateway_ui_session"
/** the cookie holding the session's CSRF token (readable by the UI, which sends it back in `csrfHeader`) */
export const csrfCookie = "gateway_ui_csrf"
export const csrfHeader = "x-gateway-csrf"

export const UiSession = Schema.Struct({
  /** whether `[gateway.auth] enabled`: without it the UI is open to whoever reaches it */
  authentication: Schema.Boolean,
  /** whether this browser holds a session of a valid admin key (always true without authentication) */
  signed_in: Schema.Boolean,
  /** the public id of the session's key */
  public_id: Schema.optional(Schema.String),
  /** the workspace of the session's key (a global admin's is `default`; it picks another per request with the `gateway-workspace` header) */
  workspace: Schema.optional(Schema.String),
  /** `admin` of its workspace, or `global` (an admin of every workspace); without authentication, `global`; a single sign-on identity may be a `viewer` (reads only) */
  role: Schema.optional(Schema.Literals(["admin", "global", "viewer"])),
  /** true when `[gateway.ui.oidc]` is configured (absent otherwise): the sign-in page then offers single sign-on */
  oidc: Schema.optional(Schema.Boolean),
  /** a single sign-on session's identity: its email, else its subject at the identity provider */
  identity: Schema.optional(Schema.String)
}).annotate({ identifier: "UiSession" })
export type UiSession = typeof UiSession.Type

export const SignInRequest = Schema.Struct({
  api_key: Schema.String.annotate({ description: "an API key with the admin role (`gateway --create-api-key --admin`)" })
}).annotate({ identifier: "UiSignInRequest" })
export type SignInRequest = typeof SignInRequest.Type

/** the cookie binding a single sign-on under way to the browser that started it (SameSite=Lax: the callback is a cross-site navigation) */
export const oidcBindingCookie = "gateway_oidc_binding"
