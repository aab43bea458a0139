/**
 * Running one variant by its type, whole or streamed: what an attempt of the variant loop
 * (`loop.ts`) does. A chat_completion variant renders the input with its templates and calls
 * its model; the other types build on that (`chainOfThought.ts`, `dicl.ts`, `candidates.ts`).
 */
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import type { ModelCallConfig, SamplingVariant, VariantConfig } from "../../config/types.ts"
import { InvalidRequest } from "../../errors.ts"
import type { InferenceServices } from "../../services.ts"
import { outputToChunks } from "../chunks.ts"
import { renderInput } from "../input.ts"
import { answersWithRespondTool, respondToolAsText } from "../output.ts"
import { callModel, type ModelStreamStart, startModelStream } from "../modelCall.ts"
import { buildModelRequest } from "../modelRequest.ts"
import type { CallRefused } from "../routing.ts"
import { firstTokenLimit, totalLimit } from "../timeouts.ts"
import type { PreparedInference } from "../prepare.ts"
import type { ModelRequest, OutputBlock, RequestMessage } from "../types.ts"
import {
  blocksOfOutput,
  type ChunkReshaper,
  type FunctionOutput,
  functionOutput,
  type ModelCallRecord,
  respondAsTextReshaper,
  type VariantAnswer,
  type VariantStream
} from "./answer.ts"
import { chainOfThoughtOutput, chainOfThoughtRequest, thinkingReshaper } from "./chainOfThought.ts"
import { type DiclContext, diclContext, diclDefaultInstructions } from "./dicl.ts"
import { attemptVariant, type EngineDeps, type VariantFailure } from "./loop.ts"
import { bestOfN, candidateRecords, fuserRequest, judgeVariant, randomPick, runCandidates, unlessRefused } from "./candidates.ts"

type Failure = VariantFailure | CallRefused

const noCalls: ReadonlyArray<ModelCallRecord> = []
const same = (request: ModelRequest) => request

/** How a single-call variant shapes its model call and reads its answer. */
interface CallShape {
  /** the messages in place of the input rendered with the variant's templates (DICL's examples and input) */
  readonly messages?: ReadonlyArray<RequestMessage> | undefined
  /** with `messages`: the system prompt when the variant configures none */
  readonly defaultSystem?: string | undefined
  readonly adjust: (request: ModelRequest) => ModelRequest
  readonly outputOf: (prepared: PreparedInference, blocks: ReadonlyArray<OutputBlock>) => FunctionOutput
  /** calls made to prepare this one (DICL's embedding) */
  readonly otherCalls: ReadonlyArray<ModelCallRecord>
}

const plain: CallShape = { adjust: same, outputOf: functionOutput, otherCalls: noCalls }
const diclShape = (context: DiclContext): CallShape => ({
  ...plain,
  messages: context.messages,
  defaultSystem: diclDefaultInstructions,
  otherCalls: context.calls
})
const thoughtful: CallShape = { adjust: chainOfThoughtRequest, outputOf: chainOfThoughtOutput, otherCalls: noCalls }

/** a system template that takes no arguments (DICL's `system_instructions`), rendered; `fallback` without one */
const fixedSystem = (engine: EngineDeps, variant: ModelCallConfig, fallback: string | undefined): Result.Result<string | undefined, InvalidRequest> => {
  const key = variant.templates.get("system")
  if (key === undefined) return Result.succeed(fallback)
  const rendered = engine.templates.render(key, {})
  return "error" in rendered
    ? Result.fail(new InvalidRequest({ message: `variant "${variant.name}": its system instructions failed to render: ${rendered.error}` }))
    : Result.succeed(rendered.text)
}

/** the model request of a single-call variant: the input rendered with its templates, shaped */
const requestFor = (
  prepared: PreparedInference,
  engine: EngineDeps,
  variant: ModelCallConfig,
  shape: CallShape
): Result.Result<ModelRequest, InvalidRequest> => {
  if (shape.messages !== undefined) {
    const { messages } = shape
    return Result.map(fixedSystem(engine, variant, shape.defaultSystem), (system) => shape.adjust(buildModelRequest(prepared, variant, { system, messages })))
  }
  const rendered = renderInput(prepared.request.input, prepared.fn, variant, engine.templates)
  return Result.match(rendered, {
    onFailure: ({ path, message }) => Result.fail(new InvalidRequest({ message: `${path}: ${message}` })),
    onSuccess: (input) => Result.succeed(shape.adjust(buildModelRequest(prepared, variant, input)))
  })
}

const callWhole = (
  prepared: PreparedInference,
  engine: EngineDeps,
  variant: ModelCallConfig,
  shape: CallShape
): Effect.Effect<VariantAnswer, Failure, InferenceServices> => {
  const made = requestFor(prepared, engine, variant, shape)
  if (Result.isFailure(made)) return Effect.fail(made.failure)
  const request = made.success
  return Effect.map(callModel(prepared, engine, variant, request), (call) => ({
    call,
    request,
    output: shape.outputOf(prepared, respondToolAsText(request, call.response.output)),
    otherCalls: shape.otherCalls,
    originalResponse: call.response.rawResponse
  }))
}

