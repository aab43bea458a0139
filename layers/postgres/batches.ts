/**
 * Batch inference on Postgres (`BatchStore` of src/batch/store.ts), in the `batch_requests` and
 * `batch_model_inferences` tables (migrations/postgres/0010_batches.sql). A batch's row is
 * upserted; a write applies only over an older (`updatedAt`, version) (layers/writeVersions.ts),
 * so the newest `updatedAt` wins even when two writes commit out of order, and of two with the
 * same `updatedAt` the one written last, as on ClickHouse. A batch and its
 * inferences are inserted in one transaction: the inferences as JSON arrays of a bounded size
 * (one bound parameter each, turned into rows by `jsonb_array_elements`), so ten thousand
 * inferences take a few statements. A retried insert stores each row once.
 */
import type * as PgClient from "@effect/sql-pg/PgClient"
import { Buffer } from "node:buffer"
import * as Effect from "effect/Effect"
import { isSqlError, type SqlError } from "effect/sql/SqlError"
import type { BatchStore, StoredBatch, StoredBatchInference } from "../../src/batch/store.ts"
import { isUuid } from "../../src/ids.ts"
import { mapInTurns } from "../../src/eventLoop.ts"
import { jsonArrays } from "../../src/analytics/database.ts"
import { StoreError } from "../../src/storeError.ts"
import { writeVersions } from "../writeVersions.ts"
import { notAUuid, refused, storeError } from "./client.ts"
import { isUnstorableText, storable } from "./database.ts"

/** JSON per INSERT of inferences: a size Postgres parses without strain; one row at least */
const maxChunkBytes = 8 * 1024 * 1024

interface BatchRow {
  readonly id: string
  readonly workspace: string
  readonly function_name: string
  readonly function_type: StoredBatch["functionType"]
  readonly variant_name: string
  readonly model_name: string
  readonly model_provider_name: string
  readonly provider_batch_id: string
  readonly provider_batch_data: unknown
  readonly batch_params: unknown
  readonly status: StoredBatch["status"]
  readonly error_message: string | null
  readonly failures: Record<string, string> | null
  readonly timestamp: Date
  readonly updated_at: Date
}

interface InferenceRow {
  readonly batch_id: string
  readonly workspace: string
  readonly input_index: number
  readonly inference_id: string
  readonly episode_id: string
  readonly function_name: string
  readonly variant_name: string
  readonly input: unknown
  readonly system: string | null
  readonly input_messages: unknown
  /** a JSON null reads as null too: `has_tool_params` tells it from an absent value */
  readonly tool_params: unknown
  readonly has_tool_params: boolean
  readonly output_schema: unknown
  readonly has_output_schema: boolean
  readonly inference_params: unknown
  readonly raw_request: string
  readonly model_name: string
  readonly model_provider_name: string
  readonly tags: Record<string, string>
  readonly timestamp: Date
}

const batchColumns = "id, workspace, function_name, function_type, variant_name, model_name, model_provider_name, provider_batch_id, " +
  "provider_batch_data, batch_params, status, error_message, failures, timestamp, updated_at"

const inferenceColumns = "batch_id, workspace, input_index, inference_id, episode_id, function_name, variant_name, input, system, input_messages, " +
  "tool_params, tool_params IS NOT NULL AS has_tool_params, output_schema, output_schema IS NOT NULL AS has_output_schema, " +
  "inference_params, raw_request, model_name, model_provider_name, tags, timestamp"

const checkUuid = (id: string) => {
  if (!isUuid(id)) throw notAUuid(id)
}

/** epoch ms as ISO 8601 text, refused when it is not a time ClickHouse would hold either */
const isoTime = (ms: number, field: string) => {
  if (!Number.isSafeInteger(ms) || ms < 0) throw refused(`${field} is not a time in epoch milliseconds: ${ms}`)
  return new Date(ms).toISOString()
}

