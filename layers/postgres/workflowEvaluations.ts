/**
 * Workflow evaluation runs on Postgres (`WorkflowEvaluationStore` of
 * src/workflowEvaluations/store.ts), in `workflow_evaluation_run` and
 * `workflow_evaluation_run_episode`: an episode is found by its primary key, a run's episodes
 * by the (run_id, id) index, and their inferences by the episode indexes of the inference
 * tables. Nothing is updated; a row written again (a retried call) is stored once.
 */
import type * as PgClient from "@effect/sql-pg/PgClient"
import * as Effect from "effect/Effect"
import { isUuid } from "../../src/ids.ts"
import type { WorkflowEpisodeRecord, WorkflowEvaluationStore, WorkflowRunRecord } from "../../src/workflowEvaluations/store.ts"
import { notAUuid, storeError } from "./client.ts"
import { runEpisodeMarker } from "../../src/workflowEvaluations/episodeIds.ts"
import { feedbackTables, storable, storableText } from "./rows.ts"
import { wholePage } from "../storePage.ts"

interface RunRow {
  readonly id: string
  readonly variants: Record<string, string>
  readonly project_name: string | null
  readonly display_name: string | null
  readonly tags: Record<string, string>
  readonly timestamp: Date
}

interface EpisodeRow {
  readonly id: string
  readonly run_id: string
  readonly task_name: string | null
  readonly tags: Record<string, string>
  readonly timestamp: Date
}

/** an episode's row with its run's (the run's id is `run_id`) */
interface EpisodeWithRunRow extends EpisodeRow, Pick<RunRow, "variants" | "project_name" | "display_name"> {
  readonly run_tags: RunRow["tags"]
  readonly run_timestamp: Date
}

const runColumns = "id, variants, project_name, display_name, tags, timestamp"
const episodeColumns = "id, run_id, task_name, tags, timestamp"

const toRun = (row: RunRow): WorkflowRunRecord => ({
  id: row.id,
  variants: row.variants,
  ...(row.project_name !== null && { projectName: row.project_name }),
  ...(row.display_name !== null && { displayName: row.display_name }),
  tags: row.tags,
  timestamp: row.timestamp.getTime()
})

const toEpisode = (row: EpisodeRow): WorkflowEpisodeRecord => ({
  id: row.id,
  runId: row.run_id,
  ...(row.task_name !== null && { taskName: row.task_name }),
  tags: row.tags,
  timestamp: row.timestamp.getTime()
})

// Runs and episodes are small: their strings are made storable before every write rather than after a refusal.
const storableTags = (tags: Readonly<Record<string, string>>) =>
  Object.fromEntries(Object.entries(tags).map(([key, value]) => [storable(key), storable(value)]))

const checkUuids = (...ids: ReadonlyArray<string>) => {
  for (const id of ids) {
    if (!isUuid(id)) return Effect.fail(notAUuid(id))
  }
  return Effect.void
}

