/**
 * The Postgres store: the `Store` of `src/observability/store.ts` on `@effect/sql-pg`, for a
 * `postgres://` GATEWAY_ANALYTICS_DB_URL. Tables come from `migrations/postgres/*.sql`.
 * Every value reaches SQL as a bound parameter: rows travel as one JSON array per table,
 * turned into rows by `jsonb_populate_recordset`, so a batch costs the gateway one string per
 * row. JSON values are JSONB; writes are idempotent by id (a retried batch stores each row
 * once). The cache reads the model inferences written with a cache key.
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import type * as Scope from "effect/Scope"
import type { Fragment } from "effect/sql/Statement"
import type { SqlError } from "effect/sql/SqlError"
import type {
  CacheEntry,
  FeedbackKind,
  StoredFeedback,
  StoredInference,
  StoredModelInference,
  WriteBatch
} from "../../src/observability/records.ts"
import {
  type EncodedRow,
  type InferenceQuery,
  type InferenceTarget,
  type Store,
  StoreError,
  type StoreFilter,
  encodeRows,
  textsByTable
} from "../../src/observability/store.ts"
import { postgresRowsAtFault } from "../../src/observability/writeFaults.ts"
import { makePgClient, sqlState, storeError } from "../postgres/client.ts"
import { migrate as applyMigrations } from "../postgres/migrator.ts"

const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i
const isUuid = (value: string) => uuidPattern.test(value)

const feedbackTables: Record<FeedbackKind, string> = {
  boolean: "boolean_metric_feedback",
  float: "float_metric_feedback",
  comment: "comment_feedback",
  demonstration: "demonstration_feedback"
}

/**
 * Postgres cannot store U+0000 in text or JSONB, nor lone surrogates in JSON. A batch holding
 * one would fail on every retry and block the write queue behind it, so it is written again
 * with those characters replaced by U+FFFD. In JSON text from JSON.stringify both appear only
 * as escapes (`\u0000`, `\udc00`; surrogate pairs are written as characters), and an escape is
 * a backslash preceded by an even number of backslashes.
 */
const unstorableTextCodes = new Set(["22021", "22P05", "22P02"])
const isUnstorableText = (error: SqlError) => unstorableTextCodes.has(sqlState(error) ?? "")
const unstorableEscape = /(?<!\\)((?:\\\\)*)\\u(?:0000|d[89a-f][0-9a-f]{2})/gi
const storable = (json: string): string => json.replace(unstorableEscape, "$1\\ufffd")

interface InferenceRow {
  readonly function_type: "chat" | "json"
  readonly id: string
  readonly function_name: string
  readonly variant_name: string
  readonly episode_id: string
  readonly input: unknown
  readonly output: any
  readonly tool_params: unknown
  readonly output_schema: unknown
  readonly inference_params: unknown
  readonly processing_time_ms: number
  readonly ttft_ms: number | null
  readonly tags: Record<string, string>
  readonly timestamp: Date
}

interface ModelInferenceRow {
  readonly id: string
  readonly inference_id: string
  readonly model_name: string
  readonly model_provider_name: string
  readonly raw_request: string
  readonly raw_response: string
  readonly system: string | null
  readonly input_messages: unknown
  readonly output: any
  readonly input_tokens: number
  readonly output_tokens: number
  readonly response_time_ms: number
  readonly ttft_ms: number | null
  readonly finish_reason: StoredModelInference["finishReason"] | null
  readonly cached: boolean
  readonly cache_key: string | null
  readonly timestamp: Date
}

interface FeedbackRow {
  readonly id: string
  readonly target_id: string
  readonly target_type: "inference" | "episode"
  readonly metric_name: string
  readonly value: unknown
  readonly tags: Record<string, string>
  readonly timestamp: Date
}

interface CacheRow {
  readonly output: any
  readonly raw_request: string
  readonly raw_response: string
  readonly finish_reason: CacheEntry["finishReason"] | null
  readonly timestamp: Date
}

