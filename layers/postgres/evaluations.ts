/**
 * Inference evaluation runs on Postgres (`EvaluationStore` of src/evaluations/store.ts), in the
 * `evaluation_run` and `evaluation_result` tables (migrations/postgres/0008_evaluation_runs.sql).
 * A save upserts the whole row; it applies only over an older version (layers/writeVersions.ts),
 * so the last save wins even when two saves commit out of order, as on ClickHouse. Rows travel
 * as JSON (one bound parameter) turned into rows by `jsonb_populate_recordset`: keys are column
 * names, JSONB columns take the value itself, timestamps are ISO 8601 text.
 */
import type * as PgClient from "@effect/sql-pg/PgClient"
import { Buffer } from "node:buffer"
import * as Effect from "effect/Effect"
import { isSqlError, type SqlError } from "effect/sql/SqlError"
import type { EvaluationResultRecord, EvaluationRunRecord, EvaluationStore } from "../../src/evaluations/store.ts"
import { isUuid } from "../../src/ids.ts"
import { StoreError } from "../../src/storeError.ts"
import { wholePage } from "../storePage.ts"
import { writeVersions } from "../writeVersions.ts"
import { notAUuid, storeError } from "./client.ts"
import { isUnstorableText, storable } from "./database.ts"

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
  readonly summary: EvaluationRunRecord["summary"]
  readonly started_at: Date
  readonly finished_at: Date | null
  readonly failure: string | null
}

interface ResultRow {
  readonly run_id: string
  readonly datapoint_id: string
  readonly inference_id: string | null
  readonly scores: EvaluationResultRecord["scores"]
  readonly evaluator_errors: EvaluationResultRecord["evaluatorErrors"]
  readonly error: string | null
  readonly timestamp: Date
}

const runColumns = "id, function_name, variant_name, dataset_name, evaluation_name, evaluator_names, datapoint_count, status, " +
  "completed, errors, summary, started_at, finished_at, failure"

const resultColumns = "run_id, datapoint_id, inference_id, scores, evaluator_errors, error, timestamp"

const checkUuid = (id: string) => {
  if (!isUuid(id)) throw notAUuid(id)
}

const isoTime = (ms: number) => new Date(ms).toISOString()

// An absent field is a missing key (SQL NULL).
const runJson = (workspace: string) => (run: EvaluationRunRecord, version: number) => {
  checkUuid(run.id)
  return {
    workspace,
    id: run.id,
    function_name: run.functionName,
    variant_name: run.variantName,
    dataset_name: run.datasetName,
    evaluation_name: run.evaluationName,
    evaluator_names: run.evaluatorNames,
    datapoint_count: run.datapointCount,
    status: run.status,
    completed: run.completed,
    errors: run.errors,
    summary: run.summary,
    started_at: isoTime(run.startedAt),
    finished_at: run.finishedAt === undefined ? undefined : isoTime(run.finishedAt),
    failure: run.failure,
    version
  }
}

const resultJson = (workspace: string) => (result: EvaluationResultRecord, version: number) => {
  checkUuid(result.runId)
  checkUuid(result.datapointId)
  if (result.inferenceId !== undefined) checkUuid(result.inferenceId)
  return {
    workspace,
    run_id: result.runId,
    datapoint_id: result.datapointId,
    inference_id: result.inferenceId,
    scores: result.scores,
    evaluator_errors: result.evaluatorErrors,
    error: result.error,
    timestamp: isoTime(result.timestamp),
    version
  }
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
  summary: row.summary,
  startedAt: row.started_at.getTime(),
  ...(row.finished_at !== null && { finishedAt: row.finished_at.getTime() }),
  ...(row.failure !== null && { failure: row.failure })
})

const toResult = (row: ResultRow): EvaluationResultRecord => ({
  runId: row.run_id,
  datapointId: row.datapoint_id,
  ...(row.inference_id !== null && { inferenceId: row.inference_id }),
  scores: row.scores,
  evaluatorErrors: row.evaluator_errors,
  ...(row.error !== null && { error: row.error }),
  timestamp: row.timestamp.getTime()
})

/** the rows as one JSON array in UTF-8, built with `versions`; what throws there (a value refused) is a StoreError of `operation` */
const encoded = <A>(operation: string, rows: ReadonlyArray<A>, versions: ReadonlyArray<number>, row: (item: A, version: number) => object) =>
  Effect.try({
    try: () => Buffer.from(JSON.stringify(rows.map((item, index) => row(item, versions[index])))),
    catch: (error) =>
      error instanceof StoreError ? error : new StoreError({ message: `postgres ${operation} failed: ${error instanceof Error ? error.message : String(error)}` })
  })

