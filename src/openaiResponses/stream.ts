/**
 * A streamed response as OpenAI's Responses events (issue 37, design 3.3): `response.created`
 * and `response.in_progress`, then for each item `response.output_item.added`, its deltas and
 * its closing events, `response.output_item.done`; then `response.completed` (or
 * `response.incomplete`) with the whole response, whose items are the ones streamed (the SDKs
 * check them against those). Each event is named (`event: <type>`) and numbered
 * (`sequence_number`, from 0).
 *
 * Items are opened in the order the answer's blocks begin and take the ids the whole answer
 * gives them (src/openaiResponses/items.ts): a message takes consecutive texts, a thought is a
 * reasoning item, closed when another block begins (its signature comes with its last delta),
 * and a tool call's item stays open until the end (providers may interleave parallel calls).
 *
 * Per delta: one event written as text, with the delta's text stringified once.
 */
import type { VariantConfig } from "../config/types.ts"
import { jsonDelta } from "../inference/chunks.ts"
import type { PreparedInference } from "../inference/prepare.ts"
import type { StreamEncoder } from "../inference/service.ts"
import { isCustomTool } from "../inference/tools.ts"
import type { ChunkDelta } from "../inference/types.ts"
import { sseNamedEvent } from "../sseWriter.ts"
import { callItem, idStem, itemId, type ItemKind, messageItem, reasoningItem } from "./items.ts"
import type { TranslatedResponse } from "./request.ts"
import { responseBody, responseObject } from "./response.ts"
import { responsesSignatures } from "./items.ts"
import { signatureForClient } from "../providers/families.ts"

interface MessageState {
  readonly kind: "message"
  readonly index: number
  readonly id: string
  text: string
  open: boolean
}

interface ReasoningState {
  readonly kind: "reasoning"
  readonly index: number
  readonly id: string
  /** the thought's delta id: another thought is another item */
  readonly thought: string
  text: string
  signature: string | undefined
  open: boolean
}

interface CallState {
  readonly kind: "call"
  readonly index: number
  readonly id: string
  readonly callId: string
  readonly custom: boolean
  name: string
  input: string
  open: boolean
}

type ItemState = MessageState | ReasoningState | CallState

const emptyTextPart = `{"type":"output_text","text":"","annotations":[],"logprobs":[]}`

