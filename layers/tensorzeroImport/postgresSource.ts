/**
 * A TensorZero deployment's Postgres (its 2026 layout: metadata tables in schema `tensorzero`
 * joined on `(id, created_at)` to their `*_data` payload tables) read as the neutral streams of
 * src/tensorzeroImport/source.ts. The layout is probed once at open from `information_schema`:
 * columns added by later TensorZero releases (cost, cache tokens, ...) read as NULL where they
 * are missing, and columns are always named, so extra columns (forks, later releases) do no harm.
 * docs/plans/issue-40-tensorzero-postgres.md is the inventory of the layout.
 *
 * Pages are keyset reads in `(at, id)` order, one statement per table: the streams made of
 * several tables (chat + json inferences and datapoints, the four feedback tables) read up to
 * `limit` rows of each and merge them, so a page holds at most `limit` rows per table in memory.
 *
 * Ordering times are microseconds in Postgres; a position keeps them whole (`at` = epoch ms
 * with the microseconds as its fraction) so that rows within one millisecond are neither
 * skipped nor read twice. The rows' own times are whole epoch milliseconds. Inferences and
 * model inferences are the exception: their `at` is the time in their UUIDv7 id (TensorZero
 * derives created_at from it), so they are read in id order, along their primary key's index.
 * Payload tables are joined to a page's rows after the keyset read picked them.
 */
import type * as PgClient from "@effect/sql-pg/PgClient"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import type { SqlError } from "effect/sql/SqlError"
import type { StoreError } from "../../src/storeError.ts"
import {
  type Json,
  type Position,
  SourceError,
  type SourcePage,
  type StreamName,
  type StreamRows,
  streamNames,
  type TensorZeroSource,
  type TzApiKey,
  type TzBatch,
  type TzBatchInference,
  type TzDatapoint,
  type TzDiclExample,
  type TzEvaluationRun,
  type TzFeedback,
  type TzInference,
  type TzModelInference,
  type TzWorkflowEpisode,
  type TzWorkflowRun,
  type UnreadableRow
} from "../../src/tensorzeroImport/source.ts"
import { makePgClient, storeError } from "../postgres/client.ts"
import { uuidv7Timestamp } from "../../src/ids.ts"

/** connections to the TensorZero database: one per table of the widest stream (feedback's four) */
const maxConnections = 4

export const noTensorZeroTables = "no TensorZero tables: a 2025 deployment keeps its data in ClickHouse; pass its ClickHouse URL"

type Row = Record<string, any>

/** the columns of each table found, by `schema.table` */
type Columns = ReadonlyMap<string, ReadonlySet<string>>

/** a row of one table, with its position */
interface Keyed<A> {
  readonly micros: number
  readonly id: string
  readonly row: A | UnreadableRow
}

class Unreadable extends Error {}

// ---- checks of what a column holds

const unreadable = (id: string, reason: string): UnreadableRow => ({ unreadable: true, id, reason })

const describe = (value: unknown) => JSON.stringify(value)?.slice(0, 100) ?? String(value)

/** a flat object of strings (tags, variant pins) */
const stringMap = (column: string, value: unknown): Readonly<Record<string, string>> => {
  if (value === null || value === undefined) return {}
  if (typeof value !== "object" || Array.isArray(value) || Object.values(value).some((entry) => typeof entry !== "string")) {
    throw new Unreadable(`${column} is not an object of strings: ${describe(value)}`)
  }
  return value as Record<string, string>
}

const oneOf = <const A extends string>(column: string, value: unknown, allowed: ReadonlyArray<A>): A => {
  if (!allowed.includes(value as A)) throw new Unreadable(`${column} is not one of ${allowed.join(", ")}: ${describe(value)}`)
  return value as A
}

const stringArray = (column: string, value: unknown): ReadonlyArray<string> => {
  if (!Array.isArray(value) || value.some((entry) => typeof entry !== "string")) throw new Unreadable(`${column} is not an array of strings: ${describe(value)}`)
  return value
}

const numbers = (column: string, value: unknown): ReadonlyArray<number> => {
  if (!Array.isArray(value) || value.some((entry) => typeof entry !== "number" || !Number.isFinite(entry))) {
    throw new Unreadable(`${column} is not an array of finite numbers: ${describe(value)}`)
  }
  return value
}

