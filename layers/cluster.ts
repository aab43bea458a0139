/**
 * `[gateway] workers = n | "auto"` (or `--workers`): a primary process that serves nothing
 * itself starts n worker processes (Node's `cluster`, which gives each an IPC channel to the
 * primary) that each run the whole gateway on the same port.
 *
 * - Balancing: on Linux, each worker binds the port itself with `SO_REUSEPORT` and the kernel
 *   spreads new connections over them: the primary does nothing per connection. Elsewhere (or
 *   with `GATEWAY_WORKERS_BALANCING=primary`, kept to measure both: bench --workers-scenario)
 *   the primary accepts every connection and hands it round-robin to a worker (Node's cluster
 *   default), which costs the primary CPU per new connection.
 * - Start-up: the workers start together; with port 0, worker 1 starts first and the others
 *   once it listens, on the port it got. If one exits before any listens (the port is taken, a
 *   database is down), the primary stops the others and exits 1: the worker's log said why.
 * - A worker that dies is replaced after a delay doubling from 100 ms to 10 s, back to 100 ms
 *   once a worker has lived 30 s. A replacement that fails before listening 5 times in a row
 *   stops the gateway (exit 1) rather than loop forever.
 * - SIGHUP: forwarded to every worker, which reloads its configuration (layers/reload.ts); a
 *   worker that reloaded on `POST /internal/config/reload` has the primary send it to the others
 *   (a forced reload as a message instead, which forces theirs: SIGHUP never forces).
 * - SIGTERM/SIGINT: forwarded to every worker, which drains its requests and flushes its write
 *   queue; the primary exits 0 once all have exited with 0, 1 if one did not (or had to be
 *   killed after `stopTimeoutMs`).
 *
 * Only Node's modules, Effect and the metrics aggregator (prom-client) here: the primary must
 * stay light (it never loads the gateway itself).
 */
import cluster, { type Worker } from "node:cluster"
import * as os from "node:os"
import * as Effect from "effect/Effect"
import { installMetricsAggregator } from "./metrics/cluster.ts"

/** how many workers `[gateway] workers` (or `--workers`) asks for: "auto" is one per core */
export const workerCount = (setting: number | "auto"): number => (setting === "auto" ? os.availableParallelism() : setting)

/** `--workers`: a positive integer or "auto"; undefined if it is neither */
export const parseWorkers = (text: string): number | "auto" | undefined => {
  if (text === "auto") return "auto"
  return /^[1-9]\d{0,5}$/.test(text) ? Number(text) : undefined
}

/**
 * How long a worker may take to stop after SIGTERM, besides `[gateway] drain_delay_ms`: the
 * server's wait for requests in flight (20 s, layers/server.ts), then the write queue's final
 * flush (10 s, layers/observability/index.ts), and a margin.
 */
export const workerStopTimeoutMs = 35_000

/** the environment variable telling a worker its number (1..n), stable across replacements */
const workerVariable = "GATEWAY_WORKER"
const listeningMessage = "gateway:listening"
/** a worker asks the primary to have the other workers reload their configuration */
const reloadMessage = "gateway:reload"
/** the primary asks a worker to reload its configuration, forced (`POST /internal/config/reload?force=true` on another) */
const forcedReloadMessage = "gateway:forced-reload"

/** how connections reach workers: the kernel (`SO_REUSEPORT`, the default) or the primary (round-robin) */
export type Balancing = "kernel" | "primary"

/** the kernel where it balances SO_REUSEPORT listeners (Node refuses `reusePort` on other platforms) */
export const balancingOf = (env: Readonly<Record<string, string | undefined>>): Balancing =>
  env.GATEWAY_WORKERS_BALANCING === "primary" || !["linux", "freebsd"].includes(process.platform) ? "primary" : "kernel"

/** In a worker process: its number and how it should listen; undefined in a single process (or the primary). */
export const currentWorker = (): { readonly number: number; readonly reusePort: boolean } | undefined =>
  cluster.isWorker ? { number: Number(process.env[workerVariable]), reusePort: balancingOf(process.env) === "kernel" } : undefined

/** In a worker: tells the primary that it listens, and where (the primary starts the others then). */
export const announceListening = (address: { readonly host: string; readonly port: number }): void => {
  process.send?.({ type: listeningMessage, host: address.host, port: address.port })
}

