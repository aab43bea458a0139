/**
 * The wire contract of the gateway: every route it serves, as an `HttpApi` of one group per
 * capability, with request and response Schemas. Routes exist only here (layers/http/routeTable.ts
 * implements them), and `GET /openapi.json` and `GET /docs` are generated from it.
 */
import * as HttpApi from "effect/http-api/HttpApi"
import * as OpenApi from "effect/http-api/OpenApi"
import { BatchGroup } from "./batch.ts"
import { DatasetsGroup } from "./datasets.ts"
import { EvaluationsGroup } from "./evaluations.ts"
import { ExperimentationGroup } from "./experimentation.ts"
import { FeedbackGroup } from "./feedback.ts"
import { bearerScheme } from "./guard.ts"
import { InferenceGroup } from "./inference.ts"
import { InferencesGroup } from "./inferences.ts"
import { MetricsGroup } from "./metrics.ts"
import { OpenAiGroup } from "./openaiCompatible.ts"
import { AnthropicGroup } from "./anthropicMessages.ts"
import { OpenAiResponsesGroup } from "./openaiResponses.ts"
import { OperationsGroup } from "./operations.ts"
import { OptimizationGroup } from "./optimization.ts"
import { ReferenceGroup } from "./reference.ts"
import { StatusGroup } from "./status.ts"
import { UiApiKeysGroup, UiWorkspacesGroup } from "./uiApiKeys.ts"
import { AuditGroup } from "./audit.ts"
import { SpendGroup } from "./spend.ts"
import { BudgetsGroup } from "./budgets.ts"
import { UiConfigGroup } from "./uiConfig.ts"
import { UiDatasetsGroup } from "./uiDatasets.ts"
import { UiInferencesGroup } from "./uiInferences.ts"
import { UiOptimizationGroup } from "./uiOptimization.ts"
import { UiOverviewGroup } from "./uiOverview.ts"
import { UiSessionGroup } from "./uiSession.ts"
import { WorkflowEvaluationsGroup } from "./workflowEvaluations.ts"

type Spec = Record<string, any>

/**
 * The document's finishing touches: the `bearer` scheme of the routes behind a key (or, with
 * authentication off, no security and no 401 at all), and streamed answers described by their events alone
 * (the `x-effect-stream` extension describes Effect's own stream failure events, which the
 * gateway does not send: its streams end with an error event of the route's shape).
 */
const finish = (authentication: boolean) => (spec: Spec): Spec => {
  for (const path of Object.values(spec.paths as Spec)) {
    for (const operation of Object.values(path as Spec)) {
      if (!authentication) {
        operation.security = []
        delete operation.responses?.["401"]
      }
      for (const response of Object.values((operation.responses ?? {}) as Spec)) {
        for (const media of Object.values((response.content ?? {}) as Spec)) delete media["x-effect-stream"]
      }
    }
  }
  return authentication ? { ...spec, components: { ...spec.components, securitySchemes: { bearer: bearerScheme } } } : spec
}

export const GatewayApi = HttpApi.make("gateway")
  .add(
    InferenceGroup,
    OpenAiGroup,
    OpenAiResponsesGroup,
    AnthropicGroup,
    BatchGroup,
    FeedbackGroup,
    InferencesGroup,
    DatasetsGroup,
    EvaluationsGroup,
    WorkflowEvaluationsGroup,
    ExperimentationGroup,
    OptimizationGroup,
    UiSessionGroup,
    UiConfigGroup,
    StatusGroup,
    MetricsGroup,
    ReferenceGroup,
    UiInferencesGroup,
    UiOptimizationGroup,
    UiOverviewGroup,
    UiDatasetsGroup,
    UiApiKeysGroup,
    UiWorkspacesGroup,
    AuditGroup,
    SpendGroup,
    BudgetsGroup,
    OperationsGroup
  )
  .annotateMerge(OpenApi.annotations({
    title: "LLM Gateway",
    description:
      "Calls functions and models across LLM providers (variants, fallbacks, streaming), with an OpenAI-compatible surface, " +
      "and stores inferences and feedback for observability, datasets of datapoints built from them, evaluations of functions on datasets, workflow evaluation runs, and the examples of dynamic in-context learning variants.",
    transform: finish(true)
  }))
export type GatewayApi = typeof GatewayApi

export interface Deployment {
  readonly version: string
  /** `[gateway] base_path`: "" or "/prefix" */
  readonly basePath: string
  /** whether the routes behind a key need one (`[gateway.auth] enabled`) */
  readonly authentication: boolean
  /** whether `/metrics` needs a key too (`[gateway.metrics] require_auth`) */
  readonly metricsRequireAuth?: boolean
}

/** The API as one gateway serves it: its version, its base path (the document's server) and its security. */
export const deployedApi = ({ authentication, basePath, version }: Deployment): GatewayApi =>
  GatewayApi.annotateMerge(OpenApi.annotations({
    version,
    servers: basePath === "" ? undefined : [{ url: basePath, description: "every route is served under `[gateway] base_path`" }],
    transform: finish(authentication)
  }))
