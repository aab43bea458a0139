/**
 * One datapoint of a run: its inference, then each evaluator's score (a judge's through its
 * own inference), and the scores as feedback rows. A failure of the inference or of an
 * evaluator is part of the result, never a failure of the run.
 */
import * as Effect from "effect/Effect"
import type { InferenceRequest } from "../api/inference.ts"
import type { EvaluatorConfig } from "../config/types.ts"
import type { StoredDatapoint } from "../datasets/store.ts"
import type { GatewayError } from "../errors.ts"
import { uuidv7, uuidv7Timestamp } from "../ids.ts"
import type { JsonOutput } from "../inference/output.ts"
import type { PrepareExtras } from "../inference/prepare.ts"
import type { InferenceResult } from "../inference/run.ts"
import type { InferenceService } from "../inference/service.ts"
import type { StoredFeedback } from "../analytics/records.ts"
import type { InferenceServices } from "../services.ts"
import { datapointInference } from "./datapoints.ts"
import { type Evaluated, judgeInput, type JudgeEvaluator, judgeScore, type Score, scoreOutput } from "./evaluators.ts"
import { datapointIdTag, evaluatorInferenceIdTag, evaluatorNameTag, judgedInferenceIdTag } from "./names.ts"
import type { RunPlan } from "./plan.ts"
import type { EvaluationResultRecord } from "./store.ts"
import type { Caller } from "../workspace.ts"

/** what scoring a datapoint needs besides the plan */
export interface ScoringContext {
  readonly plan: RunPlan
  readonly runId: string
  /** the run's tags (run id, dataset, evaluation) */
  readonly tags: Readonly<Record<string, string>>
  readonly inference: InferenceService["Service"]
  /** the caller's API key (public id), tagged on every inference */
  /** who the run's inferences are made for */
  readonly caller: Caller
  readonly now: () => number
  /** how the evaluated inference is prepared (GEPA: its candidate as a dynamic variant); judges are prepared plainly */
  readonly extras?: PrepareExtras | undefined
}

export interface ScoredDatapoint {
  readonly result: EvaluationResultRecord
  /** the scores to store, as feedback on the datapoint's inference */
  readonly feedback: ReadonlyArray<StoredFeedback>
  /** the inference's output, when it answered */
  readonly output?: unknown
}

type EvaluatorOutcome =
  | { readonly score: Score; readonly judgeInferenceId?: string | undefined }
  | { readonly error: string }

/** an inference run to its answer (prepared then run), or its error's message */
const infer = (
  context: ScoringContext,
  request: InferenceRequest,
  extras?: PrepareExtras
): Effect.Effect<InferenceResult | { readonly error: string }, never, InferenceServices> =>
  context.inference.prepare(request, context.caller, extras).pipe(
    Effect.flatMap((prepared) => context.inference.run(prepared)),
    Effect.catch((error: GatewayError) => Effect.succeed({ error: error.message }))
  )

const judge = (
  context: ScoringContext,
  evaluator: JudgeEvaluator,
  evaluated: Evaluated,
  inferenceId: string,
  tags: Readonly<Record<string, string>>
): Effect.Effect<EvaluatorOutcome, never, InferenceServices> => {
  const input = judgeInput(evaluator, evaluated)
  if (input === undefined) return Effect.succeed({ score: null })
  const request = {
    function_name: evaluator.judgeFunctionName,
    input,
    tags: { ...tags, [evaluatorNameTag]: evaluator.name, [judgedInferenceIdTag]: inferenceId },
    cache_options: { enabled: context.plan.inferenceCache }
  } as InferenceRequest
  return Effect.map(infer(context, request), (answer) => {
    if ("error" in answer) return { error: `the judge failed: ${answer.error}` }
    const score = judgeScore(evaluator, answer.output as JsonOutput)
    return score !== null && typeof score === "object"
      ? { error: score.problem }
      : { score, judgeInferenceId: answer.prepared.inferenceId }
  })
}

const evaluate = (
  context: ScoringContext,
  evaluator: EvaluatorConfig,
  evaluated: Evaluated,
  inferenceId: string,
  tags: Readonly<Record<string, string>>
): Effect.Effect<EvaluatorOutcome, never, InferenceServices> => {
  if (evaluator.type === "llm_judge") return judge(context, evaluator, evaluated, inferenceId, tags)
  try {
    return Effect.succeed({ score: scoreOutput(evaluator, evaluated) })
  } catch (error) {
    return Effect.succeed({ error: `evaluator "${evaluator.name}" failed: ${(error as Error).message}` })
  }
}

const feedbackOf = (
  context: ScoringContext,
  evaluator: EvaluatorConfig,
  score: boolean | number,
  inferenceId: string,
  tags: Readonly<Record<string, string>>,
  judgeInferenceId: string | undefined
): StoredFeedback => {
  const id = uuidv7(context.now())
  return {
    id,
    workspace: context.caller.workspace,
    kind: evaluator.outputType === "boolean" ? "boolean" : "float",
    metricName: evaluator.metricName,
    targetType: "inference",
    targetId: inferenceId,
    value: evaluator.outputType === "boolean" ? score : Number(score),
    tags: {
      ...tags,
      [evaluatorNameTag]: evaluator.name,
      ...(judgeInferenceId === undefined ? {} : { [evaluatorInferenceIdTag]: judgeInferenceId })
    },
    timestamp: uuidv7Timestamp(id)
  }
}

/** runs `datapoint` and scores its output with every evaluator of the plan (judges concurrently) */
export const scoreDatapoint = (
  context: ScoringContext,
  datapoint: StoredDatapoint
): Effect.Effect<ScoredDatapoint, never, InferenceServices> =>
  Effect.gen(function*() {
    const tags = { ...context.tags, [datapointIdTag]: datapoint.id }
    const answer = yield* infer(context, datapointInference(context.plan, datapoint, tags), context.extras)
    if ("error" in answer) {
      return {
        result: { runId: context.runId, datapointId: datapoint.id, scores: {}, evaluatorErrors: {}, error: answer.error, timestamp: context.now() },
        feedback: []
      }
    }
    const inferenceId = answer.prepared.inferenceId
    const evaluated: Evaluated = {
      functionType: context.plan.fn.type,
      datapoint,
      output: answer.output,
      modelRequest: answer.modelRequest
    }
    const outcomes = yield* Effect.forEach(
      context.plan.evaluators,
      (evaluator) => evaluate(context, evaluator, evaluated, inferenceId, tags),
      { concurrency: "unbounded" }
    )
    const scores: Record<string, Score> = {}
    const evaluatorErrors: Record<string, string> = {}
    const feedback: Array<StoredFeedback> = []
    context.plan.evaluators.forEach((evaluator, index) => {
      const outcome = outcomes[index]
      if ("error" in outcome) {
        evaluatorErrors[evaluator.name] = outcome.error
        return
      }
      scores[evaluator.name] = outcome.score
      if (outcome.score !== null) feedback.push(feedbackOf(context, evaluator, outcome.score, inferenceId, tags, outcome.judgeInferenceId))
    })
    return {
      result: { runId: context.runId, datapointId: datapoint.id, inferenceId, scores, evaluatorErrors, timestamp: context.now() },
      feedback,
      output: answer.output
    }
  })