// Optional fields are NULL when absent, and absent again when read.
const toInference = (row: InferenceRow): StoredInference => ({
  id: row.id,
  functionName: row.function_name,
  functionType: row.function_type,
  variantName: row.variant_name,
  episodeId: row.episode_id,
  input: row.input,
  output: row.output,
  ...(row.tool_params !== null && { toolParams: row.tool_params }),
  ...(row.output_schema !== null && { outputSchema: row.output_schema }),
  inferenceParams: row.inference_params,
  processingTimeMs: row.processing_time_ms,
  ...(row.ttft_ms !== null && { ttftMs: row.ttft_ms }),
  tags: row.tags,
  timestamp: row.timestamp.getTime()
})

const toModelInference = (row: ModelInferenceRow): StoredModelInference => ({
  id: row.id,
  inferenceId: row.inference_id,
  modelName: row.model_name,
  modelProviderName: row.model_provider_name,
  rawRequest: row.raw_request,
  rawResponse: row.raw_response,
  ...(row.system !== null && { system: row.system }),
  inputMessages: row.input_messages,
  output: row.output,
  inputTokens: row.input_tokens,
  outputTokens: row.output_tokens,
  responseTimeMs: row.response_time_ms,
  ...(row.ttft_ms !== null && { ttftMs: row.ttft_ms }),
  ...(row.finish_reason !== null && { finishReason: row.finish_reason }),
  cached: row.cached,
  ...(row.cache_key !== null && { cacheKey: row.cache_key }),
  timestamp: row.timestamp.getTime()
})

const toFeedback = (kind: FeedbackKind) => (row: FeedbackRow): StoredFeedback => ({
  id: row.id,
  kind,
  metricName: row.metric_name,
  targetType: row.target_type,
  targetId: row.target_id,
  value: row.value,
  tags: row.tags,
  timestamp: row.timestamp.getTime()
})

const toCacheEntry = (key: string, row: CacheRow): CacheEntry => ({
  key,
  output: row.output,
  rawRequest: row.raw_request,
  rawResponse: row.raw_response,
  ...(row.finish_reason !== null && { finishReason: row.finish_reason }),
  timestamp: row.timestamp.getTime()
})

// ---- rows as JSON for jsonb_populate_recordset: keys are column names, JSONB columns take
// the value itself, timestamps ISO 8601 text

const inferenceRow = (row: StoredInference) => ({
  id: row.id,
  function_name: row.functionName,
  variant_name: row.variantName,
  episode_id: row.episodeId,
  input: row.input,
  output: row.output,
  ...(row.functionType === "chat" ? { tool_params: row.toolParams } : { output_schema: row.outputSchema }),
  inference_params: row.inferenceParams,
  processing_time_ms: row.processingTimeMs,
  ttft_ms: row.ttftMs,
  tags: row.tags,
  timestamp: new Date(row.timestamp).toISOString()
})

const modelInferenceRow = (row: StoredModelInference) => ({
  id: row.id,
  inference_id: row.inferenceId,
  model_name: row.modelName,
  model_provider_name: row.modelProviderName,
  raw_request: row.rawRequest,
  raw_response: row.rawResponse,
  system: row.system,
  input_messages: row.inputMessages,
  output: row.output,
  input_tokens: row.inputTokens,
  output_tokens: row.outputTokens,
  response_time_ms: row.responseTimeMs,
  ttft_ms: row.ttftMs,
  finish_reason: row.finishReason,
  cached: row.cached,
  cache_key: row.cacheKey,
  timestamp: new Date(row.timestamp).toISOString()
})

const feedbackRow = (row: StoredFeedback) => ({
  id: row.id,
  target_id: row.targetId,
  target_type: row.targetType,
  metric_name: row.metricName,
  value: row.value,
  tags: row.tags,
  timestamp: new Date(row.timestamp).toISOString()
})

