/**
 * The routes of the gateway: the HttpApi definition (src/api/gateway.ts) implemented with
 * `HttpApiBuilder`, served under `[gateway] base_path`. Every route goes through the
 * `RouteGuard`: authentication (when on; not for the open groups: /status, /health and the API
 * reference), then the handler, with typed errors answered in the shape of the route's family
 * (`{"error": "..."}`, or OpenAI's under `/openai/`) and defects with a logged 500. Unknown paths
 * get a 404, known paths called with another method a 405.
 *
 * The handlers are raw (`handleRaw`): each reads its own body (bounded, parsed once, a 400 naming
 * the field) and writes its own JSON or event stream, so the definition's schemas describe the
 * wire for the document without costing the hot path a decode or an encode.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as HttpRouter from "effect/http/HttpRouter"
import * as HttpServerRequest from "effect/http/HttpServerRequest"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as HttpApiBuilder from "effect/http-api/HttpApiBuilder"
import * as OpenApi from "effect/http-api/OpenApi"
import { type Deployment, deployedApi, type GatewayApi } from "../../src/api/gateway.ts"
import { CallerKey, ErrorFamily, Open, RouteGuard } from "../../src/api/guard.ts"
import { Authentication } from "../../src/auth/authenticate.ts"
import { MethodNotAllowed, NotFound } from "../../src/errors.ts"
import { makeDocsPage } from "./docs.ts"
import { feedbackHandler } from "./feedback.ts"
import { inferenceHandler } from "./inference.ts"
import { getInferencesHandler, listInferencesHandler } from "./inferences.ts"
import { chatCompletionsHandler, modelsHandler, openAiErrorResponse } from "./openaiCompatible.ts"
import { errorResponse, guarded, jsonResponse } from "./respond.ts"
import { gatewayVersion, healthHandler, statusHandler } from "./status.ts"

export { gatewayVersion } from "./status.ts"

/** Authenticates (where the route needs a key), then answers typed errors in the family's shape; decided once per route. */
const RouteGuardLive = Layer.effect(
  RouteGuard,
  Effect.map(Authentication, (auth) =>
    RouteGuard.of((handler, { group }) => {
      const toResponse = Context.get(group.annotations, ErrorFamily) === "openai" ? openAiErrorResponse : errorResponse
      if (!auth.enabled || Context.get(group.annotations, Open)) return guarded(handler, toResponse)
      const authenticated = Effect.flatMap(
        Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) =>
          // the socket's peer: a client can write X-Forwarded-For, not its address
          auth.authenticate(request.headers.authorization, Option.getOrUndefined(request.peerAddress))),
        (key) => Effect.provideService(handler, CallerKey, key)
      )
      return guarded(authenticated, toResponse)
    }))
)

/**
 * A handler given the caller's key: built once when authentication is off (no key to pass), else
 * per request with the key the guard found.
 */
const withCallerKey = <A, E, R>(auth: Authentication["Service"], handler: (apiKey: string | undefined) => Effect.Effect<A, E, R>) => {
  if (!auth.enabled) {
    const anonymous = handler(undefined)
    return () => anonymous
  }
  return () => Effect.flatMap(CallerKey, handler)
}

const InferenceRoutes = (api: GatewayApi) =>
  HttpApiBuilder.group(api, "inference", (handlers) =>
    Effect.map(Authentication, (auth) => handlers.handleRaw("inference", withCallerKey(auth, inferenceHandler))))

const OpenAiRoutes = (api: GatewayApi) =>
  HttpApiBuilder.group(api, "openai", (handlers) =>
    Effect.map(Authentication, (auth) =>
      handlers
        .handleRaw("chatCompletions", withCallerKey(auth, chatCompletionsHandler))
        .handleRaw("models", () => modelsHandler)))

const FeedbackRoutes = (api: GatewayApi) =>
  HttpApiBuilder.group(api, "feedback", (handlers) =>
    Effect.map(Authentication, (auth) => handlers.handleRaw("feedback", withCallerKey(auth, feedbackHandler))))

const InferencesRoutes = (api: GatewayApi) =>
  HttpApiBuilder.group(api, "inferences", (handlers) =>
    handlers
      .handleRaw("getInferences", () => getInferencesHandler)
      .handleRaw("listInferences", () => listInferencesHandler))

const StatusRoutes = (api: GatewayApi) =>
  HttpApiBuilder.group(api, "status", (handlers) =>
    handlers
      .handleRaw("status", () => statusHandler)
      .handleRaw("health", () => healthHandler))

/** the document, built once; the page, built on its first request */
const ReferenceRoutes = (api: GatewayApi) =>
  HttpApiBuilder.group(api, "reference", (handlers) =>
    Effect.gen(function*() {
      const document = jsonResponse(JSON.stringify(OpenApi.fromApi(api)))
      const page = yield* makeDocsPage(api, yield* Effect.scope)
      return handlers
        .handleRaw("openapi", () => Effect.succeed(document))
        .handleRaw("docs", () => page)
    }))

/** the routes of `api` as `base` serves them: their methods by path */
const methodsByPath = (api: GatewayApi, base: string): ReadonlyMap<string, ReadonlyArray<string>> => {
  const methods = new Map<string, Array<string>>()
  for (const group of Object.values(api.groups)) {
    for (const endpoint of Object.values(group.endpoints)) {
      const path = `${base}${endpoint.path}`
      methods.set(path, [...(methods.get(path) ?? []), endpoint.method])
    }
  }
  return methods
}

/** Whatever no route takes: a 404, or a 405 on a known path; in OpenAI's shape under `<base>/openai/`. */
const Unmatched = (api: GatewayApi, base: string) => {
  const known = methodsByPath(api, base)
  const openAiPrefix = `${base}/openai/`
  return HttpRouter.add("*", "*", (request: HttpServerRequest.HttpServerRequest) => {
    const path = request.url.split("?")[0]
    const methods = known.get(path)
    const error = methods === undefined
      ? new NotFound({ message: `no route for ${request.method} ${path}` })
      : new MethodNotAllowed({ message: `${path} accepts ${methods.join(", ")}, not ${request.method}` })
    return Effect.succeed<HttpServerResponse.HttpServerResponse>(
      path.startsWith(openAiPrefix) ? openAiErrorResponse(error) : errorResponse(error)
    )
  })
}

/** the routes below register under `base` (the router strips it from the URL the handlers see) */
const under = (base: string) => Layer.effect(HttpRouter.HttpRouter, Effect.map(HttpRouter.HttpRouter, (router) => router.prefixed(base)))

export const Routes = (deployment: Omit<Deployment, "version">) => {
  const api = deployedApi({ ...deployment, version: gatewayVersion })
  const implemented = HttpApiBuilder.layer(api).pipe(
    Layer.provide([InferenceRoutes(api), OpenAiRoutes(api), FeedbackRoutes(api), InferencesRoutes(api), StatusRoutes(api), ReferenceRoutes(api)]),
    Layer.provide(RouteGuardLive)
  )
  return Layer.merge(
    deployment.basePath === "" ? implemented : Layer.provide(implemented, under(deployment.basePath)),
    Unmatched(api, deployment.basePath)
  )
}
