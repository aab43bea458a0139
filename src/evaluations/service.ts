/**
 * The inference evaluation use case: run a function's variant on datapoints, score each output
 * with evaluators, store the inferences (tagged with the run) and the scores (as feedback)
 * like any other, keep the run's record and per-datapoint results, and tell a listener as it
 * goes. Used by `POST /v1/evaluations/run` and by `gateway evaluate`. A run acts in its caller's
 * workspace: it reads that workspace's datapoints, and its record and results carry it.
 */
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Random from "effect/Random"
import * as Result from "effect/Result"
import * as Semaphore from "effect/Semaphore"
import type { EvaluationRunRequest } from "../api/evaluations.ts"
import { type GatewayError, NotFound } from "../errors.ts"
import { uuidv7 } from "../ids.ts"
import { InferenceService } from "../inference/service.ts"
import { emptyBatch } from "../analytics/records.ts"
import { observabilityDisabled, storeFailure, type StoreFailure } from "../analytics/stores.ts"
import { type DatasetStore, DatasetStoreService } from "../datasets/store.ts"
import { WriteQueue } from "../analytics/writeQueue.ts"
import { Configuration, type InferenceServices } from "../services.ts"
import { loadDatapoints } from "./datapoints.ts"
import { datasetNameTag, evaluationNameTag, evaluationRunIdTag } from "./names.ts"
import { planRun, type RunPlan } from "./plan.ts"
import { scoreDatapoint, type ScoringContext } from "./scoring.ts"
import { cutoffMet, precisionReached, ScoreAccumulator } from "./statistics.ts"
import {
  type EvaluationResultRecord,
  type EvaluationRunQuery,
  type EvaluationRunRecord,
  type EvaluationStore,
  EvaluationStoreService,
  type EvaluatorSummary
} from "./store.ts"
import type { Caller } from "../workspace.ts"

/** told of a run's progress: its record once it started, then each datapoint's result */
export interface RunListener {
  readonly onStart: (run: EvaluationRunRecord) => void
  readonly onResult: (result: EvaluationResultRecord) => void
}

/** results written together (and the run's progress with them) */
const resultsPerWrite = 25

export interface RunPage {
  readonly limit: number
  readonly offset: number
}

/** The stores a run reads its datapoints from and writes its record and results to. */
interface RunStores {
  readonly evaluations: EvaluationStore
  readonly datasets: DatasetStore
}

