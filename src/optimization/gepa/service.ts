/**
 * Prompt optimization with GEPA (spec 4.7) as a durable task: `launch` checks the request and
 * its datasets and queues the task; the task (`loop.ts`) runs the function's variants and the
 * candidates it writes through the inference use case (a candidate as a dynamic variant, its
 * templates compiled apart), scores them with the function's evaluators as evaluation runs do
 * (the scores stored as feedback), asks the analysis and mutation models through the built-in
 * functions (`builtins.ts`), and checkpoints its state per iteration so that another process
 * resumes it after a crash. Every inference it makes is tagged with the task and the iteration,
 * and all of them (judges and the two models included) share `max_concurrency`.
 *
 * It needs the relational database (the task) and the analytics one (datasets, inferences):
 * without either, 503 naming the variable.
 */
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Random from "effect/Random"
import * as Semaphore from "effect/Semaphore"
import type { GepaTaskResponse, LaunchGepaRequest } from "../../api/gepa.ts"
import type { InferenceRequest, Input } from "../../api/inference.ts"
import type { ChatCompletionVariant, EvaluatorConfig, FunctionConfig, GatewayConfig } from "../../config/types.ts"
import { type DatasetStore, DatasetStoreService, type StoredDatapoint } from "../../datasets/store.ts"
import { Conflict, type GatewayError, InvalidRequest, NotFound } from "../../errors.ts"
import { loadDatapoints } from "../../evaluations/datapoints.ts"
import type { Score } from "../../evaluations/evaluators.ts"
import type { RunPlan } from "../../evaluations/plan.ts"
import { scoreDatapoint, type ScoringContext } from "../../evaluations/scoring.ts"
import type { JsonOutput } from "../../inference/output.ts"
import { InferenceService } from "../../inference/service.ts"
import type { TemplateEngine } from "../../inference/templates.ts"
import { emptyBatch } from "../../analytics/records.ts"
import { WriteQueue } from "../../analytics/writeQueue.ts"
import { captureInferenceServices, Configuration, type InferenceServices } from "../../services.ts"
import { declineTask, type RunningTask, storesWithTasks, type TaskFailure, type TaskInfo, Tasks } from "../../tasks/service.ts"
import { optimizationTaskError, optimizationTaskStatus } from "../taskStatus.ts"
import { analyzeInput, gepaAnalyzeFunction, type GepaBuiltinFunction, gepaModelVariant, gepaMutateFunction, mutateInput, parseMutation } from "./builtins.ts"
import { candidateProblem, candidateVariant, compileCandidate, templatesOf } from "./candidates.ts"
import { exportFiles, gepaVariantJson } from "./export.ts"
import type { DatapointScores, Objective } from "./frontier.ts"
import { type Candidate, type Evaluation, type GepaPorts, type GepaResult, initialState, resumableState, runGepa } from "./loop.ts"
import { type GepaPayload, gepaUnrunnable, payloadEvaluators, planGepa } from "./plan.ts"
import { type Caller, isTaskOf, taskCaller } from "../../workspace.ts"

/** the task kind */
export const gepaTask = "optimization.gepa"
export const optimizationTaskIdTag = "gateway::optimization_task_id"
export const gepaIterationTag = "gateway::gepa_iteration"

/**
 * What a completed task holds: the GET's `variants` and `statistics`, or (`failed`) why GEPA
 * could not go on. Such an ending completes the task rather than failing it: the queue would
 * run it again, and it would end the same way (a model that keeps failing, an evaluator that
 * fails everywhere).
 */
export type GepaTaskResult =
  | Pick<Extract<GepaTaskResponse, { status: "completed" }>, "variants" | "statistics">
  | { readonly failed: string }

interface Progress {
  readonly current_iteration: number
  readonly max_iterations: number
  readonly current_step: string
}

const isProgress = (value: unknown): value is Progress =>
  typeof value === "object" && value !== null && typeof (value as Progress).current_iteration === "number" &&
  typeof (value as Progress).max_iterations === "number" && typeof (value as Progress).current_step === "string"

