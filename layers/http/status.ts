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
import { Configuration } from "../../src/services.ts"
import { Tasks } from "../../src/tasks/service.ts"
import { Tracing } from "../../src/tracing/trace.ts"
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

/** whether the last probe found the database down: the log says so once per change, not per probe */
let databaseDown = false

const probed = (backend: string, error: string | undefined): Effect.Effect<void> => {
  const down = error !== undefined
  if (down === databaseDown) return Effect.void
  databaseDown = down
  return down
    ? Effect.logWarning(`/health: the ${backend} database does not answer: ${error}`)
    : Effect.logInfo(`/health: the ${backend} database answers again`)
}

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
 * `{"gateway": "ok"}`, plus the database's state under its name and, with an embedded database
 * (`pglite://`), its state under `embedded_database`; 503 when the database does not answer or
 * the embedded database pauses writes (its disk is nearly full) or is starting again, with the
 * reason in the body only when authentication is off.
 */
export const healthHandler = Effect.flatMap(Effect.all([Configuration, AnalyticsDatabaseService]), ([config, { store }]) => {
  const detailed = !config.gateway.auth.enabled
  const embedded = embeddedHealth()
  const embeddedFields = embedded === undefined ? {} : { embedded_database: embedded.state }
  const embeddedProblem = embedded?.reason === undefined ? [] : [`embedded database: ${embedded.reason}`]
  const answer = (fields: Record<string, string>, problems: ReadonlyArray<string>) =>
    jsonResponse(
      JSON.stringify({ gateway: "ok", ...fields, ...embeddedFields, ...(detailed && problems.length > 0 ? { error: problems.join("; ") } : {}) }),
      problems.length > 0 ? 503 : 200
    )
  if (store === undefined) return Effect.succeed(answer({}, embeddedProblem))
  return store.ping.pipe(
    Effect.timeoutOrElse({ duration: healthTimeout, orElse: () => Effect.fail({ message: "no answer within 2 s" }) }),
    Effect.matchEffect({
      onSuccess: () => Effect.as(probed(store.backend, undefined), answer({ [store.backend]: "ok" }, embeddedProblem)),
      onFailure: (error) =>
        Effect.as(
          probed(store.backend, error.message),
          answer({ [store.backend]: "error" }, [`${store.backend}: ${error.message}`, ...embeddedProblem])
        )
    })
  )
})