export class EvaluationService extends Context.Service<EvaluationService, {
  /**
   * Checks `request`, loads its datapoints and runs it to the end, telling `listener`; fails
   * before `onStart` when the request is wrong or the database is unavailable, and succeeds
   * with the run's final record (`failed` when storing its results failed midway).
   */
  readonly run: (
    request: EvaluationRunRequest,
    caller: Caller,
    listener: RunListener
  ) => Effect.Effect<EvaluationRunRecord, GatewayError, InferenceServices>
  readonly listRuns: (workspace: string, query: EvaluationRunQuery) => Effect.Effect<ReadonlyArray<EvaluationRunRecord>, StoreFailure>
  readonly getRun: (
    workspace: string,
    runId: string,
    page: RunPage
  ) => Effect.Effect<{ readonly run: EvaluationRunRecord; readonly results: ReadonlyArray<EvaluationResultRecord> }, NotFound | StoreFailure>
}>()("gateway/EvaluationService") {
  static readonly layer = Layer.effect(
    EvaluationService,
    Effect.gen(function*() {
      const config = yield* Configuration
      const { store: evaluationStore } = yield* EvaluationStoreService
      const { store: datasetStore } = yield* DatasetStoreService
      const stores: RunStores | undefined = evaluationStore && datasetStore && { evaluations: evaluationStore, datasets: datasetStore }
      const writeQueue = yield* WriteQueue
      const inference = yield* InferenceService
      const clock = yield* Clock.Clock
      const now = () => clock.currentTimeMillisUnsafe()

      const withStores = <A, E, R>(use: (stores: RunStores) => Effect.Effect<A, E, R>) =>
        stores === undefined ? Effect.fail(observabilityDisabled()) : use(stores)

      const execute = (stores: RunStores, plan: RunPlan, caller: Caller, listener: RunListener) =>
        Effect.gen(function*() {
          const datapoints = yield* loadDatapoints(stores.datasets, caller.workspace, plan)
          const fail = storeFailure(stores.evaluations)
          const startedAt = now()
          const runId = uuidv7(startedAt)
          const accumulators = new Map(plan.evaluators.map((evaluator) => [evaluator.name, new ScoreAccumulator()]))
          const summaries = (): Record<string, EvaluatorSummary> =>
            Object.fromEntries([...accumulators].map(([name, accumulator]) => [name, accumulator.summary()]))
          let record: EvaluationRunRecord = {
            id: runId,
            functionName: plan.functionName,
            variantName: plan.variant.name,
            datasetName: plan.source.kind === "dataset" ? plan.source.datasetName : "",
            evaluationName: plan.evaluationName,
            evaluatorNames: plan.evaluators.map((evaluator) => evaluator.name),
            datapointCount: datapoints.length,
            status: "running",
            completed: 0,
            errors: 0,
            summary: summaries(),
            startedAt
          }
          yield* Effect.mapError(stores.evaluations.saveRun(caller.workspace, record), fail)
          listener.onStart(record)

          const context: ScoringContext = {
            plan,
            runId,
            tags: {
              [evaluationRunIdTag]: runId,
              ...(plan.source.kind === "dataset" ? { [datasetNameTag]: plan.source.datasetName } : {}),
              ...(plan.evaluationName === undefined ? {} : { [evaluationNameTag]: plan.evaluationName })
            },
            inference,
            caller,
            now
          }
          // results wait here until written, with the run's progress, by one writer at a time
          let pending: Array<EvaluationResultRecord> = []
          const writing = yield* Semaphore.make(1)
          const writePending = writing.withPermits(1)(Effect.suspend(() => {
            const batch = pending
            pending = []
            return Effect.andThen(stores.evaluations.insertResults(caller.workspace, batch), Effect.suspend(() => stores.evaluations.saveRun(caller.workspace, record)))
          }))
          let stopped = false

          const evaluateOne = (datapoint: (typeof datapoints)[number]) =>
            Effect.suspend(() => {
              if (stopped) return Effect.void
              return Effect.flatMap(scoreDatapoint(context, datapoint), ({ feedback, result }) => {
                if (feedback.length > 0 && writeQueue.submit({ batch: { ...emptyBatch, feedback } }) !== "queued") {
                  // the scores are in the results either way; say why they are not feedback
                  result = { ...result, error: result.error ?? "the scores could not be queued for storage as feedback (the write queue is full)" }
                }
                for (const evaluator of plan.evaluators) {
                  const accumulator = accumulators.get(evaluator.name)!
                  const score = result.scores[evaluator.name]
                  if (result.error !== undefined && result.inferenceId === undefined) accumulator.addError()
                  else if (evaluator.name in result.evaluatorErrors) accumulator.addError()
                  else if (score !== null && score !== undefined) accumulator.add(score)
                }
                record = {
                  ...record,
                  completed: record.completed + 1,
                  errors: record.errors + (result.inferenceId === undefined ? 1 : 0),
                  summary: summaries()
                }
                if (plan.precision !== undefined && precisionReached(record.summary, plan.precision)) stopped = true
                listener.onResult(result)
                pending.push(result)
                return pending.length >= resultsPerWrite ? writePending : Effect.void
              })
            })

          const outcome = yield* Effect.result(Effect.andThen(
            Effect.forEach(datapoints, evaluateOne, { concurrency: plan.concurrency, discard: true }),
            Effect.suspend(() => {
              const summary: Record<string, EvaluatorSummary> = {}
              for (const [name, figures] of Object.entries(summaries())) {
                const cutoff = plan.cutoffs[name]
                const optimize = plan.evaluators.find((evaluator) => evaluator.name === name)!.optimize
                summary[name] = cutoff === undefined ? figures : { ...figures, cutoff, cutoffMet: cutoffMet(figures, optimize, cutoff) }
              }
              record = { ...record, status: stopped ? "stopped_early" : "completed", summary, finishedAt: now() }
              return writePending
            })
          ))
          if (outcome._tag === "Success") return record
          // storing the results failed: the run ends, said so in its record if that can still be written
          record = { ...record, status: "failed", finishedAt: now(), failure: fail(outcome.failure).message }
          yield* Effect.ignore(stores.evaluations.saveRun(caller.workspace, record))
          return record
        })

      return EvaluationService.of({
        run: (request, caller, listener) =>
          withStores((stores) =>
            Effect.flatMap(Random.next, (draw) => {
              // without variant_name, one variant is drawn for the whole run
              const plan = planRun(request, config, () => draw)
              return Result.isFailure(plan) ? Effect.fail(plan.failure) : execute(stores, plan.success, caller, listener)
            })
          ),
        listRuns: (workspace, query) => withStores((stores) => Effect.mapError(stores.evaluations.listRuns(workspace, query), storeFailure(stores.evaluations))),
        getRun: (workspace, runId, page) =>
          withStores((stores) =>
            Effect.gen(function*() {
              const run = yield* Effect.mapError(stores.evaluations.getRun(workspace, runId), storeFailure(stores.evaluations))
              if (run === undefined) return yield* new NotFound({ message: `no evaluation run with id ${runId}` })
              const results = yield* Effect.mapError(stores.evaluations.getResults(workspace, runId, page), storeFailure(stores.evaluations))
              return { run, results }
            })
          )
      })
    })
  )
}