// An absent field is a missing key (SQL NULL); a JSON value is kept as it is (a JSON null is JSONB `null`).
const batchJson = (batch: StoredBatch, version: number): Buffer => {
  checkUuid(batch.id)
  return Buffer.from(JSON.stringify({
    id: batch.id,
    workspace: batch.workspace,
    function_name: batch.functionName,
    function_type: batch.functionType,
    variant_name: batch.variantName,
    model_name: batch.modelName,
    model_provider_name: batch.modelProviderName,
    provider_batch_id: batch.providerBatchId,
    provider_batch_data: batch.providerBatchData ?? null,
    batch_params: batch.batchParams ?? null,
    status: batch.status,
    error_message: batch.errorMessage,
    failures: batch.failures,
    timestamp: isoTime(batch.timestamp, "timestamp"),
    updated_at: isoTime(batch.updatedAt, "updatedAt"),
    version
  }))
}

const inferenceJson = (inference: StoredBatchInference): Buffer => {
  checkUuid(inference.batchId)
  checkUuid(inference.inferenceId)
  checkUuid(inference.episodeId)
  if (!Number.isSafeInteger(inference.index) || inference.index < 0 || inference.index > 0x7fffffff) {
    throw refused(`index is not a position in the batch: ${inference.index}`)
  }
  return Buffer.from(JSON.stringify({
    batch_id: inference.batchId,
    workspace: inference.workspace,
    input_index: inference.index,
    inference_id: inference.inferenceId,
    episode_id: inference.episodeId,
    function_name: inference.functionName,
    variant_name: inference.variantName,
    input: inference.input ?? null,
    system: inference.system,
    input_messages: inference.inputMessages ?? null,
    tool_params: inference.toolParams,
    output_schema: inference.outputSchema,
    inference_params: inference.inferenceParams ?? null,
    raw_request: inference.rawRequest,
    model_name: inference.modelName,
    model_provider_name: inference.modelProviderName,
    tags: inference.tags,
    timestamp: isoTime(inference.timestamp, "timestamp")
  }))
}

// Optional fields are NULL when absent, and absent again when read.
const toBatch = (row: BatchRow): StoredBatch => ({
  id: row.id,
  workspace: row.workspace,
  functionName: row.function_name,
  functionType: row.function_type,
  variantName: row.variant_name,
  modelName: row.model_name,
  modelProviderName: row.model_provider_name,
  providerBatchId: row.provider_batch_id,
  providerBatchData: row.provider_batch_data,
  batchParams: row.batch_params,
  status: row.status,
  ...(row.error_message !== null && { errorMessage: row.error_message }),
  ...(row.failures !== null && { failures: row.failures }),
  timestamp: row.timestamp.getTime(),
  updatedAt: row.updated_at.getTime()
})

const toInference = (row: InferenceRow): StoredBatchInference => ({
  batchId: row.batch_id,
  workspace: row.workspace,
  inferenceId: row.inference_id,
  episodeId: row.episode_id,
  index: row.input_index,
  functionName: row.function_name,
  variantName: row.variant_name,
  input: row.input,
  ...(row.system !== null && { system: row.system }),
  inputMessages: row.input_messages,
  ...(row.has_tool_params && { toolParams: row.tool_params }),
  ...(row.has_output_schema && { outputSchema: row.output_schema }),
  inferenceParams: row.inference_params,
  rawRequest: row.raw_request,
  modelName: row.model_name,
  modelProviderName: row.model_provider_name,
  tags: row.tags,
  timestamp: row.timestamp.getTime()
})

/** what `build` gives; what it throws (a value it refuses) is a StoreError of `operation` */
/** what a row builder threw (a value it refuses) as the StoreError of `operation` */
const builtError = (operation: string, error: unknown): StoreError =>
  error instanceof StoreError ? error : new StoreError({ message: `postgres ${operation} failed: ${error instanceof Error ? error.message : String(error)}` })

const built = <A>(operation: string, build: () => A): Effect.Effect<A, StoreError> =>
  Effect.try({ try: build, catch: (error) => builtError(operation, error) })

