/**
 * The ClickHouse store: the `Store` of `src/observability/store.ts` on `@clickhouse/client`,
 * for an http(s) GATEWAY_ANALYTICS_DB_URL (`http://user:password@host:8123/database`).
 * Tables come from `migrations/clickhouse/*.sql`.
 *
 * The SQL is the subset ClickHouse 18.16 shares with current releases, which has no query
 * parameters: no value is ever pasted into SQL as text. Strings travel as hex literals
 * (`unhex('..')`), UUIDs and numbers are checked before use, and rows are sent as
 * JSONEachRow bodies. Tables are ReplacingMergeTrees keyed by id and reads dedupe by id, so a
 * retried batch is seen once.
 */
import { ClickHouseLogLevel, createClient } from "@clickhouse/client"
import { readdir, readFile } from "node:fs/promises"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import type * as Scope from "effect/Scope"
import type { CacheEntry, FeedbackKind, StoredFeedback, StoredInference, StoredModelInference, WriteBatch } from "../../src/observability/records.ts"
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
import { clickHouseErrorCode, clickHouseRowsAtFault, isTooLargeForAString } from "../../src/observability/writeFaults.ts"

const migrationsDirectory = new URL("../../migrations/clickhouse/", import.meta.url)

// ---- values in SQL

const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i
const isUuid = (value: string) => uuidPattern.test(value)

const refused = (message: string) => new StoreError({ message: `clickhouse refused a value: ${message}` })

const sqlString = (value: string) => `unhex('${Buffer.from(value, "utf8").toString("hex")}')`

const sqlUuid = (value: string) => {
  if (!isUuid(value)) throw refused(`not a UUID: ${JSON.stringify(value.slice(0, 100))}`)
  return `toUUID('${value.toLowerCase()}')`
}

const sqlUuids = (values: ReadonlyArray<string>) => `(${values.map(sqlUuid).join(", ")})`

const sqlInteger = (value: number) => {
  if (!Number.isSafeInteger(value)) throw refused(`not an integer: ${value}`)
  return String(value)
}

/** `value` as a bit-exact UInt64 (decimal text): 18.16 parses decimal floats inexactly. */
const float64Bits = (value: number) => {
  const view = new DataView(new ArrayBuffer(8))
  view.setFloat64(0, value)
  return view.getBigUint64(0).toString()
}

const float64FromBits = (bits: string) => {
  const view = new DataView(new ArrayBuffer(8))
  view.setBigUint64(0, BigInt(bits))
  return view.getFloat64(0)
}

// ---- rows as ClickHouse sees them

type Json = string

/** ClickHouse refuses lone UTF-16 surrogates in JSON input: they become U+FFFD. */
const text = (value: string) => value.toWellFormed()

const json = (value: unknown): Json => JSON.stringify(value) ?? "null"
const optionalJson = (value: unknown): Json | null => (value === undefined ? null : json(value))

// A value the column cannot hold would fail the batch on every retry and block the write
// queue behind it: numbers are brought into range instead (a backward clock step gives 0 ms).
const wholeNumber = (value: number, max: number) => (Number.isFinite(value) ? Math.min(Math.max(Math.round(value), 0), max) : 0)
/** durations and token counts */
const uint32 = (value: number) => wholeNumber(value, 0xffffffff)
/** epoch milliseconds */
const epochMs = (value: number) => wholeNumber(value, Number.MAX_SAFE_INTEGER)

const assertUuids = (...ids: ReadonlyArray<string>) => ids.forEach(sqlUuid)

interface Tagged {
  readonly "tags.key": ReadonlyArray<string>
  readonly "tags.value": ReadonlyArray<string>
}

const tagColumns = (tags: Readonly<Record<string, string>>): Tagged => {
  const entries = Object.entries(tags)
  return { "tags.key": entries.map(([key]) => text(key)), "tags.value": entries.map(([, value]) => text(value)) }
}

