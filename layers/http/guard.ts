/**
 * The guard in front of every route: authentication (when on; not for the open groups: /status,
 * /health and the API reference) and the admin role where the group asks for it, then the
 * handler, with typed errors answered in the shape of the route's family (`{"error": "..."}`,
 * or OpenAI's under `/openai/`) and defects with a logged 500; each answer counted for `/metrics`.
 */
import * as Context from "effect/Context"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import * as Predicate from "effect/Predicate"
import type * as Scope from "effect/Scope"
import * as HttpRouter from "effect/http/HttpRouter"
import * as HttpServerRequest from "effect/http/HttpServerRequest"
import type * as HttpServerResponse from "effect/http/HttpServerResponse"
import type { GatewayApi } from "../../src/contract/gateway.ts"
import { AdminOnly, AdminPurpose, ApiKeyHeader, ErrorFamily, GlobalAdminOnly, Open } from "../../src/contract/guard.ts"
import { openCaller } from "../../src/auth/caller.ts"
import type { Authentication } from "../../src/auth/authenticate.ts"
import type { UiSessions } from "../../src/auth/uiSessions.ts"
import type { MetricsRecorder } from "../../src/metrics/metrics.ts"
import { actorOf, AuditLog } from "../../src/audit/service.ts"
import type { GatewayServices } from "../composition.ts"
import { anonymousCaller, type Caller, workspaceHeader } from "../../src/workspace.ts"
import { authorize } from "./authorize.ts"
import { anthropicErrorResponse } from "./anthropicMessages.ts"
import { openAiErrorResponse } from "./openaiCompatible.ts"
import { errorResponse, errorResponseWithJson, guarded } from "./respond.ts"

export type RouteHandler = Effect.Effect<
  HttpServerResponse.HttpServerResponse,
  unknown,
  GatewayServices | HttpServerRequest.HttpServerRequest | HttpRouter.RouteContext | Scope.Scope
>

/** with authentication off: the caller without a header, made once (the common case costs no allocation) */
const openDefault = Effect.fromResult(openCaller(undefined))

const openCallerOf = (request: HttpServerRequest.HttpServerRequest) => {
  const header = request.headers[workspaceHeader]
  return header === undefined ? openDefault : Effect.fromResult(openCaller(header))
}

/** the status a handler's failure is answered with: its error's, 500 for a defect, none when the client hung up */
const statusOfFailure = (cause: Cause.Cause<unknown>): number | undefined => {
  if (Cause.hasInterruptsOnly(cause)) return undefined
  const error = Option.getOrUndefined(Cause.findErrorOption(cause))
  return typeof (error as { status?: unknown } | undefined)?.status === "number" ? (error as { status: number }).status : 500
}

/** `handler`, recorded in the audit log as `action` once it has ended: its caller, the path's parameters, the status, the client's address */
const recorded = <E, R>(action: string, caller: Caller, handler: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>) =>
  Effect.flatMap(Effect.all([HttpServerRequest.HttpServerRequest, HttpRouter.params, AuditLog]), ([request, params, audit]) => {
    const target = Object.values(params).filter((value) => value !== undefined).join("/")
    const base = {
      workspace: caller.workspace,
      ...actorOf(caller),
      action,
      ...(target === "" ? {} : { target }),
      address: Option.getOrUndefined(request.peerAddress)
    }
    return Effect.onExit(handler, (exit) =>
      audit.record(
        Exit.isSuccess(exit)
          ? { ...base, outcome: exit.value.status < 400 ? "success" : "failure", status: exit.value.status }
          : { ...base, outcome: "failure", status: statusOfFailure(exit.cause) }
      ))
  })

/**
 * A route of `group`, guarded: authentication (when on and the group is not open, or `open`
 * says otherwise) gives the handler the caller (its key, role and workspace; with authentication
 * off, a global admin on the `gateway-workspace` header's workspace), and typed errors are answered in the
 * group's family shape. Each answer is counted for `/metrics` by `path` and status, with its
 * duration (a stream's until its headers are ready), and so is a refusal by the rate limits.
 * Built once per route, so a request runs one prepared effect. A route `audited` records each
 * call, however it ended, in the audit log.
 */
export const guardedRoute = (
  auth: Authentication["Service"],
  sessions: UiSessions["Service"],
  metrics: MetricsRecorder,
  group: GatewayApi["groups"][keyof GatewayApi["groups"]],
  path: string,
  handler: (caller: Caller) => RouteHandler,
  open: boolean = Context.get(group.annotations, Open),
  /** TensorZero's `unstable_error_json`: the native error body also carries `error_json` */
  errorJson = false,
  /** the audit log's name for a call of this route (`Audited` in the contract), if it is an administrative act */
  audited?: string | undefined,
  /** a `POST` that only reads (`ReadsOnly` in the contract): a viewer may call it */
  readsOnly = false
) => {
  const access = {
    adminOnly: Context.get(group.annotations, AdminOnly) ? Context.get(group.annotations, AdminPurpose) : undefined,
    globalOnly: Context.get(group.annotations, GlobalAdminOnly),
    readsOnly
  }
  const family = Context.get(group.annotations, ErrorFamily)
  const toResponse = family === "openai"
    ? openAiErrorResponse
    : family === "anthropic"
    ? anthropicErrorResponse
    : errorJson
    ? errorResponseWithJson
    : errorResponse
  const apiKeyHeader = Context.get(group.annotations, ApiKeyHeader)
  const countedHandler = (caller: Caller) =>
    Effect.tapError(handler(caller), (error) => {
      if (Predicate.isTagged(error, "RateLimited")) metrics.rateLimited(path)
      return Effect.void
    })
  const counted = audited === undefined ? countedHandler : (caller: Caller) => recorded(audited, caller, countedHandler(caller))
  const route = open
    ? guarded(counted(anonymousCaller), toResponse)
    : !auth.enabled
    ? guarded(Effect.flatMap(Effect.flatMap(HttpServerRequest.HttpServerRequest, openCallerOf), counted), toResponse)
    : guarded(
      Effect.flatMap(
        Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => authorize(auth, sessions, request, access, apiKeyHeader)),
        counted
      ),
      toResponse
    )
  const measured = Effect.suspend(() => {
    const started = performance.now()
    return Effect.map(route, (response) => {
      metrics.requestServed(path, response.status, (performance.now() - started) / 1000)
      return response
    })
  })
  return () => measured
}
