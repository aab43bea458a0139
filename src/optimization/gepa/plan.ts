/**
 * A GEPA request checked against the configuration before its task is queued: the function,
 * its evaluators (named, or an evaluation's), the datasets, the variants to start from, the two
 * models, and the numbers with their defaults. Pure: a `GepaPlan`, or the 400 naming the field.
 * The datasets' contents are checked by the service (they need the database).
 */
import { datasetNameProblem } from "../../api/datasets.ts"
import {
  defaultGepaBatchSize,
  defaultGepaConcurrency,
  defaultGepaDatapoints,
  type LaunchGepaRequest
} from "../../api/gepa.ts"
import * as Result from "effect/Result"
import type { ChatCompletionVariant, EvaluatorConfig, FunctionConfig, GatewayConfig } from "../../config/types.ts"
import { InvalidRequest } from "../../errors.ts"
import { runnableEvaluatorsProblem } from "../../evaluations/evaluators.ts"
import { shorthandProblem } from "../../providers/registry.ts"
import { enabledShorthand } from "../../config/models.ts"

/** where the training and validation datapoints come from */
export type GepaDatasets =
  | { readonly kind: "split"; readonly datasetName: string }
  | { readonly kind: "separate"; readonly trainDatasetName: string; readonly valDatasetName: string }

/** What a task carries (JSON): the request checked, with its defaults and the seed drawn when none was given. */
export interface GepaPayload {
  readonly functionName: string
  readonly evaluatorNames: ReadonlyArray<string>
  readonly evaluationName?: string | undefined
  readonly datasets: GepaDatasets
  readonly initialVariants: ReadonlyArray<string>
  readonly analysisModel: string
  readonly mutationModel: string
  readonly maxIterations: number
  readonly batchSize: number
  readonly seed: number
  readonly maxConcurrency: number
  readonly maxDatapoints: number
  readonly includeInference: boolean
  readonly variantPrefix: string
  /** the caller's public key id, tagged on every inference and charged its rate limits */
  readonly apiKey?: string | undefined
  /** the caller's workspace (undefined in a task queued before workspaces: `default`) */
  readonly workspace?: string | undefined
}

const invalid = (message: string): Result.Result<never, InvalidRequest> => Result.fail(new InvalidRequest({ message }))

/** a configured variant GEPA can start from: a chat_completion variant with at least one template */
export const optimizable = (variant: FunctionConfig["variants"] extends ReadonlyMap<string, infer V> ? V : never): variant is ChatCompletionVariant =>
  variant.type === "chat_completion" && variant.templates.size > 0

const knownModel = (config: GatewayConfig, name: string): boolean => config.models.has(name) || enabledShorthand(name, config.shorthands) !== undefined

const datasetName = (field: string, name: string): Result.Result<string, InvalidRequest> => {
  const problem = datasetNameProblem(name)
  return problem === undefined ? Result.succeed(name) : invalid(`${field}: ${problem.replace(/^dataset_name: /, "")}`)
}

const checkDatasets = (request: LaunchGepaRequest): Result.Result<GepaDatasets, InvalidRequest> =>
  Result.gen(function*() {
    const split = request.dataset_name !== undefined
    const separate = request.train_dataset_name !== undefined || request.val_dataset_name !== undefined
    if (split && separate) return yield* invalid("dataset_name: give dataset_name, or train_dataset_name with val_dataset_name, not both")
    if (split) return { kind: "split", datasetName: yield* datasetName("dataset_name", request.dataset_name!) } as const
    if (!separate) return yield* invalid("dataset_name: give dataset_name, or train_dataset_name with val_dataset_name")
    if (request.train_dataset_name === undefined) return yield* invalid("train_dataset_name: give it with val_dataset_name")
    if (request.val_dataset_name === undefined) return yield* invalid("val_dataset_name: give it with train_dataset_name")
    const train = yield* datasetName("train_dataset_name", request.train_dataset_name)
    const val = yield* datasetName("val_dataset_name", request.val_dataset_name)
    return { kind: "separate", trainDatasetName: train, valDatasetName: val } as const
  })

