/**
 * TensorZero's dummy models, by model name, answering as its `providers/dummy.rs` does: what
 * fails and when, the whole answer, its usage (10 input tokens, one output token per output
 * block or streamed chunk) and finish reason, and the streamed pieces, which are not the whole
 * answer's (a whole `json` answers `{"answer":"Hello"}`, a streamed one `{"name":"John","age":30}`).
 * Any name it does not know is its default model (`good`).
 */
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import type * as Arr from "effect/Array"
import { applyExtraBodyEdit, applyExtraHeaderEdits, requestEntryOf } from "../../inference/extraBody.ts"
import type { ChunkDelta, FinishReason, OutputBlock, ProviderChunk, Usage } from "../../inference/types.ts"
import { uuidv7 } from "../../ids.ts"
import { ProviderFailure } from "../failure.ts"
import type { ChunkPull, ProviderCall } from "../types.ts"
import {
  dummyAlternateText,
  dummyBadToolArguments,
  dummyChunkSpacingMs,
  dummyGoodKey,
  dummyGoodToolArguments,
  dummyGoodToolName,
  dummyInvalidToolArguments,
  dummyJson,
  dummyJsonCot,
  dummyJsonDiffSchema,
  dummyJsonGoodbye,
  dummySlowDelayMs,
  dummySlowSecondChunkMs,
  dummyStreamedGoodToolPieces,
  dummyStreamedJsonPieces,
  dummyStreamedPieces,
  dummyStreamedThoughtPieces,
  dummyStreamedToolPieces,
  dummyText,
  dummyThought,
  dummyThoughtSignature,
  dummyToolArguments,
  dummyToolName
} from "./fixed.ts"

const failure = (message: string, status?: number) =>
  new ProviderFailure(status === undefined ? { message, timedOut: false } : { message, timedOut: false, status })

const text = (value: string): OutputBlock => ({ type: "text", text: value })
const toolCall = (name: string, args: string): OutputBlock => ({ type: "tool_call", id: "0", raw_name: name, raw_arguments: args })

/** TensorZero's usage: 10 input tokens and `outputs` output tokens, but for the models named after other counts */
export const usageOf = (modelName: string, outputs: number): Usage => {
  switch (modelName) {
    case "input_tokens_zero":
      return { input_tokens: 0, output_tokens: outputs }
    case "output_tokens_zero":
      return { input_tokens: 10, output_tokens: 0 }
    case "input_tokens_output_tokens_zero":
      return { input_tokens: 0, output_tokens: 0 }
    case "input_five_output_six":
      return { input_tokens: 5, output_tokens: 6 }
    default:
      return { input_tokens: 10, output_tokens: outputs }
  }
}

/** a whole answer's finish reason: TensorZero reads it off the name */
export const finishReasonOf = (modelName: string): FinishReason => modelName.includes("tool") ? "tool_call" : "stop"

/**
 * What fails before any answer, whole or streamed (TensorZero checks `multiple-text-blocks` and
 * `test_key` for whole answers only). `calls` counts this client's calls, for `flaky_*`.
 */
export const tensorZeroPreamble = (
  modelName: string,
  call: ProviderCall,
  calls: number,
  streamed: boolean
): Effect.Effect<void, ProviderFailure> => {
  const checks = Effect.suspend((): Effect.Effect<void, ProviderFailure> => {
    // `flaky_*` fails its even-numbered calls; `flaky_*rate_limit*` as a rate limit would
    if (modelName.startsWith("flaky_") && calls % 2 === 0) {
      if (modelName.includes("rate_limit") && !streamed) return Effect.fail(failure(`Flaky model '${modelName}' was rate limited on call number ${calls}`, 429))
      return Effect.fail(failure(`Flaky model '${modelName}' failed on call number ${calls}`))
    }
    if (modelName.startsWith("error")) return Effect.fail(failure(`Error sending request to Dummy provider for model '${modelName}'.`))
    if (streamed) return Effect.void
    if (modelName === "multiple-text-blocks") {
      const first = call.request.messages[0]
      const texts = first === undefined ? 0 : first.content.filter((block) => block.type === "text").length
      if (texts !== 2) return Effect.fail(failure("First message must have exactly two text blocks"))
    }
    // with no key (api_key_location none) it answers, as TensorZero's does
    if (modelName === "test_key" && call.apiKey !== undefined && call.apiKey !== dummyGoodKey) {
      return Effect.fail(failure("Invalid API key for Dummy provider"))
    }
    return Effect.void
  })
  return modelName === "slow" ? Effect.andThen(Effect.sleep(dummySlowDelayMs), checks) : checks
}

