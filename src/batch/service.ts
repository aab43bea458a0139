/**
 * The batch inference use case (spec 4.4). Submitting checks and renders every input, creates
 * the provider's batch, stores the batch as pending and queues its background poll. Reading a
 * pending batch polls the provider when it is due: at most once per `poll_interval_s` across
 * every gateway process (a claim in the relational database), and never while another process
 * polls it (the batch's lock there, not waited for: the read answers from the stored status).
 * The poll that finds it finished (a client's or the background task's) stores every result
 * as a regular inference, once, still under the lock, after reading the status again. Later
 * reads answer from the database, a page at a time. A gateway whose configuration lacks a
 * batch's provider declines its background poll, for a gateway that has it.
 *
 * Batches need the analytics database (their rows) and the relational one (the tasks and the
 * lock): without either, every route answers 503 naming the variable.
 */
import * as Arr from "effect/Array"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Result from "effect/Result"
import * as Stream from "effect/Stream"
import { type BatchInferenceRequest, maxBatchPage } from "../api/batch.ts"
import { AllProvidersFailed, type GatewayError, InvalidRequest, NotFound } from "../errors.ts"
import { itemsPerTurn, letIoRun } from "../eventLoop.ts"
import { isUuid } from "../ids.ts"
import type { RoutedProvider } from "../inference/models.ts"
import { storeFailure } from "../analytics/stores.ts"
import { AnalyticsDatabaseService, type ObservabilityDatabase } from "../analytics/database.ts"
import { type InferenceStore, InferenceStoreService } from "../storedInferences/store.ts"
import type { StoredInference, StoredModelInference, WriteBatch } from "../analytics/records.ts"
import { providerCall } from "../inference/providerCall.ts"
import { type BatchOutcome, type BatchPollCall } from "../providers/types.ts"
import { failureKind, ProviderFailure } from "../providers/failure.ts"
import { Configuration, Models } from "../services.ts"
import { HttpTransport } from "../transport.ts"
import { declineTask, storesWithTasks, type TaskFailure, Tasks } from "../tasks/service.ts"
import { ObjectStorage } from "../objectStorage/storage.ts"
import { readBatchFiles, storeBatchFiles } from "./inputFiles.ts"
import { planBatch, type PreparedBatch, type PreparedBatchInference, prepareBatchInput } from "./prepare.ts"
import { batchInferenceBody, completedRows, schemaCache, submittedRows } from "./results.ts"
import { type BatchStore, BatchStoreService, type StoredBatch, type StoredBatchInference } from "./store.ts"
import { type Caller, defaultWorkspace } from "../workspace.ts"

/** the task kind of a batch's background poll */
export const batchPollTask = "batch.poll"

/** the payload of a background poll: the batch, and its workspace (absent from a poll queued before workspaces: `default`) */
interface BatchPoll {
  readonly batchId: string
  readonly workspace?: string | undefined
}

/** One inference of a completed batch as answered: `/inference`'s body, or the provider's error for it. */
export type BatchInferenceBody = Record<string, unknown>

export type BatchStatusBody =
  | { readonly status: "pending" }
  | { readonly status: "failed"; readonly error?: string | undefined }
  | {
    readonly status: "completed"
    readonly batch_id: string
    readonly inferences: ReadonlyArray<BatchInferenceBody>
    /** a page (`limit` given): the `after` of the next page, null on the last */
    readonly next_after?: string | null
  }

/** What a read asks: one inference of the batch, or (of a completed batch) those after inference `after`, at most `limit`. */
export interface BatchReadOptions {
  readonly inferenceId?: string | undefined
  readonly limit?: number | undefined
  readonly after?: string | undefined
}

export type BatchReading =
  /** the whole answer: pending, failed, one inference, or a page */
  | { readonly _tag: "body"; readonly body: BatchStatusBody }
  /**
   * a completed batch's inferences without `limit` (all, or all after `after`), a page at a time
   * so that a batch of 50,000 is never held whole; the first page is read already (a database
   * that fails then fails the read, not the answer midway)
   */
  | { readonly _tag: "pages"; readonly batchId: string; readonly pages: Stream.Stream<ReadonlyArray<BatchInferenceBody>, GatewayError> }

export interface BatchSubmitted {
  readonly batch_id: string
  readonly inference_ids: ReadonlyArray<string>
  readonly episode_ids: ReadonlyArray<string>
}

/** inferences written per statement when a batch completes, and answered per page of the whole list (read back per query) */
const writeChunk = 2000
const readChunk = maxBatchPage