/**
 * Absent fields are NULL; a value JSON cannot carry (a number out of range) fails the row in
 * Postgres. A row JSON.stringify cannot make (over V8's string limit) is refused here.
 */
const encode = (batch: WriteBatch): Result.Result<ReadonlyArray<EncodedRow>, StoreError> =>
  Result.try({
    try: () =>
      encodeRows(batch, {
        inferenceTable: { chat: "chat_inference", json: "json_inference" },
        modelInferenceTable: "model_inference",
        feedbackTable: (kind) => feedbackTables[kind],
        inference: inferenceRow,
        modelInference: modelInferenceRow,
        feedback: feedbackRow
      }),
    catch: (error) => new StoreError({ message: `postgres encode failed: ${error instanceof Error ? error.message : String(error)}`, rowsAtFault: true })
  })

/** A failed write, with its SQLSTATE and whether the rows are at fault (src/observability/writeFaults.ts). */
const writeError = (error: SqlError | StoreError): StoreError => {
  if (error._tag === "StoreError") return error
  const code = sqlState(error)
  return new StoreError({ message: storeError("write")(error).message, code, rowsAtFault: postgresRowsAtFault(code) })
}

/** the texts of a batch joined by `join`; what throws there (a batch too large for a string) is the rows' fault */
const joined = <A>(join: () => A): Effect.Effect<A, StoreError> =>
  Effect.try({
    try: join,
    catch: (error) =>
      new StoreError({
        message: `postgres write failed: the batch is too large to send (${error instanceof Error ? error.message : String(error)})`,
        rowsAtFault: true
      })
  })

/** rows grouped by table as JSON arrays */
const jsonArraysByTable = (rows: ReadonlyArray<EncodedRow>): Map<string, string> =>
  new Map(Array.from(textsByTable(rows), ([table, texts]) => [table, `[${texts.join(",")}]`]))

/**
 * The columns each table takes from its JSON rows. A JSON null becomes SQL NULL, so a
 * demonstration whose value is JSON null is put back as the JSONB value `null`.
 */
const insertedColumns: Readonly<Record<string, string>> = {
  demonstration_feedback: "id, target_id, target_type, metric_name, COALESCE(value, 'null'::jsonb), tags, timestamp"
}

