/**
 * The sampling variants: several candidates (variants of the same function) answer
 * concurrently, then one more model call makes the answer of them.
 *
 * - `experimental_best_of_n_sampling`: an evaluator is shown the candidates and picks one by
 *   its index; the chosen candidate's answer is the inference's. An evaluator that fails or
 *   answers something else than an index in range leaves the choice to chance among the
 *   candidates that answered.
 * - `experimental_mixture_of_n_sampling`: a fuser is shown the candidates and writes one answer
 *   in the function's format (its tools, its output schema); it can be streamed. A fuser that
 *   fails leaves a random candidate's answer.
 *
 * With a single candidate answering, it is the answer: there is nothing to judge. Every call
 * made (candidates, evaluator, fuser) is kept for storage.
 */
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import * as Random from "effect/Random"
import type { SamplingVariant, VariantConfig } from "../../config/types.ts"
import { AllProvidersFailed, InvalidRequest, RequestTimeout, worstKind } from "../../errors.ts"
import type { InferenceServices } from "../../services.ts"
import { renderInput } from "../input.ts"
import { callModel } from "../modelCall.ts"
import { buildModelRequest } from "../modelRequest.ts"
import type { CallRefused } from "../routing.ts"
import { totalLimit, within } from "../timeouts.ts"
import type { ChatOutputBlock, JsonOutput } from "../output.ts"
import { jsonRawText } from "../output.ts"
import type { PreparedInference } from "../prepare.ts"
import type { ModelRequest, RequestMessage } from "../types.ts"
import { callRecord, type FunctionOutput, type ModelCallRecord, type VariantAnswer } from "./answer.ts"
import { attemptVariant, type EngineDeps, isRefused, type VariantFailure } from "./loop.ts"

/** how a candidate is answered: as any variant of the function (`run.ts`) */
export type AnswerCandidate = (variant: VariantConfig) => Effect.Effect<VariantAnswer, VariantFailure | CallRefused, InferenceServices>

/** the candidates' answers, in the order written; fails only when none answered */
const runCandidates = (
  prepared: PreparedInference,
  variant: SamplingVariant,
  answer: AnswerCandidate
): Effect.Effect<ReadonlyArray<VariantAnswer>, AllProvidersFailed | CallRefused, InferenceServices> =>
  Effect.flatMap(
    Effect.forEach(variant.candidates, (name) => {
      const candidate = prepared.fn.variants.get(name)!
      const limited = within(
        attemptVariant(candidate, totalLimit, answer),
        variant.candidateTimeoutMs,
        () => new RequestTimeout({ message: `candidate "${name}" did not answer within ${variant.candidateTimeoutMs} ms` })
      )
      return Effect.result(limited)
    }, { concurrency: "unbounded" }),
    (results) => {
      const answers: Array<VariantAnswer> = []
      const failures: Array<{ readonly name: string; readonly failure: VariantFailure | CallRefused }> = []
      results.forEach((result, index) => {
        if (result._tag === "Success") answers.push(result.success)
        else failures.push({ name: variant.candidates[index], failure: result.failure })
      })
      if (answers.length > 0) return Effect.succeed<ReadonlyArray<VariantAnswer>>(answers)
      // the request's own fault (its input does not render) is the caller's to hear about
      const refused = failures.find(({ failure }) => isRefused(failure))
      if (refused !== undefined) return Effect.fail<AllProvidersFailed | CallRefused>(refused.failure as CallRefused)
      return Effect.fail(
        new AllProvidersFailed({
          message: `every candidate of variant "${variant.name}" failed: ${failures.map(({ name, failure }) => `candidate "${name}": ${failure.message}`).join("; ")}`,
          kind: worstKind(failures.map(({ failure }) => failure instanceof RequestTimeout ? "timeout" : (failure as AllProvidersFailed).kind))
        })
      )
    }
  )

/** the judge (evaluator, fuser) as a variant of its own, for its retries and time limit */
export const judgeVariant = (variant: SamplingVariant): VariantConfig => ({ ...variant.judge, type: "chat_completion", weight: 0 })

/** a judge that fails leaves a random candidate's answer; a refused call (rate limit, unavailable) still ends the inference */
export const unlessRefused = <A>(
  failure: VariantFailure | CallRefused,
  otherwise: () => Effect.Effect<A, VariantFailure | CallRefused, InferenceServices>
): Effect.Effect<A, VariantFailure | CallRefused, InferenceServices> =>
  isRefused(failure) && !(failure instanceof InvalidRequest) ? Effect.fail(failure) : otherwise()

/** a candidate's answer as the evaluator or fuser reads it */
export const candidateText = (output: FunctionOutput): string => {
  if (!Array.isArray(output)) return (output as JsonOutput).raw
  return (output as ReadonlyArray<ChatOutputBlock>).map((block) => {
    switch (block.type) {
      case "text":
        return block.text
      case "tool_call":
        return `[tool call ${block.raw_name}: ${block.raw_arguments}]`
      case "thought":
      case "unknown":
        return ""
    }
  }).filter((text) => text !== "").join("\n")
}

const candidatesMessage = (answers: ReadonlyArray<VariantAnswer>, closing: string): RequestMessage => ({
  role: "user",
  content: [{
    type: "text",
    text: `Here are the candidate answers, each after its index:\n\n${
      answers.map((answer, index) => `--- candidate ${index} ---\n${candidateText(answer.output)}`).join("\n\n")
    }\n\n--- end of candidates ---\n\n${closing}`
  }]
})