const callStreamed = (
  prepared: PreparedInference,
  engine: EngineDeps,
  variant: ModelCallConfig,
  shape: CallShape,
  reshape?: ChunkReshaper
): Effect.Effect<VariantStream, Failure, InferenceServices> => {
  const made = requestFor(prepared, engine, variant, shape)
  if (Result.isFailure(made)) return Effect.fail(made.failure)
  const request = made.success
  // a chat function answering through the respond tool streams its arguments as text
  const asText = prepared.fn.type === "chat" && answersWithRespondTool(request)
  return Effect.map(startModelStream(prepared, engine, variant, request), (start) => ({
    start,
    request,
    otherCalls: shape.otherCalls,
    outputOf: (blocks) => shape.outputOf(prepared, respondToolAsText(request, blocks)),
    reshape: reshape ?? (asText ? respondAsTextReshaper() : undefined)
  }))
}

/** A variant's whole answer. */
export const answerWhole = (
  prepared: PreparedInference,
  engine: EngineDeps,
  variant: VariantConfig
): Effect.Effect<VariantAnswer, Failure, InferenceServices> => {
  switch (variant.type) {
    case "chat_completion":
      return callWhole(prepared, engine, variant, plain)
    case "experimental_chain_of_thought":
      return callWhole(prepared, engine, variant, thoughtful)
    case "experimental_dynamic_in_context_learning":
      return Effect.flatMap(diclContext(prepared, variant, engine.dicl), (context) =>
        callWhole(prepared, engine, variant, diclShape(context)))
    case "experimental_best_of_n_sampling":
      return bestOfN(prepared, engine, variant, (candidate) => answerWhole(prepared, engine, candidate))
    case "experimental_mixture_of_n_sampling":
      return mixtureOfN(prepared, engine, variant)
  }
}

const mixtureOfN = (
  prepared: PreparedInference,
  engine: EngineDeps,
  variant: SamplingVariant
): Effect.Effect<VariantAnswer, Failure, InferenceServices> =>
  Effect.flatMap(runCandidates(prepared, variant, (candidate) => answerWhole(prepared, engine, candidate)), (answers) => {
    if (answers.length === 1) return randomPick(answers, undefined)
    return Effect.flatMap(fuserRequest(prepared, engine, variant, answers), (request) =>
      Effect.matchEffect(attemptVariant(judgeVariant(variant), totalLimit, () => callModel(prepared, engine, variant.judge, request)), {
        onFailure: (failure) => unlessRefused(failure, () => randomPick(answers, undefined)),
        onSuccess: (call) =>
          Effect.succeed({
            call,
            request,
            output: functionOutput(prepared, call.response.output),
            otherCalls: candidateRecords(answers),
            originalResponse: call.response.rawResponse
          })
      }))
  })

/** An answer already whole, sent as a stream of one piece. */
const replayed = (answer: VariantAnswer): Effect.Effect<VariantStream> =>
  Effect.clockWith((clock) => {
    const { call } = answer
    const start: ModelStreamStart = {
      modelInferenceId: call.modelInferenceId,
      modelName: call.modelName,
      providerName: call.providerName,
      provider: call.provider,
      apiType: call.apiType,
      call: call.call,
      failedProviders: call.failedProviders,
      cached: call.cached,
      rawRequest: call.response.rawRequest,
      first: outputToChunks(blocksOfOutput(answer.output), call.response.usage, call.response.finishReason),
      rest: Cause.done(),
      close: Effect.void,
      startedAt: clock.currentTimeMillisUnsafe(),
      settleLimits: undefined
    }
    return Effect.succeed({ start, request: answer.request, otherCalls: answer.otherCalls, outputOf: () => answer.output, whole: answer })
  })

/** A variant's answer as a stream: best-of-n's is whole first; mixture-of-n streams its fuser. */
export const answerStreamed = (
  prepared: PreparedInference,
  engine: EngineDeps,
  variant: VariantConfig
): Effect.Effect<VariantStream, Failure, InferenceServices> => {
  switch (variant.type) {
    case "chat_completion":
      return callStreamed(prepared, engine, variant, plain)
    case "experimental_chain_of_thought":
      return callStreamed(prepared, engine, variant, thoughtful, prepared.fn.type === "chat" ? thinkingReshaper() : undefined)
    case "experimental_dynamic_in_context_learning":
      return Effect.flatMap(diclContext(prepared, variant, engine.dicl), (context) =>
        callStreamed(prepared, engine, variant, diclShape(context)))
    case "experimental_best_of_n_sampling":
      return Effect.flatMap(answerWhole(prepared, engine, variant), replayed)
    case "experimental_mixture_of_n_sampling":
      return Effect.flatMap(runCandidates(prepared, variant, (candidate) => answerWhole(prepared, engine, candidate)), (answers) => {
        if (answers.length === 1) return Effect.flatMap(randomPick(answers, undefined), replayed)
        return Effect.flatMap(fuserRequest(prepared, engine, variant, answers), (request) =>
          Effect.matchEffect(
            attemptVariant(judgeVariant(variant), firstTokenLimit, () => startModelStream(prepared, engine, variant.judge, request)),
            {
              onFailure: (failure) => unlessRefused(failure, () => Effect.flatMap(randomPick(answers, undefined), replayed)),
              onSuccess: (start) =>
                Effect.succeed({
                  start,
                  request,
                  otherCalls: candidateRecords(answers),
                  outputOf: (blocks: ReadonlyArray<OutputBlock>) => functionOutput(prepared, blocks)
                })
            }
          ))
      })
  }
}
