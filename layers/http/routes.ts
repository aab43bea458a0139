/**
 * The routes of the gateway: the HttpApi definition (src/contract/gateway.ts) implemented with
 * `HttpApiBuilder` from the route table (./routeTable.ts, each route behind the guard of
 * ./guard.ts), served under `[gateway] base_path`, and the fallback (./fallback.ts) for unknown
 * paths (404) and known paths called with another method (405).
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Scope from "effect/Scope"
import * as HttpRouter from "effect/http/HttpRouter"
import * as HttpApiBuilder from "effect/http-api/HttpApiBuilder"
import { type Deployment, deployedApi } from "../../src/contract/gateway.ts"
import { Authentication } from "../../src/auth/authenticate.ts"
import { UiSessions } from "../../src/auth/uiSessions.ts"
import { Metrics } from "../../src/metrics/metrics.ts"
import { Unmatched } from "./fallback.ts"
import { groupsOf } from "./routeTable.ts"
import { gatewayVersion } from "./status.ts"
import { UiAssets } from "./uiAssets.ts"

/** what Effect's layers are underneath: how to build one (not part of the `Layer` type) */
interface Buildable<A, E, R> {
  readonly build?: (memoMap: Layer.MemoMap, scope: Scope.Scope) => Effect.Effect<Context.Context<A>, E, R>
}

/**
 * `layer` built with nothing in its context. `HttpApiBuilder` runs each handler in the context
 * its group was built in merged into the request's: a copy of every service (29) per request,
 * 3% of a plain inference's CPU in a profile of `npm run bench`, which it skips when that
 * context is empty. `Layer.build` would add its memo map to the context, hence the layer's own
 * `build`; should a later Effect drop it, the layer is built as usual (and the copy is back).
 */
const isolated = <A, E, R>(layer: Layer.Layer<A, E, R>): Layer.Layer<A, E, R> => {
  const build = (layer as Buildable<A, E, R>).build
  if (typeof build !== "function") return layer
  return Layer.fromBuild((memoMap, scope) =>
    Effect.updateContext(
      Effect.suspend(() => build.call(layer, memoMap, scope)),
      // what the handlers require, they find in the request's context
      () => Context.make(Scope.Scope, scope) as Context.Context<R>
    ))
}

/** the routes below register under `base` (the router strips it from the URL the handlers see) */
const under = (base: string) => Layer.effect(HttpRouter.HttpRouter, Effect.map(HttpRouter.HttpRouter, (router) => router.prefixed(base)))

/** `errorJson`: TensorZero's `gateway.unstable_error_json` (native error bodies also carry `error_json`) */
export const Routes = (deployment: Omit<Deployment, "version"> & { readonly ui?: boolean; readonly errorJson?: boolean }) => {
  const api = deployedApi({ ...deployment, version: gatewayVersion })
  const implemented = Layer.unwrap(Effect.gen(function*() {
    const auth = yield* Authentication
    const sessions = yield* UiSessions
    const metrics = yield* Metrics
    const scope = yield* Effect.scope
    const routes = HttpApiBuilder.layer(api).pipe(
      Layer.provide(isolated(groupsOf(api, auth, sessions, metrics, deployment.metricsRequireAuth === true, scope, deployment.errorJson === true)))
    )
    return deployment.ui === true ? Layer.merge(routes, UiAssets(deployment.basePath)) : routes
  }))
  return Layer.merge(
    deployment.basePath === "" ? implemented : Layer.provide(implemented, under(deployment.basePath)),
    Unmatched(api, deployment.basePath)
  )
}
