/**
 * The running gateway: the HTTP server with its routes (served under `[gateway] base_path`), on
 * top of the configured gateway and the one outbound HTTP client (providers and trace export). SIGTERM/SIGINT close it gracefully: it stops accepting,
 * lets requests in flight finish (bounded by `shutdownTimeoutMs`), then exits.
 */
import { createServer, type ServerResponse } from "node:http"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as HttpRouter from "effect/http/HttpRouter"
import * as HttpServer from "effect/http/HttpServer"
import type { GatewayConfig } from "../src/config/types.ts"
import { maxPathParamLength, Routes } from "./http/routes.ts"
import { GatewayServicesLive } from "./services.ts"

export interface ServerOptions {
  readonly shutdownTimeoutMs?: number
  /** bind with SO_REUSEPORT, so that several workers (`[gateway] workers`) each bind the port */
  readonly reusePort?: boolean
  /** told the bound address (the configured host, the port bound) once the server listens: a worker tells the primary */
  readonly onListening?: (address: { readonly host: string; readonly port: number }) => void
}

/** how connections are bounded: `[gateway] max_connections` and `request_read_timeout_ms` */
interface ConnectionLimits {
  readonly maxConnections: number
  readonly requestReadTimeoutMs: number
}

/**
 * A client must send its whole request (headers and body) within `requestReadTimeoutMs`, and its
 * headers within 30 s of that (less when the whole limit is less): past it Node answers 408 and
 * closes the connection, so stalled uploads free their connection and their share of
 * `max_request_bytes_in_flight`. Node checks the limits every `connectionsCheckingInterval`:
 * a tenth of the limit, between 100 ms and 30 s.
 */
const timeoutsOf = ({ requestReadTimeoutMs }: ConnectionLimits) => ({
  requestTimeout: requestReadTimeoutMs,
  headersTimeout: Math.min(requestReadTimeoutMs, 30_000),
  connectionsCheckingInterval: Math.min(30_000, Math.max(100, Math.floor(requestReadTimeoutMs / 10)))
})

/**
 * Node's `close()` ends only the keep-alive connections idle at that moment: one whose request
 * was in flight stays open after its response until `keepAliveTimeout`, and holds up the exit
 * for the whole shutdown timeout. Once closing, such connections end as their response does.
 * Past `maxConnections` open connections, Node closes new ones at once.
 */
const makeNodeServer = (limits: ConnectionLimits) => () => {
  const server = createServer({ keepAliveTimeout: 65_000, ...timeoutsOf(limits) })
  server.maxConnections = limits.maxConnections
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

const announceAddress = (host: string, onListening: NonNullable<ServerOptions["onListening"]>) =>
  Layer.effectDiscard(Effect.map(HttpServer.HttpServer, ({ address }) => {
    if ("port" in address) onListening({ host, port: address.port })
  }))

export const ServerLive = (
  config: GatewayConfig,
  env: Readonly<Record<string, string | undefined>>,
  options: ServerOptions = {}
) =>
  HttpRouter.serve(Routes({
    basePath: config.gateway.basePath,
    authentication: config.gateway.auth.enabled,
    metricsRequireAuth: config.gateway.metrics.requireAuth,
    ui: config.gateway.ui.enabled
  }), {
    disableLogger: true,
    routerConfig: { maxParamLength: maxPathParamLength }
  }).pipe(
    Layer.merge(options.onListening === undefined ? Layer.empty : announceAddress(config.gateway.bindAddress.host, options.onListening)),
    Layer.provide(NodeHttpServer.layer(makeNodeServer(config.gateway), {
      host: config.gateway.bindAddress.host,
      port: config.gateway.bindAddress.port,
      gracefulShutdownTimeout: options.shutdownTimeoutMs ?? 20_000,
      ...(options.reusePort === true ? { reusePort: true } : {})
    })),
    Layer.provide(GatewayServicesLive(config, env))
  )
