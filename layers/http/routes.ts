/**
 * The routes of the gateway. Every handler answers errors as `{"error": "..."}` with the
 * status of the error; unknown paths get a 404 and known paths called with another method
 * a 405, in the same shape.
 */
import * as Effect from "effect/Effect"
import * as HttpRouter from "effect/http/HttpRouter"
import * as HttpServerRequest from "effect/http/HttpServerRequest"
import type * as HttpServerResponse from "effect/http/HttpServerResponse"
import type { Gateway, HttpTransport } from "../../src/services.ts"
import { MethodNotAllowed, NotFound } from "../../src/errors.ts"
import type { Observability } from "../../src/observability/store.ts"
import { feedbackHandler } from "./feedback.ts"
import { inferenceHandler } from "./inference.ts"
import { getInferencesHandler, listInferencesHandler } from "./inferences.ts"
import { chatCompletionsHandler, modelsHandler, openAiErrorResponse } from "./openai.ts"
import { errorResponse } from "./respond.ts"
import { healthHandler, statusHandler } from "./status.ts"

export { gatewayVersion } from "./status.ts"

type Handler = Effect.Effect<
  HttpServerResponse.HttpServerResponse,
  never,
  Gateway | HttpTransport | Observability | HttpServerRequest.HttpServerRequest
>

const routes: ReadonlyArray<readonly ["GET" | "POST", `/${string}`, Handler]> = [
  ["POST", "/inference", inferenceHandler],
  ["POST", "/feedback", feedbackHandler],
  ["POST", "/v1/inferences/get_inferences", getInferencesHandler],
  ["POST", "/v1/inferences/list_inferences", listInferencesHandler],
  ["POST", "/openai/v1/chat/completions", chatCompletionsHandler],
  ["GET", "/openai/v1/models", modelsHandler],
  ["GET", "/status", statusHandler],
  ["GET", "/health", healthHandler]
]

const knownPaths = new Map<string, Array<string>>()
for (const [method, path] of routes) knownPaths.set(path, [...(knownPaths.get(path) ?? []), method])

const unmatched = Effect.map(HttpServerRequest.HttpServerRequest, (request) => {
  const path = request.url.split("?")[0]
  const methods = knownPaths.get(path)
  const error = methods === undefined
    ? new NotFound({ message: `no route for ${request.method} ${path}` })
    : new MethodNotAllowed({ message: `${path} accepts ${methods.join(", ")}, not ${request.method}` })
  return path.startsWith("/openai/") ? openAiErrorResponse(error) : errorResponse(error)
})

export const Routes = HttpRouter.use(Effect.fnUntraced(function*(router) {
  for (const [method, path, handler] of routes) yield* router.add(method, path, handler)
  yield* router.add("*", "*", unmatched)
}))