const tagsOf = (row: Tagged): Record<string, string> =>
  Object.fromEntries(row["tags.key"].map((key, index) => [key, row["tags.value"][index]]))

interface InferenceRow extends Tagged {
  readonly id: string
  readonly function_type: "chat" | "json"
  readonly function_name: string
  readonly variant_name: string
  readonly episode_id: string
  readonly input: Json
  readonly output: Json
  readonly tool_params: Json | null
  readonly output_schema: Json | null
  readonly inference_params: Json
  readonly processing_time_ms: number
  readonly ttft_ms: number | null
  readonly timestamp_ms: string
}

const inferenceRow = (inference: StoredInference) => {
  assertUuids(inference.id, inference.episodeId)
  return {
    id: inference.id,
    function_name: text(inference.functionName),
    variant_name: text(inference.variantName),
    episode_id: inference.episodeId,
    input: json(inference.input),
    output: json(inference.output),
    ...(inference.functionType === "chat"
      ? { tool_params: optionalJson(inference.toolParams) }
      : { output_schema: optionalJson(inference.outputSchema) }),
    inference_params: json(inference.inferenceParams),
    processing_time_ms: uint32(inference.processingTimeMs),
    ttft_ms: inference.ttftMs === undefined ? null : uint32(inference.ttftMs),
    ...tagColumns(inference.tags),
    timestamp_ms: epochMs(inference.timestamp)
  }
}

// Optional fields are NULL when absent, and absent again when read.
const toInference = (row: InferenceRow): StoredInference => ({
  id: row.id,
  functionName: row.function_name,
  functionType: row.function_type,
  variantName: row.variant_name,
  episodeId: row.episode_id,
  input: JSON.parse(row.input),
  output: JSON.parse(row.output),
  ...(row.tool_params !== null && { toolParams: JSON.parse(row.tool_params) }),
  ...(row.output_schema !== null && { outputSchema: JSON.parse(row.output_schema) }),
  inferenceParams: JSON.parse(row.inference_params),
  processingTimeMs: row.processing_time_ms,
  ...(row.ttft_ms !== null && { ttftMs: row.ttft_ms }),
  tags: tagsOf(row),
  timestamp: Number(row.timestamp_ms)
})

interface ModelInferenceRow {
  readonly id: string
  readonly inference_id: string
  readonly model_name: string
  readonly model_provider_name: string
  readonly raw_request: string
  readonly raw_response: string
  readonly system: string | null
  readonly input_messages: Json
  readonly output: Json
  readonly input_tokens: number
  readonly output_tokens: number
  readonly response_time_ms: number
  readonly ttft_ms: number | null
  readonly finish_reason: StoredModelInference["finishReason"] | null
  readonly cached: number
  /** '' when the answer is not to be served from the cache */
  readonly cache_key: string
  readonly timestamp_ms: string
}

const modelInferenceRow = (call: StoredModelInference) => {
  assertUuids(call.id, call.inferenceId)
  return {
    id: call.id,
    inference_id: call.inferenceId,
    model_name: text(call.modelName),
    model_provider_name: text(call.modelProviderName),
    raw_request: text(call.rawRequest),
    raw_response: text(call.rawResponse),
    system: call.system === undefined ? null : text(call.system),
    input_messages: json(call.inputMessages),
    output: json(call.output),
    input_tokens: uint32(call.inputTokens),
    output_tokens: uint32(call.outputTokens),
    response_time_ms: uint32(call.responseTimeMs),
    ttft_ms: call.ttftMs === undefined ? null : uint32(call.ttftMs),
    finish_reason: call.finishReason ?? null,
    cached: call.cached ? 1 : 0,
    cache_key: call.cacheKey === undefined ? "" : text(call.cacheKey),
    timestamp_ms: epochMs(call.timestamp)
  }
}

