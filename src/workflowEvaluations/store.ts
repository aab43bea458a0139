/**
 * The storage port of dynamic/workflow evaluation runs (spec 4.6): a run pins a variant per
 * function and carries tags; its episodes carry a task name and tags. Inferences and feedback
 * stay in their own tables: an inference belongs to a run through its episode, a feedback
 * through its target (the episode, or an inference of it). Written synchronously.
 * Implemented by layers/clickhouse/workflowEvaluations.ts and
 * layers/postgres/workflowEvaluations.ts, checked by
 * test/integration/store-workflow-evaluations.test.ts.
 *
 * Every method takes the workspace first: runs and episodes carry it, and the reads see only its
 * runs (another workspace's run or episode answers as an unknown one).
 */
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import type { StoreError } from "../storeError.ts"
import type { AnalyticsPort, AnalyticsStore } from "../analytics/stores.ts"

export interface WorkflowRunRecord {
  /** UUIDv7 */
  readonly id: string
  /** function name -> the variant pinned for it */
  readonly variants: Readonly<Record<string, string>>
  readonly projectName?: string | undefined
  readonly displayName?: string | undefined
  readonly tags: Readonly<Record<string, string>>
  /** epoch ms (the id's time) */
  readonly timestamp: number
}

export interface WorkflowEpisodeRecord {
  /** UUIDv7: the episode id inferences and feedback carry */
  readonly id: string
  readonly runId: string
  readonly taskName?: string | undefined
  readonly tags: Readonly<Record<string, string>>
  readonly timestamp: number
}

/** Feedback on a run's episodes and their inferences, per metric. */
export interface WorkflowMetricSummary {
  readonly metricName: string
  readonly count: number
  /** booleans count as 0 and 1; undefined for comments and demonstrations */
  readonly mean?: number | undefined
}

export interface WorkflowEvaluationStore extends AnalyticsStore {
  readonly insertRun: (workspace: string, run: WorkflowRunRecord) => Effect.Effect<void, StoreError>
  readonly insertEpisode: (workspace: string, episode: WorkflowEpisodeRecord) => Effect.Effect<void, StoreError>
  readonly getRun: (workspace: string, runId: string) => Effect.Effect<WorkflowRunRecord | undefined, StoreError>
  /** the run episode with this id, and its run; undefined when no run has it */
  readonly findEpisode: (
    workspace: string,
    episodeId: string
  ) => Effect.Effect<{ readonly episode: WorkflowEpisodeRecord; readonly run: WorkflowRunRecord } | undefined, StoreError>
  /**
   * The ids of run episodes without this gateway's mark (src/workflowEvaluations/episodeIds.ts):
   * those imported from TensorZero, in every workspace; at most `limit`
   */
  readonly unmarkedEpisodeIds: (limit: number) => Effect.Effect<ReadonlyArray<string>, StoreError>
  /** runs, newest first, of one project when given */
  readonly listRuns: (workspace: string, query: {
    readonly projectName?: string | undefined
    readonly limit: number
    readonly offset: number
  }) => Effect.Effect<ReadonlyArray<WorkflowRunRecord>, StoreError>
  /** a run's episodes, oldest first */
  readonly listEpisodes: (workspace: string, runId: string, page: { readonly limit: number; readonly offset: number }) => Effect.Effect<ReadonlyArray<WorkflowEpisodeRecord>, StoreError>
  /** per metric, the workspace's feedback whose target is one of the run's episodes or an inference of one */
  readonly metricSummaries: (workspace: string, runId: string) => Effect.Effect<ReadonlyArray<WorkflowMetricSummary>, StoreError>
}

/** The WorkflowEvaluationStore of the analytics database, absent while observability is off (provided by layers/observability/). */
export class WorkflowEvaluationStoreService extends Context.Service<WorkflowEvaluationStoreService, AnalyticsPort<WorkflowEvaluationStore>>()("gateway/WorkflowEvaluationStore") {}
