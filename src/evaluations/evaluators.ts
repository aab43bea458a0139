/**
 * Scoring one inference of an evaluation run, without I/O: the deterministic evaluators
 * (`exact_match`, `regex`, `tool_use`) score at once; an `llm_judge` is an inference of its
 * own built-in json function, so here are only its input (what the judge is shown) and the
 * reading of its answer.
 */
import { bounded, cutIndex, fenced, prettyJson } from "../promptText.ts"
import type { Input, InputBlock, InputMessage } from "../api/inference.ts"
import type { EvaluatorConfig } from "../config/types.ts"
import type { StoredDatapoint } from "../datasets/store.ts"
import type { ChatOutputBlock, JsonOutput } from "../inference/output.ts"
import type { ModelRequest, RequestBlock, RequestMessage } from "../inference/types.ts"
import { isRecord } from "../isRecord.ts"

/** null: the evaluator does not apply (e.g. no reference output) */
export type Score = boolean | number | null

/** What an evaluator looks at: the datapoint, the inference's output, and the model call that produced it. */
export interface Evaluated {
  readonly functionType: "chat" | "json"
  readonly datapoint: StoredDatapoint
  /** the inference's validated output */
  readonly output: ReadonlyArray<ChatOutputBlock> | JsonOutput
  /** the model call as rendered (system and messages after templates): what a judge with input_format "messages" sees */
  readonly modelRequest: ModelRequest
}

export type DeterministicEvaluator = Exclude<EvaluatorConfig, { readonly type: "llm_judge" }>
export type JudgeEvaluator = Extract<EvaluatorConfig, { readonly type: "llm_judge" }>

type ToolCallOutput = Extract<ChatOutputBlock, { type: "tool_call" }>

const chatBlocks = (output: Evaluated["output"]): ReadonlyArray<ChatOutputBlock> | undefined =>
  Array.isArray(output) ? output as ReadonlyArray<ChatOutputBlock> : undefined

/** the text of an output, as regex sees it: chat: its text blocks joined with "\n"; json: raw */
export const outputText = (output: Evaluated["output"]): string => {
  const blocks = chatBlocks(output)
  return blocks === undefined
    ? (output as JsonOutput).raw
    : blocks.flatMap((block) => block.type === "text" ? [block.text] : []).join("\n")
}

/** JSON values equal, objects whatever the order of their keys (arrays in order) */
export const jsonEqual = (a: unknown, b: unknown): boolean => {
  if (a === b) return true
  if (Array.isArray(a)) return Array.isArray(b) && a.length === b.length && a.every((item, i) => jsonEqual(item, b[i]))
  if (!isRecord(a) || !isRecord(b)) return false
  const keys = Object.keys(a)
  return keys.length === Object.keys(b).length && keys.every((key) => Object.hasOwn(b, key) && jsonEqual(a[key], b[key]))
}

/**
 * The datapoint's reference output, or undefined when it has none. The store keeps a chat
 * datapoint's output as its blocks and a json datapoint's as the value itself (src/datasets/
 * validate.ts, fromInferences.ts), and never keeps a json null: null is "no output".
 */
const referenceOutput = (evaluated: Evaluated): { readonly value: unknown } | undefined => {
  const value = evaluated.datapoint.output
  if (value === undefined || value === null) return undefined
  if (evaluated.functionType === "chat" && !Array.isArray(value)) return undefined
  return { value }
}

const texts = (blocks: ReadonlyArray<unknown>): ReadonlyArray<string> =>
  blocks.flatMap((block) => isRecord(block) && block.type === "text" && typeof block.text === "string" ? [block.text] : [])

/**
 * chat: the texts of the text blocks, in order, equal the reference's exactly (no trimming, no
 * Unicode normalisation; thoughts, tool calls and unknown blocks do not count). json: the
 * parsed output deep-equals the reference value; an output that did not parse or fit the
 * schema (`parsed` null) never matches, since a reference is never null.
 */
const exactMatch = (evaluated: Evaluated): Score => {
  const reference = referenceOutput(evaluated)
  if (reference === undefined) return null
  const blocks = chatBlocks(evaluated.output)
  if (blocks !== undefined) {
    const expected = texts(reference.value as ReadonlyArray<unknown>)
    const actual = texts(blocks)
    return expected.length === actual.length && expected.every((text, i) => text === actual[i])
  }
  const parsed = (evaluated.output as JsonOutput).parsed
  return parsed !== null && jsonEqual(parsed, reference.value)
}