const checkEvaluators = (
  request: LaunchGepaRequest,
  config: GatewayConfig,
  fn: FunctionConfig
): Result.Result<{ readonly evaluators: ReadonlyArray<EvaluatorConfig>; readonly evaluationName?: string }, InvalidRequest> => {
  if ((request.evaluators === undefined) === (request.evaluation_name === undefined)) {
    return invalid("evaluators: give evaluators or evaluation_name, exactly one of the two")
  }
  if (request.evaluation_name !== undefined) {
    const evaluation = config.evaluations.get(request.evaluation_name)
    if (evaluation === undefined) return invalid(`evaluation_name: unknown evaluation "${request.evaluation_name.slice(0, 200)}"`)
    if (evaluation.functionName !== fn.name) {
      return invalid(`evaluation_name: evaluation "${evaluation.name}" evaluates function "${evaluation.functionName}", not "${fn.name}"`)
    }
    if (evaluation.evaluators.size === 0) return invalid(`evaluation_name: evaluation "${evaluation.name}" has no evaluators`)
    const unrunnable = runnableEvaluatorsProblem([...evaluation.evaluators.values()], "evaluation_name")
    if (unrunnable !== undefined) return invalid(unrunnable)
    return Result.succeed({ evaluators: [...evaluation.evaluators.values()], evaluationName: evaluation.name })
  }
  const names = request.evaluators!
  if (names.length === 0) return invalid("evaluators: name at least one evaluator of the function")
  const evaluators: Array<EvaluatorConfig> = []
  for (const [index, name] of names.entries()) {
    const evaluator = fn.evaluators.get(name)
    if (evaluator === undefined) {
      const known = [...fn.evaluators.keys()]
      return invalid(`evaluators[${index}]: function "${fn.name}" has no evaluator "${name.slice(0, 200)}"${known.length > 0 ? ` (it has ${known.join(", ")})` : ""}`)
    }
    if (!evaluators.includes(evaluator)) evaluators.push(evaluator)
  }
  const unrunnable = runnableEvaluatorsProblem(evaluators, "evaluators")
  return unrunnable === undefined ? Result.succeed({ evaluators }) : invalid(unrunnable)
}

const checkVariants = (request: LaunchGepaRequest, fn: FunctionConfig): Result.Result<ReadonlyArray<string>, InvalidRequest> => {
  if (request.initial_variants === undefined) {
    const names = [...fn.variants.values()].filter(optimizable).map((variant) => variant.name)
    return names.length > 0 ? Result.succeed(names) : invalid(`function_name: function "${fn.name}" has no chat_completion variant with a template to optimize`)
  }
  if (request.initial_variants.length === 0) return invalid("initial_variants: name at least one variant")
  for (const [index, name] of request.initial_variants.entries()) {
    const variant = fn.variants.get(name)
    if (variant === undefined) return invalid(`initial_variants[${index}]: function "${fn.name}" has no variant "${name.slice(0, 200)}"`)
    if (variant.type !== "chat_completion") {
      return invalid(`initial_variants[${index}]: variant "${name}" is of type ${variant.type}; GEPA optimizes the templates of chat_completion variants`)
    }
    if (variant.templates.size === 0) return invalid(`initial_variants[${index}]: variant "${name}" has no template to optimize`)
  }
  return Result.succeed([...new Set(request.initial_variants)])
}

const prefixPattern = /^[A-Za-z0-9_.-]{1,64}$/