/** In a worker that reloaded over HTTP: the primary sends SIGHUP to the other workers (a forced reload's message when `force`). */
export const askOtherWorkersToReload = (options: { readonly force?: boolean | undefined }): void => {
  process.send?.({ type: reloadMessage, force: options.force === true })
}

/** In a worker: `listener` runs when the primary asks for a forced reload; returns what stops listening. */
export const onForcedReloadAsked = (listener: () => void): () => void => {
  const onMessage = (message: { type?: unknown }) => {
    if (message?.type === forcedReloadMessage) listener()
  }
  process.on("message", onMessage)
  return () => {
    process.off("message", onMessage)
  }
}

export type LogLevel = "info" | "warning" | "error"

export interface SupervisorOptions {
  readonly workers: number
  /** the configured port: 0 has worker 1 choose it for all */
  readonly port: number
  readonly balancing: Balancing
  /** how long a worker may take to exit after SIGTERM before it is killed */
  readonly stopTimeoutMs: number
  readonly log: (level: LogLevel, message: string) => void
}

const firstRestartDelayMs = 100
const maxRestartDelayMs = 10_000
/** a worker that lived this long resets its slot's delay */
const healthyAfterMs = 30_000
/** replacements failing before they listen, in a row, before the primary gives up */
const maxStartFailures = 5

interface Slot {
  readonly number: number
  worker: Worker | undefined
  startedAt: number
  listening: boolean
  delayMs: number
  startFailures: number
  restart: NodeJS.Timeout | undefined
}

const exitDescription = (code: number | null, signal: string | null) => (signal !== null ? `killed by ${signal}` : `exited with code ${code}`)

/** `host:port` as GATEWAY_BIND_ADDRESS reads it (an IPv6 host in brackets) */
const bindAddress = (host: string, port: number) => `${host.includes(":") ? `[${host}]` : host}:${port}`

/**
 * In the primary: starts the workers, replaces those that die, and stops them all on SIGTERM
 * or SIGINT. Resolves with the primary's exit code once every worker has exited.
 */