/** the first text block of the last user message (TensorZero's `echo`), "" when there is none */
const lastUserText = (call: ProviderCall): string => {
  const messages = call.request.messages
  for (let i = messages.length - 1; i >= 0; i--) {
    if (messages[i].role !== "user") continue
    const block = messages[i].content.find((content) => content.type === "text")
    return block?.type === "text" ? block.text : ""
  }
  return ""
}

/** the request's own entries of a call's edits as the request wrote them, and the configured ones */
const splitEdits = <E extends object>(edits: ReadonlyArray<E>) => {
  const configured: Array<E> = []
  const requested: Array<unknown> = []
  for (const edit of edits) {
    const entry = requestEntryOf(edit)
    if (entry === undefined) configured.push(edit)
    else requested.push(entry)
  }
  return { configured, requested }
}

/** `echo_extra_info`: the variant's and the request's `extra_body` and `extra_headers`, in TensorZero's shape */
const extraInfo = (call: ProviderCall): string => {
  const body = splitEdits(call.caller?.extraBody ?? [])
  const headers = splitEdits(call.caller?.extraHeaders ?? [])
  return JSON.stringify({
    extra_body: { ...(body.configured.length > 0 ? { extra_body: body.configured } : {}), inference_extra_body: body.requested },
    extra_headers: {
      variant_extra_headers: headers.configured.length > 0 ? headers.configured : null,
      inference_extra_headers: headers.requested
    }
  })
}

/** `echo_injected_data`: the body and headers the call's edits (the provider's, the variant's, the request's) make of nothing */
const injectedData = (call: ProviderCall): string | ProviderFailure => {
  const body: Record<string, unknown> = {}
  for (const edit of call.extraBody) {
    const problem = applyExtraBodyEdit(body, edit)
    if (problem !== undefined) return failure(problem)
  }
  const headers = applyExtraHeaderEdits({}, call.extraHeaders)
  return JSON.stringify({
    injected_body: body,
    injected_headers: Object.entries(headers).map(([name, value]) => [name.toLowerCase(), value])
  })
}

/** TensorZero's judge and best-of-n answers, by name */
const fixedJsonAnswers: Readonly<Record<string, string>> = {
  json: dummyJson,
  json_goodbye: dummyJsonGoodbye,
  json_cot: dummyJsonCot,
  json_diff_schema: dummyJsonDiffSchema,
  json_beatles_1: "{\"names\":[\"John\", \"George\"]}",
  json_beatles_2: "{\"names\":[\"Paul\", \"Ringo\"]}",
  best_of_n_0: "{\"thinking\": \"hmmm\", \"answer_choice\": 0}",
  best_of_n_1: "{\"thinking\": \"hmmm\", \"answer_choice\": 1}",
  best_of_n_big: "{\"thinking\": \"hmmm\", \"answer_choice\": 100}",
  flaky_best_of_n_judge: "{\"thinking\": \"hmmm\", \"answer_choice\": 0}",
  "llm_judge::true": "{\"score\": true}",
  "llm_judge::false": "{\"score\": false}",
  "llm_judge::zero": "{\"score\": 0}",
  "llm_judge::one": "{\"score\": 1}"
}

/** TensorZero's models that read its own stored file objects, which this gateway does not keep */
const unavailable = new Set(["extract_images", "require_pdf"])

/** A TensorZero model's whole answer; `now` (epoch ms) dates `random_answer`'s id. */
export const tensorZeroOutput = (
  modelName: string,
  call: ProviderCall,
  now: number
): ReadonlyArray<OutputBlock> | ProviderFailure => {
  const fixed = fixedJsonAnswers[modelName]
  if (fixed !== undefined) {
    // under json_mode `tool` a json function's answer arrives as the `respond` tool's call, as a real provider's would
    return modelName === "json" && call.request.jsonMode === "tool" && call.request.functionType === "json"
      ? [toolCall("respond", fixed)]
      : [text(fixed)]
  }
  if (unavailable.has(modelName)) {
    return failure(`the dummy model '${modelName}' is TensorZero's and reads its stored files, which this gateway does not answer`)
  }
  switch (modelName) {
    case "null":
      return []
    case "empty":
      return [text("")]
    case "tool":
      return [toolCall(dummyToolName, dummyToolArguments)]
    case "good_tool":
      return [toolCall(dummyGoodToolName, dummyGoodToolArguments)]
    case "bad_tool":
      return [toolCall(dummyToolName, dummyBadToolArguments)]
    case "invalid_tool_arguments":
      return [toolCall(dummyToolName, dummyInvalidToolArguments)]
    case "reasoner":
      return [{ type: "thought", text: dummyThought }, text(dummyText)]
    case "reasoner_with_signature":
      return [{ type: "thought", text: dummyThought, signature: dummyThoughtSignature }, text(dummyText)]
    case "json_reasoner":
      return [{ type: "thought", text: dummyThought }, text(dummyJson)]
    case "random_answer":
      return [text(JSON.stringify({ answer: uuidv7(now) }))]
    case "alternate":
      return [text(dummyAlternateText)]
    case "echo":
      return [text(lastUserText(call))]
    case "echo_request_messages":
      return [text(requestMessagesText(call))]
    case "echo_extra_info":
      return [text(extraInfo(call))]
    case "echo_injected_data": {
      const injected = injectedData(call)
      return typeof injected === "string" ? [text(injected)] : injected
    }
    case "llm_judge::error":
      return failure("Dummy error in inference")
    default:
      return [text(dummyText)]
  }
}

