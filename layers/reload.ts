/**
 * Configuration reloads without a restart. The routes and the use cases a configuration builds
 * (layers/composition.ts `ConfiguredServicesLive`) form a *generation*, with its own Node request
 * handler; the server hands each new request to the current generation. A reload that
 * validates builds the next generation beside the current one, then swaps them: requests that
 * start afterwards run on it, while those in flight (streams included) finish on the one they
 * started with, which is closed once its last request ends, and then nothing keeps it (a reload
 * runs in the server's context, not in the context of the request that asked for it). Nothing is
 * added per request: the swap is one variable. A configuration that defines no function and no
 * model while the one serving does (an empty or truncated file) is refused unless forced.
 *
 * What a process keeps across reloads (`ProcessServicesLive`: databases, the write queue,
 * authentication, the outbound client and its connection pools, trace export, metrics) reads
 * the configuration the process started with, and so does everything `[gateway]` sets (the bind
 * address, the base path, the limits): a reload that changes `[gateway]` keeps the old table
 * and says so in a warning. Rate limit rules do reload, on the buckets opened at start-up.
 */
import type { IncomingMessage, ServerResponse } from "node:http"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import * as Cause from "effect/Cause"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Scope from "effect/Scope"
import * as Semaphore from "effect/Semaphore"
import * as HttpRouter from "effect/http/HttpRouter"
import * as HttpServer from "effect/http/HttpServer"
import { isDeepStrictEqual } from "node:util"
import { ConfigReload, type ConfigVersion, type ReloadOptions, type ReloadOutcome, removesEverything } from "../src/config/reload.ts"
import type { GatewayConfig } from "../src/config/types.ts"
import { ModelTable } from "../src/inference/models.ts"
import { Metrics } from "../src/metrics/metrics.ts"
import { BudgetAdministration } from "../src/budgets/runtime.ts"
import type { BudgetCounting } from "../src/budgets/reservation.ts"
import { RateLimiter, type RateLimits } from "../src/ratelimit/limiter.ts"
import { type LoadedConfig, logConfigWarnings, problemCount, type ValidConfig } from "./configLoader.ts"
import { maxPathParamLength } from "./http/fallback.ts"
import { type HotDispatch, makeHotDispatch } from "./http/hotRoutes.ts"
import { Routes } from "./http/routes.ts"
import { ConfiguredServicesLive, type ProcessServicesLive } from "./composition.ts"

type NodeHandler = (request: IncomingMessage, response: ServerResponse) => void

/** the server's request listener: hands the request over, and gives what to run once its response closes */
export type Dispatch = (request: IncomingMessage, response: ServerResponse) => (() => void) | undefined

/** A configuration serving requests: its routes' handler, and the scope its services live in. */
interface Generation {
  readonly config: GatewayConfig
  /** kept so that the next generation reuses the clients of the providers a reload did not change */
  readonly models: ModelTable
  readonly files: ReadonlyArray<string>
  readonly version: ConfigVersion
  readonly handler: NodeHandler
  readonly scope: Scope.Closeable
  inFlight: number
  retired: boolean
}


/** what every generation runs on: the process's services, and Node's HTTP platform services */
export type ProcessContext = Context.Context<Layer.Success<ReturnType<typeof ProcessServicesLive>> | Layer.Success<typeof NodeHttpServer.layerHttpServices>>

/**
 * The `[gateway]` keys a reload changed: they keep their start-up values (the server, the
 * databases and the process's services were built with them).
 */
const changedGatewayKeys = (before: GatewayConfig["gateway"], after: GatewayConfig["gateway"]): ReadonlyArray<string> =>
  Object.keys({ ...before, ...after }).filter((key) =>
    !isDeepStrictEqual(before[key as keyof typeof before], after[key as keyof typeof after])
  ).map(snakeCase)