/** the tools a chat output called, by the name the model gave (a json output calls none) */
const calledTools = (output: Evaluated["output"]): ReadonlySet<string> =>
  new Set((chatBlocks(output) ?? []).flatMap((block) => block.type === "tool_call" ? [block.raw_name] : []))

export const scoreOutput = (evaluator: DeterministicEvaluator, evaluated: Evaluated): Score => {
  switch (evaluator.type) {
    case "exact_match":
      return exactMatch(evaluated)
    case "regex": {
      const text = outputText(evaluated.output)
      return (evaluator.mustMatch?.test(text) ?? true) && !(evaluator.mustNotMatch?.test(text) ?? false)
    }
    case "tool_use": {
      const called = calledTools(evaluated.output)
      switch (evaluator.behavior) {
        case "none":
          return called.size === 0
        case "any":
          return called.size > 0
        case "none_of":
          return evaluator.tools.every((tool) => !called.has(tool))
        case "any_of":
          return evaluator.tools.some((tool) => called.has(tool))
        case "all_of":
          return evaluator.tools.every((tool) => called.has(tool))
      }
    }
    case "typescript":
      // refused before a run starts (`runnableEvaluatorsProblem`): no score
      return null
  }
}

/** why a run (an evaluation, GEPA) cannot use `evaluators`, naming `field`: TensorZero's TypeScript evaluators are not run here */
export const runnableEvaluatorsProblem = (evaluators: ReadonlyArray<EvaluatorConfig>, field: string): string | undefined => {
  const typescript = evaluators.find((evaluator) => evaluator.type === "typescript")
  return typescript === undefined
    ? undefined
    : `${field}: evaluator "${typescript.name}" is a TypeScript evaluator, which this gateway does not run (name the others)`
}

// ---- the judge's input

/** characters of one section of what a judge is shown, beyond which it is cut */
export const maxJudgeSectionLength = 40_000

/** a tool call's arguments as a judge reads them: the parsed value, else the text the model gave */
const readableArguments = (parsed: unknown, raw: unknown): unknown => {
  if (parsed !== undefined && parsed !== null) return parsed
  if (typeof raw !== "string") return parsed ?? null
  try {
    return JSON.parse(raw)
  } catch {
    return raw
  }
}

/**
 * Chat blocks (an output, or a datapoint's reference) as a judge reads them: text, and tool
 * calls by the name the model gave; thoughts and provider-specific blocks are not the answer.
 */
const readableBlocks = (blocks: ReadonlyArray<unknown>): ReadonlyArray<unknown> =>
  blocks.flatMap((block): ReadonlyArray<unknown> => {
    if (!isRecord(block)) return []
    if (block.type === "text") return [{ type: "text", text: block.text }]
    if (block.type === "tool_call") {
      const call = block as Partial<ToolCallOutput>
      return [{ type: "tool_call", name: call.raw_name ?? call.name, arguments: readableArguments(call.arguments, call.raw_arguments) }]
    }
    return []
  })

const generatedOutputText = (output: Evaluated["output"]): string => {
  const blocks = chatBlocks(output)
  return blocks === undefined ? (output as JsonOutput).raw : prettyJson(readableBlocks(blocks))
}

const referenceOutputText = (evaluated: Evaluated, reference: unknown): string =>
  evaluated.functionType === "chat" ? prettyJson(readableBlocks(reference as ReadonlyArray<unknown>)) : prettyJson(reference)

const section = (title: string, text: string): string => `## ${title}\n${fenced(bounded(text, maxJudgeSectionLength))}`

const userText = (text: string): InputMessage => ({ role: "user", content: [{ type: "text", text }] })

/** the sections every judge gets: what to judge by, the generated output, and the reference output when included */
const outputSections = (evaluator: JudgeEvaluator, evaluated: Evaluated, reference: { readonly value: unknown } | undefined) => ({
  criteria: evaluator.description === undefined ? [] : [section("Evaluation criteria", evaluator.description)],
  outputs: [
    section("Generated output", generatedOutputText(evaluated.output)),
    ...(reference === undefined ? [] : [section("Reference output", referenceOutputText(evaluated, reference.value))])
  ]
})

