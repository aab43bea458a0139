/**
 * Running a prepared inference: to its whole answer, or streamed as the answer's chunks then
 * how the stream ended. Either way the caller gets a `CompletedInference` once the answer is
 * whole, to store. The engine answers with these domain values only: each surface writes its
 * own wire format (`/inference`'s in src/native/, OpenAI's in src/openaiCompatible/).
 */
import type * as Arr from "effect/Array"
import * as Effect from "effect/Effect"
import * as Cause from "effect/Cause"
import * as Stream from "effect/Stream"
import type { Timeouts, VariantConfig } from "../config/types.ts"
import type { GatewayError } from "../errors.ts"
import { cutShortTag } from "../api/tags.ts"
import type { ProviderFailure } from "../providers/failure.ts"
import type { InferenceServices } from "../services.ts"
import { ChunkAccumulator } from "./chunks.ts"
import type { ModelCallOrigin } from "./modelCall.ts"
import type { PreparedInference } from "./prepare.ts"
import { countingProviderTime } from "./providerTime.ts"
import { withinStreamTotal } from "./timeouts.ts"
import { thoughtsMadeBy } from "./output.ts"
import type { FailedAttempt, FinishReason, ModelRequest, OutputBlock, ProviderChunk, ProviderStop, Usage } from "./types.ts"
import { addCosts, addUsage, type FunctionOutput, type ModelCallRecord } from "./variants/answer.ts"
import { type EngineDeps, tryVariants, type VariantFailure } from "./variants/loop.ts"
import { answerStreamed, answerWhole } from "./variants/runVariant.ts"

/** An inference whose answer is whole: what storage needs to know about it. */
export interface CompletedInference {
  readonly prepared: PreparedInference
  readonly variant: VariantConfig
  /** the request of the model call whose answer is the inference's */
  readonly modelRequest: ModelRequest
  readonly origin: ModelCallOrigin
  /** the variants that failed before this one answered */
  readonly failedVariants: ReadonlyArray<FailedAttempt<VariantFailure>>
  /** the blocks the provider answered, before validation */
  readonly providerOutput: ReadonlyArray<OutputBlock>
  /** that call's usage (the inference's is `totalUsage`) */
  readonly usage: Usage
  /** that call's cost by its provider's `cost` rules; undefined when it has none or they read nothing */
  readonly cost: number | undefined
  readonly finishReason?: FinishReason | undefined
  /** the provider's own stop reason, where its API says more (`ProviderStop`); not kept by the cache */
  readonly providerStop?: ProviderStop | undefined
  readonly rawRequest: string
  readonly rawResponse: string
  /** how the provider's stream was cut (`ChunkAccumulator.chunking`): for the cache to replay it so; only for a streamed answer the cache will keep */
  readonly streamChunking?: string | undefined
  /** the variant's other model calls (candidates, evaluator, embedding): model inferences of this inference too */
  readonly otherCalls: ReadonlyArray<ModelCallRecord>
  /** `original_response`: the raw response, or what the variant's type says (best-of-n: its evaluator's) */
  readonly originalResponse?: string | undefined
  /** the function's output, validated */
  readonly output: FunctionOutput
  readonly responseTimeMs: number
  readonly processingTimeMs: number
  readonly ttftMs?: number | undefined
}

export interface InferenceResult extends CompletedInference {
  /** milliseconds (fractional) the inference waited on providers: what the gateway's overhead leaves out */
  readonly providerMs: number
}

/** the inference's usage: every model call's */
export const totalUsage = (completed: CompletedInference): Usage =>
  completed.otherCalls.length === 0 ? completed.usage : addUsage([completed.usage, ...completed.otherCalls.map((call) => call.usage)])

/** the inference's cost: every model call's, unknown when one's is */
export const totalCost = (completed: CompletedInference): number | undefined =>
  completed.otherCalls.length === 0 ? completed.cost : addCosts([completed.cost, ...completed.otherCalls.map((call) => call.cost)])

/** characters of output in `blocks`, to estimate the tokens of a stream cut short */
const outputCharacters = (blocks: ReadonlyArray<OutputBlock>): number => {
  let characters = 0
  for (const block of blocks) {
    if (block.type === "text" || block.type === "thought") characters += block.text.length
    else if (block.type === "tool_call") characters += block.raw_name.length + block.raw_arguments.length
  }
  return characters
}

const totalLimit = (timeouts: Timeouts) => timeouts.non_streaming?.total_ms

