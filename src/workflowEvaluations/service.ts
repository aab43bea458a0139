/**
 * The workflow evaluation use case (spec 2.7, 4.6): runs that pin a variant per function,
 * episodes of a run, and reading them back with the feedback they gathered. Runs and episodes
 * are written synchronously, so an id is usable as soon as it is answered. Inferences find the
 * run of their episode through `runEpisode` (src/inference/service.ts), remembered once found.
 * Everything answers 503 while observability is off (no run can exist then). Everything acts in
 * the caller's workspace: another workspace's run or episode is an unknown one.
 */
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Duration from "effect/Duration"
import * as Layer from "effect/Layer"
import * as Schedule from "effect/Schedule"
import { checkClientTags } from "../api/tags.ts"
import type { CreateEpisodeRequest, CreateRunRequest } from "../api/workflowEvaluations.ts"
import { type InvalidRequest, NotFound } from "../errors.ts"
import { isUuid, uuidv7, uuidv7Timestamp } from "../ids.ts"
import { observabilityDisabled, storeFailure, type StoreFailure } from "../analytics/stores.ts"
import { Configuration } from "../services.ts"
import { mayBeRunEpisodeId, mintRunEpisodeId } from "./episodeIds.ts"
import type { RunEpisode } from "./pinning.ts"
import { type WorkflowEpisodeRecord, WorkflowEvaluationStoreService, type WorkflowMetricSummary, type WorkflowRunRecord } from "./store.ts"

export interface Page {
  readonly limit: number
  readonly offset: number
}

export interface RunDetails {
  readonly run: WorkflowRunRecord
  readonly episodes: ReadonlyArray<WorkflowEpisodeRecord>
  readonly metrics: ReadonlyArray<WorkflowMetricSummary>
}

/** Run episodes remembered by the inference path, found or not: at most this many, the oldest forgotten first. */
const maxRememberedEpisodes = 10_000

/** imported run episodes kept in memory at most (a set of ids: about 100 bytes each) */
const maxImportedEpisodes = 1_000_000
const importedEpisodesRefresh = Duration.minutes(1)

type Failure = InvalidRequest | NotFound | StoreFailure

/** the key of a remembered run episode: episode ids are looked up per workspace */
const rememberedKey = (workspace: string, episodeId: string) => `${workspace}\0${episodeId.toLowerCase()}`

