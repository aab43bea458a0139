/**
 * The inference routes (`POST /inference`, `POST /openai/v1/chat/completions`,
 * `POST /anthropic/v1/messages`, `POST /openai/v1/responses`), handed their
 * requests by the server directly rather than through the router: no route lookup, no search
 * parameters parsed, no per-endpoint wrapping, for the routes that carry the traffic. They are
 * the same guarded handlers the HttpApi groups register (./routeTable.ts `hotRoutes`), at the
 * method and path their endpoints have in the contract (a test keeps them so), run by the same
 * Node adapter with the same middleware; any other request, and any other spelling of these
 * paths (a trailing slash, a doubled one), goes to the router as before.
 */
import type { IncomingMessage, ServerResponse } from "node:http"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import * as HttpRouter from "effect/http/HttpRouter"
import type * as HttpMiddleware from "effect/http/HttpMiddleware"
import { Authentication } from "../../src/auth/authenticate.ts"
import { UiSessions } from "../../src/auth/uiSessions.ts"
import { type Deployment, deployedApi } from "../../src/contract/gateway.ts"
import { Metrics } from "../../src/metrics/metrics.ts"
import { hotRoutes } from "./routeTable.ts"
import { gatewayVersion } from "./status.ts"

type NodeHandler = (request: IncomingMessage, response: ServerResponse) => void

/** handles the request when it is one of the hot routes' (and says so), or leaves it */
export type HotDispatch = (request: IncomingMessage, response: ServerResponse) => boolean

/**
 * The hot routes' dispatch, their handlers made like the router's (`NodeHttpServer.makeHandler`,
 * `middleware`, `scope`); run where the router's handler is made, whose services they use.
 */
export const makeHotDispatch = (
  deployment: Omit<Deployment, "version"> & { readonly errorJson?: boolean },
  middleware: HttpMiddleware.HttpMiddleware | undefined,
  scope: Scope.Scope
) =>
  Effect.gen(function*() {
    const api = deployedApi({ ...deployment, version: gatewayVersion })
    const routes = hotRoutes(api, yield* Authentication, yield* UiSessions, yield* Metrics, deployment.errorJson === true)
    const table = new Map<string, NodeHandler>()
    for (const { method, path, handler } of Object.values(routes)) {
      const guarded = handler()
      const route = HttpRouter.route(method as HttpRouter.Route<unknown, unknown>["method"], path as HttpRouter.PathInput, guarded)
      // what the router gives a handler: the route matched (no path parameters on these), and
      // interruptibility (the adapter starts a request uninterruptible; a client hanging up interrupts it)
      const app = Effect.interruptible(Effect.provideService(guarded, HttpRouter.RouteContext, { params: {}, route }))
      const made = yield* NodeHttpServer.makeHandler(app, { middleware: middleware as never, scope })
      table.set(`${method} ${deployment.basePath}${path}`, made as NodeHandler)
    }
    const dispatch: HotDispatch = (request, response) => {
      const url = request.url ?? ""
      const query = url.indexOf("?")
      const handler = table.get(`${request.method} ${query < 0 ? url : url.slice(0, query)}`)
      if (handler === undefined) return false
      handler(request, response)
      return true
    }
    return dispatch
  })