/** The stores of batches: their records, the inferences they answer with, and the database those are written to. */
interface BatchStores {
  readonly database: ObservabilityDatabase
  readonly batches: BatchStore
  readonly inferences: InferenceStore
}

export class BatchService extends Context.Service<BatchService, {
  readonly start: (request: BatchInferenceRequest, caller: Caller) => Effect.Effect<BatchSubmitted, GatewayError>
  /** the batch, only an inference of it, or a page of its inferences; polls the provider while it is pending, when due */
  readonly get: (caller: Caller, batchId: string, options?: BatchReadOptions) => Effect.Effect<BatchReading, GatewayError>
}>()("gateway/BatchService") {
  static readonly layer = Layer.effect(
    BatchService,
    Effect.gen(function*() {
      const config = yield* Configuration
      const models = yield* Models
      const { store: database } = yield* AnalyticsDatabaseService
      const { store: batches } = yield* BatchStoreService
      const { store: inferenceStore } = yield* InferenceStoreService
      const stores: BatchStores | undefined = database && batches && inferenceStore && { database, batches, inferences: inferenceStore }
      const tasks = yield* Tasks
      const http = yield* HttpTransport
      const clock = yield* Clock.Clock
      const now = () => clock.currentTimeMillisUnsafe()
      const pollIntervalS = config.gateway.batch.pollIntervalS
      // absent without `[object_storage]`: files stay inline, as they came
      const objectStore = Option.getOrUndefined(yield* Effect.serviceOption(ObjectStorage))

      /** the databases a batch needs, or the 503 naming what is missing */
      const needed = storesWithTasks(stores, tasks, "batch inference (its background polls and completion lock)")

      const withTransport = <A, E>(effect: Effect.Effect<A, E, HttpTransport>) => Effect.provideService(effect, HttpTransport, http)

      /** the provider's failure as the answer: 502 naming it (a 429 passes on as a 429) */
      const providerError = (provider: string, model: string, what: string) => (failure: ProviderFailure) =>
        new AllProvidersFailed({
          message: `provider "${provider}" of model "${model}" ${what}: ${failure.message}`,
          kind: failureKind(failure) === "rate_limited" ? "rate_limited" : "upstream",
          retryAfterS: failure.retryAfterS
        })

      /** queues the next background poll of a batch (at most one waits per batch), with the workspace it reads the batch in */
      const schedulePoll = (batchId: string, workspace: string) =>
        pollIntervalS <= 0 ? Effect.void : tasks.enqueue(batchPollTask, { batchId, workspace } satisfies BatchPoll, { key: batchId, afterS: pollIntervalS }).pipe(
          Effect.catch((error) => Effect.logWarning(`batch ${batchId}: could not queue its background poll: ${error.message}`)),
          Effect.asVoid
        )

      /** the configured provider a stored batch was sent to, or what this configuration lacks of it */
      const batchProvider = (batch: StoredBatch): Result.Result<RoutedProvider, string> => {
        const model = models.get(batch.modelName)
        if (model === undefined) return Result.fail(`model "${batch.modelName}" is not configured`)
        const provider = model.providers.find((candidate) => candidate.config.name === batch.modelProviderName)
        if (provider === undefined) return Result.fail(`model "${batch.modelName}" has no provider "${batch.modelProviderName}"`)
        if (provider.client.batch === undefined) return Result.fail(`provider "${batch.modelProviderName}" of model "${batch.modelName}" runs no batches`)
        return Result.succeed(provider)
      }

      /** the configured provider a stored batch was sent to, and how to poll it */
      const pollTarget = (batch: StoredBatch): Result.Result<{ provider: RoutedProvider; call: BatchPollCall }, GatewayError> => {
        const found = batchProvider(batch)
        if (Result.isFailure(found)) {
          return Result.fail(new AllProvidersFailed({
            message: `batch ${batch.id} was sent to provider "${batch.modelProviderName}" of model "${batch.modelName}", which the configuration no longer has`,
            kind: "upstream"
          }))
        }
        const provider = found.success
        const variant = config.functions.get(batch.functionName)?.variants.get(batch.variantName)
        const edits = variant?.type === "chat_completion" ? variant : { name: batch.variantName, extraBody: [], extraHeaders: [] }
        const made = providerCall(undefined, batch.modelName, provider.config, edits, { bodyEdits: [], headerEdits: [], credentials: {} })
        if (Result.isFailure(made)) {
          const refused = made.failure
          return Result.fail(
            refused instanceof ProviderFailure
              ? new AllProvidersFailed({ message: `provider "${batch.modelProviderName}" of model "${batch.modelName}": ${refused.message}`, kind: "upstream" })
              : refused
          )
        }
        const call = made.success
        return Result.succeed({ provider, call: { apiKey: call.apiKey, qualifiedName: call.qualifiedName, extraHeaders: call.extraHeaders } })
      }

      const pollProvider = (batch: StoredBatch): Effect.Effect<BatchOutcome, GatewayError> => {
        const polled = pollTarget(batch)
        if (Result.isFailure(polled)) return Effect.fail(polled.failure)
        const target = polled.success
        return withTransport(target.provider.client.batch!.poll({ providerBatchId: batch.providerBatchId, data: batch.providerBatchData }, target.call)).pipe(
          Effect.mapError(providerError(batch.modelProviderName, batch.modelName, `could not be polled for batch ${batch.id}`))
        )
      }

      /** writes rows encoded as the write queue would (rows over max_row_bytes cut down, and logged) */
      const writeRows = (stores: BatchStores, writes: WriteBatch) =>
        Effect.flatMap(Effect.fromResult(stores.database.encode(writes)), (rows) =>
          Effect.andThen(
            Effect.forEach(rows, (row) => row.cut === undefined ? Effect.void : Effect.logWarning(`batch: ${row.cut}`), { discard: true }),
            stores.database.write(rows)
          ))

      /** a batch's row as it ends: a newer version than the one read, even within its millisecond */
      const ended = (current: StoredBatch, change: Partial<StoredBatch>): StoredBatch => ({
        ...current,
        ...change,
        updatedAt: Math.max(now(), current.updatedAt + 1)
      })

      /**
       * Records what the provider said of a finished batch (the caller holds its lock and found it
       * pending): its results written a page of its inferences at a time, each result let go once
       * written, then the batch marked completed (or failed).
       */
      const record = (stores: BatchStores, current: StoredBatch, outcome: Exclude<BatchOutcome, { status: "pending" }>) =>
        Effect.gen(function*() {
          if (outcome.status === "failed") {
            const failed = ended(current, { status: "failed", errorMessage: outcome.message })
            yield* stores.batches.updateBatch(failed)
            return failed
          }
          const resultsById = new Map(outcome.results.map((result) => [result.id, result]))
          const compile = schemaCache()
          const completedAt = now()
          const failures: Record<string, string> = {}
          let stored = 0
          // a page of rows at a time, written, with a turn of the event loop between pages
          for (let afterIndex = -1;;) {
            const page = yield* stores.batches.getBatchInferencePage(current.workspace, current.id, afterIndex, writeChunk)
            if (page.length === 0) break
            const rows = completedRows(current, page, resultsById, completedAt, compile)
            Object.assign(failures, rows.failures)
            if (rows.writes.inferences.length > 0) yield* writeRows(stores, rows.writes)
            stored += rows.writes.inferences.length
            for (const row of page) resultsById.delete(row.inferenceId)
            afterIndex = page[page.length - 1].index
            yield* letIoRun
            if (page.length < writeChunk) break
          }
          const completed = ended(current, { status: "completed", failures })
          yield* stores.batches.updateBatch(completed)
          yield* Effect.logInfo(`batch ${current.id}: completed, ${stored} inferences stored, ${Object.keys(failures).length} without an answer`)
          return completed
        }).pipe(Effect.mapError(storeFailure(stores.batches)))

      /**
       * A pending batch polled if it is due, and its row afterwards (the one given when it was not
       * polled): not when any process polled it less than `poll_interval_s` ago (its claim), nor
       * while another polls or completes it (its lock, not waited for). Under the lock its row is
       * read again (another may have ended it meanwhile), then the provider polled, and a
       * finished batch recorded before the lock is let go.
       */
      const pollIfDue = (stores: BatchStores, batch: StoredBatch): Effect.Effect<StoredBatch, GatewayError> =>
        Effect.gen(function*() {
          if (pollIntervalS > 0 && !(yield* tasks.claim(`batch.poll:${batch.id}`, pollIntervalS))) return batch
          const polled = yield* tasks.tryExclusive(
            `batch:${batch.id}`,
            Effect.gen(function*() {
              const current = (yield* Effect.mapError(stores.batches.getBatch(batch.workspace, batch.id), storeFailure(stores.batches))) ?? batch
              if (current.status !== "pending") return current
              const outcome = yield* pollProvider(current)
              return outcome.status === "pending" ? current : yield* record(stores, current, outcome)
            })
          )
          return Option.getOrElse(polled, () => batch)
        })

      /** the answers of some inferences of a completed batch, read from the database in their order */
      const answersOf = (stores: BatchStores, batch: StoredBatch, rows: ReadonlyArray<StoredBatchInference>) =>
        Effect.gen(function*() {
          const answered = rows.filter((row) => batch.failures?.[row.inferenceId] === undefined).map((row) => row.inferenceId)
          const inferences = new Map<string, StoredInference>()
          const calls = new Map<string, StoredModelInference>()
          for (const ids of Arr.chunksOf(answered, readChunk)) {
            for (const inference of yield* stores.inferences.getInferences(batch.workspace, ids)) inferences.set(inference.id, inference)
            for (const call of yield* stores.inferences.getModelInferences(batch.workspace, ids)) calls.set(call.inferenceId, call)
          }
          return rows.map((row) =>
            batchInferenceBody(row, inferences.get(row.inferenceId), calls.get(row.inferenceId), batch.failures?.[row.inferenceId])
          )
        }).pipe(Effect.mapError(storeFailure(stores.batches)))

      /** a page of a completed batch's answers: those after position `afterIndex`, at most `limit`, and the last position if more follow */
      const answerPage = (stores: BatchStores, batch: StoredBatch, afterIndex: number, limit: number) =>
        Effect.gen(function*() {
          // one more row than asked says whether another page follows
          const rows = yield* Effect.mapError(stores.batches.getBatchInferencePage(batch.workspace, batch.id, afterIndex, limit + 1), storeFailure(stores.batches))
          const page = rows.length > limit ? rows.slice(0, limit) : rows
          const answers = yield* answersOf(stores, batch, page)
          return { answers, last: page.length > 0 && rows.length > limit ? page[page.length - 1] : undefined }
        })

      /** a completed batch as the read asks it: one inference, a page, or the whole list (or its rest after `after`) a page at a time */
      const completedReading = (
        stores: BatchStores,
        batch: StoredBatch,
        options: BatchReadOptions,
        one: StoredBatchInference | undefined
      ): Effect.Effect<BatchReading, GatewayError> =>
        Effect.gen(function*() {
          if (one !== undefined) {
            return { _tag: "body", body: { status: "completed", batch_id: batch.id, inferences: yield* answersOf(stores, batch, [one]) } } as const
          }
          let afterIndex = -1
          if (options.after !== undefined) {
            const [after] = isUuid(options.after)
              ? yield* Effect.mapError(stores.batches.getBatchInferences(batch.workspace, batch.id, options.after), storeFailure(stores.batches))
              : []
            if (after === undefined) {
              return yield* Effect.fail(new InvalidRequest({ message: `after: "${options.after.slice(0, 100)}" is not an inference of batch ${batch.id}` }))
            }
            afterIndex = after.index
          }
          if (options.limit !== undefined) {
            const { answers, last } = yield* answerPage(stores, batch, afterIndex, options.limit)
            return {
              _tag: "body",
              body: { status: "completed", batch_id: batch.id, inferences: answers, next_after: last?.inferenceId ?? null }
            } as const
          }
          const first = yield* answerPage(stores, batch, afterIndex, readChunk)
          const rest = first.last === undefined
            ? Stream.empty
            : Stream.paginate(first.last.index, (after: number) =>
              // one element per page: each is written at once
              Effect.map(answerPage(stores, batch, after, readChunk), ({ answers, last }) =>
                [[answers], last === undefined ? Option.none<number>() : Option.some(last.index)] as const))
          return { _tag: "pages", batchId: batch.id, pages: Stream.concat(Stream.succeed(first.answers), rest) } as const
        })

      /**
       * The background poll of one batch: polls it, and queues the next poll while it stays
       * pending; a failure is logged and the poll queued again. It fails only to decline: a
       * configuration without the batch's provider hands the poll to another gateway (before it
       * claims the poll, which would hold back that gateway's).
       */
      const backgroundPoll = ({ batchId, workspace = defaultWorkspace }: BatchPoll): Effect.Effect<void, TaskFailure> =>
        Effect.gen(function*() {
          const ready = yield* needed
          const batch = yield* Effect.mapError(ready.batches.getBatch(workspace, batchId), storeFailure(ready.batches))
          if (batch === undefined || batch.status !== "pending") return
          const provider = batchProvider(batch)
          if (Result.isFailure(provider)) return yield* Effect.fail(declineTask(provider.failure))
          const after = yield* pollIfDue(ready, batch)
          if (after.status === "pending") yield* schedulePoll(batchId, workspace)
        }).pipe(
          Effect.catch((error) =>
            "declined" in error
              ? Effect.fail(error)
              : Effect.andThen(Effect.logWarning(`batch ${batchId}: background poll failed, tried again in ${pollIntervalS} s: ${error.message}`), schedulePoll(batchId, workspace))
          )
        )

      if (stores !== undefined && tasks.available && pollIntervalS > 0) {
        yield* tasks.register<BatchPoll>(batchPollTask, (task) => backgroundPoll(task.payload), {
          concurrency: 4,
          heartbeatS: 10
        })
        // batches left pending by a gateway that stopped before it queued their polls
        yield* stores.batches.listPendingBatches(10_000).pipe(
          Effect.flatMap((pending) => Effect.forEach(pending, (batch) => schedulePoll(batch.id, batch.workspace), { discard: true })),
          Effect.catch((error) => Effect.logWarning(`batch: could not list pending batches to poll: ${error.message}`)),
          Effect.forkDetach
        )
      }

      return BatchService.of({
        start: (request, caller) =>
          Effect.gen(function*() {
            const ready = yield* needed
            const startedAt = now()
            const plan = yield* Effect.fromResult(planBatch(request, config, models, startedAt))
            // what the providers are sent: the files the inputs keep in object storage read back
            const sent = yield* readBatchFiles(request, objectStore)
            // up to 50,000 inputs: a slice at a time, the requests in flight served between slices
            const inputs: Array<PreparedBatchInference> = []
            for (let index = 0; index < request.inputs.length; index++) {
              if (index > 0 && index % itemsPerTurn === 0) yield* letIoRun
              inputs.push(yield* Effect.fromResult(prepareBatchInput(plan, sent, index, config, models, config.templates, startedAt, caller)))
            }
            const prepared: PreparedBatch = { ...plan, inferences: inputs }
            const { provider, modelName } = prepared
            const started = yield* withTransport(provider.client.batch!.start(prepared.inferences.map(({ prepared: one, call }) => ({ id: one.inferenceId, call })))).pipe(
              Effect.mapError((failure) =>
                failure._tag === "InvalidRequest" ? failure : providerError(provider.config.name, modelName, "refused the batch")(failure)
              )
            )
            const rows = submittedRows(prepared, request, started.handle, started.rawRequests, now(), caller.workspace)
            const storedRows = yield* storeBatchFiles(rows.inferences, request.inputs, sent.inputs, objectStore)
            yield* ready.batches.insertBatch(rows.batch, storedRows).pipe(
              // the provider runs (and bills) a batch the gateway could not record: say which, so that it can be cancelled there
              Effect.tapError((error) =>
                Effect.logError(
                  `batch ${prepared.batchId}: provider "${provider.config.name}" of model "${modelName}" accepted it as ` +
                    `${started.handle.providerBatchId}, but it could not be stored (${error.message}); cancel it at the provider`
                )
              ),
              Effect.mapError(storeFailure(ready.batches))
            )
            yield* schedulePoll(prepared.batchId, caller.workspace)
            return {
              batch_id: prepared.batchId,
              inference_ids: rows.inferences.map((row) => row.inferenceId),
              episode_ids: rows.inferences.map((row) => row.episodeId)
            }
          }),
        get: (caller, batchId, options = {}) =>
          Effect.gen(function*() {
            const ready = yield* needed
            const unknownBatch = new NotFound({ message: `unknown batch "${batchId}"` })
            if (!isUuid(batchId)) return yield* Effect.fail(unknownBatch)
            let batch = yield* Effect.mapError(ready.batches.getBatch(caller.workspace, batchId), storeFailure(ready.batches))
            if (batch === undefined) return yield* Effect.fail(unknownBatch)
            const { inferenceId } = options
            // the route of one inference: 404 when the batch has none of that id, whatever its status
            const one = inferenceId === undefined || !isUuid(inferenceId)
              ? undefined
              : (yield* Effect.mapError(ready.batches.getBatchInferences(caller.workspace, batchId, inferenceId), storeFailure(ready.batches)))[0]
            if (inferenceId !== undefined && one === undefined) {
              return yield* Effect.fail(new NotFound({ message: `batch "${batchId}" has no inference "${inferenceId}"` }))
            }
            if (batch.status === "pending") batch = yield* pollIfDue(ready, batch)
            switch (batch.status) {
              case "pending":
                return { _tag: "body", body: { status: "pending" } } as const
              case "failed":
                return { _tag: "body", body: { status: "failed", error: batch.errorMessage } } as const
              case "completed":
                return yield* completedReading(ready, batch, options, one)
            }
          })
      })
    })
  )
}