/** the request's system prompt and messages as JSON text: `echo_request_messages`' answer (and, streamed, the gateway's own `streamed_echo`'s) */
export const requestMessagesText = (call: ProviderCall): string => JSON.stringify({ system: call.request.system ?? null, messages: call.request.messages })

/** a streamed answer's pieces: thought pieces, then text or tool-call pieces */
interface StreamedPieces {
  readonly thoughts: ReadonlyArray<string>
  readonly pieces: ReadonlyArray<string>
  readonly toolCall: boolean
}

const streamedPieces = (modelName: string): StreamedPieces => {
  switch (modelName) {
    case "reasoner":
      return { thoughts: dummyStreamedThoughtPieces, pieces: dummyStreamedPieces, toolCall: false }
    case "json_reasoner":
      return { thoughts: dummyStreamedThoughtPieces, pieces: dummyStreamedJsonPieces, toolCall: false }
    case "json":
      return { thoughts: [], pieces: dummyStreamedJsonPieces, toolCall: false }
    case "tool":
    case "tool_split_name":
      return { thoughts: [], pieces: dummyStreamedToolPieces, toolCall: true }
    case "good_tool":
      return { thoughts: [], pieces: dummyStreamedGoodToolPieces, toolCall: true }
    default:
      return { thoughts: [], pieces: dummyStreamedPieces, toolCall: false }
  }
}

/**
 * The tool name a streamed tool call's piece carries: the whole name in the first (`get_temperature`,
 * `good_tool`'s too, as TensorZero's does), or split over the first two for `tool_split_name`.
 */
const streamedToolName = (modelName: string, index: number): string => {
  if (modelName === "tool_split_name") return index === 0 ? "get_temp" : index === 1 ? "erature" : ""
  return index === 0 ? dummyToolName : ""
}

/** A TensorZero model's streamed chunks: one per piece, then one with the usage (one token per piece) and the finish reason. */
export const tensorZeroChunks = (modelName: string): ReadonlyArray<ProviderChunk> => {
  const { thoughts, pieces, toolCall: isToolCall } = streamedPieces(modelName)
  const deltas: Array<ChunkDelta> = [
    ...thoughts.map((piece): ChunkDelta => ({ type: "thought", id: "0", text: piece })),
    ...pieces.map((piece, index): ChunkDelta =>
      isToolCall
        ? { type: "tool_call", id: "0", raw_name: streamedToolName(modelName, index), raw_arguments: piece }
        : { type: "text", id: "0", text: piece }
    )
  ]
  return [
    ...deltas.map((delta) => ({ content: [delta], raw: delta.type === "tool_call" ? delta.raw_arguments : delta.text })),
    { content: [], usage: usageOf(modelName, deltas.length), finishReason: isToolCall ? "tool_call" : "stop", raw: "" }
  ]
}

/**
 * The chunks pulled one at a time, `dummyChunkSpacingMs` apart as TensorZero's are; with the
 * failures and waits some names stream: `fatal_stream_error` fails at its third chunk,
 * `err_in_stream` at its fourth (TensorZero's goes on after that error; here a stream's error
 * ends it), `slow_second_chunk` waits before its second.
 */
export const spacedPull = (modelName: string, chunks: ReadonlyArray<ProviderChunk>): ChunkPull => {
  const failAt = modelName === "fatal_stream_error" ? 2 : modelName === "err_in_stream" ? 3 : undefined
  const failureMessage = modelName === "fatal_stream_error" ? "Dummy fatal error" : "Dummy error in stream"
  let next = 0
  return Effect.suspend((): ChunkPull => {
    if (next >= chunks.length) return Cause.done()
    const index = next++
    if (index === failAt) return Effect.fail(failure(failureMessage))
    const chunk = Effect.succeed([chunks[index]] as Arr.NonEmptyReadonlyArray<ProviderChunk>)
    if (index === 0) return chunk
    const wait = modelName === "slow_second_chunk" && index === 1 ? dummySlowSecondChunkMs : dummyChunkSpacingMs
    return Effect.andThen(Effect.sleep(wait), chunk)
  })
}