/** epoch ms (or null) as the SELECT list gives it */
const millis = (value: unknown): number | null => value === null || value === undefined ? null : Number(value)

/** the row `read` makes of `row`, or why it cannot */
const readRow = <A>(id: string, read: () => A): A | UnreadableRow => {
  try {
    return read()
  } catch (error) {
    if (error instanceof Unreadable) return unreadable(id, error.message)
    throw error
  }
}

/** TzToolParams of the separate tool columns (source.ts) */
const toolParams = (row: Row): Json => ({
  tools_available: row.dynamic_tools,
  provider_tools: row.dynamic_provider_tools,
  allowed_tools: row.allowed_tools,
  tool_choice: row.tool_choice,
  parallel_tool_calls: row.parallel_tool_calls
})

// ---- SQL

/** epoch ms of a timestamp column, whole */
const ms = (column: string) => `floor(extract(epoch FROM ${column}) * 1000)::float8`

/** one keyset read of a table: `at` and `id` are the expressions ordered by */
interface KeysetQuery {
  /** the columns of the table read (`from`) */
  readonly select: string
  /** the table (or subquery) read, with its alias */
  readonly from: string
  /**
   * the payload tables, joined to the page's rows once they are chosen (so that a page joins
   * `limit` rows, not the table): their columns and joins, which name the table read by `alias`
   */
  readonly joined?: { readonly alias: string; readonly select: string; readonly joins: string }
  readonly at: string
  readonly id: string
  /** the SQL type the position's id is compared as */
  readonly idType: "uuid" | "text"
  /**
   * ordered by the id alone, `at` being the time in the id (a UUIDv7): for the big partitioned
   * tables, whose created_at TensorZero derives from the id and which have no index on
   * created_at, so that a page is read in their primary key's order instead of sorting what
   * is left of the table each time
   */
  readonly byIdTime?: boolean
}