export const makePostgresWorkflowEvaluationStore = (sql: PgClient.PgClient): WorkflowEvaluationStore => {
  const runs = sql.literal(runColumns)
  const episodes = sql.literal(episodeColumns)

  return {
    backend: "postgres",
    insertRun: (workspace, run) =>
      Effect.flatMap(checkUuids(run.id), () =>
        sql`INSERT INTO workflow_evaluation_run (workspace, id, variants, project_name, display_name, tags, timestamp)
          VALUES (${workspace}, ${run.id}::uuid, ${JSON.stringify(storableTags(run.variants))}::jsonb, ${storableText(run.projectName)},
            ${storableText(run.displayName)}, ${JSON.stringify(storableTags(run.tags))}::jsonb, ${new Date(run.timestamp)})
          ON CONFLICT (id) DO NOTHING`.pipe(Effect.asVoid, Effect.mapError(storeError("insertRun")))),

    insertEpisode: (workspace, episode) =>
      Effect.flatMap(checkUuids(episode.id, episode.runId), () =>
        sql`INSERT INTO workflow_evaluation_run_episode (workspace, id, run_id, task_name, tags, timestamp)
          VALUES (${workspace}, ${episode.id}::uuid, ${episode.runId}::uuid, ${storableText(episode.taskName)},
            ${JSON.stringify(storableTags(episode.tags))}::jsonb, ${new Date(episode.timestamp)})
          ON CONFLICT (id) DO NOTHING`.pipe(Effect.asVoid, Effect.mapError(storeError("insertEpisode")))),

    getRun: (workspace, runId) =>
      Effect.flatMap(checkUuids(runId), () =>
        sql<RunRow>`SELECT ${runs} FROM workflow_evaluation_run WHERE workspace = ${workspace} AND id = ${runId}::uuid`.pipe(
          Effect.map((rows) => rows.length === 0 ? undefined : toRun(rows[0])),
          Effect.mapError(storeError("getRun"))
        )),

    findEpisode: (workspace, episodeId) =>
      Effect.flatMap(checkUuids(episodeId), () =>
        sql<EpisodeWithRunRow>`
          SELECT e.id, e.run_id, e.task_name, e.tags, e.timestamp,
            r.variants, r.project_name, r.display_name, r.tags AS run_tags, r.timestamp AS run_timestamp
          FROM workflow_evaluation_run_episode e JOIN workflow_evaluation_run r ON r.id = e.run_id
          WHERE e.id = ${episodeId}::uuid AND e.workspace = ${workspace} AND r.workspace = ${workspace}`.pipe(
          Effect.map(([row]) =>
            row === undefined ? undefined : {
              episode: toEpisode(row),
              run: toRun({ ...row, id: row.run_id, tags: row.run_tags, timestamp: row.run_timestamp })
            }
          ),
          Effect.mapError(storeError("findEpisode"))
        )),

    unmarkedEpisodeIds: (limit) =>
      sql<{ id: string }>`SELECT id::text AS id FROM workflow_evaluation_run_episode WHERE right(id::text, 4) <> ${runEpisodeMarker} LIMIT ${limit}`.pipe(
        Effect.map((rows) => rows.map((row) => row.id)),
        Effect.mapError(storeError("unmarkedEpisodeIds"))
      ),

    listRuns: (workspace, { projectName, ...page }) => {
      const { limit, offset } = wholePage(page)
      return sql<RunRow>`SELECT ${runs} FROM workflow_evaluation_run
        WHERE workspace = ${workspace} AND ${projectName === undefined ? sql`TRUE` : sql`project_name = ${projectName}`}
        ORDER BY id DESC LIMIT ${limit} OFFSET ${offset}`.pipe(
        Effect.map((rows) => rows.map(toRun)),
        Effect.mapError(storeError("listRuns"))
      )
    },

    listEpisodes: (workspace, runId, page) => {
      const { limit, offset } = wholePage(page)
      return Effect.flatMap(checkUuids(runId), () =>
        sql<EpisodeRow>`SELECT ${episodes} FROM workflow_evaluation_run_episode WHERE workspace = ${workspace} AND run_id = ${runId}::uuid
          ORDER BY id ASC LIMIT ${limit} OFFSET ${offset}`.pipe(
          Effect.map((rows) => rows.map(toEpisode)),
          Effect.mapError(storeError("listEpisodes"))
        ))
    },

    // Feedback on the run's episodes, or on their inferences (found by the episode indexes);
    // avg() skips the NULL scores of comments and demonstrations.
    metricSummaries: (workspace, runId) =>
      Effect.flatMap(checkUuids(runId), () =>
        sql<{ metric_name: string; count: number; mean: number | null }>`
          WITH episodes AS (
            SELECT id FROM workflow_evaluation_run_episode WHERE workspace = ${workspace} AND run_id = ${runId}::uuid
          ),
          targets AS (
            SELECT id FROM episodes
            UNION ALL SELECT chat_inference.id FROM chat_inference JOIN episodes ON chat_inference.episode_id = episodes.id
            UNION ALL SELECT json_inference.id FROM json_inference JOIN episodes ON json_inference.episode_id = episodes.id
          ),
          feedback AS (
            SELECT metric_name, value::int::float8 AS score FROM ${sql.literal(feedbackTables.boolean)} WHERE workspace = ${workspace} AND target_id IN (SELECT id FROM targets)
            UNION ALL SELECT metric_name, value FROM ${sql.literal(feedbackTables.float)} WHERE workspace = ${workspace} AND target_id IN (SELECT id FROM targets)
            UNION ALL SELECT metric_name, NULL FROM ${sql.literal(feedbackTables.comment)} WHERE workspace = ${workspace} AND target_id IN (SELECT id FROM targets)
            UNION ALL SELECT metric_name, NULL FROM ${sql.literal(feedbackTables.demonstration)} WHERE workspace = ${workspace} AND target_id IN (SELECT id FROM targets)
          )
          SELECT metric_name, count(*)::int AS count, avg(score) AS mean FROM feedback
          GROUP BY metric_name ORDER BY metric_name COLLATE "C"`.pipe(
          Effect.map((rows) =>
            rows.map((row) => ({ metricName: row.metric_name, count: row.count, ...(row.mean !== null && { mean: Number(row.mean) }) }))
          ),
          Effect.mapError(storeError("metricSummaries"))
        ))
  }
}