/** a task as the GET answers it */
export const gepaTaskBody = (info: TaskInfo): GepaTaskResponse => {
  switch (optimizationTaskStatus(info.state)) {
    case "completed": {
      const result = info.result as GepaTaskResult
      return "failed" in result ? { status: "error", error: result.failed } : { status: "completed", ...result }
    }
    case "error":
      return { status: "error", error: optimizationTaskError(info) }
    case "pending": {
      const maxIterations = (info.payload as Partial<GepaPayload> | undefined)?.maxIterations ?? 0
      const progress = isProgress(info.progress)
        ? info.progress
        : { current_iteration: 0, max_iterations: maxIterations, current_step: info.state === "queued" ? "queued" : "loading" }
      return { status: "pending", progress }
    }
  }
}

/** What a completed task adopts as configuration: the files `exportFiles` writes, and how many variants they add. */
export interface GepaExport {
  readonly functionName: string
  readonly variantCount: number
  readonly files: ReadonlyArray<{ readonly path: string; readonly content: string }>
}

/**
 * The configuration files of task `taskId` as `tasks.get` read it (`gateway optimize export`
 * writes them, the UI offers them for download): 404 when it is no GEPA task, 409 until it has
 * completed (still running, or ended in error: nothing to adopt).
 */
export const gepaTaskExport = (workspace: string, taskId: string, info: TaskInfo | undefined): Effect.Effect<GepaExport, NotFound | Conflict> =>
  Effect.flatMap(workspaceGepaTask(workspace, taskId, info), (task) => exportOf(taskId, task))

/** `info` when it is the workspace's GEPA task `taskId`: another workspace's is as unknown as a missing one */
const workspaceGepaTask = (workspace: string, taskId: string, info: TaskInfo | undefined): Effect.Effect<TaskInfo, NotFound> =>
  info === undefined || info.kind !== gepaTask || !isTaskOf(workspace, info.payload)
    ? Effect.fail(new NotFound({ message: `unknown GEPA task "${taskId.slice(0, 100)}"` }))
    : Effect.succeed(info)

const exportOf = (taskId: string, info: TaskInfo): Effect.Effect<GepaExport, Conflict> => {
  const body = gepaTaskBody(info)
  if (body.status !== "completed") {
    return Effect.fail(new Conflict({ message: `GEPA task ${taskId} is ${body.status === "pending" ? "still running" : `in error: ${body.error}`}: nothing to export` }))
  }
  const functionName = (info.payload as GepaPayload).functionName
  return Effect.succeed({ functionName, variantCount: Object.keys(body.variants).length, files: exportFiles(functionName, body.variants) })
}

/** a score as GEPA compares it: a boolean 1 or 0 */
const numeric = (score: Score | undefined): number | null =>
  score === undefined || score === null ? null : typeof score === "boolean" ? (score ? 1 : 0) : score

/** the datasets of a payload: one to split, or the two sets */
type Datasets = { readonly split: ReadonlyArray<StoredDatapoint> } | { readonly train: ReadonlyArray<StoredDatapoint>; readonly validation: ReadonlyArray<StoredDatapoint> }

/** the payload's datasets, in `workspace` (the launching caller's, which the task's payload carries) */
const readDatasets = (store: DatasetStore, workspace: string, payload: GepaPayload): Effect.Effect<Datasets, GatewayError> => {
  const load = (datasetName: string) =>
    loadDatapoints(store, workspace, { functionName: payload.functionName, maxDatapoints: payload.maxDatapoints, source: { kind: "dataset", datasetName } })
  return payload.datasets.kind === "split"
    ? Effect.map(load(payload.datasets.datasetName), (split): Datasets => ({ split }))
    : Effect.map(Effect.all([load(payload.datasets.trainDatasetName), load(payload.datasets.valDatasetName)]), ([train, validation]) => ({ train, validation }))
}

/** a missing dataset or an empty one is the request's fault: a 400 naming the field */
const asRequestError = (payload: GepaPayload) => (error: GatewayError): GatewayError => {
  if (!(error instanceof NotFound || error instanceof InvalidRequest)) return error
  const field = payload.datasets.kind === "split" ? "dataset_name" : "train_dataset_name or val_dataset_name"
  return new InvalidRequest({ message: error.message.startsWith("dataset_name: ") ? error.message.replace("dataset_name", field) : `${field}: ${error.message}` })
}

