/**
 * A streamed answer as Anthropic's Messages events (issue 37, design 2.3): `message_start`, each
 * block's `content_block_start`, deltas and `content_block_stop`, then `message_delta` (stop
 * reason, usage) and `message_stop`; an `error` event for a stream cut short; `ping`s between
 * (src/sseWriter.ts `keepAliveWrites`). Anthropic's SDKs put the message together from the
 * block indexes, so each block gets its own.
 */
import type { AnthropicMessage } from "../api/anthropicMessages.ts"
import type { VariantConfig } from "../config/types.ts"
import { jsonDelta } from "../inference/chunks.ts"
import type { PreparedInference } from "../inference/prepare.ts"
import type { StreamEncoder } from "../inference/service.ts"
import type { ChunkDelta } from "../inference/types.ts"
import type { ProviderFailure } from "../providers/failure.ts"
import { sseNamedEvent } from "../sseWriter.ts"
import type { TranslatedMessages } from "./request.ts"
import { stopOf, usageOf } from "./response.ts"
import { signatureForClient } from "../providers/families.ts"

/** Anthropic's own, spacing included */
export const pingEvent = sseNamedEvent("ping", `{"type": "ping"}`)

/** the error type of a stream cut short by a provider, from its HTTP status when it answered one (design 2.4) */
export const streamFailureType = (status: number | undefined): string =>
  status === 529 || status === 503
    ? "overloaded_error"
    : status === 429
    ? "rate_limit_error"
    : status !== undefined && status >= 400 && status < 500
    ? "invalid_request_error"
    : "api_error"

/** Anthropic's `error` event (the same body as its error responses) */
export const errorEvent = (body: { readonly type: "error"; readonly error: { readonly type: string; readonly message: string } }): string =>
  sseNamedEvent("error", JSON.stringify(body))

/** whether the stream's `message_start` was written: by the encoder, or before the start by a committed stream's `openingEvents` */
export interface StreamState {
  opened: boolean
}

const messageStart = (prepared: PreparedInference, translated: TranslatedMessages, variant: VariantConfig | undefined): string => {
  const message: Partial<typeof AnthropicMessage.Type> = {
    id: prepared.inferenceId,
    type: "message",
    role: "assistant",
    model: translated.model,
    content: [],
    stop_reason: null,
    stop_sequence: null,
    // the counts come with message_delta
    usage: { input_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 0 },
    gateway_episode_id: prepared.episodeId,
    ...(variant === undefined ? {} : { gateway_variant_name: variant.name })
  }
  return sseNamedEvent("message_start", JSON.stringify({ type: "message_start", message }))
}

/**
 * The first events of a stream committed before its provider started (src/sseWriter.ts
 * `startOrCommit`): `message_start` without the variant's name, which is not known yet, and a ping.
 */
export const openingEvents = (prepared: PreparedInference, translated: TranslatedMessages, state: StreamState): string => {
  state.opened = true
  return messageStart(prepared, translated, undefined) + pingEvent
}

const blockStart = (index: number, block: string) =>
  sseNamedEvent("content_block_start", `{"type":"content_block_start","index":${index},"content_block":${block}}`)
const blockDelta = (index: number, delta: string) =>
  sseNamedEvent("content_block_delta", `{"type":"content_block_delta","index":${index},"delta":${delta}}`)
const blockStop = (index: number) => sseNamedEvent("content_block_stop", `{"type":"content_block_stop","index":${index}}`)
const textBlock = `{"type":"text","text":""}`
const thinkingBlock = `{"type":"thinking","thinking":"","signature":""}`

/**
 * The encoder of one streamed Messages answer. Blocks are keyed as the chunk accumulator keys
 * them (`<type>:<id>`): a text or thinking block closes every open block when it starts; a
 * tool call closes the open text or thinking block but not the other tool calls, whose pieces
 * some servers interleave; a delta of a block already closed (a provider interleaving text)
 * starts another. A json function's answer is one text block.
 */
export const messagesStreamEncoder = (
  prepared: PreparedInference,
  translated: TranslatedMessages,
  variant: VariantConfig,
  state: StreamState = { opened: false },
  /** the type of the provider streaming: a signature another family makes goes wrapped (`signatureForClient`) */
  providerType?: string
): StreamEncoder => {
  const isChat = prepared.fn.type === "chat"
  /** the open blocks' indexes by key, in the order they started (so by index) */
  const open = new Map<string, number>()
  /** the open text or thinking block (then the only open block) */
  let prose: string | undefined
  let next = 0
  /** the events of the chunk being encoded */
  let out = ""

  const start = (key: string, block: string): number => {
    const index = next++
    open.set(key, index)
    out += blockStart(index, block)
    return index
  }
  const closeAll = () => {
    for (const index of open.values()) out += blockStop(index)
    open.clear()
    prose = undefined
  }
  const proseBlock = (key: string, block: string): number => {
    if (key === prose) return open.get(key)!
    closeAll()
    prose = key
    return start(key, block)
  }
  const toolBlock = (delta: Extract<ChunkDelta, { type: "tool_call" }>): number => {
    const key = `tool_call:${delta.id}`
    const index = open.get(key)
    if (index !== undefined) return index
    if (prose !== undefined) closeAll()
    // a name streamed in pieces is whole in the stored answer only: the start event names the tool
    return start(key, JSON.stringify({ type: "tool_use", id: delta.id, name: delta.raw_name, input: {} }))
  }
  const add = (delta: ChunkDelta) => {
    switch (delta.type) {
      case "text": {
        const index = proseBlock(`text:${delta.id}`, textBlock)
        if (delta.text !== "") out += blockDelta(index, `{"type":"text_delta","text":${JSON.stringify(delta.text)}}`)
        break
      }
      case "thought": {
        const index = proseBlock(`thought:${delta.id}`, thinkingBlock)
        if (delta.text !== "") out += blockDelta(index, `{"type":"thinking_delta","thinking":${JSON.stringify(delta.text)}}`)
        if (delta.signature !== undefined) {
          const signature = signatureForClient(delta.signature, providerType, "anthropic")
          out += blockDelta(index, `{"type":"signature_delta","signature":${JSON.stringify(signature)}}`)
        }
        break
      }
      case "tool_call": {
        const index = toolBlock(delta)
        if (delta.raw_arguments !== "") out += blockDelta(index, `{"type":"input_json_delta","partial_json":${JSON.stringify(delta.raw_arguments)}}`)
        break
      }
    }
  }
  const opening = () => {
    if (state.opened) return
    state.opened = true
    out += messageStart(prepared, translated, variant)
  }

  return {
    chunk: ({ content }) => {
      out = ""
      opening()
      if (isChat) {
        for (const delta of content) add(delta)
      } else {
        const text = jsonDelta(content)
        if (text !== "") {
          const index = proseBlock("json", textBlock)
          out += blockDelta(index, `{"type":"text_delta","text":${JSON.stringify(text)}}`)
        }
      }
      return out === "" ? undefined : out
    },
    end: (completed) => {
      out = ""
      opening()
      // a json function's answer is one text block, even empty
      if (!isChat && next === 0) proseBlock("json", textBlock)
      closeAll()
      const delta = JSON.stringify({ type: "message_delta", delta: stopOf(completed, translated), usage: usageOf(completed) })
      return out + sseNamedEvent("message_delta", delta) + sseNamedEvent("message_stop", `{"type":"message_stop"}`)
    },
    failure: (failure: ProviderFailure) =>
      errorEvent({ type: "error", error: { type: streamFailureType(failure.status), message: failure.message } })
  }
}
