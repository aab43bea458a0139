/**
 * Batch inference on ClickHouse (`BatchStore` of src/batch/store.ts), in the `BatchRequest` and
 * `BatchModelInference` tables (migrations/clickhouse/0008_batches.sql). A batch's status
 * changes by a whole new row under the same id with a newer `updatedAt`; reads take the newest
 * version of each id, and of versions with the same `updatedAt` the one written last
 * (layers/writeVersions.ts). Two processes writing one batch within one millisecond are kept
 * apart by the caller (`Tasks.exclusive`). A batch's inferences go in one INSERT (one
 * JSONEachRow body, however many), before its row: a batch that can be read has all of its
 * inferences, and inferences whose batch row failed are never reached (a retry writes the same
 * rows again, read once).
 */
import { Buffer } from "node:buffer"
import * as Effect from "effect/Effect"
import type { StoredBatch, StoredBatchInference, BatchStore } from "../../src/batch/store.ts"
import { mapInTurns } from "../../src/eventLoop.ts"
import { isUuid } from "../../src/ids.ts"
import { writeVersions } from "../writeVersions.ts"
import type { ClickHouse } from "./client.ts"
import { text } from "./rows.ts"
import { refused, sqlInteger, sqlString, sqlUuid } from "./sql.ts"

interface BatchRow {
  readonly id: string
  readonly workspace: string
  readonly function_name: string
  readonly function_type: StoredBatch["functionType"]
  readonly variant_name: string
  readonly model_name: string
  readonly model_provider_name: string
  readonly provider_batch_id: string
  readonly provider_batch_data: string
  readonly batch_params: string
  readonly status: StoredBatch["status"]
  readonly error_message: string | null
  readonly failures: string | null
  /** UInt64, read as decimal text */
  readonly timestamp_ms: string
  readonly updated_at_ms: string
}

interface InferenceRow {
  readonly batch_id: string
  readonly workspace: string
  readonly input_index: number
  readonly inference_id: string
  readonly episode_id: string
  readonly function_name: string
  readonly variant_name: string
  readonly input: string
  readonly system: string | null
  readonly input_messages: string
  readonly tool_params: string | null
  readonly output_schema: string | null
  readonly inference_params: string
  readonly raw_request: string
  readonly model_name: string
  readonly model_provider_name: string
  readonly "tags.key": ReadonlyArray<string>
  readonly "tags.value": ReadonlyArray<string>
  readonly timestamp_ms: string
}

const batchColumns = "id, workspace, function_name, function_type, variant_name, model_name, model_provider_name, provider_batch_id, " +
  "provider_batch_data, batch_params, status, error_message, failures, timestamp_ms, updated_at_ms"

const inferenceColumns = "batch_id, workspace, input_index, inference_id, episode_id, function_name, variant_name, input, system, input_messages, " +
  "tool_params, output_schema, inference_params, raw_request, model_name, model_provider_name, tags.key, tags.value, timestamp_ms"

/** JSON text of any value; an undefined one is JSON null */
const json = (value: unknown): string => JSON.stringify(value) ?? "null"

/** epoch ms the UInt64 columns hold, refused rather than wrapped around */
const epochMs = (value: number, field: string) => {
  if (!Number.isSafeInteger(value) || value < 0) throw refused(`${field} is not a time in epoch milliseconds: ${value}`)
  return value
}

const batchLine = (batch: StoredBatch, version: number): Buffer => {
  sqlUuid(batch.id)
  return Buffer.from(JSON.stringify({
    id: batch.id,
    workspace: batch.workspace,
    function_name: text(batch.functionName),
    function_type: batch.functionType,
    variant_name: text(batch.variantName),
    model_name: text(batch.modelName),
    model_provider_name: text(batch.modelProviderName),
    provider_batch_id: text(batch.providerBatchId),
    provider_batch_data: json(batch.providerBatchData),
    batch_params: json(batch.batchParams),
    status: batch.status,
    error_message: batch.errorMessage === undefined ? null : text(batch.errorMessage),
    failures: batch.failures === undefined ? null : json(batch.failures),
    timestamp_ms: epochMs(batch.timestamp, "timestamp"),
    updated_at_ms: epochMs(batch.updatedAt, "updatedAt"),
    version
  }))
}

