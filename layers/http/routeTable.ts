/**
 * The route table: each endpoint of the HttpApi definition (src/contract/gateway.ts) with its
 * handler, behind the guard (./guard.ts).
 *
 * The handlers are raw (`handleRaw`): each reads its own body (bounded, parsed once, a 400 naming
 * the field) and writes its own JSON or event stream, so the definition's schemas describe the
 * wire for the document without costing the hot path a decode or an encode.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import * as HttpApiBuilder from "effect/http-api/HttpApiBuilder"
import * as OpenApi from "effect/http-api/OpenApi"
import type { GatewayApi } from "../../src/contract/gateway.ts"
import { Audited, ReadsOnly } from "../../src/contract/guard.ts"
import type { Authentication } from "../../src/auth/authenticate.ts"
import type { UiSessions } from "../../src/auth/uiSessions.ts"
import type { MetricsRecorder } from "../../src/metrics/metrics.ts"
import type { Caller } from "../../src/workspace.ts"
import { listAuditHandler } from "./audit.ts"
import { deleteBudgetHandler, listBudgetsHandler, setBudgetHandler } from "./budgets.ts"
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
import { guardedRoute, type RouteHandler } from "./guard.ts"
import { inferenceHandler } from "./inference.ts"
import { metricsHandler } from "./metrics.ts"
import { getInferencesHandler, listInferencesHandler } from "./inferences.ts"
import { embeddingsHandler } from "./embeddings.ts"
import { chatCompletionsHandler, modelsHandler } from "./openaiCompatible.ts"
import { anthropicModelHandler, anthropicModelsHandler, countTokensHandler, messagesHandler } from "./anthropicMessages.ts"
import { createResponseHandler, deleteResponseHandler, getResponseHandler, inputItemsHandler } from "./openaiResponses.ts"
import { cancelGepaTaskHandler, createDiclExamplesHandler, getDiclTaskHandler, getGepaTaskHandler, launchGepaHandler } from "./optimization.ts"
import { reloadConfigHandler } from "./configReload.ts"
import { jsonResponse } from "./respond.ts"
import { createUiApiKeyHandler, disableUiApiKeyHandler, listUiApiKeysHandler, listUiWorkspacesHandler } from "./uiApiKeys.ts"
import { getUiConfigHandler } from "./uiConfig.ts"
import { getUiEpisodeHandler, getUiInferenceHandler } from "./uiInferences.ts"
import { getDatapointHistoryHandler } from "./uiDatasets.ts"
import { exportGepaTaskHandler } from "./uiOptimization.ts"
import { getUiOverviewHandler } from "./uiOverview.ts"
import { getUiSessionHandler, signInHandler, signOutHandler } from "./uiSession.ts"
import { getSpendHandler } from "./spend.ts"
import { oidcCallbackHandler, oidcStartHandler } from "./uiOidc.ts"
import { healthHandler, statusHandler } from "./status.ts"
import { createEpisodeHandler, createRunHandler, getRunHandler, listRunsHandler } from "./workflowEvaluations.ts"

/** `route(group, handler)(endpoint)`: the endpoint's handler behind the guard */
const routeOf = (
  api: GatewayApi,
  auth: Authentication["Service"],
  sessions: UiSessions["Service"],
  metrics: MetricsRecorder,
  errorJson: boolean
) =>
(group: keyof GatewayApi["groups"], handler: (caller: Caller) => RouteHandler, open?: boolean) => {
  const endpoints = api.groups[group].endpoints as Record<string, { readonly path: string; readonly annotations: Context.Context<never> }>
  return (endpoint: string) =>
    guardedRoute(
      auth,
      sessions,
      metrics,
      api.groups[group],
      endpoints[endpoint].path,
      handler,
      open,
      errorJson,
      Context.get(endpoints[endpoint].annotations, Audited),
      Context.get(endpoints[endpoint].annotations, ReadsOnly)
    )
}

/** A route the server hands its requests to directly (./hotRoutes.ts): its method and path as the contract has them, and its guarded handler. */
export interface HotRoute {
  readonly method: string
  readonly path: string
  readonly handler: ReturnType<typeof guardedRoute>
}

/**
 * The inference routes, which carry the traffic: the same guarded handlers the HttpApi groups
 * register, with the method and path of their endpoints in the contract.
 */
