/**
 * TensorZero's batches, from its ClickHouse: `BatchRequest` gets a row per status a batch
 * passes through (pending, then completed or failed), and `BatchModelInference` a row per
 * inference in the batch. A batch is paged on its latest request row (its last change) and its
 * id, and given with the latest row's values and all its inferences.
 */
import * as Effect from "effect/Effect"
import type { Position, SourcePage, TzBatch, TzBatchInference, UnreadableRow } from "../../src/tensorzeroImport/source.ts"
import { msOfUuidV7, parsedOrText, recordOf, toolParamsOf } from "../../src/tensorzeroImport/clickhouseValues.ts"
import { stringOf, stringOrNull, UnreadableValue } from "../../src/tensorzeroImport/columnValues.ts"
import type { ClickHouse } from "../clickhouse/client.ts"
import { hasColumn, literal, type Schema, selectList, uuidMs } from "./clickhouseColumns.ts"

type Row = Record<string, unknown>

const columnsOf = (row: Row): Row =>
  Object.fromEntries(Object.entries(row).filter(([name]) => name.startsWith("c_")).map(([name, value]) => [name.slice(2), value]))

const statuses = new Set(["pending", "completed", "failed"])

const inferenceOf = (row: Row): TzBatchInference => {
  const c = columnsOf(row)
  const inferenceId = stringOf(c.inference_id, "inference_id")
  return {
    inferenceId,
    episodeId: stringOf(c.episode_id, "episode_id"),
    functionName: stringOf(c.function_name, "function_name"),
    variantName: stringOf(c.variant_name, "variant_name"),
    input: c.input,
    inputMessages: c.input_messages,
    system: stringOrNull(c.system, "system"),
    toolParams: toolParamsOf(c),
    inferenceParams: c.inference_params,
    outputSchema: c.output_schema ?? null,
    rawRequest: stringOrNull(c.raw_request, "raw_request"),
    modelName: stringOf(c.model_name, "model_name"),
    modelProviderName: stringOf(c.model_provider_name, "model_provider_name"),
    tags: recordOf(row.k_tags, row.v_tags, "tags"),
    timestamp: msOfUuidV7(inferenceId)
  }
}

/** the batch of its request rows (in order) and its inference rows */
const batchOf = (batchId: string, requests: ReadonlyArray<Row>, inferences: ReadonlyArray<Row>): TzBatch => {
  const first = requests[0]
  const latest = requests.at(-1)
  if (first === undefined || latest === undefined) throw new UnreadableValue("the batch has no request rows")
  const c = columnsOf(latest)
  const status = stringOf(c.status, "status")
  if (!statuses.has(status)) throw new UnreadableValue(`status ${JSON.stringify(status)} is not one of TensorZero's`)
  const errors = Array.isArray(c.errors) ? c.errors.map((error) => typeof error === "string" ? parsedOrText(error) : error) : []
  return {
    batchId,
    requestId: stringOf(c.id, "id"),
    // before migration 0008 the request rows did not name the function and variant: the inferences do
    functionName: stringOrNull(c.function_name, "function_name") ?? stringOf(columnsOf(inferences[0] ?? {}).function_name, "function_name"),
    variantName: stringOrNull(c.variant_name, "variant_name") ?? stringOf(columnsOf(inferences[0] ?? {}).variant_name, "variant_name"),
    modelName: stringOf(c.model_name, "model_name"),
    modelProviderName: stringOf(c.model_provider_name, "model_provider_name"),
    batchParams: c.batch_params,
    status: status as TzBatch["status"],
    rawRequest: stringOrNull(c.raw_request, "raw_request"),
    rawResponse: stringOrNull(c.raw_response, "raw_response"),
    errors,
    timestamp: Number(first.page_at),
    updatedAt: Number(latest.page_at),
    inferences: inferences.map(inferenceOf)
  }
}

const byAtAndKey = (a: Row, b: Row): number =>
  Number(a.page_at) - Number(b.page_at) || (String(a.page_key) < String(b.page_key) ? -1 : String(a.page_key) > String(b.page_key) ? 1 : 0)

/** up to `limit` batches after `after`, in the order of their latest request row's time and their id */
export const readBatches = (clickHouse: ClickHouse, schema: Schema, after: Position | undefined, limit: number) =>
  Effect.gen(function*() {
    const select = <R>(operation: string, query: string) => clickHouse.run(operation, (signal) => clickHouse.select<R>(query, signal))
    const condition = after === undefined
      ? ""
      : `HAVING (page_at > ${Math.trunc(after.at)} OR (page_at = ${Math.trunc(after.at)} AND page_key > ${literal(after.id.toLowerCase())}))`
    const batchIds = yield* select<{ page_key: string; page_at: string }>(
      "read batches",
      `SELECT toString(batch_id) AS page_key, max(${uuidMs("id")}) AS page_at FROM BatchRequest GROUP BY batch_id ${condition} ` +
        `ORDER BY page_at, page_key LIMIT ${Math.max(1, Math.trunc(limit))}`
    )
    if (batchIds.length === 0) return { rows: [], last: undefined } satisfies SourcePage<"batches">
    const inList = batchIds.map((row) => literal(row.page_key)).join(", ")
    const requests = yield* select<Row>(
      "read batch requests",
      `SELECT ${uuidMs("id")} AS page_at, toString(id) AS page_key, toString(batch_id) AS batch_key, ${
        selectList(schema, "BatchRequest", [
          "id", "batch_params", "model_name", "model_provider_name", "status", "errors", "raw_request", "raw_response",
          "function_name", "variant_name"
        ]).join(", ")
      } FROM BatchRequest WHERE batch_id IN (${inList})`
    )
    const inferences = schema.has("BatchModelInference")
      ? yield* select<Row>(
        "read batch inferences",
        `SELECT ${uuidMs("inference_id")} AS page_at, toString(inference_id) AS page_key, toString(batch_id) AS batch_key, ${
          selectList(schema, "BatchModelInference", [
            "inference_id", "episode_id", "function_name", "variant_name", "input", "input_messages", "system", "tool_params",
            "inference_params", "output_schema", "raw_request", "model_name", "model_provider_name", "dynamic_tools",
            "dynamic_provider_tools", "allowed_tools", "tool_choice", "parallel_tool_calls"
          ], hasColumn(schema, "BatchModelInference", "tags") || hasColumn(schema, "BatchModelInference", "tags.key") ? ["tags"] : []).join(", ")
        } FROM BatchModelInference WHERE batch_id IN (${inList})`
      )
      : []
    const ofBatch = (rows: ReadonlyArray<Row>, batchId: string) => rows.filter((row) => row.batch_key === batchId).sort(byAtAndKey)
    const rows: Array<TzBatch | UnreadableRow> = batchIds.map(({ page_key: batchId }) => {
      try {
        return batchOf(batchId, ofBatch(requests, batchId), ofBatch(inferences, batchId))
      } catch (error) {
        return { unreadable: true, id: batchId, reason: error instanceof Error ? error.message : String(error) }
      }
    })
    const last = batchIds.at(-1)!
    return { rows, last: { at: Number(last.page_at), id: last.page_key } } satisfies SourcePage<"batches">
  })