export const makePostgresStore = (url: string): Effect.Effect<Store, StoreError, Scope.Scope> =>
  Effect.gen(function*() {
    // The pool connects lazily; a connection attempt gives up after a few seconds, since the
    // writer retries on its own.
    const sql = yield* makePgClient(url)

    // ---- migrations (the sequence every store on Postgres shares)

    const migrate = applyMigrations(sql)

    // ---- writes

    /** the whole batch in one transaction: stored entirely or not at all; one INSERT per table */
    const writeRows = (tables: ReadonlyMap<string, string>) =>
      sql.withTransaction(Effect.forEach(tables, ([table, rows]) =>
        // unprepared: one statement per table, whose parameter changes every time
        sql`INSERT INTO ${sql(table)}
          SELECT ${sql.literal(insertedColumns[table] ?? "*")} FROM jsonb_populate_recordset(NULL::${sql(table)}, ${rows}::jsonb)
          ON CONFLICT (id) DO NOTHING`.unprepared, { discard: true }))

    // The texts are joined inside the effect: a batch too large for a string fails the write
    // (its rows' fault, so the write queue splits it) instead of throwing past it.
    const write = (rows: ReadonlyArray<EncodedRow>) =>
      rows.length === 0 ? Effect.void : Effect.flatMap(joined(() => jsonArraysByTable(rows)), (tables) =>
        writeRows(tables).pipe(
          Effect.catchIf(isUnstorableText, () =>
            Effect.flatMap(
              joined(() => new Map(Array.from(tables, ([table, json]) => [table, storable(json)]))),
              (storableTables) => writeRows(storableTables)
            )),
          Effect.mapError(writeError)
        ))

    // ---- reads (columns are named: a prepared `SELECT *` breaks when a migration adds one)

    const modelInferenceColumns = sql.literal(
      "id, inference_id, model_name, model_provider_name, raw_request, raw_response, system, input_messages, output, " +
        "input_tokens, output_tokens, response_time_ms, ttft_ms, finish_reason, cached, cache_key, timestamp"
    )
    const feedbackColumns = sql.literal("id, target_id, target_type, metric_name, value, tags, timestamp")
    const cacheColumns = sql.literal("output, raw_request, raw_response, finish_reason, timestamp")

    const inferenceSelect = (type: "chat" | "json", where: Fragment) =>
      type === "chat"
        ? sql`SELECT 'chat' AS function_type, id, function_name, variant_name, episode_id, input, output,
            tool_params, NULL::jsonb AS output_schema, inference_params, processing_time_ms, ttft_ms, tags, timestamp
            FROM chat_inference WHERE ${where}`
        : sql`SELECT 'json' AS function_type, id, function_name, variant_name, episode_id, input, output,
            NULL::jsonb AS tool_params, output_schema, inference_params, processing_time_ms, ttft_ms, tags, timestamp
            FROM json_inference WHERE ${where}`

    /** A missing tag matches neither `=` nor `!=` (and so matches `not` of either). */
    const filterSql = (filter: StoreFilter): Fragment => {
      switch (filter.type) {
        case "tag":
          return filter.comparison_operator === "="
            ? sql`COALESCE(tags ->> ${filter.key}::text = ${filter.value}::text, FALSE)`
            : sql`COALESCE(tags ->> ${filter.key}::text <> ${filter.value}::text, FALSE)`
        case "time": {
          const time = new Date(filter.time)
          switch (filter.comparison_operator) {
            case "<":
              return sql`timestamp < ${time}`
            case "<=":
              return sql`timestamp <= ${time}`
            case ">":
              return sql`timestamp > ${time}`
            case ">=":
              return sql`timestamp >= ${time}`
          }
        }
        case "and":
          return sql.join(" AND ", true, "TRUE")(filter.children.map(filterSql))
        case "or":
          return sql.join(" OR ", true, "FALSE")(filter.children.map(filterSql))
        case "not":
          return sql`NOT (${filterSql(filter.child)})`
      }
    }

    const getInferences = (ids: ReadonlyArray<string>) => {
      const valid = ids.filter(isUuid)
      if (valid.length === 0) return Effect.succeed([])
      const where = sql`id = ANY(${valid}::uuid[])`
      return sql<InferenceRow>`${inferenceSelect("chat", where)} UNION ALL ${inferenceSelect("json", where)} ORDER BY id DESC`.pipe(
        Effect.map((rows) => rows.map(toInference)),
        Effect.mapError(storeError("getInferences"))
      )
    }

    const listInferences = (query: InferenceQuery) => {
      const limit = Math.max(0, Math.floor(query.limit))
      const offset = Math.max(0, Math.floor(query.offset))
      if (limit === 0 || (query.episodeId !== undefined && !isUuid(query.episodeId))) return Effect.succeed([])
      const where = sql.and([
        ...(query.functionName !== undefined ? [sql`function_name = ${query.functionName}`] : []),
        ...(query.variantName !== undefined ? [sql`variant_name = ${query.variantName}`] : []),
        ...(query.episodeId !== undefined ? [sql`episode_id = ${query.episodeId}`] : []),
        ...(query.filter !== undefined ? [filterSql(query.filter)] : [])
      ])
      // each table contributes at most its newest `offset + limit` rows
      const window = offset + limit
      return sql<InferenceRow>`SELECT * FROM (
        (${inferenceSelect("chat", where)} ORDER BY id DESC LIMIT ${window})
        UNION ALL
        (${inferenceSelect("json", where)} ORDER BY id DESC LIMIT ${window})
      ) AS inference ORDER BY id DESC LIMIT ${limit} OFFSET ${offset}`.pipe(
        Effect.map((rows) => rows.map(toInference)),
        Effect.mapError(storeError("listInferences"))
      )
    }

    const getModelInferences = (inferenceIds: ReadonlyArray<string>) => {
      const valid = inferenceIds.filter(isUuid)
      if (valid.length === 0) return Effect.succeed([])
      return sql<ModelInferenceRow>`SELECT ${modelInferenceColumns} FROM model_inference WHERE inference_id = ANY(${valid}::uuid[]) ORDER BY id`.pipe(
        Effect.map((rows) => rows.map(toModelInference)),
        Effect.mapError(storeError("getModelInferences"))
      )
    }

    const getFeedback = (targetIds: ReadonlyArray<string>) => {
      const valid = targetIds.filter(isUuid)
      if (valid.length === 0) return Effect.succeed([])
      return Effect.forEach(
        Object.entries(feedbackTables) as Array<[FeedbackKind, string]>,
        ([kind, table]) =>
          Effect.map(
            sql<FeedbackRow>`SELECT ${feedbackColumns} FROM ${sql(table)} WHERE target_id = ANY(${valid}::uuid[])`,
            (rows) => rows.map(toFeedback(kind))
          ),
        { concurrency: "unbounded" }
      ).pipe(
        Effect.map((kinds) => kinds.flat().sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))),
        Effect.mapError(storeError("getFeedback"))
      )
    }

    const findInference = (id: string) => {
      if (!isUuid(id)) return Effect.succeed(undefined)
      return sql<{ function_type: "chat" | "json"; function_name: string; episode_id: string; output_schema: unknown }>`
        SELECT 'chat' AS function_type, function_name, episode_id, NULL::jsonb AS output_schema FROM chat_inference WHERE id = ${id}
        UNION ALL
        SELECT 'json', function_name, episode_id, output_schema FROM json_inference WHERE id = ${id}`.pipe(
        Effect.map(([row]): InferenceTarget | undefined =>
          row === undefined ? undefined : {
            functionName: row.function_name,
            functionType: row.function_type,
            episodeId: row.episode_id,
            ...(row.output_schema !== null && { outputSchema: row.output_schema })
          }
        ),
        Effect.mapError(storeError("findInference"))
      )
    }

    const episodeExists = (id: string) => {
      if (!isUuid(id)) return Effect.succeed(false)
      return sql<{ found: boolean }>`SELECT EXISTS (SELECT 1 FROM chat_inference WHERE episode_id = ${id})
        OR EXISTS (SELECT 1 FROM json_inference WHERE episode_id = ${id}) AS found`.pipe(
        Effect.map(([row]) => row.found),
        Effect.mapError(storeError("episodeExists"))
      )
    }

    const cacheLookup = (key: string, maxAgeS: number | undefined) =>
      Effect.gen(function*() {
        // ages are measured on the gateway's clock, the one that stamped the entries
        const fresh = maxAgeS === undefined
          ? sql`TRUE`
          : sql`timestamp > ${new Date((yield* Clock.currentTimeMillis) - maxAgeS * 1000)}`
        // the newest answer written under the key (ids order answers of the same millisecond)
        const [row] = yield* sql<CacheRow>`SELECT ${cacheColumns} FROM model_inference
          WHERE cache_key = ${key} AND ${fresh} ORDER BY timestamp DESC, id DESC LIMIT 1`
        return row === undefined ? undefined : toCacheEntry(key, row)
      }).pipe(Effect.mapError(storeError("cacheLookup")))

    const ping = sql`SELECT 1`.pipe(Effect.asVoid, Effect.mapError(storeError("ping")))

    const store: Store = {
      backend: "postgres",
      migrate,
      ping,
      encode,
      write,
      getInferences,
      listInferences,
      getModelInferences,
      getFeedback,
      findInference,
      episodeExists,
      cacheLookup
    }
    return store
  })