export const runInference = (
  prepared: PreparedInference,
  engine: EngineDeps
): Effect.Effect<InferenceResult, GatewayError, InferenceServices> =>
  countingProviderTime(engine, (engine, providerTime) => Effect.map(
    tryVariants(prepared, engine, totalLimit, (variant) => answerWhole(prepared, engine, variant)),
    ([answer, variant, failedVariants]) => {
      const { call } = answer
      const response = call.response
      return {
        prepared,
        variant,
        modelRequest: answer.request,
        origin: call,
        failedVariants,
        providerOutput: response.output,
        usage: response.usage,
        cost: response.cost,
        finishReason: response.finishReason,
        providerStop: response.providerStop,
        rawRequest: response.rawRequest,
        rawResponse: response.rawResponse,
        otherCalls: answer.otherCalls,
        originalResponse: answer.originalResponse,
        output: answer.output,
        responseTimeMs: call.responseTimeMs,
        processingTimeMs: engine.now() - prepared.startedAt,
        providerMs: providerTime.ms()
      }
    }
  ))

/** How a streamed inference ended: whole (the provider's stream ended normally), or cut short by a failure after it started. */
export type StreamEnd =
  | { readonly _tag: "Completed"; readonly completed: CompletedInference }
  | { readonly _tag: "Failed"; readonly failure: ProviderFailure }

/**
 * What a streamed inference yields, in order: the answer's chunks (as the variant reshapes
 * them; a chunk may carry no content), then its end. Each pull brings what one read of the
 * provider brought (src/streams.ts), the end with the chunks held back until then.
 */
export type StreamItem = ProviderChunk | StreamEnd

export interface InferenceStream {
  readonly variant: VariantConfig
  /** the model call whose stream this is */
  readonly origin: ModelCallOrigin
  /** the model calls the variant made before its stream started (candidates, an embedding) */
  readonly otherCalls: ReadonlyArray<ModelCallRecord>
  readonly items: Stream.Stream<StreamItem>
  /** milliseconds (fractional) the inference waited on providers until its stream started: what the gateway's overhead leaves out */
  readonly providerMs: number
}

/**
 * Starts a streamed inference. `onComplete` runs when the provider's stream ended normally
 * (not when it failed or the client went away), with the whole answer, before the stream
 * yields its end. `onCutShort` runs for a stream a provider answered that did not end so (the
 * client left, the provider failed) and that a budget or a cost limit charged, once they are
 * settled: with what was streamed, tagged `gateway::cut_short`, and the cost it was charged, so
 * that stored costs add up to what the budgets counted.
 */
