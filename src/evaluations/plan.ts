/**
 * What an evaluation run request asks for, checked against the configuration before anything
 * runs: the function and its variant, the evaluators, where the datapoints come from, and the
 * run's settings. Pure: a `RunPlan`, or the 400/404 naming the field at fault.
 */
import * as Result from "effect/Result"
import { datasetNameProblem } from "../api/datasets.ts"
import { defaultConcurrency, type EvaluationRunRequest, type InferenceCacheMode, maxConcurrency } from "../api/evaluations.ts"
import type { EvaluatorConfig, FunctionConfig, GatewayConfig, VariantConfig } from "../config/types.ts"
import { InvalidRequest, NotFound } from "../errors.ts"
import { variantOrder } from "../inference/variantDraw.ts"
import { runnableEvaluatorsProblem } from "./evaluators.ts"

export interface RunPlan {
  readonly functionName: string
  readonly fn: FunctionConfig
  readonly variant: VariantConfig
  readonly evaluationName?: string | undefined
  readonly evaluators: ReadonlyArray<EvaluatorConfig>
  /** where the datapoints come from */
  readonly source:
    | { readonly kind: "dataset"; readonly datasetName: string }
    | { readonly kind: "ids"; readonly ids: ReadonlyArray<string> }
  readonly concurrency: number
  readonly maxDatapoints?: number | undefined
  readonly inferenceCache: InferenceCacheMode
  readonly cutoffs: Readonly<Record<string, number>>
  readonly precision?: Readonly<Record<string, number>> | undefined
}

const invalid = (message: string): Result.Result<never, InvalidRequest> => Result.fail(new InvalidRequest({ message }))

/** datapoint ids one run may name */
export const maxDatapointIds = 10_000

/** `numbers` names only chosen evaluators, each at most once */
const unknownEvaluatorIn = (
  numbers: Readonly<Record<string, number>> | undefined,
  chosen: ReadonlyArray<EvaluatorConfig>,
  field: string
): InvalidRequest | undefined => {
  for (const name of Object.keys(numbers ?? {})) {
    if (!chosen.some((evaluator) => evaluator.name === name)) {
      return new InvalidRequest({ message: `${field}.${name}: not one of the run's evaluators (${chosen.map((evaluator) => evaluator.name).join(", ")})` })
    }
  }
  return undefined
}

/**
 * `request` checked against `config`. Without `variant_name`, one variant is drawn by weight
 * (with `random`) for the whole run, so a run compares one variant against the dataset.
 */