export const makePostgresEvaluationStore = (sql: PgClient.PgClient): EvaluationStore => {
  /**
   * `upsert` of `json` (JSON sent as bytes, read as UTF-8). Postgres cannot store U+0000, nor
   * lone surrogates in JSON: when it refuses them, the rows are written again with those
   * characters replaced by U+FFFD (as the write queue does, layers/postgres/database.ts).
   */
  const write = (operation: string, json: Buffer, upsert: (json: Buffer) => Effect.Effect<unknown, SqlError>) =>
    upsert(json).pipe(
      Effect.catchIf((error): error is SqlError => isSqlError(error) && isUnstorableText(error), () => upsert(storable(json))),
      Effect.asVoid,
      Effect.mapError(storeError(operation))
    )

  const upsertRuns = (json: Buffer) =>
    sql`INSERT INTO evaluation_run
      SELECT * FROM jsonb_populate_recordset(NULL::evaluation_run, convert_from(${json}, 'UTF8')::jsonb)
      ON CONFLICT (id) DO UPDATE SET
        (function_name, variant_name, dataset_name, evaluation_name, evaluator_names, datapoint_count, status,
          completed, errors, summary, started_at, finished_at, failure, version) =
        (EXCLUDED.function_name, EXCLUDED.variant_name, EXCLUDED.dataset_name, EXCLUDED.evaluation_name, EXCLUDED.evaluator_names,
          EXCLUDED.datapoint_count, EXCLUDED.status, EXCLUDED.completed, EXCLUDED.errors, EXCLUDED.summary, EXCLUDED.started_at,
          EXCLUDED.finished_at, EXCLUDED.failure, EXCLUDED.version)
      WHERE evaluation_run.version < EXCLUDED.version`

  const upsertResults = (json: Buffer) =>
    sql`INSERT INTO evaluation_result
      SELECT * FROM jsonb_populate_recordset(NULL::evaluation_result, convert_from(${json}, 'UTF8')::jsonb)
      ON CONFLICT (run_id, datapoint_id) DO UPDATE SET
        (inference_id, scores, evaluator_errors, error, timestamp, version) =
        (EXCLUDED.inference_id, EXCLUDED.scores, EXCLUDED.evaluator_errors, EXCLUDED.error, EXCLUDED.timestamp, EXCLUDED.version)
      WHERE evaluation_result.version < EXCLUDED.version`

  return {
    backend: "postgres",
    saveRun: (workspace, run) =>
      writeVersions(1).pipe(
        Effect.flatMap((versions) => encoded("saveRun", [run], versions, runJson(workspace))),
        Effect.flatMap((json) => write("saveRun", json, upsertRuns))
      ),

    // One statement: stored entirely or not at all. A datapoint given twice keeps the later result
    // (one statement cannot upsert a row twice).
    insertResults: (workspace, results) => {
      if (results.length === 0) return Effect.void
      const latest = [...new Map(results.map((result) => [`${result.runId} ${result.datapointId}`.toLowerCase(), result])).values()]
      return writeVersions(latest.length).pipe(
        Effect.flatMap((versions) => encoded("insertResults", latest, versions, resultJson(workspace))),
        Effect.flatMap((json) => write("insertResults", json, upsertResults))
      )
    },

    getRun: (workspace, runId) =>
      isUuid(runId)
        ? sql<RunRow>`SELECT ${sql.literal(runColumns)} FROM evaluation_run WHERE workspace = ${workspace} AND id = ${runId}::uuid`.pipe(
          Effect.map((rows) => rows.length === 0 ? undefined : toRun(rows[0])),
          Effect.mapError(storeError("getRun"))
        )
        : Effect.succeed(undefined),

    // newest first by start; runs started in one millisecond by id
    listRuns: (workspace, query) => {
      const { limit, offset } = wholePage(query)
      if (limit === 0) return Effect.succeed([])
      const where = query.functionName === undefined ? sql`workspace = ${workspace}` : sql`workspace = ${workspace} AND function_name = ${query.functionName}`
      return sql<RunRow>`SELECT ${sql.literal(runColumns)} FROM evaluation_run WHERE ${where}
        ORDER BY started_at DESC, id DESC LIMIT ${limit} OFFSET ${offset}`.pipe(
        Effect.map((rows) => rows.map(toRun)),
        Effect.mapError(storeError("listRuns"))
      )
    },

    getResults: (workspace, runId, page) => {
      const { limit, offset } = wholePage(page)
      if (limit === 0 || !isUuid(runId)) return Effect.succeed([])
      return sql<ResultRow>`SELECT ${sql.literal(resultColumns)} FROM evaluation_result WHERE workspace = ${workspace} AND run_id = ${runId}::uuid
        ORDER BY datapoint_id LIMIT ${limit} OFFSET ${offset}`.pipe(
        Effect.map((rows) => rows.map(toResult)),
        Effect.mapError(storeError("getResults"))
      )
    }
  }
}
