/**
 * A datapoint checked against its function (spec 2.5, 4.5), without rendering anything: its
 * input as an inference of the function would take it (role schemas, templates, thoughts only
 * from the assistant), its output as the function could answer it (tool calls of the tools it
 * offers, json that fits the output schema), its tool settings naming tools that exist. A
 * template a variant would render is not rendered here: variants change, datapoints stay.
 * Returns what is stored (chat tool calls in the output shape of an inference), or the
 * problem naming the field.
 */
import * as Result from "effect/Result"
import type { CreateDatapoint } from "../api/datasets.ts"
import type { Input, InputBlock, InferenceRequest } from "../api/inference.ts"
import { type FunctionConfig, type GatewayConfig, variantTemplates } from "../config/types.ts"
import { Buffer } from "node:buffer"
import { InvalidRequest, NotFound, PayloadTooLarge } from "../errors.ts"
import { isUuid } from "../ids.ts"
import { defaultFunctionName } from "../inference/prepare.ts"
import { templateArgumentsProblem } from "../inference/templates.ts"
import { holdsNul } from "../storedInferences/filter.ts"
import { toolCallProblem } from "../inference/toolCalls.ts"
import { resolveTools } from "../inference/tools.ts"
import type { ToolDefinition } from "../inference/types.ts"
import { compileRequestJsonSchema, type JsonSchemaValidator } from "../jsonSchema.ts"
import type { DatapointToolParams } from "./store.ts"

/** A datapoint as it is stored, but for its id, dataset and history. */
export interface CheckedDatapoint {
  readonly functionName: string
  readonly functionType: "chat" | "json"
  readonly input: Input
  readonly output?: unknown
  readonly episodeId?: string | undefined
  readonly tags: Readonly<Record<string, string>>
  readonly name?: string | undefined
  readonly toolParams?: DatapointToolParams | undefined
  readonly outputSchema?: unknown
}

/** `gateway::default` (model calls without a function): chat, with no schemas, templates nor tools */
const defaultFunction: FunctionConfig = {
  name: defaultFunctionName,
  type: "chat",
  schemas: new Map(),
  tools: [],
  toolChoice: { type: "auto" },
  variants: new Map(),
  evaluators: new Map()
}

const functionNamed = (config: GatewayConfig, name: string): FunctionConfig | undefined =>
  config.functions.get(name) ?? (name === defaultFunctionName ? defaultFunction : undefined)

/** whether template arguments named `name` have a schema or a template of some variant to go to */
const hasTemplate = (fn: FunctionConfig, name: string): boolean => {
  for (const variant of fn.variants.values()) if (variantTemplates(variant).has(name)) return true
  return false
}

/** template arguments for `name`: bounded, fitting its schema, and with somewhere to go */
const argumentsProblem = (fn: FunctionConfig, name: string, args: Record<string, unknown>, path: string): string | undefined => {
  // before the schema, which walks the arguments recursively
  const tooBig = templateArgumentsProblem(args)
  if (tooBig !== undefined) return `${path}: ${tooBig}`
  const schema = fn.schemas.get(name)
  if (schema !== undefined) {
    const problems = schema.validate(args)
    return problems === undefined ? undefined : `${path}: does not fit the ${name} schema: ${problems.join("; ")}`
  }
  return hasTemplate(fn, name)
    ? undefined
    : `${path}: function "${fn.name}" has no schema nor template "${name}" for these arguments`
}

const blockProblem = (fn: FunctionConfig, block: InputBlock, role: "user" | "assistant", path: string): string | undefined => {
  switch (block.type) {
    case "text":
      if ((block.text === undefined) === (block.arguments === undefined)) return `${path}: a text block takes exactly one of text or arguments`
      if (block.arguments !== undefined) return argumentsProblem(fn, role, block.arguments, `${path}.arguments`)
      return fn.schemas.has(role)
        ? `${path}.text: the function has a ${role} schema, so this block needs arguments instead of text`
        : undefined
    case "template":
      if (!fn.schemas.has(block.name) && !hasTemplate(fn, block.name)) {
        return `${path}.name: function "${fn.name}" has no schema nor template "${block.name}"`
      }
      return argumentsProblem(fn, block.name, block.arguments, `${path}.arguments`)
    case "thought":
      return role === "assistant" ? undefined : `${path}.type: thought blocks belong in assistant messages only`
    case "tool_call":
      return typeof (block.raw_name ?? block.name) === "string" ? undefined : `${path}.name: missing field`
    default:
      return undefined
  }
}