export const makePostgresBatchStore = (sql: PgClient.PgClient): BatchStore => {
  const columns = {
    batch: sql.literal(batchColumns),
    inference: sql.literal(inferenceColumns)
  }

  /** the batch's row, over an older one only */
  const upsertBatch = (row: Buffer) =>
    sql`INSERT INTO batch_requests (id, workspace, function_name, function_type, variant_name, model_name, model_provider_name, provider_batch_id,
        provider_batch_data, batch_params, status, error_message, failures, timestamp, updated_at, version)
      SELECT (e->>'id')::uuid, e->>'workspace', e->>'function_name', e->>'function_type', e->>'variant_name', e->>'model_name', e->>'model_provider_name',
        e->>'provider_batch_id', e->'provider_batch_data', e->'batch_params', e->>'status', e->>'error_message', e->'failures',
        (e->>'timestamp')::timestamptz, (e->>'updated_at')::timestamptz, (e->>'version')::bigint
      FROM (SELECT convert_from(${row}, 'UTF8')::jsonb AS e) AS given
      ON CONFLICT (id) DO UPDATE SET
        (function_name, function_type, variant_name, model_name, model_provider_name, provider_batch_id, provider_batch_data,
          batch_params, status, error_message, failures, timestamp, updated_at, version) =
        (EXCLUDED.function_name, EXCLUDED.function_type, EXCLUDED.variant_name, EXCLUDED.model_name, EXCLUDED.model_provider_name,
          EXCLUDED.provider_batch_id, EXCLUDED.provider_batch_data, EXCLUDED.batch_params, EXCLUDED.status, EXCLUDED.error_message,
          EXCLUDED.failures, EXCLUDED.timestamp, EXCLUDED.updated_at, EXCLUDED.version)
      WHERE (batch_requests.updated_at, batch_requests.version) < (EXCLUDED.updated_at, EXCLUDED.version)`

  // unprepared: the parameter changes every time
  const insertInferences = (rows: Buffer) =>
    sql`INSERT INTO batch_model_inferences (batch_id, workspace, input_index, inference_id, episode_id, function_name, variant_name, input, system,
        input_messages, tool_params, output_schema, inference_params, raw_request, model_name, model_provider_name, tags, timestamp)
      SELECT (e->>'batch_id')::uuid, e->>'workspace', (e->>'input_index')::integer, (e->>'inference_id')::uuid, (e->>'episode_id')::uuid,
        e->>'function_name', e->>'variant_name', e->'input', e->>'system', e->'input_messages', e->'tool_params', e->'output_schema',
        e->'inference_params', e->>'raw_request', e->>'model_name', e->>'model_provider_name', e->'tags', (e->>'timestamp')::timestamptz
      FROM jsonb_array_elements(convert_from(${rows}, 'UTF8')::jsonb) AS e
      ON CONFLICT (batch_id, input_index) DO NOTHING`.unprepared

  /**
   * `change` of `texts` (JSON sent as bytes, read as UTF-8) in one transaction. Postgres cannot
   * store U+0000, nor lone surrogates in JSON: when it refuses them, the change is made again
   * with those characters replaced by U+FFFD (as the write queue does, layers/postgres/database.ts).
   */
  const transaction = (operation: string, texts: ReadonlyArray<Buffer>, change: (texts: ReadonlyArray<Buffer>) => Effect.Effect<unknown, SqlError>) =>
    sql.withTransaction(change(texts)).pipe(
      Effect.catchIf(
        (error): error is SqlError => isSqlError(error) && isUnstorableText(error),
        () => sql.withTransaction(change(texts.map(storable)))
      ),
      Effect.asVoid,
      Effect.mapError(storeError(operation))
    )

  const writeBatch = (operation: string, batch: StoredBatch) =>
    writeVersions(1).pipe(
      Effect.flatMap(([version]) => built(operation, () => batchJson(batch, version))),
      Effect.flatMap((row) => transaction(operation, [row], ([row]) => upsertBatch(row)))
    )

  return {
    backend: "postgres",
    // Every row is built (and checked) before anything is sent: a value refused stores nothing.
    insertBatch: (batch, inferences) =>
      writeVersions(1).pipe(
        Effect.flatMap(([version]) =>
          // tens of thousands of rows: encoded a slice at a time, the requests in flight served between slices
          Effect.tryPromise({ try: () => mapInTurns(inferences, inferenceJson), catch: (error) => builtError("insertBatch", error) }).pipe(
            Effect.flatMap((rows) => built("insertBatch", () => [batchJson(batch, version), ...jsonArrays(rows, maxChunkBytes)]))
          )),
        Effect.flatMap((texts) =>
          transaction("insertBatch", texts, ([row, ...arrays]) =>
            Effect.forEach(arrays, insertInferences, { discard: true }).pipe(Effect.andThen(upsertBatch(row)))))
      ),

    getBatch: (workspace, id) =>
      isUuid(id)
        ? sql<BatchRow>`SELECT ${columns.batch} FROM batch_requests WHERE id = ${id}::uuid AND workspace = ${workspace}`.pipe(
          Effect.map((rows) => rows.length === 0 ? undefined : toBatch(rows[0])),
          Effect.mapError(storeError("getBatch"))
        )
        : Effect.succeed(undefined),

    getBatchInferences: (workspace, batchId, inferenceId) => {
      if (!isUuid(batchId) || (inferenceId !== undefined && !isUuid(inferenceId))) return Effect.succeed([])
      const statement = inferenceId === undefined
        ? sql<InferenceRow>`SELECT ${columns.inference} FROM batch_model_inferences WHERE batch_id = ${batchId}::uuid AND workspace = ${workspace} ORDER BY input_index`
        : sql<InferenceRow>`SELECT ${columns.inference} FROM batch_model_inferences
            WHERE batch_id = ${batchId}::uuid AND inference_id = ${inferenceId}::uuid AND workspace = ${workspace} ORDER BY input_index LIMIT 1`
      return statement.pipe(
        Effect.map((rows) => rows.map(toInference)),
        Effect.mapError(storeError("getBatchInferences"))
      )
    },

    getBatchInferencePage: (workspace, batchId, afterIndex, limit) => {
      if (!isUuid(batchId) || !(limit >= 1)) return Effect.succeed([])
      if (!Number.isSafeInteger(afterIndex) || !Number.isSafeInteger(limit)) return Effect.fail(refused(`not integers: ${afterIndex}, ${limit}`))
      // past the largest index there is nothing (the column is an integer)
      if (afterIndex >= 0x7fffffff) return Effect.succeed([])
      return sql<InferenceRow>`SELECT ${columns.inference} FROM batch_model_inferences
          WHERE batch_id = ${batchId}::uuid AND workspace = ${workspace} AND input_index > ${Math.max(-1, afterIndex)} ORDER BY input_index LIMIT ${limit}`.pipe(
        Effect.map((rows) => rows.map(toInference)),
        Effect.mapError(storeError("getBatchInferencePage"))
      )
    },

    updateBatch: (batch) => writeBatch("updateBatch", batch),

    // oldest first; batches submitted in one millisecond by id (UUIDv7 order is time order)
    listPendingBatches: (limit) => {
      if (Number.isNaN(limit) || limit <= 0) return Effect.succeed([])
      const whole = Math.floor(limit)
      if (!Number.isSafeInteger(whole)) return Effect.fail(refused(`not an integer: ${limit}`))
      return sql<BatchRow>`SELECT ${columns.batch} FROM batch_requests WHERE status = 'pending'
        ORDER BY timestamp, id LIMIT ${whole}`.pipe(
        Effect.map((rows) => rows.map(toBatch)),
        Effect.mapError(storeError("listPendingBatches"))
      )
    }
  }
}