const evaluatorInstructions = (count: number) =>
  `You are an evaluator. Several assistants answered the conversation that follows; you will be shown their answers. ` +
  `Judge which one answers best (correct, complete, following every instruction of the conversation). ` +
  `Answer with a JSON object: "thinking", your reasoning as a string, and "answer_choice", the index of the best candidate ` +
  `(an integer from 0 to ${count - 1}).`

const fuserInstructions =
  "You are a fuser. Several assistants answered the conversation that follows; you will be shown their answers. " +
  "Combine them into one answer that is better than each: keep what is correct, drop what is wrong, resolve disagreements. " +
  "Answer the conversation directly, in the format it asks for, without mentioning the candidates."

const withInstructions = (system: string | undefined, instructions: string) =>
  system === undefined || system === "" ? instructions : `${system}\n\n${instructions}`

/** the judge's view of the conversation: the input rendered with its own templates */
const renderForJudge = (prepared: PreparedInference, engine: EngineDeps, variant: SamplingVariant) => {
  const rendered = renderInput(prepared.request.input, prepared.fn, variant.judge, engine.templates)
  return Result.isFailure(rendered)
    ? Effect.fail(new InvalidRequest({ message: `${rendered.failure.path}: ${rendered.failure.message}` }))
    : Effect.succeed(rendered.success)
}

const choiceSchema = (count: number) => ({
  type: "object",
  properties: { thinking: { type: "string" }, answer_choice: { type: "integer", minimum: 0, maximum: count - 1 } },
  required: ["thinking", "answer_choice"],
  additionalProperties: false
})

/** the evaluator's pick: an index in range, or undefined for anything else */
export const evaluatorChoice = (raw: string, count: number): number | undefined => {
  try {
    const answer = JSON.parse(raw) as { answer_choice?: unknown }
    const choice = answer?.answer_choice
    return typeof choice === "number" && Number.isInteger(choice) && choice >= 0 && choice < count ? choice : undefined
  } catch {
    return undefined
  }
}

/** the answer made of `chosen`: its call is the inference's, every other call kept */
const answerWith = (
  answers: ReadonlyArray<VariantAnswer>,
  chosen: number,
  judge: ModelCallRecord | undefined,
  originalResponse: string
): VariantAnswer => {
  const pick = answers[chosen]
  const otherCalls: Array<ModelCallRecord> = []
  answers.forEach((answer, index) => {
    if (index !== chosen) otherCalls.push(callRecord(answer.call, answer.request))
    otherCalls.push(...answer.otherCalls)
  })
  if (judge !== undefined) otherCalls.push(judge)
  return { ...pick, otherCalls, originalResponse }
}

const randomPick = (answers: ReadonlyArray<VariantAnswer>, judge: ModelCallRecord | undefined) =>
  Effect.map(Random.nextIntBetween(0, answers.length, { halfOpen: true }), (index) =>
    answerWith(answers, index, judge, judge?.rawResponse ?? answers[index].originalResponse))

/** Best-of-n, whole. */
export const bestOfN = (
  prepared: PreparedInference,
  engine: EngineDeps,
  variant: SamplingVariant,
  answer: AnswerCandidate
): Effect.Effect<VariantAnswer, VariantFailure | CallRefused, InferenceServices> =>
  Effect.flatMap(runCandidates(prepared, variant, answer), (answers) => {
    if (answers.length === 1) return Effect.succeed(answerWith(answers, 0, undefined, answers[0].originalResponse))
    return Effect.flatMap(renderForJudge(prepared, engine, variant), (rendered) => {
      const judge = variant.judge
      const request: ModelRequest = {
        system: withInstructions(rendered.system, evaluatorInstructions(answers.length)),
        messages: [...rendered.messages, candidatesMessage(answers, "Which candidate is best? Answer with the JSON object.")],
        params: judge.params,
        functionType: "json",
        jsonMode: judge.jsonMode,
        outputSchema: choiceSchema(answers.length),
        providerTools: []
      }
      const evaluate = attemptVariant(judgeVariant(variant), totalLimit, () => callModel(prepared, engine, judge, request))
      return Effect.matchEffect(evaluate, {
        onFailure: (failure) => unlessRefused(failure, () => randomPick(answers, undefined)),
        onSuccess: (call) => {
          const record = callRecord(call, request)
          const choice = evaluatorChoice(jsonRawText(call.response.output), answers.length)
          return choice === undefined ? randomPick(answers, record) : Effect.succeed(answerWith(answers, choice, record, record.rawResponse))
        }
      })
    })
  })

/** What mixture-of-n asks its fuser, once its candidates answered (several of them). */
export const fuserRequest = (
  prepared: PreparedInference,
  engine: EngineDeps,
  variant: SamplingVariant,
  answers: ReadonlyArray<VariantAnswer>
): Effect.Effect<ModelRequest, InvalidRequest> =>
  Effect.map(renderForJudge(prepared, engine, variant), (rendered) =>
    buildModelRequest(prepared, variant.judge, {
      system: withInstructions(rendered.system, fuserInstructions),
      messages: [...rendered.messages, candidatesMessage(answers, "Write the combined answer now.")]
    }))

/** every call of the candidates, for a fused answer */
export const candidateRecords = (answers: ReadonlyArray<VariantAnswer>): ReadonlyArray<ModelCallRecord> =>
  answers.flatMap((answer) => [callRecord(answer.call, answer.request), ...answer.otherCalls])

export { randomPick, runCandidates }