export const hotRoutes = (
  api: GatewayApi,
  auth: Authentication["Service"],
  sessions: UiSessions["Service"],
  metrics: MetricsRecorder,
  errorJson = false
): {
  readonly inference: HotRoute
  readonly chatCompletions: HotRoute
  readonly anthropicMessages: HotRoute
  readonly responses: HotRoute
} => {
  const route = routeOf(api, auth, sessions, metrics, errorJson)
  const { inference } = api.groups.inference.endpoints
  const { chatCompletions } = api.groups.openai.endpoints
  const { messages } = api.groups.anthropic.endpoints
  const { createResponse } = api.groups.openaiResponses.endpoints
  return {
    inference: { method: inference.method, path: inference.path, handler: route("inference", inferenceHandler)("inference") },
    chatCompletions: { method: chatCompletions.method, path: chatCompletions.path, handler: route("openai", chatCompletionsHandler)("chatCompletions") },
    anthropicMessages: { method: messages.method, path: messages.path, handler: route("anthropic", messagesHandler)("messages") },
    responses: { method: createResponse.method, path: createResponse.path, handler: route("openaiResponses", createResponseHandler)("createResponse") }
  }
}

/** The groups' handlers, built from the services they close over: the layer needs nothing. */
export const groupsOf = (
  api: GatewayApi,
  auth: Authentication["Service"],
  sessions: UiSessions["Service"],
  metrics: MetricsRecorder,
  metricsRequireAuth: boolean,
  scope: Scope.Scope,
  errorJson = false
) => {
  const route = routeOf(api, auth, sessions, metrics, errorJson)
  const hot = hotRoutes(api, auth, sessions, metrics, errorJson)
  return Layer.mergeAll(
    HttpApiBuilder.group(api, "inference", (handlers) => handlers.handleRaw("inference", hot.inference.handler)),
    HttpApiBuilder.group(api, "anthropic", (handlers) =>
      handlers
        .handleRaw("messages", hot.anthropicMessages.handler)
        .handleRaw("countTokens", route("anthropic", countTokensHandler)("countTokens"))
        .handleRaw("models", route("anthropic", () => anthropicModelsHandler)("models"))
        .handleRaw("model", route("anthropic", () => anthropicModelHandler)("model"))),
    HttpApiBuilder.group(api, "openai", (handlers) =>
      handlers
        .handleRaw("chatCompletions", hot.chatCompletions.handler)
        .handleRaw("embeddings", route("openai", embeddingsHandler)("embeddings"))
        .handleRaw("models", route("openai", () => modelsHandler)("models"))),
    HttpApiBuilder.group(api, "openaiResponses", (handlers) =>
      handlers
        .handleRaw("createResponse", hot.responses.handler)
        .handleRaw("getResponse", route("openaiResponses", getResponseHandler)("getResponse"))
        .handleRaw("deleteResponse", route("openaiResponses", deleteResponseHandler)("deleteResponse"))
        .handleRaw("listInputItems", route("openaiResponses", inputItemsHandler)("listInputItems"))),
    HttpApiBuilder.group(api, "batch", (handlers) =>
      handlers
        .handleRaw("startBatch", route("batch", startBatchHandler)("startBatch"))
        .handleRaw("getBatch", route("batch", getBatchHandler)("getBatch"))
        .handleRaw("getBatchInference", route("batch", getBatchHandler)("getBatchInference"))),
    HttpApiBuilder.group(api, "feedback", (handlers) => handlers.handleRaw("feedback", route("feedback", feedbackHandler)("feedback"))),
    HttpApiBuilder.group(api, "inferences", (handlers) =>
      handlers
        .handleRaw("getInferences", route("inferences", getInferencesHandler)("getInferences"))
        .handleRaw("listInferences", route("inferences", listInferencesHandler)("listInferences"))),
    HttpApiBuilder.group(api, "datasets", (handlers) => {
      const datasets = (endpoint: string, handler: (caller: Caller) => RouteHandler) => route("datasets", handler)(endpoint)
      return handlers
        .handleRaw("listDatasets", datasets("listDatasets", listDatasetsHandler))
        .handleRaw("createDatapoints", datasets("createDatapoints", createDatapointsHandler))
        .handleRaw("getDatapoints", datasets("getDatapoints", getDatapointsHandler))
        .handleRaw("listDatapoints", datasets("listDatapoints", listDatapointsHandler))
        .handleRaw("updateDatapoints", datasets("updateDatapoints", updateDatapointsHandler))
        .handleRaw("updateMetadata", datasets("updateMetadata", updateMetadataHandler))
        .handleRaw("deleteDatapoints", datasets("deleteDatapoints", deleteDatapointsHandler))
        .handleRaw("deleteDataset", datasets("deleteDataset", deleteDatasetHandler))
        .handleRaw("fromInferences", route("datasets", fromInferencesHandler)("fromInferences"))
        .handleRaw("exportDatapoints", datasets("exportDatapoints", exportDatapointsHandler))
        .handleRaw("importDatapoints", datasets("importDatapoints", importDatapointsHandler))
    }),
    HttpApiBuilder.group(api, "evaluations", (handlers) =>
      handlers
        .handleRaw("runEvaluation", route("evaluations", runEvaluationHandler)("runEvaluation"))
        .handleRaw("listEvaluationRuns", route("evaluations", listEvaluationRunsHandler)("listEvaluationRuns"))
        .handleRaw("getEvaluationRun", route("evaluations", getEvaluationRunHandler)("getEvaluationRun"))),
    HttpApiBuilder.group(api, "optimization", (handlers) =>
      handlers
        .handleRaw("createDiclExamples", route("optimization", createDiclExamplesHandler)("createDiclExamples"))
        .handleRaw("getDiclTask", route("optimization", getDiclTaskHandler)("getDiclTask"))
        .handleRaw("launchGepa", route("optimization", launchGepaHandler)("launchGepa"))
        .handleRaw("getGepaTask", route("optimization", getGepaTaskHandler)("getGepaTask"))
        .handleRaw("cancelGepaTask", route("optimization", cancelGepaTaskHandler)("cancelGepaTask"))),
    // the same handlers under both names of the routes
    HttpApiBuilder.group(api, "workflowEvaluations", (handlers) => {
      const runs = (endpoint: string, handler: (caller: Caller) => RouteHandler) => route("workflowEvaluations", handler)(endpoint)
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
        .handleRaw("signOut", route("uiSession", () => signOutHandler)("signOut"))
        .handleRaw("oidcStart", route("uiSession", () => oidcStartHandler)("oidcStart"))
        .handleRaw("oidcCallback", route("uiSession", () => oidcCallbackHandler)("oidcCallback"))),
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
        .handleRaw("getUiInference", route("uiInferences", getUiInferenceHandler)("getUiInference"))
        .handleRaw("getUiEpisode", route("uiInferences", getUiEpisodeHandler)("getUiEpisode"))),
    HttpApiBuilder.group(api, "uiOptimization", (handlers) =>
      handlers.handleRaw("exportGepaTask", route("uiOptimization", exportGepaTaskHandler)("exportGepaTask"))),
    HttpApiBuilder.group(api, "uiOverview", (handlers) =>
      handlers.handleRaw("getUiOverview", route("uiOverview", getUiOverviewHandler)("getUiOverview"))),
    HttpApiBuilder.group(api, "uiDatasets", (handlers) =>
      handlers.handleRaw("getDatapointHistory", route("uiDatasets", getDatapointHistoryHandler)("getDatapointHistory"))),
    HttpApiBuilder.group(api, "uiApiKeys", (handlers) =>
      handlers
        .handleRaw("listUiApiKeys", route("uiApiKeys", listUiApiKeysHandler)("listUiApiKeys"))
        .handleRaw("createUiApiKey", route("uiApiKeys", createUiApiKeyHandler)("createUiApiKey"))
        .handleRaw("disableUiApiKey", route("uiApiKeys", disableUiApiKeyHandler)("disableUiApiKey"))),
    HttpApiBuilder.group(api, "audit", (handlers) => handlers.handleRaw("listAudit", route("audit", listAuditHandler)("listAudit"))),
    HttpApiBuilder.group(api, "spend", (handlers) => handlers.handleRaw("getSpend", route("spend", getSpendHandler)("getSpend"))),
    HttpApiBuilder.group(api, "budgets", (handlers) =>
      handlers
        .handleRaw("listBudgets", route("budgets", listBudgetsHandler)("listBudgets"))
        .handleRaw("setBudget", route("budgets", setBudgetHandler)("setBudget"))
        .handleRaw("deleteBudget", route("budgets", deleteBudgetHandler)("deleteBudget"))),
    HttpApiBuilder.group(api, "uiWorkspaces", (handlers) =>
      handlers.handleRaw("listUiWorkspaces", route("uiWorkspaces", () => listUiWorkspacesHandler)("listUiWorkspaces"))),
    HttpApiBuilder.group(api, "operations", (handlers) =>
      handlers.handleRaw("reloadConfig", route("operations", reloadConfigHandler)("reloadConfig")))
  )
}
