/**
 * Who a request is (src/workspace.ts `Caller`), from its key and its `gateway-workspace` header:
 * the one place the workspace rule is decided. A key acts on its own workspace; naming another in
 * the header is a 403 (silently ignoring it would hide a client's mistake). A global admin acts
 * on the workspace the header names, `default` without it. With authentication off, everyone is
 * a global admin, as everything was open before workspaces.
 */
import * as Result from "effect/Result"
import { Forbidden, type InvalidRequest } from "../errors.ts"
import { type Caller, checkWorkspaceName, defaultWorkspace, workspaceHeader } from "../workspace.ts"
import { identityName, type OidcIdentity } from "./oidcRules.ts"
import type { ApiKeyInfo } from "./store.ts"

/** the workspace a header names (undefined when absent), or the 400 saying why it names none */
const requestedWorkspace = (header: string | undefined): Result.Result<string | undefined, InvalidRequest> =>
  header === undefined ? Result.succeed(undefined) : checkWorkspaceName(header, `the ${workspaceHeader} header`)

/** the caller of a request made with `key`, whose `gateway-workspace` header is `header`, or why it may not act there */
export const callerOf = (
  key: Pick<ApiKeyInfo, "publicId" | "workspace" | "admin" | "global">,
  header: string | undefined
): Result.Result<Caller, InvalidRequest | Forbidden> => {
  const requested = requestedWorkspace(header)
  if (Result.isFailure(requested)) return Result.fail(requested.failure)
  const workspace = requested.success
  if (key.global) return Result.succeed({ publicId: key.publicId, workspace: workspace ?? defaultWorkspace, role: "global" })
  if (workspace !== undefined && workspace !== key.workspace) {
    return Result.fail(
      new Forbidden({ message: `API key ${key.publicId} belongs to workspace "${key.workspace}": only a global admin's key may act on workspace "${workspace}"` })
    )
  }
  return Result.succeed({ publicId: key.publicId, workspace: key.workspace, role: key.admin ? "admin" : "member" })
}

/** the caller of a request when authentication is off: a global admin, on the header's workspace */
export const openCaller = (header: string | undefined): Result.Result<Caller, InvalidRequest> =>
  Result.map(requestedWorkspace(header), (workspace) => ({ publicId: undefined, workspace: workspace ?? defaultWorkspace, role: "global" }))

/**
 * the caller of a request on a single sign-on session of `identity`: an admin of the workspace its
 * rule granted (a viewer too: what it may not do, change anything, is refused before, by method),
 * never of another
 */
export const oidcCallerOf = (identity: OidcIdentity, header: string | undefined): Result.Result<Caller, InvalidRequest | Forbidden> => {
  const requested = requestedWorkspace(header)
  if (Result.isFailure(requested)) return Result.fail(requested.failure)
  const name = identityName(identity)
  if (requested.success !== undefined && requested.success !== identity.workspace) {
    return Result.fail(new Forbidden({ message: `${name} signed in to workspace "${identity.workspace}": it may not act on workspace "${requested.success}"` }))
  }
  return Result.succeed({ publicId: undefined, workspace: identity.workspace, role: "admin", via: "oidc", identity: name })
}
