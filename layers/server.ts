/**
 * The running gateway: the HTTP server with its routes (served under `[gateway] base_path`), on
 * top of the configured gateway and the one outbound HTTP client (providers and trace export).
 * SIGTERM/SIGINT close it gracefully: it drains (`[gateway] drain_delay_ms`), stops accepting,
 * lets requests in flight finish (bounded by `shutdownTimeoutMs`), then exits. SIGHUP (and `--watch-config`, and `POST
 * /internal/config/reload`) loads the configuration again (layers/reload.ts).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Scope from "effect/Scope"
import * as HttpServer from "effect/http/HttpServer"
import type { ReloadOptions } from "../src/config/reload.ts"
import type { LoadedConfig, ValidConfig } from "./configLoader.ts"
import { isDraining, startDraining } from "./draining.ts"
import { makeGenerations } from "./reload.ts"
import { reloadTriggers } from "./reloadTriggers.ts"
import { ProcessServicesLive } from "./composition.ts"

export interface ServerOptions {
  /** loads the configuration files again, as at start-up (a reload) */
  readonly load: () => LoadedConfig
  /** `--watch-config`: reload when a file of the configuration changes, or (a glob) a new one matches */
  readonly watchConfig?: { readonly pattern: string | undefined } | undefined
  /** with `[gateway] workers`: after a reload asked over HTTP, the other workers reload too (forced if it was) */
  readonly tellOtherWorkers?: (options: ReloadOptions) => void
  /** with `[gateway] workers`: calls its listener when another worker's forced reload asks this one to reload, forced; returns what stops it */
  readonly onForcedReloadAsked?: (listener: () => void) => () => void
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
const makeNodeServer = (limits: ConnectionLimits, handle: (request: IncomingMessage, response: ServerResponse) => (() => void) | undefined) => () => {
  const server = createServer({ keepAliveTimeout: 65_000, ...timeoutsOf(limits) })
  server.maxConnections = limits.maxConnections
  const inFlight = new Set<ServerResponse>()
  let closing = false
  server.on("request", (request: IncomingMessage, response: ServerResponse) => {
    if (closing || isDraining()) response.shouldKeepAlive = false
    inFlight.add(response)
    const handled = handle(request, response)
    response.once("close", () => {
      inFlight.delete(response)
      handled?.()
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

/** how long the server waits for requests in flight once it stops (then it closes regardless) */
const defaultShutdownTimeoutMs = 20_000

/**
 * Stopping: first `delayMs` of draining (layers/draining.ts: /health answers 503 while requests
 * are still served, for a load balancer to stop sending any), then the listener closes and the
 * requests in flight are waited for, at most `timeoutMs`.
 */
const drain = (server: Server, delayMs: number, timeoutMs: number) =>
  Effect.andThen(
    Effect.suspend(() => {
      startDraining()
      return delayMs > 0 && server.listening
        ? Effect.andThen(Effect.logInfo(`draining: /health answers 503 for ${delayMs} ms before the listener closes`), Effect.sleep(Duration.millis(delayMs)))
        : Effect.void
    }),
    closeAndWait(server, timeoutMs)
  )

/** stops accepting and waits for the requests in flight, at most `timeoutMs` */
const closeAndWait = (server: Server, timeoutMs: number) =>
  Effect.timeoutOrElse(
    Effect.callback<void>((resume) => {
      if (!server.listening) return resume(Effect.void)
      server.close(() => resume(Effect.void))
    }),
    { duration: Duration.millis(timeoutMs), orElse: () => Effect.void }
  )

/**
 * The gateway: the process's services, the server listening, then the routes and use cases of
 * the configuration (a generation: layers/reload.ts), which a reload replaces. At the end, in
 * this order: the server drains its requests, the generations close, the process's services
 * close (the write queue flushes).
 */
export const ServerLive = (
  loaded: ValidConfig,
  env: Readonly<Record<string, string | undefined>>,
  options: ServerOptions
) =>
  Layer.effectDiscard(Effect.gen(function*() {
    const { config } = loaded
    const scope = yield* Effect.scope
    const processContext = yield* Layer.build(Layer.merge(ProcessServicesLive(config, env), NodeHttpServer.layerHttpServices))
    // forked before the server: closed after it drained
    const generationsScope = yield* Scope.fork(scope, "sequential")
    let generations: ReturnType<typeof makeGenerations> | undefined
    const server = makeNodeServer(config.gateway, (request, response) => generations!.handle(request, response))()
    const listening = yield* NodeHttpServer.make(() => server, {
      host: config.gateway.bindAddress.host,
      port: config.gateway.bindAddress.port,
      disablePreemptiveShutdown: true,
      ...(options.reusePort === true ? { reusePort: true } : {})
    })
    yield* Effect.addFinalizer(() => drain(server, config.gateway.drainDelayMs, options.shutdownTimeoutMs ?? defaultShutdownTimeoutMs))
    generations = makeGenerations({
      processContext,
      address: listening.address,
      scope: generationsScope,
      load: options.load,
      tellOtherWorkers: options.tellOtherWorkers
    })
    yield* generations.start(loaded)
    yield* Effect.provideService(HttpServer.logAddress, HttpServer.HttpServer, listening)
    if (options.onListening !== undefined && "port" in listening.address) {
      options.onListening({ host: config.gateway.bindAddress.host, port: listening.address.port })
    }
    yield* reloadTriggers(generations, {
      watched: options.watchConfig === undefined ? undefined : { files: loaded.files, pattern: options.watchConfig.pattern },
      onForcedReloadAsked: options.onForcedReloadAsked
    })
  }))
