/**
 * Serving: the configuration loaded, then the server (layers/server.ts) until SIGTERM/SIGINT.
 * With more than one worker (`--workers` or `[gateway] workers`), this process is the primary:
 * it only starts and watches the workers (layers/cluster.ts), each of which runs the command
 * again and serves. The server's modules are imported by the processes that serve only.
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { announceListening, askOtherWorkersToReload, currentWorker, onForcedReloadAsked, runPrimary, workerCount } from "../cluster.ts"
import { loadConfig, logConfigWarnings } from "../configLoader.ts"
import { usesEmbeddedDatabase, withEmbeddedDatabases } from "../embedded/pglite.ts"
import { LoggingLive } from "../logging.ts"
import { configFromFlags, configPattern, type SharedFlags } from "./configuration.ts"
import { ExitWith, failWith } from "./exit.ts"

export const serve = (flags: SharedFlags, workersFlag: number | "auto" | undefined, watchConfig: boolean) =>
  Effect.gen(function*() {
    const loaded = yield* configFromFlags(flags)
    const { config, warnings } = loaded
    const level = config.gateway.debug ? "Debug" as const : undefined
    const worker = currentWorker()
    const workers = workerCount(workersFlag ?? config.gateway.workers)
    if (workers > 1 && usesEmbeddedDatabase(process.env)) {
      return yield* failWith(1, [
        `workers = ${workers} with an embedded database (pglite://): it lives in one process, which one gateway process serves; ` +
        "run one worker, or move to a Postgres server (docs/embedded-database.md: Moving to a Postgres server)"
      ])
    }
    if (worker === undefined && workers > 1) {
      // uninterruptible: the primary forwards SIGTERM/SIGINT to the workers and waits for them
      return yield* runPrimary(workers, config.gateway.bindAddress.port, config.gateway.drainDelayMs).pipe(
        Effect.flatMap((code) => (code === 0 ? Effect.void : Effect.die(new ExitWith(code)))),
        Effect.uninterruptible,
        Effect.provide(LoggingLive(flags.logFormat, level))
      )
    }
    const { ServerLive } = yield* Effect.promise(() => import("../server.ts"))
    const options = {
      load: () => loadConfig(configPattern(flags), process.env),
      watchConfig: watchConfig ? { pattern: configPattern(flags) } : undefined,
      ...(worker === undefined ? {} : {
        reusePort: worker.reusePort,
        onListening: announceListening,
        tellOtherWorkers: askOtherWorkersToReload,
        onForcedReloadAsked
      })
    }
    return yield* logConfigWarnings(warnings).pipe(
      Effect.andThen(Effect.logInfo(
        `configuration loaded: ${config.functions.size} functions, ${config.models.size} models, ${config.tools.size} tools, ${config.metrics.size} metrics`
      )),
      Effect.andThen(Effect.scoped(Effect.flatMap(
        withEmbeddedDatabases(process.env, {
          freeSpace: { minFreeBytes: config.gateway.embeddedDatabase.minFreeBytes, checkIntervalMs: config.gateway.embeddedDatabase.freeSpaceCheckIntervalMs }
        }),
        (env) => Layer.launch(ServerLive(loaded, env, options))
      ))),
      Effect.catchTag("StartupError", (error) => failWith(1, [error.message])),
      worker === undefined ? (effect) => effect : Effect.annotateLogs("worker", worker.number),
      Effect.provide(LoggingLive(flags.logFormat, level))
    )
  })
