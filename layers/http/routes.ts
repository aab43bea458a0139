/**
 * The routes of the gateway: the HttpApi definition (src/api/gateway.ts) implemented with
 * `HttpApiBuilder`, served under `[gateway] base_path`. Every route goes through its guard:
 * authentication (when on; not for the open groups: /status, /health and the API
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
import * as Scope from "effect/Scope"
import * as HttpRouter from "effect/http/HttpRouter"
import * as HttpServerRequest from "effect/http/HttpServerRequest"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as HttpApiBuilder from "effect/http-api/HttpApiBuilder"
import * as OpenApi from "effect/http-api/OpenApi"
import { type Deployment, deployedApi, type GatewayApi } from "../../src/contract/gateway.ts"
import { AdminOnly, AdminPurpose, ErrorFamily, Open } from "../../src/contract/guard.ts"
import { Authentication } from "../../src/auth/authenticate.ts"
import { UiSessions } from "../../src/auth/uiSessions.ts"
import { Metrics, type MetricsRecorder } from "../../src/metrics/metrics.ts"
import { MethodNotAllowed, NotFound } from "../../src/errors.ts"
import type { GatewayServices } from "../services.ts"
import { getBatchHandler, startBatchHandler } from "./batch.ts"
import { makeDocsPage } from "./docs.ts"
import {
  createDatapointsHandler,
  deleteDatapointsHandler,
  deleteDatasetHandler,
  getDatapointsHandler,
  listDatapointsHandler,
  listDatasetsHandler,
  updateDatapointsHandler,
  updateMetadataHandler
} from "./datasets.ts"
import { exportDatapointsHandler, fromInferencesHandler, importDatapointsHandler } from "./datasetTransfers.ts"
import { getEvaluationRunHandler, listEvaluationRunsHandler, runEvaluationHandler } from "./evaluations.ts"
import { experimentationHandler } from "./experimentation.ts"
import { feedbackHandler } from "./feedback.ts"
import { inferenceHandler } from "./inference.ts"
import { metricsHandler } from "./metrics.ts"
import { getInferencesHandler, listInferencesHandler } from "./inferences.ts"
import { embeddingsHandler } from "./embeddings.ts"
import { chatCompletionsHandler, modelsHandler, openAiErrorResponse } from "./openaiCompatible.ts"
import { cancelGepaTaskHandler, createDiclExamplesHandler, getDiclTaskHandler, getGepaTaskHandler, launchGepaHandler } from "./optimization.ts"
import { authorize } from "./authorize.ts"
import { reloadConfigHandler } from "./configReload.ts"
import { errorResponse, guarded, jsonResponse } from "./respond.ts"
import { UiAssets } from "./uiAssets.ts"
import { createUiApiKeyHandler, disableUiApiKeyHandler, listUiApiKeysHandler } from "./uiApiKeys.ts"
import { getUiConfigHandler } from "./uiConfig.ts"
import { getUiEpisodeHandler, getUiInferenceHandler } from "./uiInferences.ts"
import { getDatapointHistoryHandler } from "./uiDatasets.ts"
import { exportGepaTaskHandler } from "./uiOptimization.ts"
import { getUiOverviewHandler } from "./uiOverview.ts"
import { getUiSessionHandler, signInHandler, signOutHandler } from "./uiSession.ts"
import { gatewayVersion, healthHandler, statusHandler } from "./status.ts"
import { createEpisodeHandler, createRunHandler, getRunHandler, listRunsHandler } from "./workflowEvaluations.ts"

export { gatewayVersion } from "./status.ts"

type RouteHandler = Effect.Effect<
  HttpServerResponse.HttpServerResponse,
  unknown,
  GatewayServices | HttpServerRequest.HttpServerRequest | HttpRouter.RouteContext | Scope.Scope
>

/**
 * A route of `group`, guarded: authentication (when on and the group is not open, or `open`
 * says otherwise) gives the handler the caller's key, and typed errors are answered in the
 * group's family shape. Each answer is counted for `/metrics` by `path` and status, with its
 * duration (a stream's until its headers are ready), and so is a refusal by the rate limits.
 * Built once per route, so a request runs one prepared effect.
 */
