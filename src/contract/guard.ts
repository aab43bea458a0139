/**
 * What every route of the gateway goes through, as the contract declares it: authentication
 * (when it is on and the route's group is not `Open`), then the handler, with any typed error
 * answered in the body of the route's `ErrorFamily`. The shell (layers/http/guard.ts) builds
 * that guard around each handler from these annotations, once per route.
 *
 * Authentication is part of the guard rather than a security middleware of its own so that an
 * authentication failure is answered in the route family's shape like every other error, and so
 * that routes cost nothing extra when authentication is off. The document still shows it: the
 * groups behind a key carry the `bearer` security requirement.
 */
import * as Context from "effect/Context"
import * as OpenApi from "effect/http-api/OpenApi"

/** a group whose routes answer without an API key (`/status`, `/health`, the API reference) */
export const Open = Context.Reference<boolean>("gateway/api/Open", { defaultValue: () => false })

/**
 * a group whose routes manage a workspace (the UI's `/v1/ui/...`): with authentication on, only a
 * key with the `admin` role (of the workspace, or a global admin) may call them (another gets a 403)
 */
export const AdminOnly = Context.Reference<boolean>("gateway/api/AdminOnly", { defaultValue: () => false })

/** a group only a global admin's key may call (listing the workspaces), when authentication is on; mark it `AdminOnly` too */
export const GlobalAdminOnly = Context.Reference<boolean>("gateway/api/GlobalAdminOnly", { defaultValue: () => false })

/**
 * an endpoint whose calls are administrative acts, recorded in the audit log under this action
 * name (src/audit/service.ts) with the caller, the path's parameters as the target, the status
 * and the client's address
 */
export const Audited = Context.Reference<string | undefined>("gateway/api/Audited", { defaultValue: () => undefined })

/**
 * a `POST` endpoint that only reads (a search whose query is a body): a single sign-on viewer,
 * who may not change anything, may call it as it calls the `GET`s
 */
export const ReadsOnly = Context.Reference<boolean>("gateway/api/ReadsOnly", { defaultValue: () => false })

/** what an `AdminOnly` group's routes are for, as its 403 names it ("…the admin role, which <purpose> requires") */
export const AdminPurpose = Context.Reference<string>("gateway/api/AdminPurpose", { defaultValue: () => "the UI" })

/** the shape of a group's error bodies: `{"error": "..."}`, OpenAI's or Anthropic's */
export const ErrorFamily = Context.Reference<"gateway" | "openai" | "anthropic">("gateway/api/ErrorFamily", {
  defaultValue: () => "gateway"
})

/**
 * a group whose callers may send their key in `x-api-key` too (what Anthropic's clients and
 * Claude Code send), when they send no `Authorization` header
 */
export const ApiKeyHeader = Context.Reference<boolean>("gateway/api/ApiKeyHeader", { defaultValue: () => false })

/** the security scheme of the routes behind a key */
export const bearerScheme = {
  type: "http",
  scheme: "bearer",
  description: "An API key made by `gateway --create-api-key`: `Authorization: Bearer sk-gw-<public id>-<secret>`"
} as const

/** for a group behind a key: its operations require the `bearer` scheme */
export const requiresKey = OpenApi.annotations({ override: { security: [{ bearer: [] }] } })
