/**
 * The hot routes (layers/http/hotRoutes.ts), which the server hands their requests without the
 * router, exist in the contract: each is an operation of the OpenAPI document at its method and
 * path, so no route is served outside the HttpApi definition.
 */
import * as OpenApi from "effect/http-api/OpenApi"
import { describe, expect, it } from "vitest"
import { hotRoutes } from "../../layers/http/routeTable.ts"
import type { Authentication } from "../../src/auth/authenticate.ts"
import type { UiSessions } from "../../src/auth/uiSessions.ts"
import { deployedApi } from "../../src/contract/gateway.ts"
import type { MetricsRecorder } from "../../src/metrics/metrics.ts"

describe("hot routes", () => {
  it("are operations of the contract, at their method and path", () => {
    const api = deployedApi({ version: "test", basePath: "", authentication: true })
    // never called here: the handlers are only built
    const unused = {} as Authentication["Service"] & UiSessions["Service"] & MetricsRecorder
    const routes = Object.values(hotRoutes(api, unused, unused, unused))
    expect(routes.map(({ method, path }) => `${method} ${path}`)).toEqual(["POST /inference", "POST /openai/v1/chat/completions", "POST /anthropic/v1/messages", "POST /openai/v1/responses"])
    const paths = OpenApi.fromApi(api).paths as Record<string, Record<string, unknown>>
    for (const { method, path } of routes) expect(paths[path]?.[method.toLowerCase()], `${method} ${path}`).toBeDefined()
  })
})
