/**
 * The routes of the gateway, and what every request goes through: authentication (when on;
 * not for /status and /health), then the handler, with errors answered in the shape of the
 * endpoint family (`{"error": "..."}`, or OpenAI's under `/openai/`). Unknown paths get a 404,
 * known paths called with another method a 405.
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as HttpRouter from "effect/http/HttpRouter"
import * as HttpServerRequest from "effect/http/HttpServerRequest"
import type * as HttpServerResponse from "effect/http/HttpServerResponse"
import { Authentication } from "../../src/auth/authenticate.ts"
import { type GatewayError, MethodNotAllowed, NotFound } from "../../src/errors.ts"
import type { GatewayServices } from "../services.ts"
import { feedbackHandler } from "./feedback.ts"
import { inferenceHandler } from "./inference.ts"
import { getInferencesHandler, listInferencesHandler } from "./inferences.ts"
import { chatCompletionsHandler, modelsHandler, openAiErrorResponse } from "./openaiCompatible.ts"
import { errorResponse, guarded } from "./respond.ts"
import { healthHandler, statusHandler } from "./status.ts"

export { gatewayVersion } from "./status.ts"

type Services = GatewayServices | HttpServerRequest.HttpServerRequest

/** a handler, given the public id of the request's API key (undefined when authentication is off) */
type Handler = (apiKey: string | undefined) => Effect.Effect<HttpServerResponse.HttpServerResponse, GatewayError, Services>

interface Route {
  readonly method: "GET" | "POST"
  readonly path: `/${string}`
  readonly handler: Handler
  /** answered without an API key */
  readonly open?: boolean
}

const routes: ReadonlyArray<Route> = [
  { method: "POST", path: "/inference", handler: inferenceHandler },
  { method: "POST", path: "/feedback", handler: feedbackHandler },
  { method: "POST", path: "/v1/inferences/get_inferences", handler: () => getInferencesHandler },
  { method: "POST", path: "/v1/inferences/list_inferences", handler: () => listInferencesHandler },
  { method: "POST", path: "/openai/v1/chat/completions", handler: chatCompletionsHandler },
  { method: "GET", path: "/openai/v1/models", handler: () => modelsHandler },
  { method: "GET", path: "/status", handler: () => statusHandler, open: true },
  { method: "GET", path: "/health", handler: () => healthHandler, open: true }
]

const errorShapeOf = (path: string) => (path.startsWith("/openai/") ? openAiErrorResponse : errorResponse)

/** the route, behind authentication when it is on (decided once, when the routes are built) */
const serve = (route: Route, auth: Authentication["Service"]) =>
  guarded(
    route.open === true || !auth.enabled
      ? route.handler(undefined)
      : Effect.flatMap(
        Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) =>
          // the socket's peer: a client can write X-Forwarded-For, not its address
          auth.authenticate(request.headers.authorization, Option.getOrUndefined(request.peerAddress))),
        route.handler
      ),
    errorShapeOf(route.path)
  )

const knownPaths = new Map<string, Array<string>>()
for (const { method, path } of routes) knownPaths.set(path, [...(knownPaths.get(path) ?? []), method])

const unmatched = Effect.map(HttpServerRequest.HttpServerRequest, (request) => {
  const path = request.url.split("?")[0]
  const methods = knownPaths.get(path)
  const error = methods === undefined
    ? new NotFound({ message: `no route for ${request.method} ${path}` })
    : new MethodNotAllowed({ message: `${path} accepts ${methods.join(", ")}, not ${request.method}` })
  return errorShapeOf(path)(error)
})

export const Routes = HttpRouter.use(Effect.fnUntraced(function*(router) {
  const auth = yield* Authentication
  for (const route of routes) yield* router.add(route.method, route.path, serve(route, auth))
  yield* router.add("*", "*", unmatched)
}))
