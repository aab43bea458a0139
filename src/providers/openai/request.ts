/**
 * ModelRequest -> OpenAI Chat Completions request body, for OpenAI and every server of the
 * family (`chatCompletionsFamily.ts`): what differs between them (the URL, the names of the
 * parameters, usage in streams) comes in the call's target.
 */
import { answersWithRespondTool, respondToolName } from "../../inference/output.ts"
import type { FileSource, ModelRequest, RequestBlock, ToolDefinition } from "../../inference/types.ts"
import type { InferenceParams } from "../../inference/params.ts"
import { type WireBody, type WireCall, WireProblem } from "../codec.ts"

type Json = WireBody


/** A base64 file as a `data:` URL. */
export const dataUrl = (source: Extract<FileSource, { kind: "base64" }>) => `data:${source.mimeType};base64,${source.data}`

const audioFormats: Readonly<Record<string, string>> = {
  "audio/wav": "wav",
  "audio/x-wav": "wav",
  "audio/wave": "wav",
  "audio/mpeg": "mp3",
  "audio/mp3": "mp3"
}

type FileBlock = Extract<RequestBlock, { type: "file" }>
type ThoughtBlock = Extract<RequestBlock, { type: "thought" }>

/** A user content part for a file, or an explanation of why OpenAI cannot take it. */
const filePart = (block: FileBlock, providerType: string): Json | WireProblem => {
  const source = block.source
  const mime = source.mimeType
  if (mime === undefined || mime.startsWith("image/")) {
    const url = source.kind === "url" ? source.url : dataUrl(source)
    return { type: "image_url", image_url: block.detail === undefined ? { url } : { url, detail: block.detail } }
  }
  if (source.kind === "url") {
    return new WireProblem(`the ${providerType} provider takes files other than images as base64 data, not as a URL (${mime})`)
  }
  const audioFormat = audioFormats[mime]
  if (audioFormat !== undefined) return { type: "input_audio", input_audio: { data: source.data, format: audioFormat } }
  return { type: "file", file: { file_data: dataUrl(source), filename: `input.${mime.split("/")[1] ?? "bin"}` } }
}

/**
 * What a server speaking nearly Chat Completions does differently in the messages it takes
 * (Mistral, `../mistral/request.ts`). A constant per server: the builder reads its fields, no
 * closure is made per request.
 */
export interface ChatMessagesDialect {
  /** the id a tool call (and its result) is sent back with; undefined: as it is */
  readonly toolCallId: ((id: string) => string) | undefined
  /** a tool result also names its tool (`name`) */
  readonly toolResultName: boolean
  /** the content of an assistant message of tool calls only */
  readonly emptyAssistantContent: null | ""
  readonly filePart: (block: FileBlock, providerType: string) => Json | WireProblem
  /** the content part a thought goes back as; undefined: not sent */
  readonly thoughtPart: ((block: ThoughtBlock, role: ModelRequest["messages"][number]["role"]) => Json | undefined) | undefined
}

/** OpenAI's own: ids as they are, files by `filePart`, reasoning not sent back (Chat Completions has no way to). */
export const openAiMessagesDialect: ChatMessagesDialect = {
  toolCallId: undefined,
  toolResultName: false,
  emptyAssistantContent: null,
  filePart,
  thoughtPart: undefined
}

const contentOf = (parts: ReadonlyArray<Json>): string | ReadonlyArray<Json> =>
  parts.length === 1 && parts[0].type === "text" ? parts[0].text as string : parts