const toModelInference = (row: ModelInferenceRow): StoredModelInference => ({
  id: row.id,
  inferenceId: row.inference_id,
  modelName: row.model_name,
  modelProviderName: row.model_provider_name,
  rawRequest: row.raw_request,
  rawResponse: row.raw_response,
  ...(row.system !== null && { system: row.system }),
  inputMessages: JSON.parse(row.input_messages),
  output: JSON.parse(row.output),
  inputTokens: row.input_tokens,
  outputTokens: row.output_tokens,
  responseTimeMs: row.response_time_ms,
  ...(row.ttft_ms !== null && { ttftMs: row.ttft_ms }),
  ...(row.finish_reason !== null && { finishReason: row.finish_reason }),
  cached: row.cached === 1,
  ...(row.cache_key !== "" && { cacheKey: row.cache_key }),
  timestamp: Number(row.timestamp_ms)
})

/** Each kind of feedback: its table, and how its value is stored and read back. */
const feedbackKinds: Record<FeedbackKind, {
  readonly table: string
  readonly store: (value: unknown) => Record<string, unknown>
  readonly read: (row: any) => unknown
}> = {
  boolean: {
    table: "BooleanMetricFeedback",
    store: (value) => ({ value: value === true ? 1 : 0 }),
    read: (row: { value: number }) => row.value === 1
  },
  float: {
    table: "FloatMetricFeedback",
    store: (value) => ({ value_bits: float64Bits(Number(value)) }),
    read: (row: { value_bits: string }) => float64FromBits(row.value_bits)
  },
  comment: {
    table: "CommentFeedback",
    store: (value) => ({ value: text(String(value)) }),
    read: (row: { value: string }) => row.value
  },
  demonstration: {
    table: "DemonstrationFeedback",
    store: (value) => ({ value: json(value) }),
    read: (row: { value: Json }) => JSON.parse(row.value)
  }
}

interface FeedbackRow extends Tagged {
  readonly id: string
  readonly target_id: string
  readonly target_type: "inference" | "episode"
  readonly metric_name: string
  readonly timestamp_ms: string
}

const feedbackRow = (feedback: StoredFeedback) => {
  assertUuids(feedback.id, feedback.targetId)
  return {
    id: feedback.id,
    target_id: feedback.targetId,
    target_type: feedback.targetType,
    metric_name: text(feedback.metricName),
    ...feedbackKinds[feedback.kind].store(feedback.value),
    ...tagColumns(feedback.tags),
    timestamp_ms: epochMs(feedback.timestamp)
  }
}

const toFeedback = (kind: FeedbackKind) => (row: FeedbackRow): StoredFeedback => ({
  id: row.id,
  kind,
  metricName: row.metric_name,
  targetType: row.target_type,
  targetId: row.target_id,
  value: feedbackKinds[kind].read(row),
  tags: tagsOf(row),
  timestamp: Number(row.timestamp_ms)
})

interface CacheRow {
  readonly output: Json
  readonly raw_request: string
  readonly raw_response: string
  readonly finish_reason: CacheEntry["finishReason"] | null
  readonly timestamp_ms: string
}

/**
 * `batch` as JSONEachRow lines, each row built (and checked) before any is sent. The cache's
 * keys are filled from ModelInference by a materialized view, so an answer is sent once.
 */
const encode = (batch: WriteBatch): Result.Result<ReadonlyArray<EncodedRow>, StoreError> =>
  Result.try({
    try: () =>
      encodeRows(batch, {
        inferenceTable: { chat: "ChatInference", json: "JsonInference" },
        modelInferenceTable: "ModelInference",
        feedbackTable: (kind) => feedbackKinds[kind].table,
        inference: inferenceRow,
        modelInference: modelInferenceRow,
        feedback: feedbackRow
      }),
    catch: storeError("encode")
  })

const toCacheEntry = (key: string, row: CacheRow): CacheEntry => ({
  key,
  output: JSON.parse(row.output),
  rawRequest: row.raw_request,
  rawResponse: row.raw_response,
  ...(row.finish_reason !== null && { finishReason: row.finish_reason }),
  timestamp: Number(row.timestamp_ms)
})