export const superviseWorkers = (options: SupervisorOptions): Promise<number> =>
  new Promise((resolve) => {
    const { log } = options
    const slots: Array<Slot> = Array.from({ length: options.workers }, (_, index) => ({
      number: index + 1,
      worker: undefined,
      startedAt: 0,
      listening: false,
      delayMs: firstRestartDelayMs,
      startFailures: 0,
      restart: undefined
    }))
    // with port 0 and SO_REUSEPORT, the address worker 1 listens on, for the others
    let boundAddress: string | undefined
    let anyListened = false
    let stopping = false
    let exitCode = 0
    let killTimer: NodeJS.Timeout | undefined

    const fork = (slot: Slot) => {
      slot.restart = undefined
      slot.listening = false
      slot.startedAt = Date.now()
      const env: Record<string, string> = { [workerVariable]: String(slot.number) }
      if (options.balancing === "kernel" && boundAddress !== undefined) env.GATEWAY_BIND_ADDRESS = boundAddress
      const worker = cluster.fork(env)
      slot.worker = worker
      worker.on("message", (message: { type?: unknown; host?: string; port?: number; force?: unknown }) => {
        if (message?.type === reloadMessage) {
          return reloadWorkers(`worker ${slot.number} reloaded over HTTP${message.force === true ? ", forced" : ""}`, slot, message.force === true)
        }
        if (message?.type !== listeningMessage) return
        slot.listening = true
        slot.startFailures = 0
        if (!anyListened && options.port === 0) {
          boundAddress = bindAddress(message.host!, message.port!)
          if (!stopping) for (const other of slots.slice(1)) fork(other)
        }
        anyListened = true
      })
      worker.on("exit", (code, signal) => onExit(slot, worker, code, signal))
    }

    const finishIfAllExited = () => {
      if (slots.some((slot) => slot.worker !== undefined)) return
      clearTimeout(killTimer)
      process.off("SIGTERM", stop)
      process.off("SIGINT", stop)
      process.off("SIGHUP", onHangup)
      resolve(exitCode)
    }

    const stop = () => {
      if (stopping) return
      stopping = true
      const live = slots.filter((slot) => slot.worker !== undefined)
      log("info", `stopping: ${live.length} worker${live.length === 1 ? "" : "s"} drain their requests (at most ${options.stopTimeoutMs / 1000} s)`)
      for (const slot of slots) {
        clearTimeout(slot.restart)
        slot.restart = undefined
        slot.worker?.process.kill("SIGTERM")
      }
      killTimer = setTimeout(() => {
        for (const slot of slots) {
          if (slot.worker === undefined) continue
          log("error", `worker ${slot.number} (pid ${slot.worker.process.pid}) did not stop within ${options.stopTimeoutMs / 1000} s: killing it`)
          exitCode = 1
          slot.worker.process.kill("SIGKILL")
        }
      }, options.stopTimeoutMs)
      finishIfAllExited()
    }

    /** SIGHUP (or, forced, a message) to every live worker but `except`: each loads the configuration again */
    const reloadWorkers = (why: string, except?: Slot, force = false) => {
      if (stopping) return
      const others = slots.filter((slot) => slot !== except && slot.worker !== undefined)
      log("info", `${why}: ${others.length} worker${others.length === 1 ? "" : "s"} reload the configuration`)
      for (const slot of others) {
        if (force) slot.worker!.send({ type: forcedReloadMessage })
        else slot.worker!.process.kill("SIGHUP")
      }
    }
    const onHangup = () => reloadWorkers("SIGHUP")

    /** stops the workers and makes the primary exit 1 */
    const giveUp = (reason: string) => {
      log("error", reason)
      exitCode = 1
      stop()
    }

    const onExit = (slot: Slot, worker: Worker, code: number | null, signal: string | null) => {
      if (slot.worker !== worker) return
      slot.worker = undefined
      const pid = worker.process.pid
      if (stopping) {
        if (code !== 0) {
          log("error", `worker ${slot.number} (pid ${pid}) ${exitDescription(code, signal)} while stopping`)
          exitCode = 1
        }
        return finishIfAllExited()
      }
      if (!slot.listening) {
        if (!anyListened) {
          return giveUp(`worker ${slot.number} (pid ${pid}) ${exitDescription(code, signal)} before it listened: the gateway cannot start`)
        }
        slot.startFailures++
        if (slot.startFailures >= maxStartFailures) {
          return giveUp(`worker ${slot.number} failed ${slot.startFailures} times in a row before it listened: stopping the gateway`)
        }
      }
      if (Date.now() - slot.startedAt >= healthyAfterMs) slot.delayMs = firstRestartDelayMs
      log("warning", `worker ${slot.number} (pid ${pid}) ${exitDescription(code, signal)}: starting a new one in ${slot.delayMs} ms`)
      slot.restart = setTimeout(() => fork(slot), slot.delayMs)
      slot.delayMs = Math.min(slot.delayMs * 2, maxRestartDelayMs)
    }

    process.on("SIGTERM", stop)
    process.on("SIGINT", stop)
    process.on("SIGHUP", onHangup)
    // (read when a worker first listens; round-robin is already Node's default outside Windows)
    if (options.balancing === "primary") cluster.schedulingPolicy = cluster.SCHED_RR
    log("info", `starting ${options.workers} workers (${options.balancing === "kernel" ? "SO_REUSEPORT" : "round-robin by the primary"})`)
    for (const slot of options.port === 0 ? slots.slice(0, 1) : slots) fork(slot)
  })

/**
 * The primary as an effect: supervises `workers` workers, logging through the current logger,
 * and succeeds with the exit code. It installs its own SIGTERM/SIGINT handling: run it
 * uninterruptibly, so that a signal drains the workers rather than ending the primary.
 */
export const runPrimary = (workers: number, port: number, drainDelayMs = 0): Effect.Effect<number> =>
  Effect.flatMap(Effect.context<never>(), (context) => {
    const run = Effect.runSyncWith(context)
    const log = (level: LogLevel, message: string) =>
      run(level === "error" ? Effect.logError(message) : level === "warning" ? Effect.logWarning(message) : Effect.logInfo(message))
    // a worker's GET /metrics asks the primary for the metrics of every worker
    return Effect.acquireUseRelease(
      Effect.sync(installMetricsAggregator),
      () => Effect.promise(() => superviseWorkers({ workers, port, balancing: balancingOf(process.env), stopTimeoutMs: workerStopTimeoutMs + drainDelayMs, log })),
      (uninstall) => Effect.sync(uninstall)
    )
  })
