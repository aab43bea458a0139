/**
 * GET /docs: the API reference page, Effect's `HttpApiScalar` rendering the document. Its script
 * is bundled with Effect and inlined in the page (no CDN), and the page keeps to the system's
 * fonts, so it works where the gateway has no internet. The page (3 MB of script) is built on
 * its first request, not at start-up.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import * as HttpRouter from "effect/http/HttpRouter"
import * as HttpApiScalar from "effect/http-api/HttpApiScalar"
import type { GatewayApi } from "../../src/api/gateway.ts"
import { docsPath } from "../../src/api/reference.ts"

/**
 * The handler of `docsPath` (the request as the route sees it: base path removed): Scalar's
 * route, on a router of its own (fresh: the server's is built already), built once inside `scope`.
 */
export const makeDocsPage = (api: GatewayApi, scope: Scope.Scope) =>
  Effect.map(
    Effect.cached(
      Effect.map(
        Layer.buildWithScope(
          Layer.fresh(Layer.provideMerge(
            HttpApiScalar.layer(api, { path: docsPath, scalar: { withDefaultFonts: false } }),
            HttpRouter.layer
          )),
          scope
        ),
        (context) => Context.get(context, HttpRouter.HttpRouter).asHttpEffect()
      )
    ),
    (route) => Effect.orDie(Effect.flatten(route))
  )