/** `basePath` → `base_path`: the settings' names as the TOML file writes them */
const snakeCase = (name: string) => name.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`)

/**
 * The rate limits and budgets of a reloaded configuration, on the buckets and counters the
 * process opened at start-up; rules or budgets where there were none at start-up have nowhere to
 * count: a warning, and no limits (or no budgets).
 */
const reloadedRateLimiter = (config: GatewayConfig, started: RateLimiter["Service"]): { readonly limiter: RateLimiter["Service"]; readonly warnings: ReadonlyArray<string> } => {
  const { enabled, rules, defaultCost, budgets: configured } = config.rateLimiting
  const warnings: Array<string> = []
  const store = started.limits?.store
  let limits: RateLimits | undefined
  if (enabled && rules.length > 0) {
    if (store === undefined) warnings.push("[rate_limiting] rules added by a reload take effect at the next restart (no buckets were opened at start-up)")
    else limits = { rules, store, defaultCost }
  }
  // the counters opened at start-up also count the run-time budgets: kept whatever the configuration now says
  const budgets: BudgetCounting | undefined = started.budgets === undefined || !enabled ? undefined : { counters: started.budgets.counters, defaultCost }
  if (enabled && configured.length > 0 && budgets === undefined) {
    warnings.push("[[rate_limiting.budgets]] added by a reload take effect at the next restart (no budget counters were opened at start-up)")
  }
  return { limiter: limits === undefined && budgets === undefined ? RateLimiter.none : RateLimiter.of({ limits, budgets }), warnings }
}

export interface GenerationsOptions {
  /** the process's services, which every generation runs on */
  readonly processContext: ProcessContext
  /** the listening server: its address, for the routes */
  readonly address: HttpServer.HttpServer["Service"]["address"]
  /** the scope generations are opened in: closed after the server drained */
  readonly scope: Scope.Scope
  /** loads the configuration files again, as at start-up */
  readonly load: () => LoadedConfig
  /** with `[gateway] workers`: asks the other workers to reload too (after this one did), forced if this one was */
  readonly tellOtherWorkers?: ((options: ReloadOptions) => void) | undefined
}

/**
 * The generations of one server: `handle` is its Node request listener, `start` builds the
 * first generation, and the `ConfigReload` service reloads.
 */
export const makeGenerations = (options: GenerationsOptions) => {
  let current: Generation | undefined
  const started = Context.get(options.processContext, RateLimiter)
  const lock = Semaphore.makeUnsafe(1)
  /**
   * What reloads run in: the context the first generation was built in, never the caller's. A
   * generation built inside a request would capture that request's context (its handler keeps
   * the context it was built in), which holds the generation serving the request, which was
   * built inside the request before: every generation would stay alive for good. On a fiber of
   * its own, a reload also completes when the client that asked for it goes away.
   */
  let reloadContext: Context.Context<never> | undefined

  /** a retired generation's services are released once its last request has ended */
  const closeIfDone = (generation: Generation) => {
    if (generation.retired && generation.inFlight === 0) Effect.runFork(Scope.close(generation.scope, Exit.void))
  }

  const retire = (generation: Generation) => {
    generation.retired = true
    closeIfDone(generation)
  }

  const handle: Dispatch = (request, response) => {
    const generation = current
    if (generation === undefined) {
      response.writeHead(503, { "content-type": "application/json", "retry-after": "1" }).end(`{"error":"the gateway is starting"}`)
      return undefined
    }
    generation.inFlight++
    generation.handler(request, response)
    return () => {
      generation.inFlight--
      closeIfDone(generation)
    }
  }

  /** reloads this process only (SIGHUP, which the primary sends every worker; a watched file, which every worker watches) */
  const reloadLocal = (trigger: string, reloadOptions: ReloadOptions = {}) =>
    Fiber.join(Effect.runForkWith(reloadContext!)(lock.withPermits(1)(reloadNow(trigger, reloadOptions.force === true))))

  /** over HTTP the request reaches one worker: the others are told once this one has the configuration */
  const reloadService: ConfigReload["Service"] = {
    current: () => current!.version,
    reload: (trigger, reloadOptions = {}) =>
      Effect.tap(reloadLocal(trigger, reloadOptions), (outcome) =>
        Effect.sync(() => {
          if (outcome.status === "reloaded" || outcome.status === "unchanged") options.tellOtherWorkers?.(reloadOptions)
        }))
  }

  /** builds a generation of `loaded` (its services, then its routes) in a scope of its own */
  const build = (loaded: ValidConfig, config: GatewayConfig, models: ModelTable, limiter: RateLimiter["Service"]) =>
    Effect.gen(function*() {
      const scope = yield* Scope.fork(options.scope, "sequential")
      let handler: NodeHandler | undefined
      const deployment = {
        basePath: config.gateway.basePath,
        authentication: config.gateway.auth.enabled,
        metricsRequireAuth: config.gateway.metrics.requireAuth,
        ui: config.gateway.ui.enabled,
        errorJson: config.gateway.errorJson
      }
      const server = HttpServer.make({
        address: options.address,
        // runs in the routes' context: the hot routes' handlers find their services there, as the router's do
        serve: (app, middleware) =>
          Effect.flatMap(Effect.scope, (serveScope) =>
            Effect.gen(function*() {
              const routed = (yield* NodeHttpServer.makeHandler(app, { middleware: middleware as never, scope: serveScope })) as NodeHandler
              const hot = yield* (makeHotDispatch(deployment, middleware, serveScope) as Effect.Effect<HotDispatch>)
              handler = (request, response) => {
                if (!hot(request, response)) routed(request, response)
              }
            }))
      })
      const routes = HttpRouter.serve(Routes(deployment), { disableLogger: true, disableListenLog: true, routerConfig: { maxParamLength: maxPathParamLength } }).pipe(
        Layer.provide(ConfiguredServicesLive(config, models)),
        Layer.provide(Layer.succeedContext(Context.merge(
          options.processContext,
          Context.make(HttpServer.HttpServer, server).pipe(Context.add(ConfigReload, reloadService), Context.add(RateLimiter, limiter))
        )))
      )
      const exit = yield* Effect.exit(Layer.buildWithScope(routes, scope))
      if (Exit.isFailure(exit)) {
        yield* Scope.close(scope, exit)
        return yield* Effect.failCause(exit.cause)
      }
      const generation: Generation = {
        config,
        models,
        files: loaded.files,
        version: { hash: loaded.hash, loadedAt: Date.now() },
        handler: handler!,
        scope,
        inFlight: 0,
        retired: false
      }
      return generation
    })

  const swapTo = (next: Generation) => {
    const previous = current
    current = next
    if (previous !== undefined) retire(previous)
  }

  /** the first generation: the configuration the process started with */
  const start = (loaded: ValidConfig) =>
    Effect.flatMap(Effect.context<never>(), (context) => {
      reloadContext = context
      return Effect.map(build(loaded, loaded.config, new ModelTable(loaded.config), started), swapTo)
    })

  const reloadNow = (trigger: string, force: boolean): Effect.Effect<ReloadOutcome> =>
    Effect.gen(function*() {
      const serving = current!
      yield* Effect.logInfo(`configuration: reloading (${trigger}${force ? ", forced" : ""})`)
      const loaded = options.load()
      if ("errors" in loaded) {
        // watch what the broken configuration reads too: the fix may be in a file it names
        filesChanged?.([...new Set([...serving.files, ...loaded.files])])
        // one problem per further part of the message: a line of its own, indented (layers/logging.ts)
        yield* Effect.logError(
          `configuration: the reloaded configuration is invalid (${problemCount(loaded.errors)}); the configuration serving stays:`,
          ...loaded.errors
        )
        return { status: "invalid", version: serving.version, errors: loaded.errors } as const
      }
      if (loaded.hash === serving.version.hash) {
        yield* Effect.logInfo(`configuration: unchanged (${loaded.hash.slice(0, 12)})`)
        return { status: "unchanged", version: serving.version } as const
      }
      const emptied = removesEverything(serving.config, loaded.config)
      if (emptied !== undefined) {
        if (!force) {
          // watch what it read: the rest of a file being written changes it again
          filesChanged?.([...new Set([...serving.files, ...loaded.files])])
          yield* Effect.logError(`configuration: ${emptied}; the configuration serving stays`)
          return { status: "refused", version: serving.version, reason: emptied } as const
        }
        yield* Effect.logWarning(`configuration: the reloaded configuration defines no functions and no models; applied, as forced`)
      }
      const warnings = [...loaded.warnings]
      const changed = changedGatewayKeys(serving.config.gateway, loaded.config.gateway)
      if (changed.includes("relay")) {
        // the models were rewritten to the relay at build time: a changed relay would half apply
        const errors = ["[gateway.relay] changed: the relay is set at start-up (the models are built on it); restart the gateway to change it"]
        yield* Effect.logError(`configuration: ${errors[0]}; the configuration serving stays`)
        return { status: "invalid", version: serving.version, errors } as const
      }
      if (changed.length > 0) {
        warnings.push(`[gateway] ${changed.join(", ")} changed: [gateway] takes effect at the next restart; the running values stay`)
      }
      // `[gateway]` stays as the process started: the server and the process's services were built with it
      const config: GatewayConfig = { ...loaded.config, gateway: serving.config.gateway }
      const { limiter, warnings: limiterWarnings } = reloadedRateLimiter(config, started)
      warnings.push(...limiterWarnings)
      const built = yield* Effect.exit(build({ ...loaded, warnings }, config, new ModelTable(config, serving.models), limiter))
      if (Exit.isFailure(built)) {
        const error = Cause.squash(built.cause)
        const message = error instanceof Error ? error.message : String(error)
        yield* Effect.logError(`configuration: the reloaded configuration could not start (${message}); the configuration serving stays`)
        return { status: "invalid", version: serving.version, errors: [message] } as const
      }
      swapTo(built.value)
      Context.get(options.processContext, BudgetAdministration).configure(config.rateLimiting.budgets)
      Context.get(options.processContext, Metrics).modelsChanged(config.models)
      yield* logConfigWarnings(warnings)
      yield* Effect.logInfo(
        `configuration reloaded (${loaded.hash.slice(0, 12)}): ${config.functions.size} functions, ${config.models.size} models, ${config.tools.size} tools, ${config.metrics.size} metrics`
      )
      filesChanged?.(loaded.files)
      return { status: "reloaded", version: built.value.version, warnings } as const
    })

  /** told the files of each load, for `--watch-config` */
  let filesChanged: ((files: ReadonlyArray<string>) => void) | undefined
  const onFilesChanged = (listener: (files: ReadonlyArray<string>) => void) => {
    filesChanged = listener
  }

  return { handle, start, reloadLocal, onFilesChanged }
}

