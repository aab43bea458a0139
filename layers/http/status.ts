/**
 * GET /status and GET /health (spec 4.8). Both answer without an API key, so with
 * authentication on their bodies say no more than "running" and "ok"/"error" (and an embedded
 * database's state word): the queue's counters and a database's error text (hosts, ports,
 * folders) are for the log and for deployments without authentication.
 */
import cluster from "node:cluster"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import { AnalyticsDatabaseService } from "../../src/analytics/database.ts"
import { type DiclExampleStore, DiclExampleStoreService, type VectorSearch } from "../../src/dicl/store.ts"
import { WriteQueue } from "../../src/analytics/writeQueue.ts"
import { ConfigReload, type ConfigVersion } from "../../src/config/reload.ts"
import { RelationalDatabase } from "../../src/relational.ts"
import { Configuration } from "../../src/services.ts"
import { Tasks } from "../../src/tasks/service.ts"
import { Tracing } from "../../src/tracing/trace.ts"
import { isDraining } from "../draining.ts"
import { embeddedDatabases, type EmbeddedStatus } from "../embedded/pglite.ts"
import { jsonResponse } from "./respond.ts"

export const gatewayVersion = "0.1.0"

/** `/status`'s `config`: the configuration serving new requests */
export const configVersionBody = ({ hash, loadedAt }: ConfigVersion) => ({ hash, loaded_at: new Date(loadedAt).toISOString() })

/** with `[gateway] workers` > 1: the pid of the worker that answers (its counters are its own) */
const worker = cluster.isWorker ? { worker: process.pid } : {}

/** how DICL examples are ranked, once the database has said (Postgres reads it once); left out while it does not answer */
const vectorSearchOf = (examples: DiclExampleStore | undefined): Effect.Effect<{ vector_search?: VectorSearch }> =>
  examples === undefined ? Effect.succeed({}) : examples.vectorSearch.pipe(
    Effect.timeoutOrElse({ duration: vectorSearchTimeout, orElse: () => Effect.fail(undefined) }),
    Effect.match({ onSuccess: (mode) => ({ vector_search: mode }), onFailure: () => ({}) })
  )

const vectorSearchTimeout = Duration.seconds(1)

/**
 * Running, on which configuration (its hash and load time), and which worker answers, with the
 * write queue's counters and how DICL examples are ranked when observability is on, whether
 * background tasks run (the relational database), and the trace exporter's counters when it is on.
 */
export const statusHandler = Effect.flatMap(
  Effect.all([Configuration, AnalyticsDatabaseService, DiclExampleStoreService, WriteQueue, Tracing, Tasks, ConfigReload]),
  ([config, { store: database }, { store: examples }, { stats }, tracing, tasks, reload]) =>
  config.gateway.auth.enabled ? Effect.succeed(jsonResponse(JSON.stringify({ status: "ok", version: gatewayVersion, config: configVersionBody(reload.current()) }))) : Effect.map(
    vectorSearchOf(examples),
    (vectorSearch) =>
      jsonResponse(JSON.stringify({
        status: "ok",
        version: gatewayVersion,
        config: configVersionBody(reload.current()),
        ...worker,
        ...(database === undefined ? {} : { observability: { backend: database.backend, ...vectorSearch, ...stats() } }),
        background_tasks: tasks.available ? "pg-boss" : "off",
        ...(tracing.enabled ? { trace_export: tracing.stats() } : {}),
        ...embeddedStatus()
      }))
  )
)

const healthTimeout = Duration.seconds(2)

/** the databases whose last probe failed: the log says so once per change, not per probe */
const databasesDown = new Set<string>()

const probed = (name: string, error: string | undefined): Effect.Effect<void> => {
  const down = error !== undefined
  if (down === databasesDown.has(name)) return Effect.void
  if (down) databasesDown.add(name)
  else databasesDown.delete(name)
  return down
    ? Effect.logWarning(`/health: the ${name} database does not answer: ${error}`)
    : Effect.logInfo(`/health: the ${name} database answers again`)
}

/** one database's state under its name, with the problem when it does not answer within `healthTimeout` */
const probe = (name: string, ping: Effect.Effect<void, { readonly message: string }>) =>
  ping.pipe(
    Effect.timeoutOrElse({ duration: healthTimeout, orElse: () => Effect.fail({ message: "no answer within 2 s" }) }),
    Effect.matchEffect({
      onSuccess: () => Effect.as(probed(name, undefined), { name, state: "ok", problem: undefined }),
      onFailure: (error) => Effect.as(probed(name, error.message), { name, state: "error", problem: `${name}: ${error.message}` })
    })
  )

/** `/status`'s `embedded_databases`: the embedded databases this process runs, if any */
const embeddedStatus = () => {
  const databases = embeddedDatabases()
  if (databases.length === 0) return {}
  return {
    embedded_databases: databases.map(({ folder, status }) => {
      const { state, reason, freeBytes, minFreeBytes, restarts } = status()
      return { folder, state, ...(reason === undefined ? {} : { reason }), free_bytes: freeBytes, min_free_bytes: minFreeBytes, restarts }
    })
  }
}

/** the worst state of the embedded databases this process runs (undefined: none), with why when it is not ok */
const embeddedHealth = (): { readonly state: EmbeddedStatus["state"]; readonly reason?: string | undefined } | undefined => {
  const states = embeddedDatabases().map((database) => database.status())
  if (states.length === 0) return undefined
  return states.find((status) => status.state === "restarting") ?? states.find((status) => status.state === "writes_paused") ?? { state: "ok" }
}

/**
 * `{"gateway": "ok"}`, plus the analytics database's state under its backend's name, the
 * relational database's under `relational_database` and, with an embedded database
 * (`pglite://`), its state under `embedded_database`; 503 when a database does not answer or
 * the embedded database pauses writes (its disk is nearly full) or is starting again, with the
 * reasons in the body only when authentication is off. While the process drains after SIGTERM
 * (`[gateway] drain_delay_ms`), 503 `{"gateway": "draining"}` without probing anything.
 */
export const healthHandler = Effect.flatMap(Effect.all([Configuration, AnalyticsDatabaseService, RelationalDatabase]), ([config, { store }, relational]) => {
  if (isDraining()) return Effect.succeed(jsonResponse(JSON.stringify({ gateway: "draining" }), 503))
  const detailed = !config.gateway.auth.enabled
  const embedded = embeddedHealth()
  const probes = [
    ...(store === undefined ? [] : [probe(store.backend, store.ping)]),
    ...(relational.ping === undefined ? [] : [probe("relational_database", relational.ping)])
  ]
  return Effect.map(Effect.all(probes, { concurrency: "unbounded" }), (states) => {
    const problems = [
      ...states.flatMap(({ problem }) => problem === undefined ? [] : [problem]),
      ...(embedded?.reason === undefined ? [] : [`embedded database: ${embedded.reason}`])
    ]
    const fields = Object.fromEntries(states.map(({ name, state }) => [name, state]))
    return jsonResponse(
      JSON.stringify({
        gateway: "ok",
        ...fields,
        ...(embedded === undefined ? {} : { embedded_database: embedded.state }),
        ...(detailed && problems.length > 0 ? { error: problems.join("; ") } : {})
      }),
      problems.length > 0 ? 503 : 200
    )
  })
})