export const planRun = (
  request: EvaluationRunRequest,
  config: GatewayConfig,
  random: () => number
): Result.Result<RunPlan, InvalidRequest | NotFound> =>
  Result.gen(function*() {
    // the function and the evaluators to choose from
    let functionName: string
    let available: ReadonlyMap<string, EvaluatorConfig>
    if (request.evaluation_name !== undefined) {
      const evaluation = config.evaluations.get(request.evaluation_name)
      if (evaluation === undefined) return yield* Result.fail(new NotFound({ message: `evaluation_name: unknown evaluation "${request.evaluation_name}"` }))
      if (request.function_name !== undefined && request.function_name !== evaluation.functionName) {
        return yield* invalid(`function_name: evaluation "${evaluation.name}" evaluates function "${evaluation.functionName}", not "${request.function_name}"`)
      }
      functionName = evaluation.functionName
      available = evaluation.evaluators
    } else {
      if (request.function_name === undefined) return yield* invalid("function_name or evaluation_name: one of them is required")
      const fn = config.functions.get(request.function_name)
      if (fn === undefined) return yield* Result.fail(new NotFound({ message: `function_name: unknown function "${request.function_name}"` }))
      functionName = request.function_name
      available = fn.evaluators
    }
    const fn = config.functions.get(functionName)
    if (fn === undefined) return yield* Result.fail(new NotFound({ message: `function_name: unknown function "${functionName}"` }))
    const owner = request.evaluation_name === undefined ? `function "${functionName}"` : `evaluation "${request.evaluation_name}"`

    let evaluators: Array<EvaluatorConfig>
    if (request.evaluator_names === undefined) {
      evaluators = [...available.values()]
      if (evaluators.length === 0) return yield* invalid(`evaluator_names: ${owner} has no evaluators`)
    } else {
      if (request.evaluator_names.length === 0) return yield* invalid("evaluator_names: name at least one evaluator")
      evaluators = []
      for (const [index, name] of request.evaluator_names.entries()) {
        const evaluator = available.get(name)
        if (evaluator === undefined) {
          return yield* Result.fail(new NotFound({
            message: `evaluator_names[${index}]: unknown evaluator "${name}" of ${owner}${
              available.size === 0 ? " (it has none)" : ` (it has: ${[...available.keys()].join(", ")})`
            }`
          }))
        }
        if (!evaluators.includes(evaluator)) evaluators.push(evaluator)
      }
    }
    const unrunnable = runnableEvaluatorsProblem(evaluators, "evaluator_names")
    if (unrunnable !== undefined) return yield* invalid(unrunnable)

    // the variant
    let variant: VariantConfig | undefined
    if (request.variant_name !== undefined) {
      variant = fn.variants.get(request.variant_name)
      if (variant === undefined) return yield* Result.fail(new NotFound({ message: `variant_name: unknown variant "${request.variant_name}" of function "${functionName}"` }))
    } else {
      const first = variantOrder(fn, random)[0]
      if (first === undefined) return yield* invalid(`variant_name: function "${functionName}" has no variant with a positive weight; name one`)
      variant = fn.variants.get(first)!
    }

    // the datapoints
    let source: RunPlan["source"]
    if ((request.dataset_name === undefined) === (request.datapoint_ids === undefined)) {
      return yield* invalid("dataset_name or datapoint_ids: give exactly one of them")
    }
    if (request.dataset_name !== undefined) {
      const problem = datasetNameProblem(request.dataset_name)
      if (problem !== undefined) return yield* invalid(problem)
      source = { kind: "dataset", datasetName: request.dataset_name }
    } else {
      const ids = request.datapoint_ids!
      if (ids.length === 0) return yield* invalid("datapoint_ids: name at least one datapoint")
      if (ids.length > maxDatapointIds) return yield* invalid(`datapoint_ids: at most ${maxDatapointIds} ids, got ${ids.length}`)
      source = { kind: "ids", ids: [...new Set(ids.map((id) => id.toLowerCase()))] }
    }

    const concurrency = request.concurrency ?? defaultConcurrency
    if (concurrency > maxConcurrency) return yield* invalid(`concurrency: at most ${maxConcurrency}, got ${concurrency}`)
    const unknownCutoff = unknownEvaluatorIn(request.cutoffs, evaluators, "cutoffs")
    if (unknownCutoff !== undefined) return yield* Result.fail(unknownCutoff)
    const unknownPrecision = unknownEvaluatorIn(request.adaptive_stopping_precision, evaluators, "adaptive_stopping_precision")
    if (unknownPrecision !== undefined) return yield* Result.fail(unknownPrecision)
    for (const [name, value] of Object.entries(request.adaptive_stopping_precision ?? {})) {
      if (!(value > 0)) return yield* invalid(`adaptive_stopping_precision.${name}: must be a positive number, got ${value}`)
    }

    // the configured cutoffs, overridden by the request's
    const cutoffs: Record<string, number> = {}
    for (const evaluator of evaluators) {
      const cutoff = request.cutoffs?.[evaluator.name] ?? evaluator.cutoff
      if (cutoff !== undefined) cutoffs[evaluator.name] = cutoff
    }

    return {
      functionName,
      fn,
      variant,
      evaluationName: request.evaluation_name,
      evaluators,
      source,
      concurrency,
      maxDatapoints: request.max_datapoints,
      inferenceCache: request.inference_cache ?? "on",
      cutoffs,
      precision: request.adaptive_stopping_precision
    }
  })
