/**
 * The request and answer Schemas of `GET /status` and `GET /health` (spec 4.8): both answer without an API
 * key, and with authentication on say no more than that the gateway runs and its database
 * answers (the counters and a database's error text are then left out).
 */
import * as HttpApiSchema from "effect/http-api/HttpApiSchema"
import * as Schema from "effect/Schema"
import { ConfigVersionBody } from "./operations.ts"

const Count = Schema.Int.check(Schema.isGreaterThanOrEqualTo(0))

/**
 * an embedded database's state: `writes_paused` (too little free space in its folder: writes
 * wait), `restarting` (PGlite is starting again after a PANIC or a crash)
 */
const EmbeddedState = Schema.Literals(["ok", "writes_paused", "restarting"])

export const StatusResponse = Schema.Struct({
  status: Schema.Literal("ok"),
  version: Schema.String,
  /** the configuration serving new requests (it changes on a reload) */
  config: ConfigVersionBody,
  /** the write queue, when observability is on (authentication off only) */
  observability: Schema.optional(Schema.Struct({
    backend: Schema.Literals(["clickhouse", "postgres"]),
    vector_search: Schema.optional(Schema.Literals(["clickhouse", "pgvector", "float_array"])).annotate({
      description: "how DICL examples are ranked: ClickHouse array functions, Postgres with pgvector, or Postgres computing cosine distances on float arrays; absent while the database does not answer"
    }),
    queued: Count,
    queuedBytes: Count,
    written: Count,
    dropped: Count,
    rejected: Count,
    failedAttempts: Count,
    truncatedRows: Count.annotate({ description: "rows over [gateway.observability] max_row_bytes, stored cut down (marked)" })
  })),
  /** whether durable background tasks (batch polls) run: on a relational database, or not (authentication off only) */
  background_tasks: Schema.optional(Schema.Literals(["pg-boss", "off"])),
  /** the trace exporter, when it is on (authentication off only) */
  trace_export: Schema.optional(Schema.Struct({ exported: Count, dropped: Count })),
  /** the embedded databases (`pglite://`) this process runs (authentication off only) */
  embedded_databases: Schema.optional(Schema.Array(Schema.Struct({
    folder: Schema.String,
    state: EmbeddedState,
    /** why writes pause or the database is down */
    reason: Schema.optional(Schema.String),
    /** bytes free in the folder's filesystem, and the minimum below which writes pause (`[gateway.embedded_database]`) */
    free_bytes: Count,
    min_free_bytes: Count,
    /** times PGlite was started again after a PANIC or a crash */
    restarts: Count
  })))
}).annotate({ identifier: "StatusResponse" })
export type StatusResponse = typeof StatusResponse.Type

const databaseState = <const S extends string>(state: S) =>
  Schema.optional(Schema.Literal(state)).annotate({ description: "present when observability stores in this database" })

const embeddedState = <S extends Schema.Top>(state: S) =>
  Schema.optional(state).annotate({ description: "present when this process runs an embedded database (pglite://)" })

/** `{"gateway": "ok"}`, plus the database's state under its name when observability is on */
export const HealthResponse = Schema.Struct({
  gateway: Schema.Literal("ok"),
  clickhouse: databaseState("ok"),
  postgres: databaseState("ok"),
  embedded_database: embeddedState(Schema.Literal("ok"))
}).annotate({ identifier: "HealthResponse" })

export const HealthFailure = Schema.Struct({
  gateway: Schema.Literal("ok"),
  clickhouse: Schema.optional(Schema.Literals(["ok", "error"])),
  postgres: Schema.optional(Schema.Literals(["ok", "error"])),
  embedded_database: embeddedState(EmbeddedState),
  /** why (authentication off only) */
  error: Schema.optional(Schema.String)
}).pipe(HttpApiSchema.status(503)).annotate({
  identifier: "HealthFailure",
  description: "The database does not answer, or the embedded database pauses writes (too little free space) or is starting again"
})