const inputProblem = (fn: FunctionConfig, input: Input, path: string): string | undefined => {
  if (typeof input.system === "string") {
    if (fn.schemas.has("system")) {
      return `${path}.system: the function has a system schema, so system must be an object of template arguments`
    }
  } else if (input.system !== undefined) {
    const problem = argumentsProblem(fn, "system", input.system, `${path}.system`)
    if (problem !== undefined) return problem
  }
  const messages = input.messages ?? []
  for (let i = 0; i < messages.length; i++) {
    const { role, content } = messages[i]
    const at = `${path}.messages[${i}].content`
    if (typeof content === "string") {
      if (fn.schemas.has(role)) return `${at}: the function has a ${role} schema, so content must be a list of blocks with arguments`
      continue
    }
    for (let j = 0; j < content.length; j++) {
      const problem = blockProblem(fn, content[j], role, `${at}[${j}]`)
      if (problem !== undefined) return problem
    }
  }
  return undefined
}

type ChatDatapoint = Extract<CreateDatapoint, { type: "chat" }>
type JsonDatapoint = Extract<CreateDatapoint, { type: "json" }>
type OutputBlock = NonNullable<ChatDatapoint["output"]>[number]

const parsedArguments = (block: Extract<OutputBlock, { type: "tool_call" }>): unknown => {
  if (block.arguments !== undefined || block.raw_arguments === undefined) return block.arguments
  try {
    return JSON.parse(block.raw_arguments)
  } catch {
    return block.raw_arguments
  }
}

/** the tools the datapoint's output may call, by name, or the problem with its tool settings */
const offeredTools = (
  fn: FunctionConfig,
  datapoint: ChatDatapoint,
  config: GatewayConfig,
  path: string
): ReadonlyMap<string, ToolDefinition> | string => {
  // the tool settings of an inference request, checked as an inference would check them
  const settings = {
    additional_tools: datapoint.additional_tools ?? undefined,
    allowed_tools: datapoint.allowed_tools ?? undefined,
    tool_choice: datapoint.tool_choice ?? undefined,
    parallel_tool_calls: datapoint.parallel_tool_calls ?? undefined
  } as InferenceRequest
  const result = resolveTools(fn, settings, config.tools)
  if (Result.isFailure(result)) return `${path}.${result.failure.path}: ${result.failure.message}`
  const resolved = result.success
  if (resolved === undefined) return new Map()
  // narrowed by allowed_tools, as a model's tool calls are (output.ts)
  const callable = resolved.tools.filter((tool) => resolved.allowed?.includes(tool.name) ?? true)
  return new Map(callable.map((tool) => [tool.name, tool]))
}

/** the chat output as stored: tool calls with their name and arguments, raw and parsed */
const chatOutput = (
  output: ReadonlyArray<OutputBlock>,
  tools: ReadonlyMap<string, ToolDefinition>,
  path: string
): ReadonlyArray<unknown> | string => {
  const blocks: Array<unknown> = []
  for (let i = 0; i < output.length; i++) {
    const block = output[i]
    if (block.type !== "tool_call") {
      blocks.push(block)
      continue
    }
    const name = block.name ?? block.raw_name
    const args = parsedArguments(block)
    const problem = toolCallProblem(name, args, tools, `${path}[${i}]`)
    if (problem !== undefined) return problem
    blocks.push({
      type: "tool_call",
      id: block.id,
      name,
      arguments: args,
      raw_name: block.raw_name ?? name,
      raw_arguments: block.raw_arguments ?? JSON.stringify(args)
    })
  }
  return blocks
}

const checkChat = (fn: FunctionConfig, datapoint: ChatDatapoint, config: GatewayConfig, path: string) => {
  const tools = offeredTools(fn, datapoint, config, path)
  if (typeof tools === "string") return tools
  let output: ReadonlyArray<unknown> | undefined
  if (datapoint.output != null) {
    const checked = chatOutput(datapoint.output, tools, `${path}.output`)
    if (typeof checked === "string") return checked
    output = checked
  }
  const toolParams: Record<string, unknown> = {}
  for (const field of ["allowed_tools", "tool_choice", "parallel_tool_calls", "additional_tools"] as const) {
    if (datapoint[field] !== undefined) toolParams[field] = datapoint[field]
  }
  return { output, toolParams: toolParams as DatapointToolParams }
}