// ---- queries

const inferenceColumns = (type: "chat" | "json") =>
  `id, '${type}' AS function_type, function_name, variant_name, episode_id, input, output, ` +
  (type === "chat" ? "tool_params, CAST(NULL AS Nullable(String)) AS output_schema" : "CAST(NULL AS Nullable(String)) AS tool_params, output_schema") +
  ", inference_params, processing_time_ms, ttft_ms, tags.key, tags.value, timestamp_ms"

/** UUIDv7 text order is time order; ClickHouse's own UUID order is not, hence the text. */
const newestFirst = "ORDER BY timestamp_ms DESC, toString(id) DESC LIMIT 1 BY id"

/** Chat and json inferences matching `where`, newest first, one row per id; `window` caps each table's share. */
const selectInferences = (where: string, window?: number) => {
  const cap = window === undefined ? "" : ` LIMIT ${sqlInteger(window)}`
  const branch = (type: "chat" | "json", table: string) =>
    `SELECT * FROM (SELECT ${inferenceColumns(type)} FROM ${table} WHERE ${where} ${newestFirst}${cap})`
  return `SELECT * FROM (${branch("chat", "ChatInference")} UNION ALL ${branch("json", "JsonInference")}) ${newestFirst}`
}

// checked before it is pasted, even though the API schema admits only these
const timeOperators: ReadonlyArray<string> = ["<", "<=", ">", ">="]

/**
 * A missing tag matches neither `=` nor `!=` (and so matches `not` of either). Times compare
 * whole milliseconds, so a fractional bound is rounded the way that keeps the comparison exact.
 */
const filterSql = (filter: StoreFilter): string => {
  switch (filter.type) {
    case "tag": {
      const operator = filter.comparison_operator === "=" ? "=" : "!="
      return `arrayExists((k, v) -> k = ${sqlString(filter.key)} AND v ${operator} ${sqlString(filter.value)}, tags.key, tags.value)`
    }
    case "time": {
      const operator = filter.comparison_operator
      if (!timeOperators.includes(operator) || !Number.isFinite(filter.time)) throw refused(`not a time filter: ${JSON.stringify(filter)}`)
      const whole = operator === "<" || operator === ">=" ? Math.ceil(filter.time) : Math.floor(filter.time)
      return `timestamp_ms ${operator} ${sqlInteger(Math.min(Math.max(whole, 0), Number.MAX_SAFE_INTEGER))}`
    }
    case "and":
      return filter.children.length === 0 ? "1" : filter.children.map((child) => `(${filterSql(child)})`).join(" AND ")
    case "or":
      return filter.children.length === 0 ? "0" : filter.children.map((child) => `(${filterSql(child)})`).join(" OR ")
    case "not":
      return `NOT (${filterSql(filter.child)})`
    default:
      throw refused(`not a filter: ${JSON.stringify(filter)}`)
  }
}

const byId = <A extends { readonly id: string }>(a: A, b: A) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)

// ---- migrations

interface Migration {
  readonly version: number
  readonly name: string
  readonly statements: ReadonlyArray<string>
}

/** `NNNN_name.sql` files in version order; statements end with `;` at the end of a line. */
const loadMigrations = async (): Promise<Array<Migration>> => {
  const files = (await readdir(migrationsDirectory)).filter((file) => /^\d+_\w+\.sql$/.test(file)).sort()
  return Promise.all(files.map(async (file) => ({
    version: parseInt(file, 10),
    name: file.slice(0, -".sql".length),
    statements: migrationStatements(await readFile(new URL(file, migrationsDirectory), "utf8"))
  })))
}

/** the statements of a migration file, comments dropped */
export const migrationStatements = (script: string): Array<string> =>
  script.replace(/^\s*--.*$/gm, "").split(/;[ \t]*$/m).map((statement) => statement.trim()).filter((statement) => statement !== "")

// ---- errors