export const toOpenAiMessages = (
  request: ModelRequest,
  qualifiedName: string,
  providerType: string,
  dialect: ChatMessagesDialect = openAiMessagesDialect
): ReadonlyArray<Json> | WireProblem => {
  const messages: Array<Json> = []
  const toolCallId = dialect.toolCallId
  if (request.system !== undefined) messages.push({ role: "system", content: request.system })
  for (const message of request.messages) {
    const parts: Array<Json> = []
    const toolCalls: Array<Json> = []
    for (const block of message.content) {
      switch (block.type) {
        case "text":
          parts.push({ type: "text", text: block.text })
          break
        case "tool_call": {
          const id = toolCallId === undefined ? block.id : toolCallId(block.id)
          toolCalls.push({ id, type: "function", function: { name: block.name, arguments: block.arguments } })
          break
        }
        case "tool_result": {
          const id = toolCallId === undefined ? block.id : toolCallId(block.id)
          messages.push(
            dialect.toolResultName
              ? { role: "tool", tool_call_id: id, name: block.name, content: block.result }
              : { role: "tool", tool_call_id: id, content: block.result }
          )
          break
        }
        case "file": {
          const part = dialect.filePart(block, providerType)
          if (part instanceof WireProblem) return part
          parts.push(part)
          break
        }
        case "thought": {
          if (dialect.thoughtPart === undefined) break
          const part = dialect.thoughtPart(block, message.role)
          if (part !== undefined) parts.push(part)
          break
        }
        case "unknown":
          if (block.modelProviderName === undefined || block.modelProviderName === qualifiedName) {
            parts.push(block.data as Json)
          }
          break
      }
    }
    if (message.role === "user") {
      if (parts.length > 0) messages.push({ role: "user", content: contentOf(parts) })
    } else if (parts.length > 0 || toolCalls.length > 0) {
      const assistant: Json = { role: "assistant", content: parts.length > 0 ? contentOf(parts) : dialect.emptyAssistantContent }
      if (toolCalls.length > 0) assistant.tool_calls = toolCalls
      messages.push(assistant)
    }
  }
  return messages
}

const toolOf = (tool: ToolDefinition): Json =>
  tool.custom !== undefined
    ? {
      type: "custom",
      custom: {
        name: tool.name,
        ...(tool.description === "" ? {} : { description: tool.description }),
        ...(tool.custom.format === undefined ? {} : { format: tool.custom.format })
      }
    }
    : {
      type: "function",
      function: {
        name: tool.name,
        description: tool.description,
        parameters: tool.parameters,
        ...(tool.strict ? { strict: true } : {})
      }
    }

/** How OpenAI names one tool in `tool_choice` and `allowed_tools`. */
const choiceOf = (tools: ReadonlyArray<ToolDefinition>, name: string): Json =>
  tools.find((tool) => tool.name === name)?.custom !== undefined ? { type: "custom", custom: { name } } : { type: "function", function: { name } }

type ToolChoiceMode = Exclude<NonNullable<ModelRequest["tools"]>["choice"]["type"], "specific" | "none">

/**
 * How an API writes tools and the tool choice: Chat Completions nests a function's fields
 * under `function`, the Responses API (`responses/request.ts`) writes them flat. A constant per
 * API, read by `addTools`.
 */
export interface ToolShapes {
  /** the json_mode tool `respond`, taking the output schema */
  readonly respondTool: (parameters: unknown) => Json
  /** `tool_choice` naming the `respond` tool */
  readonly respondChoice: () => Json
  readonly toolOf: (tool: ToolDefinition) => Json
  /** names one of the request's tools in `tool_choice` and `allowed_tools` */
  readonly choiceOf: (tools: ReadonlyArray<ToolDefinition>, name: string) => Json
  /** `tool_choice` restricting the model to some tools */
  readonly allowedChoice: (mode: ToolChoiceMode, tools: ReadonlyArray<Json>) => Json
}

export const respondToolDescription = "Respond to the user with JSON that follows the schema."

const chatCompletionsTools: ToolShapes = {
  respondTool: (parameters) => ({
    type: "function",
    function: { name: respondToolName, description: respondToolDescription, parameters }
  }),
  respondChoice: () => ({ type: "function", function: { name: respondToolName } }),
  toolOf,
  choiceOf,
  allowedChoice: (mode, tools) => ({ type: "allowed_tools", allowed_tools: { mode, tools } })
}