export const responsesStreamEncoder = (
  prepared: PreparedInference,
  variant: VariantConfig,
  translated: TranslatedResponse,
  createdAt: number,
  /** the type of the provider streaming: a signature another family makes goes wrapped (`signatureForClient`) */
  providerType?: string
): StreamEncoder => {
  const stem = idStem(prepared.inferenceId)
  const isChat = prepared.fn.type === "chat"
  const encrypted = translated.encryptedReasoning
  let sequence = 0
  const event = (type: string, fields: string): string => sseNamedEvent(type, `{"type":"${type}","sequence_number":${sequence++}${fields}}`)

  let opened = false
  /** the two events that open the stream, with the first chunk (or its end or failure) */
  const opening = (): string => {
    if (opened) return ""
    opened = true
    const head = { id: prepared.inferenceId, createdAt, episodeId: prepared.episodeId, variantName: variant.name }
    const response = `,"response":${JSON.stringify(responseObject(translated, head, { status: "in_progress", incomplete_details: null }, [], null))}`
    return event("response.created", response) + event("response.in_progress", response)
  }

  /** the items streamed so far, by output index */
  const items: Array<ItemState> = []
  /** the message or reasoning item open last, which the next delta of its kind goes on with */
  let current: MessageState | ReasoningState | undefined
  const calls = new Map<string, CallState>()
  // each delta's block index among the answer's blocks, counted as the whole answer counts them
  // (ChunkAccumulator: a block per kind and id, in the order they begin)
  let blockCount = 0
  const textBlocks = new Map<string, number>()
  const thoughtBlocks = new Map<string, number>()
  const callBlocks = new Map<string, number>()
  const ids = new Set<string>()

  const blockOf = (blocks: Map<string, number>, id: string): number => {
    let block = blocks.get(id)
    if (block === undefined) {
      block = blockCount++
      blocks.set(id, block)
    }
    return block
  }
  /** the item id of `block`; a block begun again after another (a provider interleaving texts) takes another */
  const idOf = (kind: ItemKind, block: number): string => {
    let id = itemId(kind, stem, block)
    if (ids.has(id)) id = `${id}_${items.length}`
    ids.add(id)
    return id
  }
  const added = (index: number, item: unknown) => event("response.output_item.added", `,"output_index":${index},"item":${JSON.stringify(item)}`)
  const done = (index: number, item: unknown) => event("response.output_item.done", `,"output_index":${index},"item":${JSON.stringify(item)}`)

  const finalItem = (state: ItemState) =>
    state.kind === "message"
      ? messageItem(state.id, [state.text], "completed")
      : state.kind === "reasoning"
      ? reasoningItem(state.id, state.text, state.signature, encrypted)
      : callItem(state.id, state.callId, state.name, state.input, state.custom, "completed")

  const close = (state: ItemState): string => {
    state.open = false
    const at = `,"item_id":"${state.id}","output_index":${state.index}`
    let out = ""
    switch (state.kind) {
      case "message": {
        const text = JSON.stringify(state.text)
        out = event("response.output_text.done", `${at},"content_index":0,"text":${text},"logprobs":[]`) +
          event("response.content_part.done", `${at},"content_index":0,"part":{"type":"output_text","text":${text},"annotations":[],"logprobs":[]}`)
        break
      }
      case "reasoning":
        if (state.text !== "") {
          const text = JSON.stringify(state.text)
          out = event("response.reasoning_summary_text.done", `${at},"summary_index":0,"text":${text}`) +
            event("response.reasoning_summary_part.done", `${at},"summary_index":0,"part":{"type":"summary_text","text":${text}}`)
        }
        break
      case "call":
        out = state.custom
          ? event("response.custom_tool_call_input.done", `${at},"input":${JSON.stringify(state.input)}`)
          : event("response.function_call_arguments.done", `${at},"name":${JSON.stringify(state.name)},"arguments":${JSON.stringify(state.input)}`)
        break
    }
    return out + done(state.index, finalItem(state))
  }
  const closeCurrent = (): string => {
    const open = current
    current = undefined
    return open === undefined || !open.open ? "" : close(open)
  }

  const text = (block: number, delta: string): string => {
    let out = ""
    if (current?.kind !== "message") {
      out = closeCurrent()
      const state: MessageState = { kind: "message", index: items.length, id: idOf("message", block), text: "", open: true }
      items.push(state)
      current = state
      out += added(state.index, messageItem(state.id, [], "in_progress")) +
        event("response.content_part.added", `,"item_id":"${state.id}","output_index":${state.index},"content_index":0,"part":${emptyTextPart}`)
    }
    const message = current
    message.text += delta
    return out + event("response.output_text.delta", `,"item_id":"${message.id}","output_index":${message.index},"content_index":0,"delta":${JSON.stringify(delta)},"logprobs":[]`)
  }

  const thought = (part: Extract<ChunkDelta, { type: "thought" }>): string => {
    const block = blockOf(thoughtBlocks, part.id)
    let out = ""
    if (current?.kind !== "reasoning" || current.thought !== part.id) {
      out = closeCurrent()
      const state: ReasoningState = {
        kind: "reasoning",
        index: items.length,
        id: idOf("reasoning", block),
        thought: part.id,
        text: "",
        signature: undefined,
        open: true
      }
      items.push(state)
      current = state
      out += added(state.index, reasoningItem(state.id, "", undefined, false))
    }
    const reasoning = current
    if (part.signature !== undefined) reasoning.signature = signatureForClient(part.signature, providerType, responsesSignatures)
    if (part.text === "") return out
    const at = `,"item_id":"${reasoning.id}","output_index":${reasoning.index},"summary_index":0`
    if (reasoning.text === "") out += event("response.reasoning_summary_part.added", `${at},"part":{"type":"summary_text","text":""}`)
    reasoning.text += part.text
    return out + event("response.reasoning_summary_text.delta", `${at},"delta":${JSON.stringify(part.text)}`)
  }

  const toolCall = (part: Extract<ChunkDelta, { type: "tool_call" }>): string => {
    let out = ""
    let call = calls.get(part.id)
    if (call === undefined) {
      const block = blockOf(callBlocks, part.id)
      out = closeCurrent()
      const custom = isCustomTool(prepared.tools, part.raw_name)
      call = {
        kind: "call",
        index: items.length,
        id: idOf(custom ? "custom_tool_call" : "function_call", block),
        callId: part.id,
        custom,
        name: part.raw_name,
        input: "",
        open: true
      }
      items.push(call)
      calls.set(part.id, call)
      out += added(call.index, callItem(call.id, call.callId, call.name, "", custom, "in_progress"))
    } else {
      // a name streamed in pieces: the item's last event has it whole
      call.name += part.raw_name
    }
    if (part.raw_arguments === "") return out
    call.input += part.raw_arguments
    return out + event(
      call.custom ? "response.custom_tool_call_input.delta" : "response.function_call_arguments.delta",
      `,"item_id":"${call.id}","output_index":${call.index},"delta":${JSON.stringify(part.raw_arguments)}`
    )
  }

  return {
    chunk: ({ content }) => {
      let out = opening()
      if (!isChat) {
        // a json function's answer is one message of its JSON text
        const delta = jsonDelta(content)
        return delta === "" ? out || undefined : out + text(0, delta)
      }
      for (const part of content) {
        switch (part.type) {
          case "text":
            out += text(blockOf(textBlocks, part.id), part.text)
            break
          case "thought":
            out += thought(part)
            break
          case "tool_call":
            out += toolCall(part)
            break
        }
      }
      return out === "" ? undefined : out
    },
    end: (completed) => {
      let out = opening()
      // a json function's answer is a message even when empty, as the whole answer's is
      if (!isChat && items.length === 0) out += text(0, "")
      current = undefined
      for (const item of items) if (item.open) out += close(item)
      const response = responseBody(completed, translated, createdAt, items.map(finalItem))
      return out + event(response.status === "incomplete" ? "response.incomplete" : "response.completed", `,"response":${JSON.stringify(response)}`)
    },
    failure: (failure) =>
      opening() + event("error", `,"code":"${failure.status === 429 ? "rate_limit_exceeded" : "server_error"}","message":${JSON.stringify(failure.message)},"param":null`)
  }
}
