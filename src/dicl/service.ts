/**
 * Creating the examples of a dynamic in-context learning variant (`POST /v1/optimization/dicl`)
 * as a durable task: the request is checked (function, variant, embedding model, exactly one
 * source with at least one example) and queued; the task reads the source, embeds the inputs'
 * text (`diclInputText`, as inference does) in batches with bounded concurrency through the
 * embedding service (each call stored as an embedding inference, as /openai/v1/embeddings
 * stores it), stages each batch's examples as it is embedded, and commits them at the end:
 * appended, or replacing the variant's examples at once. A task that fails or is cancelled
 * leaves the examples as they were. `GET /v1/optimization/dicl/{task_id}` reads its status,
 * progress (examples embedded of the total) and result or error.
 *
 * It needs the analytics database (the examples) and the relational one (the tasks): without
 * either, both routes answer 503 naming the variable.
 */
import * as Arr from "effect/Array"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import {
  type CreateDiclExamplesRequest,
  defaultDiclBatchSize,
  defaultDiclConcurrency,
  defaultDiclExamples,
  type DiclTaskResponse
} from "../api/optimization.ts"
import type { FunctionConfig } from "../config/types.ts"
import { EmbeddingModelTable } from "../embeddings/models.ts"
import { EmbeddingService } from "../embeddings/service.ts"
import { type GatewayError, InvalidRequest, NotFound } from "../errors.ts"
import { uuidv7 } from "../ids.ts"
import { storeFailure, type StoreFailure } from "../analytics/stores.ts"
import type { DatasetStores } from "../datasets/operations.ts"
import { DatasetStoreService } from "../datasets/store.ts"
import { FeedbackStoreService } from "../feedback/store.ts"
import { InferenceStoreService } from "../storedInferences/store.ts"
import { captureInferenceServices, Configuration } from "../services.ts"
import { optimizationTaskError, optimizationTaskStatus } from "../optimization/taskStatus.ts"
import { declineTask, type RunningTask, storesWithTasks, type TaskFailure, type TaskInfo, Tasks } from "../tasks/service.ts"
import { diclEmbeddingModelOf, embeddingModelRequestName } from "./embeddingModel.ts"
import { diclInputText, embeddingProblem } from "./examples.ts"
import { type DiclExample, type DiclExampleStore, DiclExampleStoreService } from "./store.ts"
import { checkSource, type DiclSource, readSource, type SourceItem } from "./sources.ts"
import { type Caller, taskCaller } from "../workspace.ts"

/** the task kind of an example creation */
export const diclExamplesTask = "dicl.examples"

/** What a task carries (JSON): the request, checked. */
export interface DiclTaskPayload {
  readonly functionName: string
  readonly variantName: string
  /** as given or configured: a configured embedding model's name, or a short-hand */
  readonly embeddingModel: string
  readonly source: DiclSource
  readonly append: boolean
  readonly batchSize: number
  readonly maxConcurrency: number
  readonly maxExamples: number
  /** the caller's public key id, for the embedding calls' rate limits and tags */
  readonly apiKey?: string | undefined
  /** the caller's workspace (undefined in a task queued before workspaces: `default`) */
  readonly workspace?: string | undefined
}

export interface DiclTaskResult {
  readonly examples_written: number
  readonly function_name: string
  readonly variant_name: string
  readonly embedding_model: string
}

export type DiclTaskBody = typeof DiclTaskResponse.Type

const isProgress = (value: unknown): value is { embedded: number; total: number } =>
  typeof value === "object" && value !== null && typeof (value as { embedded?: unknown }).embedded === "number" &&
  typeof (value as { total?: unknown }).total === "number"

/** a task as the GET answers it: `pending`, `completed` with its result, or `error` with why */
export const diclTaskBody = (info: TaskInfo): DiclTaskBody => {
  const status = optimizationTaskStatus(info.state)
  return {
    task_id: info.id,
    status,
    ...(isProgress(info.progress) && { progress: { embedded: info.progress.embedded, total: info.progress.total } }),
    ...(status === "completed" && info.result !== undefined && { result: info.result as DiclTaskResult }),
    ...(status === "error" && { error: optimizationTaskError(info) })
  }
}

/** The stores a task reads its source from and writes its examples to. */
interface DiclStores extends DatasetStores {
  readonly exampleStore: DiclExampleStore
}

