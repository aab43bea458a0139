/**
 * The running gateway: the HTTP server with its routes, on top of the configured gateway
 * and the outbound HTTP client. SIGTERM/SIGINT close it gracefully: it stops accepting,
 * lets requests in flight finish (bounded by `shutdownTimeoutMs`), then exits.
 */
import { createServer, type ServerResponse } from "node:http"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import * as Layer from "effect/Layer"
import * as HttpRouter from "effect/http/HttpRouter"
import type { GatewayConfig } from "../src/config/types.ts"
import { AccessLive } from "./access.ts"
import { Routes } from "./http/routes.ts"
import { HttpTransportLive } from "./HttpTransport.ts"
import { ObservabilityLive } from "./observability/index.ts"
import { TracingLive } from "./tracing/otlp.ts"


export interface ServerOptions {
  readonly shutdownTimeoutMs?: number
}

/**
 * Node's `close()` ends only the keep-alive connections idle at that moment: one whose request
 * was in flight stays open after its response until `keepAliveTimeout`, and holds up the exit
 * for the whole shutdown timeout. Once closing, such connections end as their response does.
 */
const makeNodeServer = () => {
  const server = createServer({ keepAliveTimeout: 65_000 })
  const inFlight = new Set<ServerResponse>()
  let closing = false
  server.on("request", (_request, response: ServerResponse) => {
    if (closing) response.shouldKeepAlive = false
    inFlight.add(response)
    response.once("close", () => {
      inFlight.delete(response)
      if (closing) setImmediate(() => server.closeIdleConnections())
    })
  })
  const close = server.close.bind(server)
  server.close = ((callback?: (error?: Error) => void) => {
    closing = true
    for (const response of inFlight) if (!response.headersSent) response.shouldKeepAlive = false
    return close(callback)
  }) as typeof server.close
  return server
}

export const ServerLive = (
  config: GatewayConfig,
  env: Readonly<Record<string, string | undefined>>,
  options: ServerOptions = {}
) =>
  HttpRouter.serve(Routes, { disableLogger: true }).pipe(
    Layer.provide(NodeHttpServer.layer(makeNodeServer, {
      host: config.gateway.bindAddress.host,
      port: config.gateway.bindAddress.port,
      gracefulShutdownTimeout: options.shutdownTimeoutMs ?? 20_000
    })),
    Layer.provide(AccessLive(config, env)),
    Layer.provide(HttpTransportLive({
      totalTimeoutMs: config.gateway.globalOutboundHttpTimeoutMs,
      maxResponseBytes: config.gateway.maxProviderResponseBytes,
      maxStreamLineBytes: config.gateway.maxProviderStreamEventBytes
    })),
    Layer.provide(ObservabilityLive(config, env)),
    Layer.provide(TracingLive(config, env))
  )