/** the smallest UUIDv7 of the millisecond `ms`: no id made at or after it sorts below it */
const firstUuidAt = (ms: number): string => {
  const hex = Math.floor(ms).toString(16).padStart(12, "0")
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-0000-0000-000000000000`
}

/**
 * The rows after `after` and their order. A position with an empty id (a restart before a
 * saved position) is no value of the id's SQL type: it is every row from its time on.
 */
const keysetSql = (query: KeysetQuery, after: Position | undefined) => {
  const id = query.idType === "text" ? `${query.id} COLLATE "C"` : query.id
  if (query.byIdTime === true) {
    if (after === undefined) return { where: "", params: [], order: id }
    return after.id === ""
      ? { where: `WHERE ${id} >= $1::uuid`, params: [firstUuidAt(after.at)], order: id }
      : { where: `WHERE ${id} > $1::uuid`, params: [after.id], order: id }
  }
  const order = `${query.at}, ${id}`
  if (after === undefined) return { where: "", params: [], order }
  const at = "(timestamptz 'epoch' + $1::int8 * interval '1 microsecond')"
  const micros = String(Math.round(after.at * 1000))
  if (after.id === "") return { where: `WHERE ${query.at} >= ${at}`, params: [micros], order }
  // the plain bound lets Postgres skip the partitions before the position, which the row comparison does not
  const where = `WHERE ${query.at} >= ${at} AND (${query.at}, ${id}) > (${at}, $2::${query.idType}${query.idType === "text" ? ` COLLATE "C"` : ""})`
  return { where, params: [micros, after.id], order }
}

// ---- the layout

interface Layout {
  readonly columns: Columns
  /** the schema-qualified name of the API key table, when there is one */
  readonly apiKeyTable: string | undefined
}

const probeLayout = (sql: PgClient.PgClient): Effect.Effect<Layout, SourceError> =>
  Effect.gen(function*() {
    const rows = yield* sql.unsafe<{ table_schema: string; table_name: string; column_name: string }>(
      `SELECT table_schema, table_name, column_name FROM information_schema.columns
        WHERE table_schema = 'tensorzero' OR (table_name = 'tensorzero_auth_api_key' AND table_schema IN ('public', 'tensorzero'))`
    ).pipe(Effect.mapError(sourceError("layout probe")))
    const columns = new Map<string, Set<string>>()
    for (const row of rows) {
      const table = `${row.table_schema}.${row.table_name}`
      columns.set(table, (columns.get(table) ?? new Set()).add(row.column_name))
    }
    const has = (table: string) => columns.has(`tensorzero.${table}`)
    if (!has("chat_inferences")) {
      if (has("chat_inference")) {
        return yield* new SourceError({
          message: "TensorZero tables of an unreleased prototype layout (tensorzero.chat_inference, singular names): not a layout TensorZero shipped, not readable"
        })
      }
      return yield* new SourceError({ message: noTensorZeroTables })
    }
    if (!has("chat_inference_data")) {
      return yield* new SourceError({
        message: "TensorZero Postgres of a release before 2026-02-13 (payloads inside tensorzero.chat_inferences, no chat_inference_data): not readable; " +
          "upgrade TensorZero first (its migrations split the payloads out)"
      })
    }
    const apiKeyTable = ["tensorzero", "public"].map((schema) => `${schema}.tensorzero_auth_api_key`).find((table) => columns.has(table))
    return { columns, apiKeyTable }
  })

const sourceError = (operation: string) => (error: SqlError | StoreError) =>
  new SourceError({ message: `TensorZero Postgres: ${storeError(operation)(error).message}` })

/** the tables each stream reads */
const streamTables: { readonly [S in StreamName]: ReadonlyArray<string> } = {
  api_keys: [],
  datapoints: ["chat_datapoints", "json_datapoints"],
  inferences: ["chat_inferences", "chat_inference_data", "json_inferences", "json_inference_data"],
  model_inferences: ["model_inferences", "model_inference_data"],
  feedback: ["boolean_metric_feedback", "float_metric_feedback", "comment_feedback", "demonstration_feedback"],
  evaluation_runs: ["inference_evaluation_runs"],
  workflow_evaluation_runs: ["workflow_evaluation_runs"],
  workflow_evaluation_episodes: ["workflow_evaluation_run_episodes"],
  batches: ["batch_requests", "batch_request_data", "batch_model_inferences", "batch_model_inference_data"],
  dicl_examples: ["dicl_examples"]
}

/** Opens a TensorZero Postgres (2026 layout) at `url` for reading; refuses another layout with what it found. */
export const openTensorZeroPostgres = (url: string): Effect.Effect<TensorZeroSource, SourceError, Scope.Scope> =>
  Effect.gen(function*() {
    const sql = yield* makePgClient(url, { applicationName: "gateway import-tensorzero", maxConnections }).pipe(
      Effect.mapError((error) => new SourceError({ message: `TensorZero Postgres: ${error.message}` }))
    )
    const layout = yield* probeLayout(sql)
    const reader = makeReader(sql, layout)
    const streams = streamNames.filter((stream) =>
      stream === "api_keys" ? layout.apiKeyTable !== undefined : streamTables[stream].every((table) => layout.columns.has(`tensorzero.${table}`))
    )
    const available = new Set(streams)
    const refuseMissing = (stream: StreamName) => new SourceError({ message: `TensorZero Postgres: this database has no ${stream} (its tables are missing)` })
    return {
      description: "TensorZero Postgres (2026 layout)",
      streams,
      estimate: (stream, after) => available.has(stream) ? reader.estimate(stream, after) : Effect.fail(refuseMissing(stream)),
      page: <S extends StreamName>(stream: S, after: Position | undefined, limit: number) =>
        available.has(stream) ? reader.page(stream, after, limit) : Effect.fail(refuseMissing(stream))
    } satisfies TensorZeroSource
  })

// ---- the reader

const makeReader = (sql: PgClient.PgClient, layout: Layout) => {
  /** `alias.column` (through `cast`) where the table has the column, NULL otherwise */
  const optional = (table: string, alias: string, column: string, cast: string = "") =>
    layout.columns.get(`tensorzero.${table}`)?.has(column) === true ? `${alias}.${column}${cast} AS ${column}` : `NULL AS ${column}`

  const run = (operation: string, text: string, params: ReadonlyArray<unknown> = []) =>
    sql.unsafe<Row>(text, params).pipe(Effect.mapError(sourceError(operation)))

  /** up to `limit` rows of one table after `after`, converted by `convert` */
  const readTable = <A>(name: string, query: KeysetQuery, after: Position | undefined, limit: number, convert: (row: Row) => A) =>
    Effect.gen(function*() {
      const { where, params, order } = keysetSql(query, after)
      const micros = query.byIdTime === true ? "" : `(extract(epoch FROM ${query.at}) * 1000000)::int8::text AS key_micros, `
      const keyed = `SELECT ${query.select}, ${micros}${query.id}::text AS key_id
        FROM ${query.from} ${where} ORDER BY ${order} LIMIT ${Math.max(1, Math.floor(limit))}`
      // the order is the merge's (page), by key_micros and key_id
      const rows = yield* run(
        `read ${name}`,
        query.joined === undefined
          ? keyed
          : `SELECT ${query.joined.alias}.*, ${query.joined.select} FROM (${keyed}) ${query.joined.alias} ${query.joined.joins}`,
        params
      )
      return rows.map((row): Keyed<A> => ({
        micros: query.byIdTime === true ? uuidv7Timestamp(row.key_id) * 1000 : Number(row.key_micros),
        id: row.key_id,
        row: readRow(row.key_id, () => convert(row))
      }))
    })

  const countTable = (name: string, query: KeysetQuery, after: Position | undefined) =>
    Effect.gen(function*() {
      const { where, params } = keysetSql(query, after)
      const rows = yield* run(`count ${name}`, `SELECT count(*)::float8 AS n FROM ${query.from} ${where}`, params)
      return Number(rows[0]?.n ?? 0)
    })

  // the queries of each table

  const chatInferences: KeysetQuery = {
    select: `i.id, i.function_name, i.variant_name, i.episode_id, i.processing_time_ms, i.ttft_ms, i.tags, i.created_at, ${ms("i.created_at")} AS created_ms,
      ${optional("chat_inferences", "i", "api_key_public_id")}`,
    from: "tensorzero.chat_inferences i",
    joined: {
      alias: "i",
      select: `d.id IS NOT NULL AS has_data, d.input, d.output, d.inference_params, d.extra_body,
        d.dynamic_tools, d.dynamic_provider_tools, d.allowed_tools, d.tool_choice, d.parallel_tool_calls`,
      joins: "LEFT JOIN tensorzero.chat_inference_data d ON d.id = i.id AND d.created_at = i.created_at"
    },
    at: "i.created_at",
    id: "i.id",
    idType: "uuid",
    byIdTime: true
  }
  const jsonInferences: KeysetQuery = {
    select: `i.id, i.function_name, i.variant_name, i.episode_id, i.processing_time_ms, i.ttft_ms, i.tags, i.created_at, ${ms("i.created_at")} AS created_ms,
      ${optional("json_inferences", "i", "api_key_public_id")}`,
    from: "tensorzero.json_inferences i",
    joined: {
      alias: "i",
      select: "d.id IS NOT NULL AS has_data, d.input, d.output, d.inference_params, d.extra_body, d.output_schema",
      joins: "LEFT JOIN tensorzero.json_inference_data d ON d.id = i.id AND d.created_at = i.created_at"
    },
    at: "i.created_at",
    id: "i.id",
    idType: "uuid",
    byIdTime: true
  }
  const inference = (kind: "chat" | "json") => (row: Row): TzInference => {
    const payload = row.has_data === true
    return {
      id: row.id,
      kind,
      functionName: row.function_name,
      variantName: row.variant_name,
      episodeId: row.episode_id,
      input: payload ? row.input : undefined,
      output: payload ? row.output : undefined,
      ...(payload && kind === "chat" && { toolParams: toolParams(row) }),
      ...(payload && { inferenceParams: row.inference_params, extraBody: row.extra_body }),
      ...(payload && kind === "json" && { outputSchema: row.output_schema }),
      processingTimeMs: row.processing_time_ms,
      ttftMs: row.ttft_ms,
      tags: stringMap("tags", row.tags),
      apiKeyPublicId: row.api_key_public_id,
      timestamp: Number(row.created_ms)
    }
  }

  const modelInferences: KeysetQuery = {
    select: `m.id, m.inference_id, m.input_tokens, m.output_tokens, m.response_time_ms, m.ttft_ms, m.model_name, m.model_provider_name,
      m.cached, m.finish_reason, m.created_at, ${ms("m.created_at")} AS created_ms, ${optional("model_inferences", "m", "cost", "::float8")},
      ${optional("model_inferences", "m", "provider_cache_read_input_tokens")}, ${optional("model_inferences", "m", "provider_cache_write_input_tokens")}`,
    from: "tensorzero.model_inferences m",
    joined: {
      alias: "m",
      select: "d.id IS NOT NULL AS has_data, d.raw_request, d.raw_response, d.system, d.input_messages, d.output",
      joins: "LEFT JOIN tensorzero.model_inference_data d ON d.id = m.id AND d.created_at = m.created_at"
    },
    at: "m.created_at",
    id: "m.id",
    idType: "uuid",
    byIdTime: true
  }
  const modelInference = (row: Row): TzModelInference => ({
    id: row.id,
    inferenceId: row.inference_id,
    ...(row.has_data === true && {
      rawRequest: row.raw_request,
      rawResponse: row.raw_response,
      system: row.system,
      inputMessages: row.input_messages,
      output: row.output
    }),
    inputTokens: row.input_tokens,
    outputTokens: row.output_tokens,
    cacheReadInputTokens: row.provider_cache_read_input_tokens,
    cacheWriteInputTokens: row.provider_cache_write_input_tokens,
    cost: row.cost,
    responseTimeMs: row.response_time_ms,
    ttftMs: row.ttft_ms,
    modelName: row.model_name,
    modelProviderName: row.model_provider_name,
    cached: row.cached === true,
    finishReason: row.finish_reason,
    timestamp: Number(row.created_ms)
  })

  const feedbackQuery = (table: string, columns: string): KeysetQuery => ({
    select: `f.id, ${columns}, f.tags, ${ms("f.created_at")} AS created_ms`,
    from: `tensorzero.${table} f`,
    at: "f.created_at",
    id: "f.id",
    idType: "uuid"
  })
  /** the feedback of a page before its metric targets are resolved: an episode until found an inference */
  const feedback = (kind: TzFeedback["kind"]) => (row: Row): TzFeedback => ({
    id: row.id,
    kind,
    metricName: kind === "comment" || kind === "demonstration" ? kind : row.metric_name,
    targetId: row.target_id,
    targetType: kind === "comment" ? oneOf("target_type", row.target_type, ["inference", "episode"]) : kind === "demonstration" ? "inference" : "episode",
    value: row.value,
    tags: stringMap("tags", row.tags),
    timestamp: Number(row.created_ms)
  })
  const feedbackTables: ReadonlyArray<readonly [KeysetQuery, (row: Row) => TzFeedback]> = [
    [feedbackQuery("boolean_metric_feedback", "f.target_id, f.metric_name, f.value"), feedback("boolean")],
    [feedbackQuery("float_metric_feedback", "f.target_id, f.metric_name, f.value"), feedback("float")],
    [feedbackQuery("comment_feedback", "f.target_id, f.target_type, f.value"), feedback("comment")],
    [feedbackQuery("demonstration_feedback", "f.inference_id AS target_id, f.value"), feedback("demonstration")]
  ]
  /** boolean and float feedback name an inference when one has the target id, an episode otherwise */
  const resolveTargets = (rows: ReadonlyArray<TzFeedback | UnreadableRow>) =>
    Effect.gen(function*() {
      const metricTargets = [...new Set(rows.flatMap((row) => "unreadable" in row || (row.kind !== "boolean" && row.kind !== "float") ? [] : [row.targetId]))]
      if (metricTargets.length === 0) return rows
      // the ids came from uuid columns: safe to inline
      const list = metricTargets.map((id) => `'${id}'::uuid`).join(", ")
      const found = yield* run(
        "resolve feedback targets",
        `SELECT id::text AS id FROM tensorzero.chat_inferences WHERE id IN (${list}) UNION SELECT id::text FROM tensorzero.json_inferences WHERE id IN (${list})`
      )
      const inferences = new Set(found.map((row) => row.id as string))
      return rows.map((row) =>
        "unreadable" in row || (row.kind !== "boolean" && row.kind !== "float") || !inferences.has(row.targetId) ? row : { ...row, targetType: "inference" as const }
      )
    })

  const datapointQuery = (table: "chat_datapoints" | "json_datapoints"): KeysetQuery => ({
    select: `p.id, p.dataset_name, p.function_name, p.episode_id, p.input, p.output, ${
      table === "chat_datapoints"
        ? "p.dynamic_tools, p.dynamic_provider_tools, p.allowed_tools, p.tool_choice, p.parallel_tool_calls"
        : "p.output_schema"
    }, p.tags, p.is_custom, p.source_inference_id, ${optional(table, "p", "name")}, ${ms("p.staled_at")} AS staled_ms, ${ms("p.updated_at")} AS updated_ms`,
    from: `tensorzero.${table} p`,
    at: "p.updated_at",
    id: "p.id",
    idType: "uuid"
  })
  const datapoint = (kind: "chat" | "json") => (row: Row): TzDatapoint => ({
    id: row.id,
    kind,
    datasetName: row.dataset_name,
    functionName: row.function_name,
    episodeId: row.episode_id,
    input: row.input,
    output: row.output,
    ...(kind === "chat" ? { toolParams: toolParams(row) } : { outputSchema: row.output_schema }),
    tags: stringMap("tags", row.tags),
    isCustom: row.is_custom === true,
    sourceInferenceId: row.source_inference_id,
    name: row.name,
    staledAt: millis(row.staled_ms),
    updatedAt: Number(row.updated_ms)
  })

  const evaluationRuns: KeysetQuery = {
    select: `r.run_id, r.evaluation_name, r.function_name, r.function_type, r.dataset_name, r.variant_names, ${
      optional("inference_evaluation_runs", "r", "metrics")
    }, ${optional("inference_evaluation_runs", "r", "source")}, ${ms("r.created_at")} AS created_ms, ${ms("r.updated_at")} AS updated_ms`,
    from: "tensorzero.inference_evaluation_runs r",
    at: "r.updated_at",
    id: "r.run_id",
    idType: "uuid"
  }
  const evaluationRun = (row: Row): TzEvaluationRun => ({
    runId: row.run_id,
    evaluationName: row.evaluation_name,
    functionName: row.function_name,
    functionType: oneOf("function_type", row.function_type, ["chat", "json"]),
    datasetName: row.dataset_name,
    variantNames: stringArray("variant_names", row.variant_names),
    metrics: row.metrics,
    source: row.source,
    createdAt: Number(row.created_ms),
    updatedAt: Number(row.updated_ms)
  })

  const workflowRuns: KeysetQuery = {
    select: `r.run_id, r.project_name, r.run_display_name, r.variant_pins, r.tags, ${ms("r.staled_at")} AS staled_ms,
      ${ms("r.created_at")} AS created_ms, ${ms("r.updated_at")} AS updated_ms`,
    from: "tensorzero.workflow_evaluation_runs r",
    at: "r.updated_at",
    id: "r.run_id",
    idType: "uuid"
  }
  const workflowRun = (row: Row): TzWorkflowRun => ({
    runId: row.run_id,
    projectName: row.project_name,
    displayName: row.run_display_name,
    variantPins: stringMap("variant_pins", row.variant_pins),
    tags: stringMap("tags", row.tags),
    staledAt: millis(row.staled_ms),
    timestamp: Number(row.created_ms),
    updatedAt: Number(row.updated_ms)
  })

  // the episode's task name column was `datapoint_name` before it was `task_name`
  const episodeColumns = layout.columns.get("tensorzero.workflow_evaluation_run_episodes")
  const taskName = episodeColumns?.has("task_name") === true ? "e.task_name" : episodeColumns?.has("datapoint_name") === true ? "e.datapoint_name" : "NULL"
  const workflowEpisodes: KeysetQuery = {
    select: `e.episode_id, e.run_id, ${taskName} AS task_name, e.variant_pins, e.tags, ${ms("e.staled_at")} AS staled_ms,
      ${ms("e.created_at")} AS created_ms, ${ms("e.updated_at")} AS updated_ms`,
    from: "tensorzero.workflow_evaluation_run_episodes e",
    at: "e.updated_at",
    id: "e.episode_id",
    idType: "uuid"
  }
  const workflowEpisode = (row: Row): TzWorkflowEpisode => ({
    episodeId: row.episode_id,
    runId: row.run_id,
    taskName: row.task_name,
    variantPins: stringMap("variant_pins", row.variant_pins),
    tags: stringMap("tags", row.tags),
    staledAt: millis(row.staled_ms),
    timestamp: Number(row.created_ms),
    updatedAt: Number(row.updated_ms)
  })

  // a batch is ordered by its latest request row: a status change moves it to the end
  const batches: KeysetQuery = {
    select: `b.batch_id, ${ms("b.first_at")} AS first_ms, ${ms("b.latest_at")} AS latest_ms`,
    from: "(SELECT batch_id, min(created_at) AS first_at, max(created_at) AS latest_at FROM tensorzero.batch_requests GROUP BY batch_id) b",
    joined: {
      alias: "b",
      select: `r.id AS request_id, r.function_name, r.variant_name, r.model_name, r.model_provider_name, r.batch_params, r.status,
        d.id IS NOT NULL AS has_data, d.raw_request, d.raw_response, d.errors`,
      joins: `CROSS JOIN LATERAL (
          SELECT q.id, q.function_name, q.variant_name, q.model_name, q.model_provider_name, q.batch_params, q.status, q.created_at
          FROM tensorzero.batch_requests q WHERE q.batch_id = b.batch_id ORDER BY q.created_at DESC, q.id DESC LIMIT 1
        ) r
        LEFT JOIN tensorzero.batch_request_data d ON d.id = r.id AND d.created_at = r.created_at`
    },
    at: "b.latest_at",
    id: "b.batch_id",
    idType: "uuid"
  }
  const batch = (row: Row): Omit<TzBatch, "inferences"> => ({
    batchId: row.batch_id,
    requestId: row.request_id,
    functionName: row.function_name,
    variantName: row.variant_name,
    modelName: row.model_name,
    modelProviderName: row.model_provider_name,
    batchParams: row.batch_params,
    status: oneOf("status", row.status, ["pending", "completed", "failed"]),
    ...(row.has_data === true && { rawRequest: row.raw_request, rawResponse: row.raw_response, errors: row.errors }),
    timestamp: Number(row.first_ms),
    updatedAt: Number(row.latest_ms)
  })
  const batchInference = (row: Row): TzBatchInference => {
    const payload = row.has_data === true
    return {
      inferenceId: row.inference_id,
      episodeId: row.episode_id,
      functionName: row.function_name,
      variantName: row.variant_name,
      input: payload ? row.input : undefined,
      ...(payload && {
        inputMessages: row.input_messages,
        system: row.system,
        toolParams: toolParams(row),
        inferenceParams: row.inference_params,
        outputSchema: row.output_schema,
        rawRequest: row.raw_request
      }),
      modelName: row.model_name,
      modelProviderName: row.model_provider_name,
      tags: stringMap("tags", row.tags),
      timestamp: Number(row.created_ms)
    }
  }
  /** the page's batches with their inferences attached (one query); a batch with an unreadable inference is unreadable */
  const withInferences = (rows: ReadonlyArray<Keyed<Omit<TzBatch, "inferences">>>) =>
    Effect.gen(function*() {
      if (rows.length === 0) return []
      const list = rows.map((row) => `'${row.id}'::uuid`).join(", ")
      const found = yield* run(
        "read batch_model_inferences",
        `SELECT m.inference_id, m.batch_id::text AS batch_id, m.function_name, m.variant_name, m.episode_id, m.model_name, m.model_provider_name, m.tags,
            ${ms("m.created_at")} AS created_ms, d.inference_id IS NOT NULL AS has_data, d.input, d.input_messages, d.system, d.inference_params,
            d.raw_request, d.output_schema, d.dynamic_tools, d.dynamic_provider_tools, d.allowed_tools, d.tool_choice, d.parallel_tool_calls
          FROM tensorzero.batch_model_inferences m
          LEFT JOIN tensorzero.batch_model_inference_data d ON d.inference_id = m.inference_id AND d.created_at = m.created_at
          WHERE m.batch_id IN (${list}) ORDER BY m.created_at, m.inference_id`
      )
      const byBatch = new Map<string, Array<TzBatchInference | UnreadableRow>>()
      for (const row of found) {
        const list = byBatch.get(row.batch_id) ?? []
        list.push(readRow(row.inference_id, () => batchInference(row)))
        byBatch.set(row.batch_id, list)
      }
      return rows.map((keyed): Keyed<TzBatch> => {
        if ("unreadable" in keyed.row) return keyed as Keyed<TzBatch>
        const inferences = byBatch.get(keyed.id) ?? []
        const bad = inferences.find((inference): inference is UnreadableRow => "unreadable" in inference)
        return {
          ...keyed,
          row: bad !== undefined
            ? unreadable(keyed.id, `its inference ${bad.id}: ${bad.reason}`)
            : { ...keyed.row, inferences: inferences as ReadonlyArray<TzBatchInference> }
        }
      })
    })

  const diclExamples: KeysetQuery = {
    select: `x.id, x.function_name, x.variant_name, x.namespace, x.input, x.output, x.embedding::real[] AS embedding, ${ms("x.created_at")} AS created_ms`,
    from: "tensorzero.dicl_examples x",
    at: "x.created_at",
    id: "x.id",
    idType: "uuid"
  }
  const diclExample = (row: Row): TzDiclExample => ({
    id: row.id,
    functionName: row.function_name,
    variantName: row.variant_name,
    namespace: row.namespace,
    input: row.input,
    output: row.output,
    embedding: numbers("embedding", row.embedding),
    timestamp: Number(row.created_ms)
  })

  const apiKeyTable = layout.apiKeyTable ?? "public.tensorzero_auth_api_key"
  const apiKeyColumns = layout.columns.get(apiKeyTable)
  const apiKeys: KeysetQuery = {
    select: `k.public_id::text AS public_id, k.hash, k.description, k.organization, k.workspace, ${ms("k.created_at")} AS created_ms,
      ${ms("k.updated_at")} AS updated_ms, ${apiKeyColumns?.has("expires_at") === true ? ms("k.expires_at") : "NULL"} AS expires_ms, ${ms("k.disabled_at")} AS disabled_ms`,
    from: `${apiKeyTable} k`,
    at: "k.updated_at",
    id: "k.public_id::text",
    idType: "text"
  }
  const apiKey = (row: Row): TzApiKey => {
    if (typeof row.hash !== "string" || !/^[0-9a-f]{64}$/.test(row.hash)) throw new Unreadable(`hash is not a lowercase hex SHA-256: ${describe(row.hash)}`)
    return {
      publicId: row.public_id,
      hash: row.hash,
      description: row.description,
      organization: row.organization,
      workspace: row.workspace,
      createdAt: Number(row.created_ms),
      updatedAt: Number(row.updated_ms),
      expiresAt: millis(row.expires_ms),
      disabledAt: millis(row.disabled_ms)
    }
  }

  /** each stream's tables: its keyset query and the conversion of its rows */
  const tablesOf = (stream: StreamName): ReadonlyArray<readonly [KeysetQuery, (row: Row) => unknown]> => {
    switch (stream) {
      case "api_keys":
        return [[apiKeys, apiKey]]
      case "datapoints":
        return [[datapointQuery("chat_datapoints"), datapoint("chat")], [datapointQuery("json_datapoints"), datapoint("json")]]
      case "inferences":
        return [[chatInferences, inference("chat")], [jsonInferences, inference("json")]]
      case "model_inferences":
        return [[modelInferences, modelInference]]
      case "feedback":
        return feedbackTables
      case "evaluation_runs":
        return [[evaluationRuns, evaluationRun]]
      case "workflow_evaluation_runs":
        return [[workflowRuns, workflowRun]]
      case "workflow_evaluation_episodes":
        return [[workflowEpisodes, workflowEpisode]]
      case "batches":
        return [[batches, batch]]
      case "dicl_examples":
        return [[diclExamples, diclExample]]
    }
  }

  const page = <S extends StreamName>(stream: S, after: Position | undefined, limit: number): Effect.Effect<SourcePage<S>, SourceError> =>
    Effect.gen(function*() {
      const perTable = yield* Effect.forEach(tablesOf(stream), ([query, convert]) => readTable(stream, query, after, limit, convert), {
        concurrency: maxConnections
      })
      let merged = perTable.flat().sort((a, b) => a.micros - b.micros || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)).slice(0, Math.max(1, Math.floor(limit)))
      if (stream === "batches") merged = yield* withInferences(merged as Array<Keyed<Omit<TzBatch, "inferences">>>)
      let rows: ReadonlyArray<unknown> = merged.map((keyed) => keyed.row)
      if (stream === "feedback") rows = yield* resolveTargets(rows as Array<TzFeedback | UnreadableRow>)
      const last = merged.at(-1)
      return {
        rows: rows as ReadonlyArray<StreamRows[S] | UnreadableRow>,
        last: last === undefined ? undefined : { at: last.micros / 1000, id: last.id }
      }
    })

  const estimate = (stream: StreamName, after: Position | undefined): Effect.Effect<number | undefined, SourceError> =>
    Effect.forEach(tablesOf(stream), ([query]) => countTable(stream, query, after)).pipe(
      Effect.map((counts) => counts.reduce((sum, count) => sum + count, 0))
    )

  return { page, estimate }
}
