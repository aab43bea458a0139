/**
 * Running a prepared inference: non-streaming (one JSON body) or streaming (Server-Sent
 * Events, one JSON chunk per event, then `[DONE]`). Either way the caller gets a
 * `CompletedInference` once the answer is whole, to store.
 */
import * as Effect from "effect/Effect"
import * as Cause from "effect/Cause"
import * as Stream from "effect/Stream"
import type { Timeouts, VariantConfig } from "../config/types.ts"
import type { GatewayError } from "../errors.ts"
import type { ProviderFailure } from "../providers/failure.ts"
import type { InferenceServices } from "../services.ts"
import { ChunkAccumulator } from "./chunks.ts"
import type { ModelCallOrigin } from "./modelCall.ts"
import type { PreparedInference } from "./prepare.ts"
import { countingProviderTime } from "./providerTime.ts"
import { withinStreamTotal } from "./timeouts.ts"
import type { ChunkDelta, FailedAttempt, FinishReason, ModelRequest, OutputBlock, ProviderChunk, Usage } from "./types.ts"
import { addCosts, addUsage, type FunctionOutput, type ModelCallRecord } from "./variants/answer.ts"
import { type Engine, tryVariants, type VariantFailure } from "./variants/loop.ts"
import { answerStreamed, answerWhole } from "./variants/run.ts"

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
  readonly rawRequest: string
  readonly rawResponse: string
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
  /** the response body (spec 2.3) */
  readonly body: Record<string, unknown>
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

/**
 * `/inference`'s `usage`: the tokens, the prompt-cache reads when the provider reported them,
 * and `cost` (the sum over the inference's model calls) when its providers have `cost` rules
 * and they read something; absent otherwise, as unknown is not free.
 */
export const inferenceUsage = (usage: Usage, cost: number | undefined): Record<string, number> => ({
  input_tokens: usage.input_tokens,
  output_tokens: usage.output_tokens,
  ...(usage.cached_input_tokens === undefined ? {} : { cached_input_tokens: usage.cached_input_tokens }),
  ...(cost === undefined ? {} : { cost })
})

const totalLimit = (timeouts: Timeouts) => timeouts.non_streaming?.total_ms

export const runInference = (
  prepared: PreparedInference,
  engine: Engine
): Effect.Effect<InferenceResult, GatewayError, InferenceServices> =>
  countingProviderTime(engine, (engine, providerTime) => Effect.map(
    tryVariants(prepared, engine, totalLimit, (variant) => answerWhole(prepared, engine, variant)),
    ([answer, variant, failedVariants]) => {
      const { call } = answer
      const response = call.response
      const output = answer.output
      const completed: CompletedInference = {
        prepared,
        variant,
        modelRequest: answer.request,
        origin: call,
        failedVariants,
        providerOutput: response.output,
        usage: response.usage,
        cost: response.cost,
        finishReason: response.finishReason,
        rawRequest: response.rawRequest,
        rawResponse: response.rawResponse,
        otherCalls: answer.otherCalls,
        originalResponse: answer.originalResponse,
        output,
        responseTimeMs: call.responseTimeMs,
        processingTimeMs: engine.now() - prepared.startedAt
      }
      const body: Record<string, unknown> = {
        inference_id: prepared.inferenceId,
        episode_id: prepared.episodeId,
        variant_name: variant.name
      }
      if (prepared.fn.type === "chat") body.content = output
      else body.output = output
      body.usage = inferenceUsage(totalUsage(completed), totalCost(completed))
      if (response.finishReason !== undefined) body.finish_reason = response.finishReason
      if (prepared.request.include_original_response === true) body.original_response = answer.originalResponse
      return { ...completed, body, providerMs: providerTime.ms() }
    }
  ))

/** what one pull of a streamed response sends, as one write */
type Batch = readonly [Uint8Array]

const textEncoder = new TextEncoder()
const utf8 = (text: string): Uint8Array => textEncoder.encode(text)

export interface InferenceStream {
  readonly variant: VariantConfig
  /** the Server-Sent Events body, ready to send */
  readonly events: Stream.Stream<Uint8Array>
  /** milliseconds (fractional) the inference waited on providers until its stream started: what the gateway's overhead leaves out */
  readonly providerMs: number
}

/**
 * How one API surface writes a streamed inference as Server-Sent Events, as text: the events
 * of what one read of the provider brought are sent together, encoded once.
 */
export interface StreamEncoder {
  /** the event for a chunk with content, or undefined when it carries nothing to send */
  readonly chunk: (content: ReadonlyArray<ChunkDelta>) => string | undefined
  /** the events that end a stream that finished normally */
  readonly end: (completed: CompletedInference) => string
  /** the last event of a stream that failed after it started (the status line is sent already) */
  readonly failure: (message: string) => string
}

export const sseEvent = (json: string): string => `data: ${json}\n\n`
export const sseDone = "data: [DONE]\n\n"

/** The text a json function streams: its text deltas, or its tool call's argument deltas (json_mode `tool`). */
export const jsonDelta = (content: ReadonlyArray<ChunkDelta>): string => {
  let raw = ""
  for (const delta of content) {
    if (delta.type === "text") raw += delta.text
    else if (delta.type === "tool_call") raw += delta.raw_arguments
  }
  return raw
}