export const streamInference = (
  prepared: PreparedInference,
  engine: EngineDeps,
  onComplete: (completed: CompletedInference) => void,
  onCutShort?: (completed: CompletedInference) => void
): Effect.Effect<InferenceStream, GatewayError, InferenceServices> =>
  countingProviderTime(engine, (engine, providerTime) => Effect.map(
    tryVariants(prepared, engine, (timeouts) => timeouts.streaming?.ttft_ms, (variant) => answerStreamed(prepared, engine, variant)),
    ([streamed, variant, failedVariants]) => {
      const { start, reshape, whole } = streamed
      const ttftMs = engine.now() - prepared.startedAt
      // the chunking is kept for a stream whose answer the cache will keep: one its provider streamed
      const accumulated = new ChunkAccumulator(prepared.cache.write && whole === undefined && !start.cached)
      /** the provider's stream ended normally (not cut short by the client or a failure) */
      let finished = false
      let streamedCost: number | undefined
      const completedWith = (cost: number | undefined): CompletedInference => {
        finished = true
        const providerOutput = whole?.call.response.output ?? thoughtsMadeBy(accumulated.output(), start.provider.type)
        return {
          prepared,
          variant,
          modelRequest: streamed.request,
          origin: start,
          failedVariants,
          providerOutput,
          usage: whole?.call.response.usage ?? accumulated.usage ?? { input_tokens: 0, output_tokens: 0 },
          cost,
          finishReason: accumulated.finishReason,
          providerStop: whole?.call.response.providerStop ?? accumulated.providerStop,
          rawRequest: start.rawRequest,
          rawResponse: whole?.call.response.rawResponse ?? accumulated.rawResponse(),
          streamChunking: accumulated.chunking(),
          otherCalls: streamed.otherCalls,
          output: streamed.outputOf(providerOutput),
          responseTimeMs: engine.now() - start.startedAt,
          processingTimeMs: engine.now() - prepared.startedAt,
          ttftMs
        }
      }
      /** the chunks one read brought, reshaped as the variant says, added to the answer */
      const take = (chunks: Arr.NonEmptyReadonlyArray<ProviderChunk>): Arr.NonEmptyReadonlyArray<ProviderChunk> => {
        if (reshape === undefined) {
          for (const chunk of chunks) accumulated.add(chunk)
          return chunks
        }
        const reshaped = chunks.map((chunk) => {
          const shaped = reshape.chunk(chunk)
          accumulated.add(shaped)
          return shaped
        })
        return reshaped as unknown as Arr.NonEmptyReadonlyArray<ProviderChunk>
      }
      const variantLimit = variant.timeouts.streaming?.total_ms
      const rest = withinStreamTotal(start.rest, variantLimit === undefined ? undefined : prepared.startedAt + variantLimit,
        `variant "${variant.name}" stream timed out after ${variantLimit} ms`)
      // the stream is one pull: the first chunks, then each read of the rest, then the end
      // (or the failure of a stream cut short)
      let phase: "first" | "rest" | "ended" = "first"
      type Pulled = Arr.NonEmptyReadonlyArray<StreamItem>
      const ending = (cause: ProviderFailure | Cause.Done): Effect.Effect<Pulled, Cause.Done> => {
        phase = "ended"
        if (!Cause.isDone(cause)) return Effect.succeed([{ _tag: "Failed", failure: cause }])
        // what the reshaper held back goes out before the end
        const held = reshape?.end()
        if (held !== undefined) accumulated.add(held)
        const finish = (cost: number | undefined): Pulled => {
          const completed = completedWith(cost)
          onComplete(completed)
          const end: StreamEnd = { _tag: "Completed", completed }
          return held === undefined ? [end] : [held, end]
        }
        // an answer whole before it was streamed has its cost; a cached one cost nothing; a streamed one is priced from its raw chunks
        if (whole !== undefined) return Effect.sync(() => finish(whole.call.response.cost))
        if (start.cached) return Effect.sync(() => finish(engine.pricing.cached(start.provider)))
        return Effect.map(engine.pricing.chunks(start.provider, accumulated.rawChunks()), (cost) => {
          streamedCost = cost
          return finish(cost)
        })
      }
      const fromRest: Effect.Effect<Pulled, Cause.Done> = Effect.matchEffect(rest, {
        onSuccess: (chunks) => Effect.succeed(take(chunks)),
        onFailure: ending
      })
      const pull = Effect.suspend((): Effect.Effect<Pulled, Cause.Done> => {
        if (phase === "rest") return fromRest
        if (phase === "ended") return Cause.done()
        phase = "rest"
        const first = start.first
        return first.length === 0 ? fromRest : Effect.succeed(take(first as Arr.NonEmptyReadonlyArray<ProviderChunk>))
      })
      /** the answer as far as it came, tagged as cut short, with the cost charged */
      const cutShortWith = (charged: number | undefined): CompletedInference => {
        const completed = completedWith(charged)
        const tags = { ...prepared.request.tags, [cutShortTag]: "true" }
        // never a cache entry: the answer is partial
        return { ...completed, prepared: { ...prepared, request: { ...prepared.request, tags }, cache: { ...prepared.cache, write: false } } }
      }
      // the connection is released, and the rate limits learn the usage the provider reported
      // or, cut short, at least what was borrowed; a cut-short stream is then stored
      const release = Effect.suspend(() => {
        if (start.settleLimits === undefined) return start.close
        const store = !finished && !start.cached ? onCutShort : undefined
        const settled = start.settleLimits({
          finished,
          usage: accumulated.usage,
          cost: streamedCost,
          streamedCharacters: finished && accumulated.usage !== undefined ? 0 : outputCharacters(accumulated.output())
        })
        // stored when a budget or a cost limit charged it: what they counted is then in the stored costs
        return Effect.andThen(
          start.close,
          Effect.forkDetach(store === undefined ? settled : Effect.map(settled, (charged) => {
            if (charged !== undefined) store(cutShortWith(charged))
          }))
        )
      })
      const items = Stream.ensuring(Stream.fromPull(Effect.succeed(pull)), release)
      return { variant, origin: start, otherCalls: streamed.otherCalls, items, providerMs: providerTime.ms() }
    }
  ))