/**
 * A rendered tool call's arguments (JSON text) as an input's: the parsed value, else the text
 * itself, which the inference sends as it is (a JSON string stays text: parsed, it would lose
 * its quotes when sent)
 */
const inputArguments = (text: string): unknown => {
  try {
    const parsed: unknown = JSON.parse(text)
    return typeof parsed === "string" ? text : parsed
  } catch {
    return text
  }
}

/** a rendered block as a block of an /inference input; thoughts and provider-specific blocks are dropped */
const inputBlock = (block: RequestBlock): InputBlock | undefined => {
  switch (block.type) {
    case "text":
      return { type: "text", text: block.text }
    case "tool_call":
      return { type: "tool_call", id: block.id, name: block.name, arguments: inputArguments(block.arguments) }
    case "tool_result":
      return { type: "tool_result", id: block.id, name: block.name, result: block.result }
    case "file": {
      const detail = block.detail === undefined ? {} : { detail: block.detail }
      return block.source.kind === "url"
        ? {
          type: "file",
          file_type: "url",
          url: block.source.url,
          ...(block.source.mimeType === undefined ? {} : { mime_type: block.source.mimeType }),
          ...detail
        }
        : { type: "file", file_type: "base64", data: block.source.data, mime_type: block.source.mimeType, ...detail }
    }
    case "thought":
    case "unknown":
      return undefined
  }
}

/** a rendered message as an input message; undefined when nothing of it is left */
const inputMessage = (message: RequestMessage): InputMessage | undefined => {
  const content = message.content.flatMap((block) => inputBlock(block) ?? [])
  return content.length === 0 ? undefined : { role: message.role, content }
}

export const evaluatedSystemPrefix = "System instructions of the evaluated model:"

/**
 * The input of the judge's inference: user and assistant messages only, since the judge's
 * instructions are its variant's system template. undefined when it cannot judge: it is to
 * compare with the reference output, and the datapoint has none.
 *
 * serialized: one user message with labelled sections (criteria, the datapoint's input as
 * JSON, the generated output, the reference). messages: the evaluated call's conversation as
 * the model saw it, its system prompt as a first user message, then one user message with the
 * criteria and the outputs.
 */
export const judgeInput = (evaluator: JudgeEvaluator, evaluated: Evaluated): Input | undefined => {
  const reference = evaluator.includeReferenceOutput ? referenceOutput(evaluated) : undefined
  if (evaluator.includeReferenceOutput && reference === undefined) return undefined
  const { criteria, outputs } = outputSections(evaluator, evaluated, reference)
  if (evaluator.inputFormat === "serialized") {
    const task = section("Task input", prettyJson(evaluated.datapoint.input))
    return { messages: [userText([...criteria, task, ...outputs].join("\n\n"))] }
  }
  const { system, messages } = evaluated.modelRequest
  const conversation = messages.flatMap((message) => inputMessage(message) ?? [])
  const intro = "The conversation above is what the evaluated model was given; this is its answer."
  return {
    messages: [
      ...(system === undefined || system === "" ? [] : [userText(`${evaluatedSystemPrefix}\n\n${system}`)]),
      ...conversation,
      userText([intro, ...criteria, ...outputs].join("\n\n"))
    ]
  }
}

// ---- the judge's answer

const maxQuotedAnswer = 200

const quoted = (raw: string): string => {
  const end = cutIndex(raw, maxQuotedAnswer)
  return end === raw.length ? JSON.stringify(raw) : `${JSON.stringify(raw.slice(0, end))}...`
}

/** the judge's answer `{thinking, score}` -> its score, or why it is not one */
export const judgeScore = (evaluator: JudgeEvaluator, answer: JsonOutput): Score | { readonly problem: string } => {
  const expected = evaluator.outputType === "boolean" ? "a boolean" : "a finite number"
  const problem = (why: string) => ({ problem: `the judge's answer ${why}: ${quoted(answer.raw)}` })
  if (!isRecord(answer.parsed)) return problem("is not a JSON object fitting its output schema")
  if (!Object.hasOwn(answer.parsed, "score")) return problem("has no score")
  const score = answer.parsed.score
  if (evaluator.outputType === "boolean") return typeof score === "boolean" ? score : problem(`has a score that is not ${expected}`)
  return typeof score === "number" && Number.isFinite(score) ? score : problem(`has a score that is not ${expected}`)
}
