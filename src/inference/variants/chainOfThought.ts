/**
 * `experimental_chain_of_thought`: a chat_completion variant whose model is asked to think
 * before it answers, its thinking returned apart from its answer.
 *
 * - json functions: the model answers `{"thinking": "...", "response": <the output>}` (the
 *   output schema is wrapped so, and strict json modes enforce it); `output.parsed` is the
 *   response, checked against the function's schema, and the thinking is a thought block in
 *   `output.auxiliary_content`.
 * - chat functions: the model is asked to think inside `<thinking>...</thinking>` first; that
 *   part becomes a thought block (also when streamed: the tags are found across chunks).
 */
import type { ChatOutputBlock, JsonOutput } from "../output.ts"
import { chatOutput, jsonOutput, jsonRawText } from "../output.ts"
import type { PreparedInference } from "../prepare.ts"
import type { ChunkDelta, ModelRequest, OutputBlock } from "../types.ts"
import type { ChunkReshaper, FunctionOutput } from "./answer.ts"

const jsonInstructions =
  "Think step by step before you answer. Answer with a JSON object with two fields: \"thinking\", your reasoning as a string, " +
  "then \"response\", your answer in the format asked for."
const chatInstructions =
  "Think step by step before you answer: write your reasoning between <thinking> and </thinking> first, then your answer " +
  "after the closing tag. Only the text after </thinking> is shown to the user."

const openTag = "<thinking>"
const closeTag = "</thinking>"

const withInstructions = (system: string | undefined, instructions: string) =>
  system === undefined || system === "" ? instructions : `${system}\n\n${instructions}`

/** the model call of a chain-of-thought variant: the instructions after the system prompt, json's schema wrapped */
export const chainOfThoughtRequest = (request: ModelRequest): ModelRequest => {
  if (request.functionType === "chat") return { ...request, system: withInstructions(request.system, chatInstructions) }
  return {
    ...request,
    system: withInstructions(request.system, jsonInstructions),
    outputSchema: {
      type: "object",
      properties: { thinking: { type: "string" }, response: request.outputSchema ?? {} },
      required: ["thinking", "response"],
      additionalProperties: false
    }
  }
}

export interface ThoughtfulJsonOutput extends JsonOutput {
  readonly auxiliary_content?: ReadonlyArray<{ readonly type: "thought"; readonly text: string }>
}

const parse = (text: string): unknown => {
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}

/** json: the response of `{thinking, response}`, checked; an answer not so wrapped is taken as it is */
const jsonThought = (prepared: PreparedInference, blocks: ReadonlyArray<OutputBlock>): ThoughtfulJsonOutput => {
  const raw = jsonRawText(blocks)
  const wrapped = parse(raw)
  if (typeof wrapped !== "object" || wrapped === null || Array.isArray(wrapped) || !("response" in wrapped)) {
    return jsonOutput(raw, prepared.outputSchema)
  }
  const { thinking, response } = wrapped as { thinking?: unknown; response: unknown }
  const output = jsonOutput(JSON.stringify(response), prepared.outputSchema)
  return typeof thinking === "string" ? { ...output, auxiliary_content: [{ type: "thought", text: thinking }] } : output
}

/** a text that starts with `<thinking>...</thinking>`, split into its thought and the rest */
const splitThinking = (text: string): ReadonlyArray<ChatOutputBlock> | undefined => {
  const trimmed = text.trimStart()
  if (!trimmed.startsWith(openTag)) return undefined
  const close = trimmed.indexOf(closeTag)
  if (close < 0) return [{ type: "thought", text: trimmed.slice(openTag.length).trim() }]
  const answer = trimmed.slice(close + closeTag.length).trimStart()
  return [
    { type: "thought", text: trimmed.slice(openTag.length, close).trim() },
    ...(answer === "" ? [] : [{ type: "text" as const, text: answer }])
  ]
}

const chatThought = (prepared: PreparedInference, blocks: ReadonlyArray<OutputBlock>): ReadonlyArray<ChatOutputBlock> =>
  chatOutput(blocks, prepared.tools).flatMap((block) => block.type === "text" ? splitThinking(block.text) ?? [block] : [block])

/** the function's output of a chain-of-thought answer */
export const chainOfThoughtOutput = (prepared: PreparedInference, blocks: ReadonlyArray<OutputBlock>): FunctionOutput =>
  prepared.fn.type === "json" ? jsonThought(prepared, blocks) : chatThought(prepared, blocks)

/**
 * Streamed chat: text deltas before `</thinking>` become thought deltas, the tags left out. A
 * delta that might end in the middle of a tag is held back until the next one tells.
 */
export const thinkingReshaper = (): ChunkReshaper => {
  /** where the text stream is: before any text, inside the thinking, after it */
  let phase: "start" | "thinking" | "answer" = "start"
  let pending = ""
  let textId = "cot"
  const release = (text: string, deltas: Array<ChunkDelta>, final: boolean) => {
    pending += text
    for (;;) {
      if (phase === "start") {
        const trimmed = pending.trimStart()
        if (trimmed.startsWith(openTag)) {
          pending = trimmed.slice(openTag.length)
          phase = "thinking"
          continue
        }
        // still possibly the opening tag: wait for more
        if (!final && openTag.startsWith(trimmed)) return
        phase = "answer"
        continue
      }
      if (phase === "thinking") {
        const close = pending.indexOf(closeTag)
        if (close >= 0) {
          if (close > 0) deltas.push({ type: "thought", id: "cot-thinking", text: pending.slice(0, close) })
          pending = pending.slice(close + closeTag.length).replace(/^\s+/, "")
          phase = "answer"
          continue
        }
        // keep back what could be the start of the closing tag
        let keep = 0
        for (let n = Math.min(closeTag.length - 1, pending.length); n > 0; n--) {
          if (closeTag.startsWith(pending.slice(pending.length - n))) {
            keep = n
            break
          }
        }
        const ready = final ? pending : pending.slice(0, pending.length - keep)
        if (ready !== "") deltas.push({ type: "thought", id: "cot-thinking", text: ready })
        pending = final ? "" : pending.slice(pending.length - keep)
        return
      }
      if (pending !== "") deltas.push({ type: "text", id: textId, text: pending })
      pending = ""
      return
    }
  }
  return {
    chunk: (chunk) => {
      const content: Array<ChunkDelta> = []
      for (const delta of chunk.content) {
        if (delta.type !== "text") {
          content.push(delta)
          continue
        }
        textId = delta.id
        release(delta.text, content, false)
      }
      return content.length === chunk.content.length && content.every((delta, i) => delta === chunk.content[i])
        ? chunk
        : { ...chunk, content }
    },
    end: () => {
      const content: Array<ChunkDelta> = []
      release("", content, true)
      return content.length === 0 ? undefined : { content, raw: "" }
    }
  }
}
