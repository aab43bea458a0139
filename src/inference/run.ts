/**
 * Running a prepared inference: non-streaming (one JSON body) or streaming (Server-Sent
 * Events, one JSON chunk per event, then `[DONE]`).
 */
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import * as Stream from "effect/Stream"
import type { VariantConfig } from "../config/types.ts"
import type { GatewayError } from "../errors.ts"
import type { ProviderFailure } from "../providers/types.ts"
import type { HttpTransport } from "../services.ts"
import { callModel, type ModelCallResult, type ModelStreamStart, startModelStream } from "./modelCall.ts"
import { type ChatOutputBlock, chatOutput, type JsonOutput, jsonOutput, jsonRawText } from "./output.ts"
import type { PreparedInference } from "./prepare.ts"
import type { ChunkDelta, FinishReason, ModelRequest, ProviderChunk, Usage } from "./types.ts"
import { tryVariants } from "./variants.ts"

export interface InferenceResult {
  readonly prepared: PreparedInference
  readonly variant: VariantConfig
  readonly modelRequest: ModelRequest
  readonly call: ModelCallResult
  /** the response body (spec 2.3) */
  readonly body: Record<string, unknown>
  readonly output: ReadonlyArray<ChatOutputBlock> | JsonOutput
}

export const runInference = (
  prepared: PreparedInference
): Effect.Effect<InferenceResult, GatewayError, HttpTransport> =>
  Effect.map(
    tryVariants(prepared, (timeouts) => timeouts.non_streaming?.total_ms, (variant, request) =>
      callModel(prepared, variant, request)),
    ([call, variant, modelRequest]) => {
      const response = call.response
      const body: Record<string, unknown> = {
        inference_id: prepared.inferenceId,
        episode_id: prepared.episodeId,
        variant_name: variant.name
      }
      let output: ReadonlyArray<ChatOutputBlock> | JsonOutput
      if (prepared.fn.type === "chat") body.content = output = chatOutput(response.output, prepared.tools)
      else body.output = output = jsonOutput(jsonRawText(response.output), prepared.outputSchema)
      body.usage = response.usage
      if (response.finishReason !== undefined) body.finish_reason = response.finishReason
      if (prepared.request.include_original_response === true) body.original_response = response.rawResponse
      return { prepared, variant, modelRequest, call, body, output }
    }
  )

export interface InferenceStream {
  readonly prepared: PreparedInference
  readonly variant: VariantConfig
  readonly start: ModelStreamStart
  /** the Server-Sent Events body, ready to send */
  readonly events: Stream.Stream<Uint8Array>
}

const encoder = new TextEncoder()
const event = (json: string) => encoder.encode(`data: ${json}\n\n`)
const done = encoder.encode("data: [DONE]\n\n")

/** The text a json function streams: its text deltas, or its tool call's argument deltas (json_mode `tool`). */
const jsonDelta = (content: ReadonlyArray<ChunkDelta>): string => {
  let raw = ""
  for (const delta of content) {
    if (delta.type === "text") raw += delta.text
    else if (delta.type === "tool_call") raw += delta.raw_arguments
  }
  return raw
}

export const streamInference = (
  prepared: PreparedInference
): Effect.Effect<InferenceStream, GatewayError, HttpTransport> =>
  Effect.map(
    tryVariants(prepared, (timeouts) => timeouts.streaming?.ttft_ms, (variant, request) =>
      startModelStream(prepared, variant, request)),
    ([start, variant]) => {
      const head = `"inference_id":"${prepared.inferenceId}","episode_id":"${prepared.episodeId}","variant_name":${
        JSON.stringify(variant.name)
      }`
      const isChat = prepared.fn.type === "chat"
      let usage: Usage | undefined
      let finishReason: FinishReason | undefined
      const toEvent = (chunk: ProviderChunk): Uint8Array | undefined => {
        if (chunk.usage !== undefined) usage = chunk.usage
        if (chunk.finishReason !== undefined) finishReason = chunk.finishReason
        if (chunk.content.length === 0) return undefined
        if (isChat) return event(`{${head},"content":${JSON.stringify(chunk.content)}}`)
        const raw = jsonDelta(chunk.content)
        return raw === "" ? undefined : event(`{${head},"raw":${JSON.stringify(raw)}}`)
      }
      const last = () => {
        const final: Record<string, unknown> = { usage: usage ?? { input_tokens: 0, output_tokens: 0 } }
        if (finishReason !== undefined) final.finish_reason = finishReason
        const fields = JSON.stringify(final).slice(1)
        return [event(isChat ? `{${head},"content":[],${fields}` : `{${head},"raw":"",${fields}`), done]
      }
      const events = Stream.concat(Stream.fromIterable(start.first), start.rest).pipe(
        Stream.filterMap((chunk: ProviderChunk) => {
          const bytes = toEvent(chunk)
          return bytes === undefined ? Result.failVoid : Result.succeed(bytes)
        }),
        Stream.concat(Stream.suspend(() => Stream.fromIterable(last()))),
        // the status line is sent already: an error becomes the last event
        Stream.catchTag("ProviderFailure", (failure: ProviderFailure) =>
          Stream.succeed(event(JSON.stringify({ error: `${failure.message}` })))),
        Stream.ensuring(start.close)
      )
      return { prepared, variant, start, events }
    }
  )