/** `/inference`'s events: `{inference_id, episode_id, variant_name, content | raw}`, then usage and finish reason, then `[DONE]`. */
export const inferenceStreamEncoder = (prepared: PreparedInference, variant: VariantConfig): StreamEncoder => {
  const head = `"inference_id":"${prepared.inferenceId}","episode_id":"${prepared.episodeId}","variant_name":${JSON.stringify(variant.name)}`
  const isChat = prepared.fn.type === "chat"
  return {
    chunk: (content) => {
      if (isChat) return sseEvent(`{${head},"content":${JSON.stringify(content)}}`)
      const raw = jsonDelta(content)
      return raw === "" ? undefined : sseEvent(`{${head},"raw":${JSON.stringify(raw)}}`)
    },
    end: (completed) => {
      const final: Record<string, unknown> = { usage: inferenceUsage(totalUsage(completed), totalCost(completed)) }
      if (completed.finishReason !== undefined) final.finish_reason = completed.finishReason
      const fields = JSON.stringify(final).slice(1)
      return sseEvent(isChat ? `{${head},"content":[],${fields}` : `{${head},"raw":"",${fields}`) + sseDone
    },
    failure: (message) => sseEvent(JSON.stringify({ error: message }))
  }
}

/**
 * Starts a streamed inference, written as `makeEncoder` says. `onComplete` runs when the
 * provider's stream ended normally (not when it failed or the client went away), with the
 * whole answer.
 */
export const streamInference = (
  prepared: PreparedInference,
  engine: Engine,
  onComplete: (completed: CompletedInference) => void,
  makeEncoder: (variant: VariantConfig) => StreamEncoder = (variant) => inferenceStreamEncoder(prepared, variant)
): Effect.Effect<InferenceStream, GatewayError, InferenceServices> =>
  countingProviderTime(engine, (engine, providerTime) => Effect.map(
    tryVariants(prepared, engine, (timeouts) => timeouts.streaming?.ttft_ms, (variant) => answerStreamed(prepared, engine, variant)),
    ([streamed, variant, failedVariants]) => {
      const { start, reshape, whole } = streamed
      const encode = makeEncoder(variant)
      const ttftMs = engine.now() - prepared.startedAt
      const accumulated = new ChunkAccumulator()
      /** the provider's stream ended normally (not cut short by the client or a failure) */
      let finished = false
      let streamedCost: number | undefined
      const completedWith = (cost: number | undefined): CompletedInference => {
        finished = true
        const providerOutput = whole?.call.response.output ?? accumulated.output()
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
          rawRequest: start.rawRequest,
          rawResponse: whole?.call.response.rawResponse ?? accumulated.rawResponse(),
          otherCalls: streamed.otherCalls,
          output: streamed.outputOf(providerOutput),
          responseTimeMs: engine.now() - start.startedAt,
          processingTimeMs: engine.now() - prepared.startedAt,
          ttftMs
        }
      }
      const take = (chunk: ProviderChunk): string => {
        accumulated.add(chunk)
        return chunk.content.length > 0 ? encode.chunk(chunk.content) ?? "" : ""
      }
      /** the events of the chunks one read brought, as one piece of text */
      const eventsOf = (chunks: ReadonlyArray<ProviderChunk>): string => {
        let text = ""
        for (const chunk of chunks) text += take(reshape === undefined ? chunk : reshape.chunk(chunk))
        return text
      }
      const variantLimit = variant.timeouts.streaming?.total_ms
      const rest = withinStreamTotal(start.rest, variantLimit === undefined ? undefined : prepared.startedAt + variantLimit,
        `variant "${variant.name}" stream timed out after ${variantLimit} ms`)
      // the response is one pull: the first chunks, then each read of the rest, then the end
      // (or the failure of a stream cut short), each sent as one write
      let phase: "first" | "rest" | "ended" = "first"
      const ending = (cause: ProviderFailure | Cause.Done): Effect.Effect<Batch, Cause.Done> => {
        phase = "ended"
        if (!Cause.isDone(cause)) return Effect.succeed([utf8(encode.failure(cause.message))])
        // what the reshaper held back goes out before the end
        const held = reshape?.end()
        const heldEvents = held === undefined ? "" : take(held)
        const finish = (cost: number | undefined) => {
          const completed = completedWith(cost)
          onComplete(completed)
          return [utf8(heldEvents + encode.end(completed))] as const
        }
        // an answer whole before it was streamed has its cost; a cached one cost nothing; a streamed one is priced from its raw chunks
        if (whole !== undefined) return Effect.sync(() => finish(whole.call.response.cost))
        if (start.cached) return Effect.sync(() => finish(engine.pricing.cached(start.provider)))
        return Effect.map(engine.pricing.chunks(start.provider, accumulated.rawChunks()), (cost) => {
          streamedCost = cost
          return finish(cost)
        })
      }
      const fromRest: Effect.Effect<Batch, Cause.Done> = Effect.matchEffect(rest, {
        onSuccess: (chunks) => {
          const text = eventsOf(chunks)
          return text === "" ? fromRest : Effect.succeed([utf8(text)])
        },
        onFailure: ending
      })
      const pull = Effect.suspend((): Effect.Effect<Batch, Cause.Done> => {
        if (phase === "rest") return fromRest
        if (phase === "ended") return Cause.done()
        phase = "rest"
        const text = eventsOf(start.first)
        return text === "" ? fromRest : Effect.succeed([utf8(text)])
      })
      // the connection is released, and the rate limits learn the usage the provider reported
      // or, cut short, at least what was borrowed
      const release = Effect.suspend(() =>
        start.settleLimits === undefined ? start.close : Effect.andThen(start.close, Effect.forkDetach(start.settleLimits({
          finished,
          usage: accumulated.usage,
          cost: streamedCost,
          streamedCharacters: finished && accumulated.usage !== undefined ? 0 : outputCharacters(accumulated.output())
        })))
      )
      const events = Stream.ensuring(Stream.fromPull(Effect.succeed(pull)), release)
      return { variant, events, providerMs: providerTime.ms() }
    }
  ))
