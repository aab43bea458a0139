/**
 * The services the gateway runs with, as configured: the use cases, on top of the budget of
 * request bodies, the configuration and the models, access (authentication, rate limits),
 * observability (the stores and the write queue), trace export, and the outbound HTTP client
 * (which the trace exporter uses too). Each layer below sees those listed after it; everything
 * that needs a database checks it at start-up. Split in two for configuration reloads: what the
 * process keeps, and what each configuration builds (layers/reload.ts).
 */
import * as Layer from "effect/Layer"
import type { ConfigReload } from "../src/config/reload.ts"
import type { GatewayConfig } from "../src/config/types.ts"
import { BatchService } from "../src/batch/service.ts"
import { DatasetService } from "../src/datasets/service.ts"
import { DiclService } from "../src/dicl/service.ts"
import { EmbeddingService } from "../src/embeddings/service.ts"
import { EvaluationService } from "../src/evaluations/service.ts"
import { Experimentation } from "../src/experimentation/service.ts"
import { FeedbackService } from "../src/feedback/service.ts"
import { ModelTable } from "../src/inference/models.ts"
import { InferenceService } from "../src/inference/service.ts"
import { StoredResponses } from "../src/openaiResponses/service.ts"
import { StoredInferences } from "../src/storedInferences/service.ts"
import { GepaService } from "../src/optimization/gepa/service.ts"
import { Configuration, Models } from "../src/services.ts"
import { WorkflowEvaluationService } from "../src/workflowEvaluations/service.ts"
import { AccessLive } from "./access.ts"
import { makeBodyBudget, RequestBodyBudget } from "./http/requestBody.ts"
import { HttpTransportLive } from "./HttpTransport.ts"
import { MetricsLive } from "./metrics/prometheus.ts"
import { ObjectStorageLive } from "./objectStorage/index.ts"
import { ObservabilityLive } from "./observability/index.ts"
import { postgresConnectionsOf } from "./postgres/connectionBudget.ts"
import { TasksLive } from "./tasks/index.ts"
import { TracingLive } from "./tracing/otlp.ts"

type Env = Readonly<Record<string, string | undefined>>

/**
 * What a process builds once and keeps across configuration reloads: the budget of request
 * bodies, access (authentication, the rate limits' buckets), observability (the stores and the
 * write queue), metrics, trace export, durable tasks, and the outbound client with its
 * connection pools. They read the configuration they start with: `[gateway]`'s settings and
 * the databases do not change by reload.
 */
export const ProcessServicesLive = (config: GatewayConfig, env: Env) => {
  // this process's shares of `[postgres] connection_pool_size`
  const connections = postgresConnectionsOf(config, env)
  return Layer.succeed(RequestBodyBudget, makeBodyBudget(config.gateway.maxRequestBytesInFlight)).pipe(
    // built after access, whose migrations of the relational database come first
    Layer.provideMerge(TasksLive(env, {
      unrunnableTimeoutS: config.gateway.tasks.unrunnableTimeoutS,
      maxConnections: connections.tasks,
      lockConnections: connections.locks
    })),
    Layer.provideMerge(AccessLive(config, env)),
    // after the write queue, whose figures it reads at scrape time
    Layer.provideMerge(MetricsLive(config)),
    // stored responses keep the recent ones in memory across reloads
    Layer.provideMerge(StoredResponses.layer),
    Layer.provideMerge(ObservabilityLive(config, env)),
    Layer.provideMerge(TracingLive(config, env)),
    // the one outbound client: providers and the trace exporter send through it
    Layer.provideMerge(HttpTransportLive({
      totalTimeoutMs: config.gateway.globalOutboundHttpTimeoutMs,
      maxResponseBytes: config.gateway.maxProviderResponseBytes,
      maxStreamLineBytes: config.gateway.maxProviderStreamEventBytes
    }))
  )
}

/**
 * The use cases as one configuration has them, on top of the process's services: what a reload
 * builds anew. `models` may hand over the clients of providers a reload did not change.
 */
export const ConfiguredServicesLive = (config: GatewayConfig, models: ModelTable = new ModelTable(config)) =>
  Layer.mergeAll(
    // evaluation runs and prompt optimization make their inferences through the inference use case
    Layer.mergeAll(EvaluationService.layer, GepaService.layer).pipe(Layer.provideMerge(InferenceService.layer)),
    // DICL example tasks embed through the embeddings use case
    DiclService.layer.pipe(Layer.provideMerge(EmbeddingService.layer)),
    FeedbackService.layer,
    StoredInferences.layer,
    DatasetService.layer,
    BatchService.layer
  ).pipe(
    // inferences and feedback find the runs of their episodes through it
    Layer.provideMerge(WorkflowEvaluationService.layer),
    // inferences draw adaptive experiments' candidates with its probabilities
    Layer.provideMerge(Experimentation.layer),
    // `[object_storage]`, where inferences write their input files (absent: none)
    Layer.provideMerge(ObjectStorageLive(config.objectStorage)),
    Layer.provideMerge(Layer.mergeAll(Layer.succeed(Configuration, config), Layer.succeed(Models, models)))
  )

export const GatewayServicesLive = (config: GatewayConfig, env: Env) =>
  ConfiguredServicesLive(config).pipe(Layer.provideMerge(ProcessServicesLive(config, env)))

/** Every service the handlers may ask for: `GatewayServicesLive`'s, and the reload of the configuration the server adds. */
export type GatewayServices = Layer.Success<ReturnType<typeof GatewayServicesLive>> | ConfigReload
