/**
 * Inference evaluation runs on ClickHouse (`EvaluationStore` of src/evaluations/store.ts), in the
 * `EvaluationRun` and `EvaluationResult` tables (migrations/clickhouse/0006_evaluation_runs.sql).
 * ClickHouse cannot update a row in place: each save of a run, and each result written again,
 * is a whole new row under the same key with a higher version (layers/writeVersions.ts), and
 * reads take the newest version of each key. A run's function never changes between its
 * versions, so listings filter by it before the versions are deduplicated.
 */
import { Buffer } from "node:buffer"
import * as Effect from "effect/Effect"
import type { EvaluationResultRecord, EvaluationRunRecord, EvaluationStore } from "../../src/evaluations/store.ts"
import { isUuid } from "../../src/ids.ts"
import { writeVersions } from "../writeVersions.ts"
import type { ClickHouse } from "./client.ts"
import { type StorePage, wholePage } from "../storePage.ts"
import { text } from "./rows.ts"
import { refused, sqlLimit, sqlString, sqlUuid } from "./sql.ts"

interface RunRow {
  readonly id: string
  readonly function_name: string
  readonly variant_name: string
  readonly dataset_name: string
  readonly evaluation_name: string | null
  readonly evaluator_names: Array<string>
  readonly datapoint_count: number
  readonly status: EvaluationRunRecord["status"]
  readonly completed: number
  readonly errors: number
  readonly summary: string
  /** UInt64, read as decimal text */
  readonly started_at_ms: string
  readonly finished_at_ms: string | null
  readonly failure: string | null
}

interface ResultRow {
  readonly run_id: string
  readonly datapoint_id: string
  readonly inference_id: string | null
  readonly scores: string
  readonly evaluator_errors: string
  readonly error: string | null
  readonly timestamp_ms: string
}

const runColumns = "id, function_name, variant_name, dataset_name, evaluation_name, evaluator_names, datapoint_count, status, " +
  "completed, errors, summary, started_at_ms, finished_at_ms, failure"

const resultColumns = "run_id, datapoint_id, inference_id, scores, evaluator_errors, error, timestamp_ms"

/** a count the UInt32 columns hold, refused rather than wrapped around */
const count = (value: number, field: string) => {
  if (!Number.isSafeInteger(value) || value < 0 || value > 0xffffffff) throw refused(`${field} is not a count: ${value}`)
  return value
}

/** epoch ms the UInt64 columns hold, refused rather than wrapped around */
const epochMs = (value: number, field: string) => {
  if (!Number.isSafeInteger(value) || value < 0) throw refused(`${field} is not a time in epoch milliseconds: ${value}`)
  return value
}

const runLine = (workspace: string, run: EvaluationRunRecord, version: number): Buffer => {
  sqlUuid(run.id)
  return Buffer.from(JSON.stringify({
    workspace,
    id: run.id,
    function_name: text(run.functionName),
    variant_name: text(run.variantName),
    dataset_name: text(run.datasetName),
    evaluation_name: run.evaluationName === undefined ? null : text(run.evaluationName),
    evaluator_names: run.evaluatorNames.map(text),
    datapoint_count: count(run.datapointCount, "datapointCount"),
    status: run.status,
    completed: count(run.completed, "completed"),
    errors: count(run.errors, "errors"),
    summary: JSON.stringify(run.summary),
    started_at_ms: epochMs(run.startedAt, "startedAt"),
    finished_at_ms: run.finishedAt === undefined ? null : epochMs(run.finishedAt, "finishedAt"),
    failure: run.failure === undefined ? null : text(run.failure),
    version
  }))
}

const resultLine = (workspace: string, result: EvaluationResultRecord, version: number): Buffer => {
  sqlUuid(result.runId)
  sqlUuid(result.datapointId)
  if (result.inferenceId !== undefined) sqlUuid(result.inferenceId)
  return Buffer.from(JSON.stringify({
    workspace,
    run_id: result.runId,
    datapoint_id: result.datapointId,
    inference_id: result.inferenceId ?? null,
    scores: JSON.stringify(result.scores),
    evaluator_errors: JSON.stringify(result.evaluatorErrors),
    error: result.error === undefined ? null : text(result.error),
    timestamp_ms: epochMs(result.timestamp, "timestamp"),
    version
  }))
}