const checkJson = (fn: FunctionConfig, datapoint: JsonDatapoint, path: string) => {
  let schema: JsonSchemaValidator | undefined = fn.outputSchema
  if (datapoint.output_schema != null) {
    const compiled = compileRequestJsonSchema(datapoint.output_schema)
    if ("error" in compiled) return `${path}.output_schema: ${compiled.error}`
    schema = compiled.validator
  }
  if (datapoint.output != null && schema !== undefined) {
    const problems = schema.validate(datapoint.output)
    if (problems !== undefined) return `${path}.output: does not fit the output schema: ${problems.join("; ")}`
  }
  return { output: datapoint.output ?? undefined, outputSchema: datapoint.output_schema ?? undefined }
}

const tagsProblem = (tags: Readonly<Record<string, string>>, path: string): string | undefined => {
  for (const [key, value] of Object.entries(tags)) {
    if (key.includes("\0")) return `${path}.tags: a key ${holdsNul}`
    if (value.includes("\0")) return `${path}.tags.${key}: ${holdsNul}`
  }
  return undefined
}

/**
 * The 413 of a datapoint larger than a stored row may be (`[gateway.observability]
 * max_row_bytes`, the bound that keeps every row readable), measured as it is stored; a
 * datapoint is refused rather than cut, since it is what evaluations and fine-tuning take as given.
 */
export const datapointSizeProblem = (datapoint: CheckedDatapoint, maxRowBytes: number, path: string): PayloadTooLarge | undefined => {
  const { input, output, tags, name, toolParams, outputSchema } = datapoint
  const bytes = Buffer.byteLength(JSON.stringify({ input, output, tags, name, toolParams, outputSchema }))
  return bytes <= maxRowBytes ? undefined : new PayloadTooLarge({
    message: `${path}: the datapoint is ${bytes} bytes as stored, over the ${maxRowBytes} bytes a stored row may hold ` +
      `([gateway.observability] max_row_bytes)`
  })
}

/** `datapoint` checked against its function; `path` names it in messages (`datapoints[2]`) */
export const checkDatapoint = (
  datapoint: CreateDatapoint,
  config: GatewayConfig,
  path: string
): Result.Result<CheckedDatapoint, InvalidRequest | NotFound> => {
  const invalid = (message: string) => Result.fail(new InvalidRequest({ message }))
  const fn = functionNamed(config, datapoint.function_name)
  if (fn === undefined) {
    return Result.fail(new NotFound({ message: `${path}.function_name: unknown function "${datapoint.function_name.slice(0, 200)}"` }))
  }
  if (fn.type !== datapoint.type) {
    return invalid(`${path}.type: function "${fn.name}" is a ${fn.type} function, so its datapoints are of type "${fn.type}"`)
  }
  const episodeId = datapoint.episode_id ?? undefined
  if (episodeId !== undefined && !isUuid(episodeId)) {
    return invalid(`${path}.episode_id: "${episodeId.slice(0, 100)}" is not an episode id (a UUID)`)
  }
  const tags = datapoint.tags ?? {}
  const badTags = tagsProblem(tags, path)
  if (badTags !== undefined) return invalid(badTags)
  const name = datapoint.name ?? undefined
  if (name?.includes("\0")) return invalid(`${path}.name: ${holdsNul}`)
  const badInput = inputProblem(fn, datapoint.input, `${path}.input`)
  if (badInput !== undefined) return invalid(badInput)
  const common = { functionName: fn.name, functionType: fn.type, input: datapoint.input, episodeId, tags, name }
  if (datapoint.type === "chat") {
    const chat = checkChat(fn, datapoint, config, path)
    return typeof chat === "string" ? invalid(chat) : Result.succeed({ ...common, ...chat })
  }
  const json = checkJson(fn, datapoint, path)
  return typeof json === "string" ? invalid(json) : Result.succeed({ ...common, ...json })
}