export class DiclService extends Context.Service<DiclService, {
  /** checks the request and queues its task; the task's id */
  readonly create: (request: CreateDiclExamplesRequest, caller: Caller) => Effect.Effect<{ readonly task_id: string }, GatewayError>
  readonly get: (taskId: string) => Effect.Effect<DiclTaskBody, GatewayError>
}>()("gateway/DiclService") {
  static readonly layer = Layer.effect(
    DiclService,
    Effect.gen(function*() {
      const config = yield* Configuration
      const { store: exampleStore } = yield* DiclExampleStoreService
      const { store: datasetStore } = yield* DatasetStoreService
      const { store: inferenceStore } = yield* InferenceStoreService
      const { store: feedbackStore } = yield* FeedbackStoreService
      const stores: DiclStores | undefined = exampleStore && datasetStore && inferenceStore && feedbackStore &&
        { exampleStore, datasetStore, inferenceStore, feedbackStore }
      const tasks = yield* Tasks
      const embeddings = yield* EmbeddingService
      // what the embedding calls of a task run with: a task's handler gets nothing from its context
      const services = yield* captureInferenceServices
      const embeddingModels = new EmbeddingModelTable(config)

      /** the databases the examples need, or the 503 naming what is missing */
      const needed = storesWithTasks(stores, tasks, "DICL examples (created by a durable task)")

      const functionOf = (name: string): Effect.Effect<FunctionConfig, InvalidRequest> => {
        const fn = config.functions.get(name)
        return fn === undefined ? Effect.fail(new InvalidRequest({ message: `function_name: unknown function "${name.slice(0, 200)}"` })) : Effect.succeed(fn)
      }

      /** the examples of one batch of items, embedded */
      const embedBatch = (payload: DiclTaskPayload, items: ReadonlyArray<SourceItem>) =>
        Effect.gen(function*() {
          const answer = yield* embeddings.embed(
            { model: embeddingModelRequestName(config, payload.embeddingModel), input: items.map((item) => diclInputText(item.input)) },
            taskCaller(payload)
          ).pipe(Effect.provideContext(services))
          if (answer.embeddings.length !== items.length) {
            return yield* Effect.fail({
              message: `embedding model "${payload.embeddingModel}" answered ${answer.embeddings.length} embeddings for ${items.length} inputs`
            })
          }
          const now = yield* Clock.currentTimeMillis
          return yield* Effect.forEach(items, (item, index): Effect.Effect<DiclExample, TaskFailure> => {
            const embedding = answer.embeddings[index]
            const problem = embeddingProblem(embedding)
            if (problem !== undefined) return Effect.fail({ message: `embedding model "${payload.embeddingModel}": ${problem}` })
            return Effect.succeed({
              id: uuidv7(now),
              functionName: payload.functionName,
              variantName: payload.variantName,
              input: item.input,
              output: item.output,
              embedding,
              embeddingModel: payload.embeddingModel,
              createdAt: now
            })
          })
        })

      /**
       * The function, variant, embedding model and query a task names, when this configuration
       * has them all; else the task is declined (another gateway's configuration may have them)
       */
      const runnableFunction = (payload: DiclTaskPayload): Effect.Effect<FunctionConfig, TaskFailure> =>
        Effect.gen(function*() {
          const fn = config.functions.get(payload.functionName)
          if (fn === undefined) return yield* Effect.fail(declineTask(`function "${payload.functionName}" is not configured`))
          if (!fn.variants.has(payload.variantName)) {
            return yield* Effect.fail(declineTask(`function "${fn.name}" has no variant "${payload.variantName}"`))
          }
          if (!("model" in embeddingModels.get(embeddingModelRequestName(config, payload.embeddingModel)))) {
            return yield* Effect.fail(declineTask(`embedding model "${payload.embeddingModel}" is not configured`))
          }
          // a query's metric filters name configured metrics
          yield* Effect.mapError(checkSource(config, fn.name, payload.source), (problem) => declineTask(problem.message))
          return fn
        })

      /** the task: read, embed and stage batch by batch, commit; fails with the first error */
      const run = (task: RunningTask<DiclTaskPayload>): Effect.Effect<DiclTaskResult, TaskFailure> => {
        const payload = task.payload
        return Effect.gen(function*() {
          const ready = yield* needed
          const fn = yield* runnableFunction(payload)
          const items = yield* readSource(taskCaller(payload).workspace, config, ready, fn.name, fn.type, payload.source, payload.maxExamples)
          // a replace with nothing would leave the variant without examples
          if (items.length === 0) return yield* Effect.fail({ message: "the source holds no examples (any more)" })
          let embedded = 0
          yield* task.progress({ embedded, total: items.length })
          const write = yield* ready.exampleStore.begin(payload.functionName, payload.variantName, payload.append ? "append" : "replace")
          yield* Effect.forEach(
            Arr.chunksOf(items, payload.batchSize),
            (batch) =>
              Effect.gen(function*() {
                const examples = yield* embedBatch(payload, batch)
                yield* Effect.mapError(ready.exampleStore.stage(write, examples), storeFailure(ready.exampleStore))
                embedded += batch.length
                yield* task.progress({ embedded, total: items.length })
              }),
            { concurrency: payload.maxConcurrency, discard: true }
          )
          // concurrent batches' progress writes may land out of order: the last one says it all
          yield* task.progress({ embedded: items.length, total: items.length })
          yield* Effect.mapError(ready.exampleStore.commit(write), storeFailure(ready.exampleStore))
          yield* Effect.logInfo(
            `dicl: ${items.length} examples ${payload.append ? "appended to" : "replace those of"} ${payload.functionName}/${payload.variantName} (task ${task.id})`
          )
          return {
            examples_written: items.length,
            function_name: payload.functionName,
            variant_name: payload.variantName,
            embedding_model: payload.embeddingModel
          }
        }).pipe(Effect.mapError((error): TaskFailure => "declined" in error ? error : { message: error.message }))
      }

      if (stores !== undefined && tasks.available) {
        // a failure is tried once more (a process that died, a provider that hiccuped), then reported
        yield* tasks.register<DiclTaskPayload>(diclExamplesTask, run, { concurrency: 2, retryLimit: 1 })
      }

      return DiclService.of({
        create: (request, caller) =>
          Effect.gen(function*() {
            const ready = yield* needed
            const fn = yield* functionOf(request.function_name)
            const variant = fn.variants.get(request.variant_name)
            if (variant === undefined) {
              return yield* new InvalidRequest({ message: `variant_name: function "${fn.name}" has no variant "${request.variant_name.slice(0, 200)}"` })
            }
            const embeddingModel = request.embedding_model ?? diclEmbeddingModelOf(variant)
            if (embeddingModel === undefined) {
              return yield* new InvalidRequest({
                message: `embedding_model: variant "${variant.name}" configures no embedding model: give one (a configured [embedding_models] name or a short-hand)`
              })
            }
            const model = embeddingModels.get(embeddingModelRequestName(config, embeddingModel))
            if (!("model" in model)) {
              return yield* new InvalidRequest({ message: `embedding_model: ${"unknown" in model ? model.unknown : model.refused}` })
            }
            const sources = [request.dataset_name, request.inference_query].filter((given) => given !== undefined).length
            if (sources !== 1) {
              return yield* new InvalidRequest({
                message: sources === 0
                  ? "dataset_name: give the examples' source, a dataset_name or an inference_query"
                  : "dataset_name: give one source of examples, a dataset_name or an inference_query, not both"
              })
            }
            const source: DiclSource = request.dataset_name !== undefined
              ? { datasetName: request.dataset_name }
              : { query: request.inference_query! }
            yield* checkSource(config, fn.name, source)
            // a task that could only fail is refused now: the source must hold an example
            if ((yield* readSource(caller.workspace, config, ready, fn.name, fn.type, source, 1)).length === 0) {
              return yield* new InvalidRequest({ message: yield* emptySource(ready, fn, source) })
            }
            const payload: DiclTaskPayload = {
              functionName: fn.name,
              variantName: variant.name,
              embeddingModel,
              source,
              append: request.append ?? false,
              batchSize: request.batch_size ?? defaultDiclBatchSize,
              maxConcurrency: request.max_concurrency ?? defaultDiclConcurrency,
              maxExamples: request.max_examples ?? defaultDiclExamples,
              apiKey: caller.publicId,
              workspace: caller.workspace
            }
            const id = yield* tasks.enqueue(diclExamplesTask, payload)
            // without a key, enqueue always queues
            return { task_id: id! }
          }),

        get: (taskId) =>
          Effect.gen(function*() {
            yield* needed
            const info = yield* tasks.get(taskId)
            if (info === undefined || info.kind !== diclExamplesTask) {
              return yield* new NotFound({ message: `unknown DICL task "${taskId.slice(0, 100)}"` })
            }
            return diclTaskBody(info)
          })
      })
    })
  )
}

/** why the source gave no example, naming its field */
const emptySource = (stores: DatasetStores, fn: FunctionConfig, source: DiclSource): Effect.Effect<string, StoreFailure> => {
  if (!("datasetName" in source)) {
    const what = source.query.output_source === "demonstration" ? "with a demonstration" : "with an output that makes an example"
    return Effect.succeed(`inference_query: no stored inference of function "${fn.name}" ${what} matches the query`)
  }
  return stores.datasetStore.listDatapoints({ datasetName: source.datasetName, orderBy: [], limit: 1, offset: 0 }).pipe(
    Effect.mapError(storeFailure(stores.datasetStore)),
    Effect.map((any) =>
      any.length === 0
        ? `dataset_name: unknown dataset "${source.datasetName}" (it holds no live datapoint)`
        : `dataset_name: dataset "${source.datasetName}" holds no live datapoint of function "${fn.name}" with an output`
    )
  )
}
