/**
 * Gemini `GenerateContentResponse` (ai.google.dev/api/generate-content#generatecontentresponse),
 * whole or streamed (each SSE event is a whole response holding the next parts) -> output
 * blocks, usage and finish reason; and the explanation a Google API error body carries.
 *
 * Parts: `text` (a thought when `thought: true`), `functionCall`, and anything else (code
 * execution, inline data...) as an `unknown` block. A `thoughtSignature` on a part that is not
 * a thought (Gemini puts it on the first function call, or on text) becomes a thought block
 * without text just before that part's block, so that it goes back on the same part
 * (`request.ts`). Gemini may give function calls no id: the codec numbers them
 * (`gemini_call_<n>`), stably within an answer.
 */
import type { ChunkDelta, FinishReason, OutputBlock, Usage } from "../../inference/types.ts"
import { streamedErrorProblem, tokenCount } from "../answerReaders.ts"
import { type ParsedResponse, type StreamEventParser, WireProblem, unscopedProvider } from "../codec.ts"
import { generatedIdPrefix } from "./request.ts"

type Json = Record<string, any>

export const finishReasonOf = (reason: unknown, calledTools: boolean): FinishReason | undefined => {
  switch (reason) {
    case undefined:
    case null:
    case "FINISH_REASON_UNSPECIFIED":
      return undefined
    case "STOP":
      return calledTools ? "tool_call" : "stop"
    case "MAX_TOKENS":
      return "length"
    case "SAFETY":
    case "RECITATION":
    case "BLOCKLIST":
    case "PROHIBITED_CONTENT":
    case "SPII":
    case "IMAGE_SAFETY":
    case "IMAGE_PROHIBITED_CONTENT":
    case "IMAGE_RECITATION":
      return "content_filter"
    default:
      return "unknown"
  }
}

/** output counts the thinking tokens too: Gemini bills them as output */
export const usageOf = (metadata: Json | undefined | null): Usage | undefined => {
  if (metadata === undefined || metadata === null || typeof metadata !== "object") return undefined
  const usage: { input_tokens: number; output_tokens: number; cached_input_tokens?: number } = {
    input_tokens: tokenCount(metadata.promptTokenCount),
    output_tokens: tokenCount(metadata.candidatesTokenCount) + tokenCount(metadata.thoughtsTokenCount)
  }
  if (typeof metadata.cachedContentTokenCount === "number") usage.cached_input_tokens = metadata.cachedContentTokenCount
  return usage
}

/** The explanation of a Google API error body (`{"error": {"code", "message", "status"}}`), streamed as an array by some endpoints. */
export const geminiErrorMessage = (body: string): string | undefined => {
  try {
    const parsed = JSON.parse(body)
    const error = Array.isArray(parsed) ? parsed[0]?.error : parsed?.error
    if (typeof error?.message === "string") {
      return typeof error.status === "string" ? `${error.status}: ${error.message}` : error.message
    }
  } catch {
    // not JSON: nothing to take from it
  }
  return undefined
}

const notJson = new WireProblem("the provider answered with a body that is not JSON")
const chunkNotJson = new WireProblem("the provider streamed an event that is not JSON")

const isFunctionCall = (part: Json): boolean => typeof part?.functionCall === "object" && part.functionCall !== null

