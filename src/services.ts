/**
 * The gateway-wide services: the configuration it runs on and its models (the outbound HTTP
 * port is src/transport.ts). Capabilities declare their own services and ports in their folders
 * (src/<capability>/); implementations are Layers in `layers/`, composed in
 * layers/composition.ts, and tests compose the real core with real or fake layers.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import type { GatewayConfig } from "./config/types.ts"
import type { ModelTable } from "./inference/models.ts"
import { BudgetTable } from "./budgets/budget.ts"
import { CacheStoreService } from "./cache/store.ts"
import { RateLimiter } from "./ratelimit/limiter.ts"
import { HttpTransport } from "./transport.ts"

/** The configuration the gateway runs on, validated. */
export class Configuration extends Context.Service<Configuration, GatewayConfig>()("gateway/Configuration") {}

/** The models a request can reach, with a client for every provider of each. */
export class Models extends Context.Service<Models, ModelTable>()("gateway/Models") {}

/**
 * What the engine reads from its context while an inference runs: the models, the rate
 * limits and budgets, the cache's store and the outbound client.
 */
export type InferenceServices = HttpTransport | Models | RateLimiter | BudgetTable | CacheStoreService

/** the inference services of the current context, for work that runs outside any request: a durable task's handler gets nothing from its context */
export const captureInferenceServices: Effect.Effect<Context.Context<InferenceServices>, never, InferenceServices> = Effect.map(
  Effect.context<InferenceServices>(),
  Context.pick(HttpTransport, Models, RateLimiter, BudgetTable, CacheStoreService)
)