export class GepaService extends Context.Service<GepaService, {
  readonly launch: (request: LaunchGepaRequest, caller: Caller) => Effect.Effect<{ readonly task_id: string }, GatewayError>
  /** the caller's workspace's task (another workspace's is unknown) */
  readonly get: (caller: Caller, taskId: string) => Effect.Effect<GepaTaskResponse, GatewayError>
  /**
   * cancels a pending task; its status becomes `error` ("cancelled"), and a running one starts no
   * model call after the answer, on whichever gateway runs it (calls in flight may finish)
   */
  readonly cancel: (caller: Caller, taskId: string) => Effect.Effect<GepaTaskResponse, GatewayError>
}>()("gateway/GepaService") {
  static readonly layer = Layer.effect(
    GepaService,
    Effect.gen(function*() {
      const config = yield* Configuration
      const { store: datasetStore } = yield* DatasetStoreService
      const tasks = yield* Tasks
      const writeQueue = yield* WriteQueue
      const inference = yield* InferenceService
      const clock = yield* Clock.Clock
      // what the task's inferences run with: a task's handler gets nothing from its context
      const services = yield* captureInferenceServices

      const needed = storesWithTasks(datasetStore, tasks, "prompt optimization (GEPA runs as a durable task)")

      const run = (task: RunningTask<GepaPayload>): Effect.Effect<GepaTaskResult, TaskFailure> =>
        Effect.gen(function*() {
          const payload = task.payload
          const ready = yield* needed
          // a configuration without the task's function, evaluators, variants or models hands it to another gateway
          const unrunnable = gepaUnrunnable(config, payload)
          if (unrunnable !== undefined) return yield* Effect.fail(declineTask(unrunnable))
          const fn = config.functions.get(payload.functionName)!
          const evaluators = payloadEvaluators(config, payload)!
          const bases = new Map(payload.initialVariants.map((name): [string, ChatCompletionVariant] => [name, fn.variants.get(name) as ChatCompletionVariant]))
          const progress = (iteration: number, step: string) =>
            task.progress({ current_iteration: iteration, max_iterations: payload.maxIterations, current_step: step })
          yield* progress(0, "loading")
          const datasets = yield* readDatasets(ready, taskCaller(payload).workspace, payload)
          const datapoints = new Map(Object.values(datasets).flat().map((datapoint) => [datapoint.id, datapoint]))
          const initial = payload.initialVariants.map((name): Candidate => ({
            name,
            templates: templatesOf(config.templates, bases.get(name)!),
            iteration: 0,
            base: name
          }))
          const state = resumableState(task.resumeFrom) ?? initialState(payload.seed, datasets, initial)
          if (task.resumeFrom !== undefined) yield* Effect.logInfo(`gepa: task ${task.id} resumes after iteration ${state.iteration}`)
          const now = () => clock.currentTimeMillisUnsafe()
          const ports = yield* makePorts(config, fn, evaluators, bases, payload, task, { writeQueue, inference, services, now }, progress)
          const ran = yield* Effect.result(runGepa(state, datapoints, {
            maxIterations: payload.maxIterations,
            batchSize: payload.batchSize,
            variantPrefix: payload.variantPrefix,
            objectives: evaluators.map((evaluator): Objective => ({ name: evaluator.name, optimize: evaluator.optimize }))
          }, ports))
          if (ran._tag === "Failure") {
            yield* Effect.logWarning(`gepa: task ${task.id} ends: ${ran.failure.message}`)
            return { failed: ran.failure.message }
          }
          const result = ran.success
          yield* Effect.logInfo(
            `gepa: task ${task.id} done after ${result.iterations} iterations: ${result.variants.length} new variants on the frontier, ${result.invalid} mutations refused`
          )
          return resultBody(result, bases)
        }).pipe(Effect.mapError((error): TaskFailure => "declined" in error ? error : { message: error.message }))

      if (datasetStore !== undefined && tasks.available) {
        // a task is run again (and resumes from its checkpoint) when its process died: within ~10 s of the death
        yield* tasks.register<GepaPayload>(gepaTask, run, { concurrency: 1, retryLimit: 2, heartbeatS: 10 })
      }

      const taskOf = (workspace: string, taskId: string) => Effect.flatMap(tasks.get(taskId), (info) => workspaceGepaTask(workspace, taskId, info))

      return GepaService.of({
        launch: (request, caller) =>
          Effect.gen(function*() {
            const ready = yield* needed
            const seed = yield* Random.nextIntBetween(0, 2 ** 31 - 1)
            const id = seed.toString(36)
            const payload = yield* Effect.fromResult(planGepa(request, config, seed, `gepa_${id}`))
            // a task that could only fail is refused now: the datasets must hold datapoints of the function
            const datasets = yield* Effect.mapError(readDatasets(ready, caller.workspace, payload), asRequestError(payload))
            if ("split" in datasets && datasets.split.length < 2) {
              return yield* new InvalidRequest({ message: `dataset_name: dataset "${request.dataset_name}" holds one datapoint of the function: it takes two to split into training and validation` })
            }
            const taskId = yield* tasks.enqueue(gepaTask, { ...payload, apiKey: caller.publicId, workspace: caller.workspace })
            return { task_id: taskId! }
          }),
        get: (caller, taskId) => Effect.andThen(needed, Effect.map(taskOf(caller.workspace, taskId), gepaTaskBody)),
        cancel: (caller, taskId) =>
          Effect.gen(function*() {
            yield* needed
            // checked before cancelling: another workspace's task is left running
            yield* taskOf(caller.workspace, taskId)
            yield* tasks.cancel(taskId)
            return gepaTaskBody(yield* taskOf(caller.workspace, taskId))
          })
      })
    })
  )
}

