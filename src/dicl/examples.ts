/**
 * The examples of dynamic in-context learning (`experimental_dynamic_in_context_learning`): what
 * is stored for each (an input, its output, the input's embedding), the text an input is embedded
 * by, and the user/assistant message pairs stored examples become before a request's input.
 *
 * `diclInputText` is the one serialization of an input: examples are embedded with it when they
 * are created (from datapoints or inferences) and a request's input at inference time, so that
 * equal inputs embed equally. It is stable JSON (keys sorted at every level) of the input as the
 * gateway stores it (spec 2.2: `system` and `messages`), with a message's string content written
 * as the one text block it stands for: `"hi"` and `[{"type": "text", "text": "hi"}]` are one input.
 */
import type { RequestBlock, RequestMessage } from "../inference/types.ts"
import { isRecord } from "../isRecord.ts"
import type { DiclNeighbor, DiclOutput } from "./store.ts"

/** `value` with every object's keys sorted and undefined fields left out, as JSON.stringify then writes it */
const sortedKeys = (value: unknown): unknown => {
  if (Array.isArray(value)) return value.map(sortedKeys)
  if (!isRecord(value)) return value
  const sorted: Record<string, unknown> = {}
  for (const key of Object.keys(value).sort()) {
    if (value[key] !== undefined) sorted[key] = sortedKeys(value[key])
  }
  return sorted
}

/** a message with string content as the text block it stands for */
const normalizedMessage = (message: unknown): unknown =>
  isRecord(message) && typeof message.content === "string"
    ? { ...message, content: [{ type: "text", text: message.content }] }
    : message

/** The text an input is embedded by: stable JSON of `{system, messages}` (see above). */
export const diclInputText = (input: unknown): string => {
  if (!isRecord(input)) return JSON.stringify(sortedKeys(input)) ?? "null"
  const messages = Array.isArray(input.messages) ? input.messages.map(normalizedMessage) : []
  return JSON.stringify(sortedKeys({ system: input.system, messages }))
}

/** a chat output block as the block an assistant message sends back, or undefined when it sends none */
const assistantBlock = (block: unknown): RequestBlock | undefined => {
  if (!isRecord(block)) return undefined
  if (block.type === "text" && typeof block.text === "string") return { type: "text", text: block.text }
  if (block.type === "tool_call" && typeof block.id === "string") {
    // an output's checked name, else the name the model gave; arguments as the model wrote them when known
    const name = typeof block.name === "string" ? block.name : typeof block.raw_name === "string" ? block.raw_name : undefined
    if (name === undefined) return undefined
    const args = typeof block.raw_arguments === "string" ? block.raw_arguments : JSON.stringify(block.arguments ?? {})
    return { type: "tool_call", id: block.id, name, arguments: args }
  }
  // thoughts and provider-specific blocks are the model's own business, not part of an example's answer
  return undefined
}

/**
 * The content of the assistant message of an example's output (empty when it has nothing to
 * say). A chat output with tool calls is written as one text block, the JSON of its blocks
 * (`{type: "tool_call", name, arguments}` for a call): a tool call in an assistant message must be
 * answered by a tool result in the next one at every provider, and an example has none.
 */
export const diclOutputContent = (output: DiclOutput, functionType: "chat" | "json"): ReadonlyArray<RequestBlock> => {
  if (functionType === "json") {
    const raw = isRecord(output) && typeof output.raw === "string" ? output.raw : undefined
    return raw === undefined ? [] : [{ type: "text", text: raw }]
  }
  if (!Array.isArray(output)) return []
  const blocks = output.flatMap((block) => assistantBlock(block) ?? [])
  if (!blocks.some((block) => block.type === "tool_call")) return blocks
  const written = blocks.map((block) =>
    block.type === "tool_call" ? { type: "tool_call", name: block.name, arguments: parsedArguments(block.arguments) } : block
  )
  return [{ type: "text", text: JSON.stringify(written) }]
}

/** a tool call's arguments as JSON when they parse, else as the text the model wrote */
const parsedArguments = (text: string): unknown => {
  try {
    return JSON.parse(text)
  } catch {
    return text
  }
}

/**
 * Examples as the messages that go before a request's input: for each, a user message holding
 * its input's text and an assistant message holding its output (chat: its text blocks and tool
 * calls; json: the raw JSON text). An example whose output has nothing to send is left out.
 */
export const diclExampleMessages = (
  examples: ReadonlyArray<Pick<DiclNeighbor, "input" | "output">>,
  functionType: "chat" | "json"
): Array<RequestMessage> =>
  examples.flatMap((example) => {
    const content = diclOutputContent(example.output, functionType)
    if (content.length === 0) return []
    return [
      { role: "user", content: [{ type: "text", text: diclInputText(example.input) }] },
      { role: "assistant", content }
    ]
  })

/** The euclidean norm of a vector: what cosine distances are divided by. */
export const vectorNorm = (vector: ReadonlyArray<number>): number => {
  let sum = 0
  for (const value of vector) sum += value * value
  return Math.sqrt(sum)
}

/** Why `vector` cannot be stored or searched by (empty, a value not finite, a zero norm: no direction), or undefined. */
export const embeddingProblem = (vector: ReadonlyArray<number>): string | undefined => {
  if (vector.length === 0) return "the embedding is empty"
  if (!vector.every((value) => typeof value === "number" && Number.isFinite(value))) return "the embedding holds a value that is not a finite number"
  return vectorNorm(vector) === 0 ? "the embedding is all zeros (no direction to compare)" : undefined
}

/**
 * A stored inference's output as an example's, or undefined when it makes none: chat, its
 * blocks when they hold a text or a tool call; json, its output when it parsed (an answer that
 * did not fit the schema is no example to follow).
 */
export const diclOutputOfInference = (functionType: "chat" | "json", output: unknown): DiclOutput | undefined => {
  if (functionType === "json") {
    return isRecord(output) && typeof output.raw === "string" && output.parsed !== null && output.parsed !== undefined
      ? { raw: output.raw, parsed: output.parsed }
      : undefined
  }
  return Array.isArray(output) && diclOutputContent(output, "chat").length > 0 ? output : undefined
}

/**
 * A datapoint's output, or a demonstration's value, as an example's (undefined when it makes
 * none): chat, its blocks (tool calls with an id: see `demonstrationOutput`); json, the value
 * with its JSON text.
 */
export const diclOutputOfValue = (functionType: "chat" | "json", value: unknown): DiclOutput | undefined => {
  if (value === undefined || value === null) return undefined
  if (functionType === "json") return { raw: JSON.stringify(value), parsed: value }
  return Array.isArray(value) && diclOutputContent(value, "chat").length > 0 ? value : undefined
}
