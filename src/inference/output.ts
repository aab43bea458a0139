/**
 * Provider output -> the function's output (spec 2.3). Tool calls are checked against the
 * tools offered (`name`/`arguments` null when invalid, the raw values kept); json output is
 * parsed and checked against the output schema (`parsed` null when it does not fit).
 */
import type { JsonSchemaValidator } from "../jsonSchema.ts"
import type { ModelRequest, OutputBlock, ToolConfig, ToolDefinition } from "./types.ts"

export type ChatOutputBlock =
  | { readonly type: "text"; readonly text: string }
  | {
    readonly type: "tool_call"
    readonly id: string
    readonly name: string | null
    readonly arguments: unknown
    readonly raw_name: string
    readonly raw_arguments: string
  }
  | { readonly type: "thought"; readonly text: string; readonly signature?: string | undefined; readonly provider_type?: string | undefined }
  | { readonly type: "unknown"; readonly data: unknown; readonly model_provider_name: string }

export interface JsonOutput {
  readonly raw: string
  readonly parsed: unknown
}

/**
 * Whether an answer has tool calls for the caller to read: one through json_mode `tool` has not
 * (its tool's arguments are its text), though its finish reason says `tool_call`.
 */
export const hasToolCalls = (output: ReadonlyArray<ChatOutputBlock> | JsonOutput): boolean =>
  Array.isArray(output) && output.some((block) => block.type === "tool_call")

const parseJson = (text: string): { readonly value: unknown } | undefined => {
  try {
    return { value: JSON.parse(text) }
  } catch {
    return undefined
  }
}

const callableTool = (tools: ToolConfig | undefined, name: string): ToolDefinition | undefined => {
  if (tools === undefined) return undefined
  if (tools.allowed !== undefined && !tools.allowed.includes(name)) return undefined
  return tools.tools.find((tool) => tool.name === name)
}

export const validateToolCall = (
  tools: ToolConfig | undefined,
  id: string,
  rawName: string,
  rawArguments: string
): Extract<ChatOutputBlock, { type: "tool_call" }> => {
  const tool = callableTool(tools, rawName)
  let args: unknown = null
  // a custom tool's input is free text: it is its own argument
  if (tool?.custom !== undefined) args = rawArguments
  else if (tool !== undefined) {
    const parsed = parseJson(rawArguments)
    if (parsed !== undefined && tool.validator.validate(parsed.value) === undefined) args = parsed.value
  }
  return {
    type: "tool_call",
    id,
    name: tool === undefined ? null : rawName,
    arguments: args,
    raw_name: rawName,
    raw_arguments: rawArguments
  }
}

export const chatOutput = (
  blocks: ReadonlyArray<OutputBlock>,
  tools: ToolConfig | undefined
): ReadonlyArray<ChatOutputBlock> =>
  blocks.map((block) => block.type === "tool_call" ? validateToolCall(tools, block.id, block.raw_name, block.raw_arguments) : block)

/** the tool json_mode `tool` offers and forces, its parameters the output schema */
export const respondToolName = "respond"

/**
 * json_mode `tool`: the model answers by calling the `respond` tool built from the output
 * schema: a json function's, or the schema a chat function's request gave (OpenAI's
 * `response_format` with `json_schema`), as TensorZero does.
 */
export const answersWithRespondTool = (request: ModelRequest): boolean =>
  request.jsonMode === "tool" && (request.functionType === "json" || request.outputSchema !== undefined)

/**
 * A chat function's answer through the `respond` tool: the call's arguments are its text, as a
 * json function's are its output (`jsonRawText`); blocks of other answers are left as they are.
 */
export const respondToolAsText = (request: ModelRequest, blocks: ReadonlyArray<OutputBlock>): ReadonlyArray<OutputBlock> =>
  request.functionType === "chat" && answersWithRespondTool(request)
    ? blocks.map((block): OutputBlock => block.type === "tool_call" && block.raw_name === respondToolName ? { type: "text", text: block.raw_arguments } : block)
    : blocks

/** The JSON text of a json function's answer: its text, or the arguments of its tool call (json_mode `tool`). */
export const jsonRawText = (blocks: ReadonlyArray<OutputBlock>): string => {
  const text = blocks.filter((block) => block.type === "text").map((block) => block.text).join("")
  if (text !== "") return text
  const call = blocks.find((block) => block.type === "tool_call")
  return call?.type === "tool_call" ? call.raw_arguments : ""
}

export const jsonOutput = (raw: string, schema: JsonSchemaValidator | undefined): JsonOutput => {
  const parsed = parseJson(raw)
  if (parsed === undefined) return { raw, parsed: null }
  if (schema !== undefined && schema.validate(parsed.value) !== undefined) return { raw, parsed: null }
  return { raw, parsed: parsed.value }
}

const lacksMaker = (block: OutputBlock): boolean => block.type === "thought" && block.provider_type === undefined

/**
 * The blocks with each thought marked with the type of the provider that made it (unless it
 * says already: a relayed gateway's), so that its signature goes back only to providers that
 * can read it (src/providers/families.ts). The blocks themselves when there is nothing to mark.
 */
export const thoughtsMadeBy = (output: ReadonlyArray<OutputBlock>, providerType: string): ReadonlyArray<OutputBlock> =>
  output.some(lacksMaker) ? output.map((block) => lacksMaker(block) ? { ...block, provider_type: providerType } as OutputBlock : block) : output

/** a provider's answer with its thoughts marked as `thoughtsMadeBy` marks them */
export const withThoughtMaker = <R extends { readonly output: ReadonlyArray<OutputBlock> }>(response: R, providerType: string): R => {
  const output = thoughtsMadeBy(response.output, providerType)
  return output === response.output ? response : { ...response, output }
}