const resultBody = (result: GepaResult, bases: ReadonlyMap<string, ChatCompletionVariant>): GepaTaskResult => ({
  variants: Object.fromEntries(result.variants.map((candidate) => [candidate.name, gepaVariantJson(bases.get(candidate.base)!, candidate)])),
  statistics: result.statistics
})

/** The loop's ports on the inference use case, within the task's concurrency. */
const makePorts = (
  config: GatewayConfig,
  fn: FunctionConfig,
  evaluators: ReadonlyArray<EvaluatorConfig>,
  bases: ReadonlyMap<string, ChatCompletionVariant>,
  payload: GepaPayload,
  task: RunningTask<GepaPayload>,
  { writeQueue, inference, services, now }: {
    readonly now: () => number
    readonly writeQueue: WriteQueue["Service"]
    readonly inference: InferenceService["Service"]
    readonly services: Context.Context<InferenceServices>
  },
  progress: (iteration: number, step: string) => Effect.Effect<void>
): Effect.Effect<GepaPorts> =>
  Effect.map(Semaphore.make(payload.maxConcurrency), (permits) => {
    // every inference of the task (judges and both models included) takes a permit while it runs, and
    // starts only once the database says the task still runs here: a cancel (through any gateway)
    // stops the task before its next call, not at the next heartbeat
    const limited: InferenceService["Service"] = {
      ...inference,
      run: (prepared, onCompleted) => permits.withPermits(1)(Effect.andThen(task.ensureRunning, inference.run(prepared, onCompleted)))
    }
    const tags = (iteration: number) => ({ [optimizationTaskIdTag]: task.id, [gepaIterationTag]: String(iteration) })
    /** compiled candidates: a candidate's engine is made once */
    const engines = new Map<string, { readonly engine: TemplateEngine; readonly variant: ChatCompletionVariant } | { readonly problem: string }>()
    const compiled = (candidate: Candidate) => {
      const known = engines.get(candidate.name)
      if (known !== undefined) return known
      const variant = candidateVariant(bases.get(candidate.base)!, fn.name, candidate)
      const engine = compileCandidate(config.templates, fn.name, candidate)
      const made = "problem" in engine ? engine : { engine: engine.engine, variant }
      engines.set(candidate.name, made)
      return made
    }
    const schemas = Object.fromEntries([...fn.schemas].map(([name, validator]) => [name, validator.schema]))
    const optimize = Object.fromEntries(evaluators.map((evaluator) => [evaluator.name, evaluator.optimize]))

    /** a built-in function's answer (its parsed JSON), or why there is none */
    const callBuiltin = (
      functionName: GepaBuiltinFunction,
      model: string,
      input: Input,
      iteration: number
    ): Effect.Effect<{ readonly parsed: unknown } | { readonly error: string }> =>
      limited.prepare(
        { function_name: functionName, input, tags: tags(iteration) } as InferenceRequest,
        taskCaller(payload),
        { dynamicVariant: { variant: gepaModelVariant(functionName, model, `gepa_${model}`), templates: config.templates } }
      ).pipe(
        Effect.flatMap((prepared) => limited.run(prepared)),
        Effect.map((answer) => {
          const output = answer.output as JsonOutput
          return output.parsed === null || output.parsed === undefined
            ? { error: `its answer did not fit the output schema: ${output.raw.slice(0, 200)}` }
            : { parsed: output.parsed as unknown }
        }),
        Effect.catch((error: GatewayError) => Effect.succeed({ error: error.message })),
        Effect.provideContext(services)
      )

    const evaluate: GepaPorts["evaluate"] = (candidate, datapoints, iteration) => {
      const initial = candidate.iteration === 0
      const made = initial ? undefined : compiled(candidate)
      if (made !== undefined && "problem" in made) {
        return Effect.succeed(datapoints.map((datapoint) => ({ datapoint, error: made.problem, scores: {}, evaluatorErrors: {} })))
      }
      const plan: RunPlan = {
        functionName: fn.name,
        fn,
        variant: made?.variant ?? bases.get(candidate.name)!,
        evaluators,
        source: { kind: "ids", ids: [] },
        concurrency: payload.maxConcurrency,
        inferenceCache: "on",
        cutoffs: {}
      }
      const context: ScoringContext = {
        plan,
        runId: task.id,
        tags: tags(iteration),
        inference: limited,
        caller: taskCaller(payload),
        now,
        extras: made === undefined ? undefined : { dynamicVariant: { variant: made.variant, templates: made.engine } }
      }
      return Effect.forEach(datapoints, (datapoint) =>
        Effect.map(scoreDatapoint(context, datapoint), (scored): Evaluation => {
          if (scored.feedback.length > 0) writeQueue.submit({ batch: { ...emptyBatch, feedback: scored.feedback } })
          const scores: Record<string, number | null> = {}
          for (const evaluator of evaluators) scores[evaluator.name] = numeric(scored.result.scores[evaluator.name])
          return { datapoint, output: scored.output, error: scored.result.error, scores: scores as DatapointScores, evaluatorErrors: scored.result.evaluatorErrors }
        }), { concurrency: payload.maxConcurrency }).pipe(Effect.provideContext(services))
    }

    return {
      evaluate,
      analyze: (candidate, evaluation, iteration) =>
        Effect.map(
          callBuiltin(gepaAnalyzeFunction, payload.analysisModel, analyzeInput({
            functionName: fn.name,
            functionType: fn.type,
            templates: candidate.templates,
            schemas,
            input: evaluation.datapoint.input,
            output: evaluation.output,
            error: evaluation.error,
            reference: evaluation.datapoint.output,
            scores: evaluation.scores,
            evaluatorErrors: evaluation.evaluatorErrors,
            optimize
          }), iteration),
          (answer) => "error" in answer ? answer : String((answer.parsed as { analysis?: unknown }).analysis ?? "")
        ),
      mutate: (parent, analyses, iteration) =>
        Effect.map(
          callBuiltin(gepaMutateFunction, payload.mutationModel, mutateInput({
            functionName: fn.name,
            functionType: fn.type,
            templates: parent.templates,
            schemas,
            analyses: analyses.map(({ evaluation, analysis }) => ({
              analysis,
              scores: evaluation.scores,
              ...(payload.includeInference && { input: evaluation.datapoint.input, output: evaluation.output })
            })),
            optimize
          }), iteration),
          (answer) => "error" in answer ? { problem: answer.error, modelFailed: true } : parseMutation(answer.parsed, parent.templates)
        ),
      check: (candidate, datapoints: ReadonlyArray<StoredDatapoint>) => {
        const made = compiled(candidate)
        if (made === undefined) return undefined
        if ("problem" in made) return made.problem
        return candidateProblem(fn, candidate, made.variant, made.engine, datapoints.map((datapoint) => datapoint.input as Input))
      },
      progress: (iteration, step) => progress(iteration, step),
      checkpoint: (state) => task.checkpoint(state)
    }
  })