// Optional fields are NULL when absent, and absent again when read.
const toRun = (row: RunRow): EvaluationRunRecord => ({
  id: row.id,
  functionName: row.function_name,
  variantName: row.variant_name,
  datasetName: row.dataset_name,
  ...(row.evaluation_name !== null && { evaluationName: row.evaluation_name }),
  evaluatorNames: row.evaluator_names,
  datapointCount: row.datapoint_count,
  status: row.status,
  completed: row.completed,
  errors: row.errors,
  summary: JSON.parse(row.summary),
  startedAt: Number(row.started_at_ms),
  ...(row.finished_at_ms !== null && { finishedAt: Number(row.finished_at_ms) }),
  ...(row.failure !== null && { failure: row.failure })
})

const toResult = (row: ResultRow): EvaluationResultRecord => ({
  runId: row.run_id,
  datapointId: row.datapoint_id,
  ...(row.inference_id !== null && { inferenceId: row.inference_id }),
  scores: JSON.parse(row.scores),
  evaluatorErrors: JSON.parse(row.evaluator_errors),
  ...(row.error !== null && { error: row.error }),
  timestamp: Number(row.timestamp_ms)
})

/** `LIMIT offset, limit` of a page, or undefined for an empty page */
const pageSql = (page: StorePage): string | undefined => (wholePage(page).limit === 0 ? undefined : sqlLimit(page))

export const makeClickHouseEvaluationStore = ({ run, select, insert }: ClickHouse): EvaluationStore => ({
  backend: "clickhouse",
  saveRun: (workspace, record) =>
    Effect.flatMap(writeVersions(1), ([version]) =>
      run("saveRun", async (signal) => {
        await insert("EvaluationRun", [runLine(workspace, record, version)], signal)
      })),

  // One INSERT, one block: stored entirely or not at all. A datapoint given twice keeps the later result.
  insertResults: (workspace, results) =>
    results.length === 0 ? Effect.void : Effect.flatMap(writeVersions(results.length), (versions) =>
      run("insertResults", async (signal) => {
        await insert("EvaluationResult", results.map((result, index) => resultLine(workspace, result, versions[index])), signal)
      })),

  getRun: (workspace, runId) =>
    isUuid(runId)
      ? run("getRun", async (signal) => {
        const rows = await select<RunRow>(
          `SELECT ${runColumns} FROM EvaluationRun WHERE workspace = ${sqlString(workspace)} AND id = ${sqlUuid(runId)} ORDER BY version DESC LIMIT 1`,
          signal
        )
        return rows.length === 0 ? undefined : toRun(rows[0])
      })
      : Effect.succeed(undefined),

  // newest first by start; runs started in one millisecond by id (UUIDv7 text order is time order, ClickHouse's UUID order is not)
  listRuns: (workspace, query) =>
    run("listRuns", async (signal) => {
      const page = pageSql(query)
      if (page === undefined) return []
      const where = `WHERE workspace = ${sqlString(workspace)} ` +
        (query.functionName === undefined ? "" : `AND function_name = ${sqlString(query.functionName)} `)
      const rows = await select<RunRow>(
        `SELECT ${runColumns} FROM (` +
          `SELECT ${runColumns}, toString(id) AS id_text FROM EvaluationRun ${where}ORDER BY version DESC LIMIT 1 BY id` +
          `) ORDER BY started_at_ms DESC, id_text DESC ${page}`,
        signal
      )
      return rows.map(toRun)
    }),

  getResults: (workspace, runId, page) =>
    isUuid(runId)
      ? run("getResults", async (signal) => {
        const limit = pageSql(page)
        if (limit === undefined) return []
        const rows = await select<ResultRow>(
          `SELECT ${resultColumns} FROM (` +
            `SELECT ${resultColumns}, toString(datapoint_id) AS datapoint_text FROM EvaluationResult ` +
            `WHERE workspace = ${sqlString(workspace)} AND run_id = ${sqlUuid(runId)} ORDER BY version DESC LIMIT 1 BY datapoint_id` +
            `) ORDER BY datapoint_text ASC ${limit}`,
          signal
        )
        return rows.map(toResult)
      })
      : Effect.succeed([])
})