/** The reason, in one line: the server's message without the stack trace 18.16 appends, or the socket error. */
const reasonOf = (error: unknown): string => {
  if (!(error instanceof Error)) return String(error)
  const code = (error as { code?: unknown }).code
  let message = error.message === "" && typeof code === "string" ? code : error.message
  const exception = message.lastIndexOf("DB::Exception: ")
  if (exception >= 0) message = message.slice(exception + "DB::Exception: ".length)
  message = message.split(/, e\.what\(\) = |\. \(version |Stack trace|\n/)[0].trim()
  return message.length > 300 ? `${message.slice(0, 300)}...` : message
}

const storeError = (operation: string) => (error: unknown) =>
  error instanceof StoreError ? error : new StoreError({ message: `clickhouse ${operation} failed: ${reasonOf(error)}` })

/** A failed write, with its error code and whether the rows are at fault (src/observability/writeFaults.ts). */
const writeError = (error: unknown): StoreError => {
  if (error instanceof StoreError) return error
  if (isTooLargeForAString(error)) {
    return new StoreError({ message: `clickhouse write failed: the batch is too large to send (${reasonOf(error)})`, rowsAtFault: true })
  }
  const code = clickHouseErrorCode(error)
  return new StoreError({
    message: storeError("write")(error).message,
    ...(code !== undefined && { code: String(code) }),
    rowsAtFault: clickHouseRowsAtFault(code)
  })
}

// ---- the store

const inferenceTables = new Set(["ChatInference", "JsonInference"])

interface Connection {
  readonly url: string
  readonly username: string
  readonly password: string
  readonly database: string
}

/** `http://user:password@host:port/database`: credentials and database are taken out of the URL. */
const parseUrl = (url: string): Connection => {
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    throw new StoreError({ message: "clickhouse URL is not a valid URL" })
  }
  const database = decodeURIComponent(parsed.pathname.replace(/^\/|\/$/g, "")) || "default"
  // the name goes into CREATE DATABASE, where it cannot be a hex literal
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(database)) {
    throw new StoreError({ message: `clickhouse database name must be letters, digits and underscores: ${JSON.stringify(database)}` })
  }
  return {
    url: `${parsed.protocol}//${parsed.host}`,
    username: decodeURIComponent(parsed.username) || "default",
    password: decodeURIComponent(parsed.password),
    database
  }
}

const clientFor = (connection: Connection, database: string) =>
  createClient({
    url: connection.url,
    username: connection.username,
    password: connection.password,
    database,
    application: "llm-gateway",
    // failures reach the caller as StoreErrors, which the gateway logs once, in its own format
    log: { level: ClickHouseLogLevel.OFF }
  })