export class WorkflowEvaluationService extends Context.Service<WorkflowEvaluationService, {
  /** checks each pinned variant against the configuration; the new run's id */
  readonly createRun: (workspace: string, request: CreateRunRequest) => Effect.Effect<string, Failure>
  /** the new episode's id (marked as a run episode's: src/workflowEvaluations/episodeIds.ts) */
  readonly createEpisode: (workspace: string, runId: string, request: CreateEpisodeRequest) => Effect.Effect<string, Failure>
  readonly getRun: (workspace: string, runId: string, episodes: Page) => Effect.Effect<RunDetails, NotFound | StoreFailure>
  readonly listRuns: (workspace: string, query: Page & { readonly projectName?: string | undefined }) => Effect.Effect<ReadonlyArray<WorkflowRunRecord>, StoreFailure>
  /**
   * The run episode `episodeId` names in `workspace`, and its run; undefined when it names none
   * there (another workspace's episode id is an ordinary one). Undefined
   * itself while observability is off: then no id names a run episode, and none is looked up.
   */
  readonly runEpisode: ((workspace: string, episodeId: string) => Effect.Effect<RunEpisode | undefined, StoreFailure>) | undefined
  /**
   * Whether `episodeId` may name a run episode, and must be looked up: it carries this
   * gateway's mark (episodeIds.ts), or it is one of the run episodes imported from TensorZero
   * (`gateway import-tensorzero`), whose ids TensorZero minted without it. Asked of every
   * inference and feedback that names an episode: it compares characters and looks in a set.
   */
  readonly isRunEpisodeId: (episodeId: string) => boolean
}>()("gateway/WorkflowEvaluationService") {
  static readonly layer = Layer.effect(
    WorkflowEvaluationService,
    Effect.gen(function*() {
      const config = yield* Configuration
      const { store } = yield* WorkflowEvaluationStoreService
      if (store === undefined) {
        const off = Effect.fail(observabilityDisabled())
        return WorkflowEvaluationService.of({
          createRun: () => off,
          createEpisode: () => off,
          getRun: () => off,
          listRuns: () => off,
          runEpisode: undefined,
          isRunEpisodeId: () => false
        })
      }
      const unavailable = storeFailure(store)

      /**
       * The imported run episodes' ids, lower-cased: read at start and every minute after (an
       * import may run beside a serving gateway), in the background; a failed read keeps the
       * last set
       */
      let imported: ReadonlySet<string> = new Set()
      const readImported = store.unmarkedEpisodeIds(maxImportedEpisodes).pipe(
        Effect.flatMap((ids) =>
          Effect.sync(() => {
            imported = new Set(ids.map((id) => id.toLowerCase()))
          }).pipe(
            Effect.andThen(ids.length >= maxImportedEpisodes
              ? Effect.logWarning(`workflow evaluations: more than ${maxImportedEpisodes} imported run episodes: only as many pin their run's variants`)
              : Effect.void)
          )),
        Effect.catch((error) => Effect.logWarning(`workflow evaluations: cannot read the imported run episodes: ${error.message}`))
      )
      yield* Effect.forkScoped(readImported.pipe(Effect.repeat(Schedule.spaced(importedEpisodesRefresh))))
      const isRunEpisodeId = (episodeId: string) => mayBeRunEpisodeId(episodeId) || (imported.size > 0 && imported.has(episodeId.toLowerCase()))

      /**
       * Workspace, NUL and lower-cased episode id -> its episode and run, or null when it names
       * none in that workspace. Runs and
       * episodes never change, so what is found stays true. So does what is not found: a run
       * episode id is minted and stored before it is answered, so before any inference can
       * carry it; an id looked up and not found is one the gateway never minted, and never will.
       */
      const remembered = new Map<string, RunEpisode | null>()
      const remember = (episodeId: string, found: RunEpisode | null) => {
        if (remembered.size >= maxRememberedEpisodes) remembered.delete(remembered.keys().next().value!)
        remembered.set(episodeId, found)
      }

      const findRun = (workspace: string, runId: string) =>
        Effect.flatMap(
          isUuid(runId) ? Effect.mapError(store.getRun(workspace, runId.toLowerCase()), unavailable) : Effect.succeed(undefined),
          (run) => run === undefined ? Effect.fail(new NotFound({ message: `no workflow evaluation run with id "${runId}"` })) : Effect.succeed(run)
        )

      const checkVariants = (variants: Readonly<Record<string, string>>): NotFound | undefined => {
        for (const [functionName, variantName] of Object.entries(variants)) {
          const fn = config.functions.get(functionName)
          if (fn === undefined) return new NotFound({ message: `variants.${functionName}: unknown function "${functionName}"` })
          if (!fn.variants.has(variantName)) {
            return new NotFound({ message: `variants.${functionName}: unknown variant "${variantName}" of function "${functionName}"` })
          }
        }
        return undefined
      }

      return WorkflowEvaluationService.of({
        createRun: (workspace, request) =>
          Effect.gen(function*() {
            const reserved = checkClientTags(request.tags ?? undefined, "tags")
            if (reserved !== undefined) return yield* reserved
            const unknown = checkVariants(request.variants)
            if (unknown !== undefined) return yield* unknown
            const id = uuidv7(yield* Clock.currentTimeMillis)
            yield* Effect.mapError(
              store.insertRun(workspace, {
                id,
                variants: request.variants,
                projectName: request.project_name ?? undefined,
                displayName: request.display_name ?? undefined,
                tags: request.tags ?? {},
                timestamp: uuidv7Timestamp(id)
              }),
              unavailable
            )
            return id
          }),

        createEpisode: (workspace, runId, request) =>
          Effect.gen(function*() {
            const reserved = checkClientTags(request.tags ?? undefined, "tags")
            if (reserved !== undefined) return yield* reserved
            const run = yield* findRun(workspace, runId)
            const id = mintRunEpisodeId(yield* Clock.currentTimeMillis)
            const episode: WorkflowEpisodeRecord = {
              id,
              runId: run.id,
              taskName: request.task_name ?? undefined,
              tags: request.tags ?? {},
              timestamp: uuidv7Timestamp(id)
            }
            yield* Effect.mapError(store.insertEpisode(workspace, episode), unavailable)
            // its first inference need not ask the database
            remember(rememberedKey(workspace, id), { episode, run })
            return id
          }),

        getRun: (workspace, runId, page) =>
          Effect.gen(function*() {
            const run = yield* findRun(workspace, runId)
            const [episodes, metrics] = yield* Effect.all([store.listEpisodes(workspace, run.id, page), store.metricSummaries(workspace, run.id)], {
              concurrency: 2
            }).pipe(Effect.mapError(unavailable))
            return { run, episodes, metrics }
          }),

        listRuns: (workspace, query) => Effect.mapError(store.listRuns(workspace, query), unavailable),

        runEpisode: (workspace, episodeId) => {
          // not a UUID: not a run episode (the inference answers why it is not an episode id)
          if (!isUuid(episodeId)) return Effect.succeed(undefined)
          const key = rememberedKey(workspace, episodeId)
          const known = remembered.get(key)
          if (known !== undefined) return Effect.succeed(known ?? undefined)
          return store.findEpisode(workspace, episodeId.toLowerCase()).pipe(
            Effect.mapError(unavailable),
            Effect.tap((found) => Effect.sync(() => remember(key, found ?? null)))
          )
        },

        isRunEpisodeId
      })
    })
  )
}