// Built without spreads: the row is made once per inference, up to tens of thousands per batch.
const inferenceLine = (inference: StoredBatchInference): Buffer => {
  sqlUuid(inference.batchId)
  sqlUuid(inference.inferenceId)
  sqlUuid(inference.episodeId)
  if (!Number.isSafeInteger(inference.index) || inference.index < 0 || inference.index > 0xffffffff) {
    throw refused(`index is not a position in the batch: ${inference.index}`)
  }
  const keys: Array<string> = []
  const values: Array<string> = []
  for (const key in inference.tags) {
    keys.push(text(key))
    values.push(text(inference.tags[key]))
  }
  return Buffer.from(JSON.stringify({
    batch_id: inference.batchId,
    workspace: inference.workspace,
    input_index: inference.index,
    inference_id: inference.inferenceId,
    episode_id: inference.episodeId,
    function_name: text(inference.functionName),
    variant_name: text(inference.variantName),
    input: json(inference.input),
    system: inference.system === undefined ? null : text(inference.system),
    input_messages: json(inference.inputMessages),
    tool_params: inference.toolParams === undefined ? null : json(inference.toolParams),
    output_schema: inference.outputSchema === undefined ? null : json(inference.outputSchema),
    inference_params: json(inference.inferenceParams),
    raw_request: text(inference.rawRequest),
    model_name: text(inference.modelName),
    model_provider_name: text(inference.modelProviderName),
    "tags.key": keys,
    "tags.value": values,
    timestamp_ms: epochMs(inference.timestamp, "timestamp")
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
  providerBatchData: JSON.parse(row.provider_batch_data),
  batchParams: JSON.parse(row.batch_params),
  status: row.status,
  ...(row.error_message !== null && { errorMessage: row.error_message }),
  ...(row.failures !== null && { failures: JSON.parse(row.failures) }),
  timestamp: Number(row.timestamp_ms),
  updatedAt: Number(row.updated_at_ms)
})

const toInference = (row: InferenceRow): StoredBatchInference => ({
  batchId: row.batch_id,
  workspace: row.workspace,
  inferenceId: row.inference_id,
  episodeId: row.episode_id,
  index: row.input_index,
  functionName: row.function_name,
  variantName: row.variant_name,
  input: JSON.parse(row.input),
  ...(row.system !== null && { system: row.system }),
  inputMessages: JSON.parse(row.input_messages),
  ...(row.tool_params !== null && { toolParams: JSON.parse(row.tool_params) }),
  ...(row.output_schema !== null && { outputSchema: JSON.parse(row.output_schema) }),
  inferenceParams: JSON.parse(row.inference_params),
  rawRequest: row.raw_request,
  modelName: row.model_name,
  modelProviderName: row.model_provider_name,
  tags: Object.fromEntries(row["tags.key"].map((key, index) => [key, row["tags.value"][index]])),
  timestamp: Number(row.timestamp_ms)
})

export const makeClickHouseBatchStore = ({ run, select, insert }: ClickHouse): BatchStore => {
  const writeBatch = (operation: string, batch: StoredBatch) =>
    Effect.flatMap(writeVersions(1), ([version]) =>
      run(operation, async (signal) => {
        await insert("BatchRequest", [batchLine(batch, version)], signal)
      }))

  return {
    backend: "clickhouse",
    // Every row is built (and checked) before anything is sent: a value refused stores nothing.
    insertBatch: (batch, inferences) =>
      Effect.flatMap(writeVersions(1), ([version]) =>
        run("insertBatch", async (signal) => {
          const batchRow = batchLine(batch, version)
          // tens of thousands of rows: encoded a slice at a time, the requests in flight served between slices
          const lines = await mapInTurns(inferences, inferenceLine)
          if (lines.length > 0) await insert("BatchModelInference", lines, signal)
          await insert("BatchRequest", [batchRow], signal)
        })),

    getBatch: (workspace, id) =>
      isUuid(id)
        ? run("getBatch", async (signal) => {
          const rows = await select<BatchRow>(
            `SELECT ${batchColumns} FROM BatchRequest WHERE id = ${sqlUuid(id)} AND workspace = ${sqlString(workspace)} ORDER BY updated_at_ms DESC, version DESC LIMIT 1`,
            signal
          )
          return rows.length === 0 ? undefined : toBatch(rows[0])
        })
        : Effect.succeed(undefined),

    getBatchInferences: (workspace, batchId, inferenceId) =>
      isUuid(batchId) && (inferenceId === undefined || isUuid(inferenceId))
        ? run("getBatchInferences", async (signal) => {
          const one = inferenceId === undefined ? "" : ` AND inference_id = ${sqlUuid(inferenceId)}`
          const rows = await select<InferenceRow>(
            `SELECT ${inferenceColumns} FROM BatchModelInference WHERE batch_id = ${sqlUuid(batchId)} AND workspace = ${sqlString(workspace)}${one} ` +
              `ORDER BY input_index ASC LIMIT 1 BY input_index${inferenceId === undefined ? "" : " LIMIT 1"}`,
            signal
          )
          return rows.map(toInference)
        })
        : Effect.succeed([]),

    getBatchInferencePage: (workspace, batchId, afterIndex, limit) => {
      if (!isUuid(batchId) || !(limit >= 1)) return Effect.succeed([])
      return run("getBatchInferencePage", async (signal) => {
        const rows = await select<InferenceRow>(
          `SELECT ${inferenceColumns} FROM BatchModelInference WHERE batch_id = ${sqlUuid(batchId)} AND workspace = ${sqlString(workspace)} ` +
            (afterIndex >= 0 ? `AND input_index > ${sqlInteger(afterIndex)} ` : "") +
            `ORDER BY input_index ASC LIMIT 1 BY input_index LIMIT ${sqlInteger(limit)}`,
          signal
        )
        return rows.map(toInference)
      })
    },

    updateBatch: (batch) => writeBatch("updateBatch", batch),

    // oldest first; batches submitted in one millisecond by id (UUIDv7 text order is time order, ClickHouse's UUID order is not)
    listPendingBatches: (limit) => {
      if (Number.isNaN(limit) || limit <= 0) return Effect.succeed([])
      return run("listPendingBatches", async (signal) => {
        const rows = await select<BatchRow>(
          `SELECT ${batchColumns} FROM (` +
            `SELECT ${batchColumns}, toString(id) AS id_text FROM BatchRequest ORDER BY updated_at_ms DESC, version DESC LIMIT 1 BY id` +
            `) WHERE status = 'pending' ORDER BY timestamp_ms ASC, id_text ASC LIMIT ${sqlInteger(Math.floor(limit))}`,
          signal
        )
        return rows.map(toBatch)
      })
    }
  }
}
