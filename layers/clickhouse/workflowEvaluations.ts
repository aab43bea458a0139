/**
 * Workflow evaluation runs on ClickHouse (`WorkflowEvaluationStore` of
 * src/workflowEvaluations/store.ts), in `WorkflowEvaluationRun` and
 * `WorkflowEvaluationRunEpisode` (sorted by id: the lookup of an inference's episode), with a
 * run's episodes found in `WorkflowEvaluationRunEpisodeByRunId`. Nothing is updated; reads
 * dedupe a row written twice with LIMIT 1 BY id. UUIDv7 text order is time order, ClickHouse's
 * own UUID order is not: listings order by the time and the id's text. Every read checks the
 * workspace on the run (and the episode) tables; the by-run table has no workspace column, and is
 * read only for a run whose workspace was checked.
 */
import type { WorkflowEvaluationStore, WorkflowMetricSummary } from "../../src/workflowEvaluations/store.ts"
import type { ClickHouse } from "./client.ts"
import { runEpisodeMarker } from "../../src/workflowEvaluations/episodeIds.ts"
import {
  feedbackKinds,
  toWorkflowEpisode,
  toWorkflowRun,
  workflowEpisodeColumns,
  type WorkflowEpisodeRow,
  workflowEpisodeLine,
  workflowRunColumns,
  workflowRunLine,
  type WorkflowRunRow
} from "./rows.ts"
import { sqlInteger, sqlLimit, sqlString, sqlUuid } from "./sql.ts"

const inWorkspace = (workspace: string) => `workspace = ${sqlString(workspace)}`

/** each kind of feedback as (metric, score, whether it has one): booleans as 0 and 1, floats as they are, comments and demonstrations without */
const scoredFeedback = [
  { table: feedbackKinds.boolean.table, score: "toFloat64(value)", scored: "toUInt8(1)" },
  { table: feedbackKinds.float.table, score: "value", scored: "toUInt8(1)" },
  { table: feedbackKinds.comment.table, score: "toFloat64(0)", scored: "toUInt8(0)" },
  { table: feedbackKinds.demonstration.table, score: "toFloat64(0)", scored: "toUInt8(0)" }
]

export const makeClickHouseWorkflowEvaluationStore = ({ insert, run, select }: ClickHouse): WorkflowEvaluationStore => {
  const runsWhere = async (where: string, signal: AbortSignal) =>
    (await select<WorkflowRunRow>(`SELECT ${workflowRunColumns} FROM WorkflowEvaluationRun WHERE ${where} LIMIT 1`, signal)).map(toWorkflowRun)

  return {
    backend: "clickhouse",
    insertRun: (workspace, record) => run("insertRun", (signal) => insert("WorkflowEvaluationRun", [workflowRunLine(workspace, record)], signal)),

    insertEpisode: (workspace, episode) =>
      run("insertEpisode", (signal) => insert("WorkflowEvaluationRunEpisode", [workflowEpisodeLine(workspace, episode)], signal)),

    getRun: (workspace, runId) => run("getRun", async (signal) => (await runsWhere(`${inWorkspace(workspace)} AND id = ${sqlUuid(runId)}`, signal))[0]),

    // the episode and its run asked for at once: one round trip's wait
    findEpisode: (workspace, episodeId) =>
      run("findEpisode", async (signal) => {
        const id = sqlUuid(episodeId)
        const [episodes, runs] = await Promise.all([
          select<WorkflowEpisodeRow>(`SELECT ${workflowEpisodeColumns} FROM WorkflowEvaluationRunEpisode WHERE ${inWorkspace(workspace)} AND id = ${id} LIMIT 1`, signal),
          runsWhere(`${inWorkspace(workspace)} AND id IN (SELECT run_id FROM WorkflowEvaluationRunEpisode WHERE ${inWorkspace(workspace)} AND id = ${id})`, signal)
        ])
        return episodes.length === 0 || runs.length === 0 ? undefined : { episode: toWorkflowEpisode(episodes[0]), run: runs[0] }
      }),

    unmarkedEpisodeIds: (limit) =>
      run("unmarkedEpisodeIds", async (signal) =>
        (await select<{ id: string }>(
          `SELECT DISTINCT toString(id) AS id FROM WorkflowEvaluationRunEpisode WHERE substring(toString(id), 33, 4) != ${sqlString(runEpisodeMarker)} LIMIT ${sqlInteger(limit)}`,
          signal
        )).map((row) => row.id)),

    listRuns: (workspace, { limit, offset, projectName }) =>
      run("listRuns", async (signal) => {
        const where = `WHERE ${inWorkspace(workspace)}` + (projectName === undefined ? "" : ` AND project_name = ${sqlString(projectName)}`)
        const rows = await select<WorkflowRunRow>(
          `SELECT ${workflowRunColumns} FROM (SELECT ${workflowRunColumns}, toString(id) AS id_text FROM WorkflowEvaluationRun ${where} LIMIT 1 BY id) ` +
            `ORDER BY timestamp_ms DESC, id_text DESC ${sqlLimit({ limit, offset })}`,
          signal
        )
        return rows.map(toWorkflowRun)
      }),

    // the run's workspace is checked here too: the by-run table has none, its episodes are matched by id
    listEpisodes: (workspace, runId, { limit, offset }) =>
      run("listEpisodes", async (signal) => {
        const rows = await select<WorkflowEpisodeRow>(
          `SELECT ${workflowEpisodeColumns} FROM (SELECT ${workflowEpisodeColumns}, toString(id) AS id_text FROM WorkflowEvaluationRunEpisodeByRunId ` +
            `WHERE run_id IN (SELECT id FROM WorkflowEvaluationRun WHERE ${inWorkspace(workspace)} AND id = ${sqlUuid(runId)}) LIMIT 1 BY id) ORDER BY timestamp_ms ASC, id_text ASC ${sqlLimit({ limit, offset })}`,
          signal
        )
        return rows.map(toWorkflowEpisode)
      }),

    // Feedback on the run's episodes, or on their inferences (InferenceByEpisodeId), each
    // feedback once (LIMIT 1 BY id); the mean is the scores' sum over their count.
    metricSummaries: (workspace, runId) =>
      run("metricSummaries", async (signal) => {
        const episodes = `SELECT id FROM WorkflowEvaluationRunEpisodeByRunId WHERE run_id = ${sqlUuid(runId)}`
        const targets = `target_id IN (${episodes}) OR target_id IN (SELECT id FROM InferenceByEpisodeId WHERE episode_id IN (${episodes}))`
        const feedback = scoredFeedback.map(({ score, scored, table }) =>
          `SELECT metric_name, ${score} AS score, ${scored} AS scored FROM ` +
          `(SELECT id, metric_name, value FROM ${table} WHERE ${inWorkspace(workspace)} AND (${targets}) LIMIT 1 BY id)`
        )
        const rows = await select<{ metric_name: string; count: string; scored: string; total: number }>(
          `SELECT metric_name, count() AS count, sum(scored) AS scored, sum(score) AS total FROM (${feedback.join(" UNION ALL ")}) ` +
            "GROUP BY metric_name ORDER BY metric_name",
          signal
        )
        return rows.map((row): WorkflowMetricSummary => {
          const scored = Number(row.scored)
          return { metricName: row.metric_name, count: Number(row.count), ...(scored > 0 && { mean: Number(row.total) / scored }) }
        })
      })
  }
}