/** The blocks of a candidate's parts; `nextCall` numbers the function calls Gemini gave no id. */
const blocksOf = (parts: ReadonlyArray<Json>, nextCall: () => number): Array<OutputBlock> => {
  const output: Array<OutputBlock> = []
  for (const part of parts) {
    if (typeof part !== "object" || part === null) continue
    const signature = typeof part.thoughtSignature === "string" ? part.thoughtSignature : undefined
    if (part.thought === true) {
      output.push(signature === undefined
        ? { type: "thought", text: String(part.text ?? "") }
        : { type: "thought", text: String(part.text ?? ""), signature })
      continue
    }
    if (signature !== undefined) output.push({ type: "thought", text: "", signature })
    if (typeof part.text === "string") {
      if (part.text !== "") output.push({ type: "text", text: part.text })
    } else if (isFunctionCall(part)) {
      const call = part.functionCall
      output.push({
        type: "tool_call",
        id: typeof call.id === "string" && call.id !== "" ? call.id : `${generatedIdPrefix}${nextCall()}`,
        raw_name: String(call.name ?? ""),
        raw_arguments: JSON.stringify(call.args ?? {})
      })
    } else {
      const { thoughtSignature: _signature, ...data } = part
      output.push({ type: "unknown", data, model_provider_name: unscopedProvider })
    }
  }
  return output
}

const partsOfCandidate = (candidate: Json | undefined): ReadonlyArray<Json> => {
  const parts = candidate?.content?.parts
  return Array.isArray(parts) ? parts : []
}

/** a prompt Gemini blocked: no candidate, `promptFeedback.blockReason` */
const blockedPrompt = (json: Json): boolean => typeof json?.promptFeedback?.blockReason === "string"

export const parseGeminiResponse = (text: string): ParsedResponse | WireProblem => {
  let json: Json
  try {
    json = JSON.parse(text)
  } catch {
    return notJson
  }
  const candidate = Array.isArray(json?.candidates) ? json.candidates[0] : undefined
  if (candidate === undefined && !blockedPrompt(json)) return new WireProblem("the provider answered without candidates")
  let calls = 0
  const parts = partsOfCandidate(candidate)
  const output = blocksOf(parts, () => calls++)
  return {
    output,
    usage: usageOf(json.usageMetadata) ?? { input_tokens: 0, output_tokens: 0 },
    finishReason: candidate === undefined ? "content_filter" : finishReasonOf(candidate.finishReason, parts.some(isFunctionCall))
  }
}

/**
 * Reads the `data:` events of a streamed answer. Text and thoughts continue across events
 * (one block each, until another kind of part comes between); a function call comes whole in
 * one event. Usage is cumulative: each event's replaces the last.
 */
export const makeGeminiChunkParser = (): StreamEventParser<string> => {
  let calls = 0
  let calledTools = false
  // a new text (or thought) block after a part of another kind
  let textBlock = 0
  let thoughtBlock = 0
  let last: "text" | "thought" | "other" | undefined
  return (data) => {
    let json: Json
    try {
      json = JSON.parse(data)
    } catch {
      return chunkNotJson
    }
    if (json?.error !== undefined) return streamedErrorProblem(json.error)
    const candidate = Array.isArray(json?.candidates) ? json.candidates[0] : undefined
    const content: Array<ChunkDelta> = []
    for (const block of blocksOf(partsOfCandidate(candidate), () => calls++)) {
      switch (block.type) {
        case "text":
          if (last !== "text" && last !== undefined) textBlock++
          last = "text"
          content.push({ type: "text", id: String(textBlock), text: block.text })
          break
        case "thought":
          // a signature Gemini put on another part is a thought of its own, not the end of the one before
          if (last !== undefined && (last !== "thought" || block.text === "")) thoughtBlock++
          last = block.text === "" ? "other" : "thought"
          content.push(block.signature === undefined
            ? { type: "thought", id: String(thoughtBlock), text: block.text }
            : { type: "thought", id: String(thoughtBlock), text: block.text, signature: block.signature })
          break
        case "tool_call":
          last = "other"
          calledTools = true
          content.push({ type: "tool_call", id: block.id, raw_name: block.raw_name, raw_arguments: block.raw_arguments })
          break
        case "unknown":
          // a stream has no unknown blocks: the part stays in the raw response
          last = "other"
          break
      }
    }
    const finishReason = candidate === undefined && blockedPrompt(json)
      ? "content_filter"
      : finishReasonOf(candidate?.finishReason, calledTools)
    return { content, usage: usageOf(json.usageMetadata), finishReason, raw: data }
  }
}