/** `request` checked against `config`; `seed` is used when the request gives none, `defaultPrefix` likewise */
export const planGepa = (
  request: LaunchGepaRequest,
  config: GatewayConfig,
  seed: number,
  defaultPrefix: string
): Result.Result<GepaPayload, InvalidRequest> =>
  Result.gen(function*() {
    const fn = config.functions.get(request.function_name)
    if (fn === undefined || request.function_name.startsWith("gateway::")) {
      return yield* invalid(`function_name: unknown function "${request.function_name.slice(0, 200)}"`)
    }
    for (const field of ["analysis_model", "mutation_model"] as const) {
      if (!knownModel(config, request[field])) {
        return yield* invalid(`${field}: unknown model "${request[field].slice(0, 200)}": not in [models], and not a "<provider_type>::<model>" short-hand`)
      }
      const refused = shorthandProblem(request[field])
      if (refused !== undefined) return yield* invalid(`${field}: ${refused}`)
    }
    const datasets = yield* checkDatasets(request)
    const evaluators = yield* checkEvaluators(request, config, fn)
    const variants = yield* checkVariants(request, fn)
    const prefix = request.variant_prefix ?? defaultPrefix
    if (!prefixPattern.test(prefix)) return yield* invalid("variant_prefix: 1 to 64 letters, digits, '_', '.' or '-'")
    // new variants are named `<prefix>_<iteration>`: none may be a configured variant's name
    const taken = [...fn.variants.keys()].find((name) => name.startsWith(`${prefix}_`) && /^\d+$/.test(name.slice(prefix.length + 1)))
    if (taken !== undefined) return yield* invalid(`variant_prefix: new variants would be named like the configured variant "${taken}"; choose another prefix`)
    return {
      functionName: fn.name,
      evaluatorNames: evaluators.evaluators.map((evaluator) => evaluator.name),
      evaluationName: evaluators.evaluationName,
      datasets,
      initialVariants: variants,
      analysisModel: request.analysis_model,
      mutationModel: request.mutation_model,
      maxIterations: request.max_iterations,
      batchSize: request.batch_size ?? defaultGepaBatchSize,
      seed: request.seed ?? seed,
      maxConcurrency: request.max_concurrency ?? defaultGepaConcurrency,
      maxDatapoints: request.max_datapoints ?? defaultGepaDatapoints,
      includeInference: request.include_inference_for_mutation ?? true,
      variantPrefix: prefix
    }
  })

/**
 * What this configuration lacks to run a queued task's payload (its function, evaluators,
 * initial variants or models), or undefined when it has them all: a gateway that lacks one
 * declines the task, which another gateway's configuration may run.
 */
export const gepaUnrunnable = (config: GatewayConfig, payload: GepaPayload): string | undefined => {
  const fn = config.functions.get(payload.functionName)
  if (fn === undefined) return `function "${payload.functionName}" is not configured`
  if (payloadEvaluators(config, payload) === undefined) {
    return payload.evaluationName === undefined
      ? `function "${fn.name}" lacks one of the evaluators ${payload.evaluatorNames.map((name) => `"${name}"`).join(", ")}`
      : `evaluation "${payload.evaluationName}" or one of its evaluators ${payload.evaluatorNames.map((name) => `"${name}"`).join(", ")} is not configured`
  }
  for (const name of payload.initialVariants) {
    const variant = fn.variants.get(name)
    if (variant === undefined || variant.type !== "chat_completion") return `function "${fn.name}" has no chat_completion variant "${name}"`
  }
  for (const model of [payload.analysisModel, payload.mutationModel]) {
    if (!knownModel(config, model)) return `model "${model}" is not configured`
  }
  return undefined
}

/** the evaluators a payload names, from the function or its evaluation */
export const payloadEvaluators = (config: GatewayConfig, payload: GepaPayload): ReadonlyArray<EvaluatorConfig> | undefined => {
  const owner = payload.evaluationName === undefined ? config.functions.get(payload.functionName) : config.evaluations.get(payload.evaluationName)
  if (owner === undefined) return undefined
  const found = payload.evaluatorNames.map((name) => owner.evaluators.get(name))
  return found.every((evaluator) => evaluator !== undefined) ? (found as Array<EvaluatorConfig>) : undefined
}
