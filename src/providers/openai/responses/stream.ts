/**
 * The Responses API's streamed events (`event: <name>` then `data: <json>`, the JSON's `type`
 * equal to the name) -> chunks. Deltas name their item by `output_index`, which is the block id
 * of texts and thoughts; a function call's id (`call_id`) comes with its `output_item.added`
 * and is remembered for the argument deltas that follow. Reasoning items' signatures come with
 * `output_item.done`; usage and the finish reason with `response.completed` (or `.incomplete`).
 * Items other than messages, function calls and reasoning cannot be streamed as deltas: they
 * are left out of streamed answers (the raw response keeps them).
 */
import type { ChunkDelta, ProviderChunk } from "../../../inference/types.ts"
import { type StreamEventParser, WireProblem } from "../../codec.ts"
import { isToolCallItem, reasoningSignature, responsesFinishReason, responsesUsage, summaryText } from "./response.ts"

type Json = Record<string, any>

const none: ReadonlyArray<ChunkDelta> = []

export const makeResponsesEventParser = (): StreamEventParser<string> => {
  // output_index -> call_id of the function calls under way
  const callIds = new Map<number, string>()
  // output_index -> the last summary part seen of a reasoning item (parts are paragraphs)
  const summaryParts = new Map<number, number>()
  // output_index of the reasoning items whose summary arrived as deltas
  const summarised = new Set<number>()
  let calledTool = false
  return (data): ProviderChunk | WireProblem => {
    let event: Json
    try {
      event = JSON.parse(data)
    } catch {
      return new WireProblem("the openai provider (Responses API) streamed an event that is not JSON")
    }
    const index = typeof event?.output_index === "number" ? event.output_index : 0
    const id = String(index)
    const chunk = (content: ReadonlyArray<ChunkDelta>): ProviderChunk => ({ content, raw: data })
    switch (event?.type) {
      case "response.output_item.added": {
        const item = event.item
        if (isToolCallItem(item)) {
          calledTool = true
          const callId = String(item.call_id ?? item.id ?? id)
          callIds.set(index, callId)
          const initial = item.type === "custom_tool_call" ? item.input : item.arguments
          return chunk([{ type: "tool_call", id: callId, raw_name: String(item.name ?? ""), raw_arguments: typeof initial === "string" ? initial : "" }])
        }
        return chunk(none)
      }
      case "response.output_text.delta":
        return chunk(typeof event.delta === "string" && event.delta !== "" ? [{ type: "text", id, text: event.delta }] : none)
      case "response.refusal.delta":
        return chunk(typeof event.delta === "string" && event.delta !== "" ? [{ type: "text", id, text: event.delta }] : none)
      case "response.function_call_arguments.delta":
      case "response.custom_tool_call_input.delta": {
        const callId = callIds.get(index) ?? String(event.item_id ?? id)
        return chunk(typeof event.delta === "string" ? [{ type: "tool_call", id: callId, raw_name: "", raw_arguments: event.delta }] : none)
      }
      case "response.reasoning_summary_text.delta": {
        if (typeof event.delta !== "string" || event.delta === "") return chunk(none)
        const part = typeof event.summary_index === "number" ? event.summary_index : 0
        const last = summaryParts.get(index)
        summaryParts.set(index, part)
        summarised.add(index)
        const text = last !== undefined && part !== last ? `\n\n${event.delta}` : event.delta
        return chunk([{ type: "thought", id, text }])
      }
      case "response.output_item.done": {
        const item = event.item
        if (item?.type !== "reasoning") return chunk(none)
        const signature = reasoningSignature(item)
        // the summary, when it did not arrive as deltas, and the signature that makes the thought go back
        const text = summarised.has(index) ? "" : summaryText(item)
        return chunk(signature === undefined && text === "" ? none : [{ type: "thought", id, text, ...(signature === undefined ? {} : { signature }) }])
      }
      case "response.completed":
      case "response.incomplete": {
        const response = event.response ?? {}
        const tool = calledTool || (Array.isArray(response.output) && response.output.some(isToolCallItem))
        return { content: none, usage: responsesUsage(response.usage), finishReason: responsesFinishReason(response, tool), raw: data }
      }
      case "response.failed": {
        const error = event.response?.error
        return new WireProblem(`the openai provider (Responses API) failed the response: ${typeof error?.message === "string" ? error.message : JSON.stringify(error ?? null)}`)
      }
      case "error":
        return new WireProblem(`the openai provider (Responses API) streamed an error: ${typeof event.message === "string" ? event.message : data}`)
      default:
        return chunk(none)
    }
  }
}