export const makeClickHouseStore = (url: string): Effect.Effect<Store, StoreError, Scope.Scope> =>
  Effect.gen(function*() {
    const connection = yield* Effect.try({ try: () => parseUrl(url), catch: storeError("connect") })
    const client = yield* Effect.acquireRelease(
      Effect.try({ try: () => clientFor(connection, connection.database), catch: storeError("connect") }),
      (client) => Effect.promise(() => client.close().catch(() => undefined))
    )

    /** runs `work`, aborted if the effect is interrupted; any failure is a StoreError */
    const run = <A>(operation: string, work: (signal: AbortSignal) => Promise<A>) =>
      Effect.tryPromise({ try: work, catch: storeError(operation) })

    const select = async <Row>(query: string, signal: AbortSignal): Promise<Array<Row>> => {
      const result = await client.query({
        query,
        format: "JSONEachRow",
        abort_signal: signal,
        // UInt64 (times, float bits) as strings, whatever the server's default: exact past 2^53
        clickhouse_settings: { output_format_json_quote_64bit_integers: 1 }
      })
      return result.json<Row>()
    }

    /** one INSERT of JSONEachRow lines; table names are the code's own, never input */
    const insert = (table: string, lines: ReadonlyArray<string>, signal: AbortSignal) =>
      client.command({ query: `INSERT INTO ${table} FORMAT JSONEachRow\n${lines.join("\n")}`, abort_signal: signal })

    // ---- migrations

    /** CREATE DATABASE goes through the `default` database: the gateway's may not exist yet. */
    const createDatabase = async (signal: AbortSignal) => {
      const admin = clientFor(connection, "default")
      try {
        await admin.command({ query: `CREATE DATABASE IF NOT EXISTS \`${connection.database}\``, abort_signal: signal })
      } finally {
        await admin.close().catch(() => undefined)
      }
    }

    // Concurrent gateways may both apply a migration: every statement is IF NOT EXISTS, or an
    // ADD COLUMN whose column the other gateway added (18.16 has no IF NOT EXISTS there), so
    // that is harmless, and a version recorded twice is read once.
    const migrate = run("migrate", async (signal) => {
      const migrations = await loadMigrations()
      await createDatabase(signal)
      await client.command({
        query: "CREATE TABLE IF NOT EXISTS GatewayMigration (version UInt32, name String, applied_at DateTime) " +
          "ENGINE = ReplacingMergeTree ORDER BY version",
        abort_signal: signal
      })
      const recorded = new Set(
        (await select<{ version: number }>("SELECT DISTINCT version FROM GatewayMigration", signal)).map((row) => row.version)
      )
      const applied: Array<string> = []
      for (const migration of migrations) {
        if (recorded.has(migration.version)) continue
        for (const statement of migration.statements) {
          await client.command({ query: statement, abort_signal: signal }).catch((error: unknown) => {
            if (!(/^ALTER TABLE .* ADD COLUMN /s.test(statement) && /column with this name already exists/.test(String(error)))) throw error
          })
        }
        await client.command({
          query: `INSERT INTO GatewayMigration SELECT ${sqlInteger(migration.version)}, ${sqlString(migration.name)}, now()`,
          abort_signal: signal
        })
        applied.push(migration.name)
      }
      return applied
    })

    // ---- writes

    // The lines are joined inside the promise: a batch too large for a string fails the write.
    // ClickHouse has no transaction across tables: the inference tables are written last, so
    // that an inference a reader can see always has its model inferences.
    const write = (rows: ReadonlyArray<EncodedRow>) =>
      rows.length === 0 ? Effect.void : Effect.tryPromise({
        try: async (signal) => {
          const tables = Array.from(textsByTable(rows))
          const insertAll = (batch: typeof tables) => Promise.all(batch.map(([table, lines]) => insert(table, lines, signal)))
          await insertAll(tables.filter(([table]) => !inferenceTables.has(table)))
          await insertAll(tables.filter(([table]) => inferenceTables.has(table)))
        },
        catch: writeError
      })

    // ---- reads

    const getInferences = (ids: ReadonlyArray<string>) =>
      run("getInferences", async (signal) => {
        const valid = ids.filter(isUuid)
        if (valid.length === 0) return []
        const list = sqlUuids(valid)
        // the function names narrow the scan: the inference tables are sorted by function
        const where = `function_name IN (SELECT function_name FROM InferenceById WHERE id IN ${list}) AND id IN ${list}`
        return (await select<InferenceRow>(selectInferences(where), signal)).map(toInference)
      })

    const listInferences = (query: InferenceQuery) =>
      run("listInferences", async (signal) => {
        const limit = Math.max(0, Math.floor(query.limit))
        const offset = Math.max(0, Math.floor(query.offset))
        if (limit === 0 || (query.episodeId !== undefined && !isUuid(query.episodeId))) return []
        const conditions = [
          ...(query.functionName !== undefined ? [`function_name = ${sqlString(query.functionName)}`] : []),
          ...(query.variantName !== undefined ? [`variant_name = ${sqlString(query.variantName)}`] : []),
          ...(query.episodeId !== undefined ? [`episode_id = ${sqlUuid(query.episodeId)}`] : []),
          ...(query.filter !== undefined ? [`(${filterSql(query.filter)})`] : [])
        ]
        const where = conditions.length === 0 ? "1" : conditions.join(" AND ")
        const sql = `${selectInferences(where, offset + limit)} LIMIT ${sqlInteger(offset)}, ${sqlInteger(limit)}`
        return (await select<InferenceRow>(sql, signal)).map(toInference)
      })

    const getModelInferences = (inferenceIds: ReadonlyArray<string>) =>
      run("getModelInferences", async (signal) => {
        const valid = inferenceIds.filter(isUuid)
        if (valid.length === 0) return []
        const rows = await select<ModelInferenceRow>(
          `SELECT * FROM ModelInference WHERE inference_id IN ${sqlUuids(valid)} ORDER BY toString(id) LIMIT 1 BY id`,
          signal
        )
        return rows.map(toModelInference)
      })

    const getFeedback = (targetIds: ReadonlyArray<string>) =>
      run("getFeedback", async (signal) => {
        const valid = targetIds.filter(isUuid)
        if (valid.length === 0) return []
        const kinds = Object.keys(feedbackKinds) as Array<FeedbackKind>
        const found = await Promise.all(kinds.map(async (kind) => {
          const rows = await select<FeedbackRow>(
            `SELECT * FROM ${feedbackKinds[kind].table} WHERE target_id IN ${sqlUuids(valid)} LIMIT 1 BY id`,
            signal
          )
          return rows.map(toFeedback(kind))
        }))
        return found.flat().sort(byId)
      })

    const findInference = (id: string) =>
      run("findInference", async (signal): Promise<InferenceTarget | undefined> => {
        if (!isUuid(id)) return undefined
        const [row] = await select<{ function_name: string; function_type: "chat" | "json"; episode_id: string; output_schema: Json | null }>(
          `SELECT function_name, function_type, episode_id, output_schema FROM InferenceById WHERE id = ${sqlUuid(id)} LIMIT 1`,
          signal
        )
        return row === undefined ? undefined : {
          functionName: row.function_name,
          functionType: row.function_type,
          episodeId: row.episode_id,
          ...(row.output_schema !== null && { outputSchema: JSON.parse(row.output_schema) })
        }
      })

    const episodeExists = (id: string) =>
      run("episodeExists", async (signal) => {
        if (!isUuid(id)) return false
        const rows = await select(`SELECT 1 AS found FROM InferenceByEpisodeId WHERE episode_id = ${sqlUuid(id)} LIMIT 1`, signal)
        return rows.length > 0
      })

    const cacheLookup = (key: string, maxAgeS: number | undefined) =>
      run("cacheLookup", async (signal) => {
        if (maxAgeS !== undefined && !Number.isFinite(maxAgeS)) throw refused(`not an age: ${maxAgeS}`)
        // ages are measured on the gateway's clock, the one that stamped the entries
        const fresh = maxAgeS === undefined ? "" : ` AND timestamp_ms > ${sqlInteger(Math.max(0, Math.floor(Date.now() - maxAgeS * 1000)))}`
        // the newest model inference written under the key, found by its sorting key
        const newest = `SELECT inference_id, id FROM ModelInferenceCacheKey WHERE cache_key = ${sqlString(key)}${fresh} ` +
          "ORDER BY timestamp_ms DESC, toString(id) DESC LIMIT 1"
        const [row] = await select<CacheRow>(
          "SELECT output, raw_request, raw_response, finish_reason, timestamp_ms FROM ModelInference " +
            `WHERE inference_id IN (SELECT inference_id FROM (${newest})) AND id IN (SELECT id FROM (${newest})) LIMIT 1`,
          signal
        )
        return row === undefined ? undefined : toCacheEntry(key, row)
      })

    // a query rather than /ping, so that the credentials and the database are checked too
    const ping = run("ping", (signal) => select("SELECT 1 AS ok", signal)).pipe(Effect.asVoid)

    const store: Store = {
      backend: "clickhouse",
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
