/**
 * The running gateway: the HTTP server with its routes, on top of the configured gateway
 * and the outbound HTTP client. SIGTERM/SIGINT close it gracefully: it stops accepting,
 * lets requests in flight finish (bounded by `shutdownTimeoutMs`), then exits.
 */
import { createServer } from "node:http"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import * as Layer from "effect/Layer"
import * as HttpRouter from "effect/http/HttpRouter"
import type { GatewayConfig } from "../src/config/types.ts"
import { ModelTable } from "../src/inference/models.ts"
import { Gateway } from "../src/services.ts"
import { Routes } from "./http/routes.ts"
import { HttpTransportLive } from "./HttpTransport.ts"

export const GatewayLive = (config: GatewayConfig) => Layer.succeed(Gateway, { config, models: new ModelTable(config) })

export interface ServerOptions {
  readonly shutdownTimeoutMs?: number
}

export const ServerLive = (config: GatewayConfig, options: ServerOptions = {}) =>
  HttpRouter.serve(Routes, { disableLogger: true }).pipe(
    Layer.provide(NodeHttpServer.layer(() => createServer({ keepAliveTimeout: 65_000 }), {
      host: config.gateway.bindAddress.host,
      port: config.gateway.bindAddress.port,
      gracefulShutdownTimeout: options.shutdownTimeoutMs ?? 20_000
    })),
    Layer.provide(GatewayLive(config)),
    Layer.provide(HttpTransportLive())
  )