const guardedRoute = (
  auth: Authentication["Service"],
  sessions: UiSessions["Service"],
  metrics: MetricsRecorder,
  group: GatewayApi["groups"][keyof GatewayApi["groups"]],
  path: string,
  handler: (apiKey: string | undefined) => RouteHandler,
  open: boolean = Context.get(group.annotations, Open)
) => {
  const adminOnly = Context.get(group.annotations, AdminOnly) ? Context.get(group.annotations, AdminPurpose) : undefined
  const toResponse = Context.get(group.annotations, ErrorFamily) === "openai" ? openAiErrorResponse : errorResponse
  const counted = (apiKey: string | undefined) =>
    Effect.tapError(handler(apiKey), (error) => {
      if ((error as { _tag?: unknown })._tag === "RateLimited") metrics.rateLimited(path)
      return Effect.void
    })
  const route = !auth.enabled || open
    ? guarded(counted(undefined), toResponse)
    : guarded(
      Effect.flatMap(
        Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => authorize(auth, sessions, request, adminOnly)),
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

/** The groups' handlers, built from the services they close over: the layer needs nothing. */
const groupsOf = (
  api: GatewayApi,
  auth: Authentication["Service"],
  sessions: UiSessions["Service"],
  metrics: MetricsRecorder,
  metricsRequireAuth: boolean,
  scope: Scope.Scope
) => {
  const route = (group: keyof GatewayApi["groups"], handler: (apiKey: string | undefined) => RouteHandler, open?: boolean) => {
    const endpoints = api.groups[group].endpoints as Record<string, { readonly path: string }>
    return (endpoint: string) => guardedRoute(auth, sessions, metrics, api.groups[group], endpoints[endpoint].path, handler, open)
  }
  return Layer.mergeAll(
    HttpApiBuilder.group(api, "inference", (handlers) => handlers.handleRaw("inference", route("inference", inferenceHandler)("inference"))),
    HttpApiBuilder.group(api, "openai", (handlers) =>
      handlers
        .handleRaw("chatCompletions", route("openai", chatCompletionsHandler)("chatCompletions"))
        .handleRaw("embeddings", route("openai", embeddingsHandler)("embeddings"))
        .handleRaw("models", route("openai", () => modelsHandler)("models"))),
    HttpApiBuilder.group(api, "batch", (handlers) =>
      handlers
        .handleRaw("startBatch", route("batch", startBatchHandler)("startBatch"))
        .handleRaw("getBatch", route("batch", () => getBatchHandler)("getBatch"))
        .handleRaw("getBatchInference", route("batch", () => getBatchHandler)("getBatchInference"))),
    HttpApiBuilder.group(api, "feedback", (handlers) => handlers.handleRaw("feedback", route("feedback", feedbackHandler)("feedback"))),
    HttpApiBuilder.group(api, "inferences", (handlers) =>
      handlers
        .handleRaw("getInferences", route("inferences", () => getInferencesHandler)("getInferences"))
        .handleRaw("listInferences", route("inferences", () => listInferencesHandler)("listInferences"))),
    HttpApiBuilder.group(api, "datasets", (handlers) => {
      const datasets = (endpoint: string, handler: RouteHandler) => route("datasets", () => handler)(endpoint)
      return handlers
        .handleRaw("listDatasets", datasets("listDatasets", listDatasetsHandler))
        .handleRaw("createDatapoints", datasets("createDatapoints", createDatapointsHandler))
        .handleRaw("getDatapoints", datasets("getDatapoints", getDatapointsHandler))
        .handleRaw("listDatapoints", datasets("listDatapoints", listDatapointsHandler))
        .handleRaw("updateDatapoints", datasets("updateDatapoints", updateDatapointsHandler))
        .handleRaw("updateMetadata", datasets("updateMetadata", updateMetadataHandler))
        .handleRaw("deleteDatapoints", datasets("deleteDatapoints", deleteDatapointsHandler))
        .handleRaw("deleteDataset", datasets("deleteDataset", deleteDatasetHandler))
        .handleRaw("fromInferences", datasets("fromInferences", fromInferencesHandler))
        .handleRaw("exportDatapoints", datasets("exportDatapoints", exportDatapointsHandler))
        .handleRaw("importDatapoints", datasets("importDatapoints", importDatapointsHandler))
    }),
    HttpApiBuilder.group(api, "evaluations", (handlers) =>
      handlers
        .handleRaw("runEvaluation", route("evaluations", runEvaluationHandler)("runEvaluation"))
        .handleRaw("listEvaluationRuns", route("evaluations", () => listEvaluationRunsHandler)("listEvaluationRuns"))
        .handleRaw("getEvaluationRun", route("evaluations", () => getEvaluationRunHandler)("getEvaluationRun"))),
    HttpApiBuilder.group(api, "optimization", (handlers) =>
      handlers
        .handleRaw("createDiclExamples", route("optimization", createDiclExamplesHandler)("createDiclExamples"))
        .handleRaw("getDiclTask", route("optimization", () => getDiclTaskHandler)("getDiclTask"))
        .handleRaw("launchGepa", route("optimization", launchGepaHandler)("launchGepa"))
        .handleRaw("getGepaTask", route("optimization", () => getGepaTaskHandler)("getGepaTask"))
        .handleRaw("cancelGepaTask", route("optimization", () => cancelGepaTaskHandler)("cancelGepaTask"))),
    // the same handlers under both names of the routes
    HttpApiBuilder.group(api, "workflowEvaluations", (handlers) => {
      const runs = (endpoint: string, handler: RouteHandler) => route("workflowEvaluations", () => handler)(endpoint)
      return handlers
        .handleRaw("createWorkflowRun", runs("createWorkflowRun", createRunHandler))
        .handleRaw("createWorkflowEpisode", runs("createWorkflowEpisode", createEpisodeHandler))
        .handleRaw("getWorkflowRun", runs("getWorkflowRun", getRunHandler))
        .handleRaw("listWorkflowRuns", runs("listWorkflowRuns", listRunsHandler))
        .handleRaw("createDynamicRun", runs("createDynamicRun", createRunHandler))
        .handleRaw("createDynamicEpisode", runs("createDynamicEpisode", createEpisodeHandler))
        .handleRaw("getDynamicRun", runs("getDynamicRun", getRunHandler))
        .handleRaw("listDynamicRuns", runs("listDynamicRuns", listRunsHandler))
    }),
    HttpApiBuilder.group(api, "experimentation", (handlers) =>
      handlers.handleRaw("getExperimentation", route("experimentation", () => experimentationHandler)("getExperimentation"))),
    HttpApiBuilder.group(api, "uiSession", (handlers) =>
      handlers
        .handleRaw("getUiSession", route("uiSession", () => getUiSessionHandler)("getUiSession"))
        .handleRaw("signIn", route("uiSession", () => signInHandler)("signIn"))
        .handleRaw("signOut", route("uiSession", () => signOutHandler)("signOut"))),
    HttpApiBuilder.group(api, "uiConfig", (handlers) => handlers.handleRaw("getUiConfig", route("uiConfig", () => getUiConfigHandler)("getUiConfig"))),
    HttpApiBuilder.group(api, "status", (handlers) =>
      handlers
        .handleRaw("status", route("status", () => statusHandler)("status"))
        .handleRaw("health", route("status", () => healthHandler)("health"))),
    // open like /status unless `[gateway.metrics] require_auth`
    HttpApiBuilder.group(api, "metrics", (handlers) =>
      handlers.handleRaw("metrics", route("metrics", () => metricsHandler, !metricsRequireAuth)("metrics"))),
    // the document and the page, each built on its first request (the document took 30 ms of start-up)
    HttpApiBuilder.group(api, "reference", (handlers) =>
      Effect.map(
        Effect.all([makeDocsPage(api, scope), Effect.cached(Effect.sync(() => jsonResponse(JSON.stringify(OpenApi.fromApi(api)))))]),
        ([page, document]) =>
          handlers
            .handleRaw("openapi", route("reference", () => document)("openapi"))
            .handleRaw("docs", route("reference", () => page)("docs"))
      )),
    HttpApiBuilder.group(api, "uiInferences", (handlers) =>
      handlers
        .handleRaw("getUiInference", route("uiInferences", () => getUiInferenceHandler)("getUiInference"))
        .handleRaw("getUiEpisode", route("uiInferences", () => getUiEpisodeHandler)("getUiEpisode"))),
    HttpApiBuilder.group(api, "uiOptimization", (handlers) =>
      handlers.handleRaw("exportGepaTask", route("uiOptimization", () => exportGepaTaskHandler)("exportGepaTask"))),
    HttpApiBuilder.group(api, "uiOverview", (handlers) =>
      handlers.handleRaw("getUiOverview", route("uiOverview", () => getUiOverviewHandler)("getUiOverview"))),
    HttpApiBuilder.group(api, "uiDatasets", (handlers) =>
      handlers.handleRaw("getDatapointHistory", route("uiDatasets", () => getDatapointHistoryHandler)("getDatapointHistory"))),
    HttpApiBuilder.group(api, "uiApiKeys", (handlers) =>
      handlers
        .handleRaw("listUiApiKeys", route("uiApiKeys", () => listUiApiKeysHandler)("listUiApiKeys"))
        .handleRaw("createUiApiKey", route("uiApiKeys", () => createUiApiKeyHandler)("createUiApiKey"))
        .handleRaw("disableUiApiKey", route("uiApiKeys", () => disableUiApiKeyHandler)("disableUiApiKey"))),
    HttpApiBuilder.group(api, "operations", (handlers) =>
      handlers.handleRaw("reloadConfig", route("operations", reloadConfigHandler)("reloadConfig")))
  )
}

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

/**
 * The longest value of a path parameter the router matches (find-my-way's default is 100): room
 * for a dataset name of 128 characters, and for a longer one to reach its handler and get the
 * 400 saying why it is not a name.
 */
export const maxPathParamLength = 1024

const decodedLength = (segment: string): number => {
  try {
    return decodeURIComponent(segment).length
  } catch {
    return segment.length
  }
}

/** the routes of `api` as `base` serves them: the methods of a request path, undefined for an unknown one */
const methodsByPath = (api: GatewayApi, base: string): (path: string) => ReadonlyArray<string> | undefined => {
  const methods = new Map<string, Array<string>>()
  for (const group of Object.values(api.groups)) {
    for (const endpoint of Object.values(group.endpoints)) {
      const path = `${base}${endpoint.path}`
      methods.set(path, [...(methods.get(path) ?? []), endpoint.method])
    }
  }
  // a path with parameters (`/v1/datasets/:dataset_name`) matches segment by segment, as the router does
  const patterns = [...methods].filter(([path]) => path.includes("/:")).map(([path, allowed]) => ({ segments: path.split("/"), allowed }))
  const matches = (segments: ReadonlyArray<string>, requested: ReadonlyArray<string>) =>
    segments.length === requested.length && segments.every((segment, i) =>
      segment.startsWith(":")
        ? requested[i] !== "" && decodedLength(requested[i]) <= maxPathParamLength
        : segment === requested[i]
    )
  return (path) => {
    const exact = methods.get(path)
    if (exact !== undefined) return exact
    const requested = path.split("/")
    return patterns.find(({ segments }) => matches(segments, requested))?.allowed
  }
}

/** Whatever no route takes: a 404, or a 405 on a known path; in OpenAI's shape under `<base>/openai/`. */
const Unmatched = (api: GatewayApi, base: string) => {
  const methodsOf = methodsByPath(api, base)
  const openAiPrefix = `${base}/openai/`
  return HttpRouter.add("*", "*", (request: HttpServerRequest.HttpServerRequest) => {
    const path = request.url.split("?")[0]
    const methods = methodsOf(path)
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

export const Routes = (deployment: Omit<Deployment, "version"> & { readonly ui?: boolean }) => {
  const api = deployedApi({ ...deployment, version: gatewayVersion })
  const implemented = Layer.unwrap(Effect.gen(function*() {
    const auth = yield* Authentication
    const sessions = yield* UiSessions
    const metrics = yield* Metrics
    const scope = yield* Effect.scope
    const routes = HttpApiBuilder.layer(api).pipe(
      Layer.provide(isolated(groupsOf(api, auth, sessions, metrics, deployment.metricsRequireAuth === true, scope)))
    )
    return deployment.ui === true ? Layer.merge(routes, UiAssets(deployment.basePath)) : routes
  }))
  return Layer.merge(
    deployment.basePath === "" ? implemented : Layer.provide(implemented, under(deployment.basePath)),
    Unmatched(api, deployment.basePath)
  )
}
