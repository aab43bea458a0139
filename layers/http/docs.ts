/**
 * GET /docs: the API reference page, Effect's `HttpApiScalar` rendering the document. Its script
 * is bundled with Effect and inlined in the page (no CDN), and the page keeps to the system's
 * fonts, so it works where the gateway has no internet. The page (3 MB of script) is built on
 * its first request, not at start-up.
 *
 * The page is served on the gateway's origin, where the UI's session cookie is sent, so it runs
 * under a strict Content-Security-Policy: only its own two inline scripts (Scalar's bundle and
 * the call that renders the document), allowed by their hashes, computed once from the page;
 * Scalar's inline styles; requests to this origin only (its "Test Request"); nothing from
 * elsewhere (no fonts, no Scalar proxy or sharing service); never framed.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import * as HttpRouter from "effect/http/HttpRouter"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as HttpApiScalar from "effect/http-api/HttpApiScalar"
import type { GatewayApi } from "../../src/contract/gateway.ts"
import { docsPath } from "../../src/contract/reference.ts"
import { inlineScriptHashes, pageHeaders } from "./pageSecurity.ts"

/** the policy of a page whose inline scripts are `html`'s */
export const docsPolicy = (html: string): string =>
  [
    "default-src 'none'",
    `script-src ${inlineScriptHashes(html).join(" ")}`,
    // Scalar styles its components with inline style elements and attributes
    "style-src 'unsafe-inline'",
    "img-src 'self' data:",
    "font-src 'self' data:",
    "connect-src 'self'",
    "frame-ancestors 'none'",
    "base-uri 'none'",
    "form-action 'none'"
  ].join("; ")

/**
 * Adds the headers to the page: computed on the first answer, reused while the page is the same
 * response (Scalar builds it once).
 */
const makeWithPolicy = () => {
  let last: { readonly page: HttpServerResponse.HttpServerResponse; readonly secured: HttpServerResponse.HttpServerResponse } | undefined
  return (page: HttpServerResponse.HttpServerResponse): HttpServerResponse.HttpServerResponse => {
    if (last?.page === page) return last.secured
    const html = page.body._tag === "Uint8Array" ? page.body.text ?? new TextDecoder().decode(page.body.body) : ""
    last = { page, secured: HttpServerResponse.setHeaders(page, pageHeaders(docsPolicy(html))) }
    return last.secured
  }
}

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
    (route) => {
      const withPolicy = makeWithPolicy()
      return Effect.map(Effect.orDie(Effect.flatten(route)), withPolicy)
    }
  )
