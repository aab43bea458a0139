/**
 * Workspaces (issue 39): every API key belongs to one, and everything a request stores carries
 * the workspace of the key that made it; reads see their own workspace only. The configuration
 * (functions, models, variants) is shared by every workspace. `Caller` is who a request is, as
 * the guard (layers/http/authorize.ts) hands it to every handler: built once per request there,
 * so that no handler decides for itself which workspace it acts on.
 */

import * as Result from "effect/Result"
import { InvalidRequest } from "./errors.ts"

/** where every key made before workspaces existed lives, and the one a request acts on by default */
export const defaultWorkspace = "default"

/** the header by which a global admin (or anyone, with authentication off) names the workspace a request acts on */
export const workspaceHeader = "gateway-workspace"

/** A workspace name: the dataset-name rule, 1 to 64 characters. */
export const workspaceNameRule = {
  pattern: /^[A-Za-z0-9_.-]{1,64}$/,
  maxLength: 64,
  description: "1 to 64 characters among letters, digits, `_`, `-` and `.`, not only dots"
} as const

/** why `name` is not a workspace name (`field` says where it came from), or undefined */
export const workspaceNameProblem = (name: string, field = "workspace"): string | undefined =>
  workspaceNameRule.pattern.test(name) && !/^\.+$/.test(name)
    ? undefined
    : `${field}: "${name.slice(0, 80)}" is not a workspace name (${workspaceNameRule.description})`

/** `name` when it is a workspace name, or the 400 saying why not (naming `field`) */
export const checkWorkspaceName = (name: string, field = "workspace"): Result.Result<string, InvalidRequest> => {
  const problem = workspaceNameProblem(name, field)
  return problem === undefined ? Result.succeed(name) : Result.fail(new InvalidRequest({ message: problem }))
}

/**
 * What a caller may do: `member` calls the API in its workspace; `admin` also manages its
 * workspace (the UI, its keys, its budgets, its audit log); `global` acts on any workspace
 * (named by the `gateway-workspace` header), lists them, and reads the whole audit log.
 */
export type Role = "member" | "admin" | "global"

export interface Caller {
  /** the public id of the request's key; undefined when authentication is off or the route is open */
  readonly publicId: string | undefined
  /** the workspace the request acts on: what it stores carries it, what it reads is limited to it */
  readonly workspace: string
  readonly role: Role
  /**
   * how the caller came: the UI's session of a key, or of a single sign-on identity (`oidc`, then
   * without `publicId`); undefined: the request's own header
   */
  readonly via?: "session" | "oidc" | undefined
  /** a single sign-on identity's name (its email, else its subject), for the audit log */
  readonly identity?: string | undefined
}

/** the caller of an open route (`/status`, `/health`, the API reference), which reads and stores nothing of a workspace */
export const anonymousCaller: Caller = { publicId: undefined, workspace: defaultWorkspace, role: "member" }

/** whether `caller` may manage its workspace */
export const isAdmin = (caller: Caller): boolean => caller.role !== "member"

/**
 * The caller a background task (DICL, GEPA) acts as: the key that launched it, in the workspace
 * it was launched in (`default` for a task queued before workspaces existed).
 */
export const taskCaller = (task: { readonly apiKey?: string | undefined; readonly workspace?: string | undefined }): Caller => ({
  publicId: task.apiKey,
  workspace: task.workspace ?? defaultWorkspace,
  role: "member"
})

/**
 * Whether a background task's payload belongs to `workspace` (a payload without one, queued
 * before workspaces existed, to `default`): a task of another workspace reads as no such task.
 */
export const isTaskOf = (workspace: string, payload: unknown): boolean => {
  const own = typeof payload === "object" && payload !== null && "workspace" in payload ? payload.workspace : undefined
  return (typeof own === "string" ? own : defaultWorkspace) === workspace
}

/** the command line's caller (`gateway evaluate`, ...): the operator, without a key, acting on `workspace` */
export const operatorCaller = (workspace: string = defaultWorkspace): Caller => ({ publicId: undefined, workspace, role: "global" })