/** `tools` and `tool_choice` (when there are tools): the request's, or the `respond` tool of json_mode tool, then the provider tools */
export const addTools = (body: Json, request: ModelRequest, providerTools: ReadonlyArray<unknown>, shapes: ToolShapes): void => {
  const tools: Array<unknown> = []
  let choice: unknown
  if (answersWithRespondTool(request)) {
    tools.push(shapes.respondTool(request.outputSchema ?? { type: "object" }))
    choice = shapes.respondChoice()
  } else if (request.tools !== undefined && request.tools.tools.length > 0) {
    const config = request.tools
    for (const tool of config.tools) tools.push(shapes.toolOf(tool))
    const c = config.choice
    if (c.type === "specific") choice = shapes.choiceOf(config.tools, c.name)
    else if (config.allowed !== undefined && c.type !== "none") {
      choice = shapes.allowedChoice(c.type, config.allowed.map((name) => shapes.choiceOf(config.tools, name)))
    } else choice = c.type
    if (config.parallelToolCalls !== undefined) body.parallel_tool_calls = config.parallelToolCalls
  }
  // built-in tools (web_search, file_search, code_interpreter...) as the request gives them
  for (const providerTool of providerTools) tools.push(providerTool)
  if (tools.length > 0) {
    body.tools = tools
    if (choice !== undefined) body.tool_choice = choice
  }
}

/**
 * How a server takes json_mode `strict`: OpenAI's `json_schema` (native structured output);
 * `json_object` for a server with JSON mode but no schema (DeepSeek: the schema is then only
 * checked by the gateway on the answer); `tgi` for TGI's own grammar (`{type: "json", value: schema}`).
 */
export type StructuredOutput = "json_schema" | "json_object" | "tgi"

// json functions ask for JSON per their json_mode; a chat function only when the request set
// one (OpenAI's `response_format`)
const responseFormat = (request: ModelRequest, structured: StructuredOutput): Json | undefined => {
  switch (request.jsonMode) {
    case "on":
      return structured === "tgi" ? { type: "json", value: { type: "object" } } : { type: "json_object" }
    case "strict": {
      const schema = request.outputSchema
      if (schema === undefined || structured === "json_object") {
        return structured === "tgi" ? { type: "json", value: schema ?? { type: "object" } } : { type: "json_object" }
      }
      return structured === "tgi"
        ? { type: "json", value: schema }
        : { type: "json_schema", json_schema: { name: "response", strict: true, schema } }
    }
    default:
      return undefined
  }
}

/** An inference parameter and the body field it is sent as. */
export type ParamField = readonly [name: keyof InferenceParams, field: string]

/** What one provider of the family sends every call with, settled at start-up. */
export interface ChatCompletionsTarget {
  /** the provider type, named in the problems of a request it cannot take */
  readonly providerType?: string | undefined
  readonly url: string
  readonly model: string
  /** the parameters the server takes, in body order, with their field names */
  readonly paramFields: ReadonlyArray<ParamField>
  /** values for parameters the request leaves unset */
  readonly paramDefaults: Partial<InferenceParams> | undefined
  /** asks for usage in the last streamed chunk (`stream_options.include_usage`) */
  readonly streamUsage: boolean
  /** how json_mode strict is asked for; default `json_schema` */
  readonly structuredOutput?: StructuredOutput | undefined
}

export const chatCompletionsUrl = (apiBase: string): string =>
  new URL("chat/completions", apiBase.endsWith("/") ? apiBase : `${apiBase}/`).toString()

/** The request body of one call, or an explanation when the request cannot be expressed. */
export const chatCompletionsBody = (
  request: ModelRequest,
  call: WireCall<ChatCompletionsTarget>,
  dialect: ChatMessagesDialect = openAiMessagesDialect
): Json | WireProblem => {
  const messages = toOpenAiMessages(request, call.qualifiedName, call.target.providerType ?? "openai", dialect)
  if (messages instanceof WireProblem) return messages
  const target = call.target
  const body: Json = { model: target.model, messages }
  const params = request.params
  const defaults = target.paramDefaults
  const fields = target.paramFields
  // the member's declared map, walked: ~0.1 us more per request than the if chain it replaced
  // (0.16 against 0.05 us to fill a body with two parameters, Node 24), next to ~350 us of overhead
  for (let i = 0; i < fields.length; i++) {
    const name = fields[i][0]
    const value = defaults === undefined ? params[name] : params[name] ?? defaults[name]
    if (value !== undefined) body[fields[i][1]] = value
  }
  addTools(body, request, call.providerTools, chatCompletionsTools)
  const format = responseFormat(request, target.structuredOutput ?? "json_schema")
  if (format !== undefined) body.response_format = format
  if (call.stream) {
    body.stream = true
    if (target.streamUsage) body.stream_options = { include_usage: true }
  }
  return body
}
