/**
 * The storage port of inference evaluation runs: a run's record (what was evaluated, with
 * what, how far it got, and its summary once finished) and one result per datapoint (the
 * inference's id and each evaluator's score or error). The inferences and the scores
 * themselves are stored as any inference and feedback are (through the write queue); these
 * records let a run be listed and read back without recomputing anything. Written
 * synchronously. Implemented by layers/clickhouse/evaluations.ts and
 * layers/postgres/evaluations.ts, checked by test/integration/store-evaluations.test.ts.
 * Every method takes the run's workspace first: runs and results carry it, and the reads see
 * only its runs (another workspace's run answers as an unknown one).
 */
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import type { StoreError } from "../storeError.ts"
import type { AnalyticsPort, AnalyticsStore } from "../analytics/stores.ts"

/** One evaluator's figures over a run's datapoints. */
export interface EvaluatorSummary {
  /** scores counted (booleans as 0 and 1) */
  readonly count: number
  /** undefined while nothing was scored */
  readonly mean?: number | undefined
  /** the standard error of the mean; undefined under two scores */
  readonly stderr?: number | undefined
  /** datapoints this evaluator could not score (the inference or the evaluator failed) */
  readonly errors: number
  /** the run's cutoff for this evaluator, when it had one, and whether the mean met it (set when the run ends) */
  readonly cutoff?: number | undefined
  readonly cutoffMet?: boolean | undefined
}

export type EvaluationRunStatus = "running" | "completed" | "stopped_early" | "failed"

export interface EvaluationRunRecord {
  /** UUIDv7; its time is when the run started */
  readonly id: string
  readonly functionName: string
  /** the variant every datapoint ran on */
  readonly variantName: string
  readonly datasetName: string
  readonly evaluationName?: string | undefined
  readonly evaluatorNames: ReadonlyArray<string>
  /** the datapoints the run set out to evaluate */
  readonly datapointCount: number
  readonly status: EvaluationRunStatus
  /** datapoints done so far (scored or failed) */
  readonly completed: number
  /** datapoints whose inference failed */
  readonly errors: number
  readonly summary: Readonly<Record<string, EvaluatorSummary>>
  /** epoch ms */
  readonly startedAt: number
  /** epoch ms; absent while running */
  readonly finishedAt?: number | undefined
  /** why a failed run stopped */
  readonly failure?: string | undefined
}

/** What happened to one datapoint of a run. */
export interface EvaluationResultRecord {
  readonly runId: string
  readonly datapointId: string
  /** absent when the inference failed */
  readonly inferenceId?: string | undefined
  /** evaluator -> its score; null when it does not apply (exact_match without a reference output) */
  readonly scores: Readonly<Record<string, boolean | number | null>>
  /** evaluator -> why it could not score */
  readonly evaluatorErrors: Readonly<Record<string, string>>
  /** why the inference failed */
  readonly error?: string | undefined
  /** epoch ms */
  readonly timestamp: number
}

export interface EvaluationRunQuery {
  readonly functionName?: string | undefined
  readonly limit: number
  readonly offset: number
}

export interface EvaluationStore extends AnalyticsStore {
  /**
   * writes `run` (a new one, or a newer state of it): the last call wins, even when saves follow
   * each other within one millisecond or are sent together (layers/writeVersions.ts)
   */
  readonly saveRun: (workspace: string, run: EvaluationRunRecord) => Effect.Effect<void, StoreError>
  /** all or nothing; a datapoint's result written again (or twice in `results`) replaces the earlier one */
  readonly insertResults: (workspace: string, results: ReadonlyArray<EvaluationResultRecord>) => Effect.Effect<void, StoreError>
  /** undefined for an unknown run or an id that is not a UUID; ids read back lower-cased */
  readonly getRun: (workspace: string, runId: string) => Effect.Effect<EvaluationRunRecord | undefined, StoreError>
  /** runs, newest first (by startedAt, then by id) */
  readonly listRuns: (workspace: string, query: EvaluationRunQuery) => Effect.Effect<ReadonlyArray<EvaluationRunRecord>, StoreError>
  /** a run's results in datapoint id order; none for an id that is not a UUID */
  readonly getResults: (
    workspace: string,
    runId: string,
    page: { readonly limit: number; readonly offset: number }
  ) => Effect.Effect<ReadonlyArray<EvaluationResultRecord>, StoreError>
}

/** The EvaluationStore of the analytics database, absent while observability is off (provided by layers/observability/). */
export class EvaluationStoreService extends Context.Service<EvaluationStoreService, AnalyticsPort<EvaluationStore>>()("gateway/EvaluationStore") {}
