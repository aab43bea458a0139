/**
 * OpenAI Responses request -> the gateway's inference request (issue 37, design 3.1): the same
 * inference path as `/inference` behind OpenAI's Responses surface. Stateless for now: nothing
 * is stored for `previous_response_id`, which is refused, as are built-in tools.
 */
import * as Result from "effect/Result"
import { type Detail, fileOfUrl, dataUrlPattern } from "../api/fileUrls.ts"
import { type AdditionalTool, functionTool } from "../api/functionTools.ts"
import { gatewayRequestPart } from "../api/gatewayFields.ts"
import type { ChatCompletionParams, InferenceRequest, InputBlock, InputMessage } from "../api/inference.ts"
import { parseModelOrBareName, pinnedVariant } from "../api/modelField.ts"
import { checkClientTags, surfaceTag } from "../api/tags.ts"
import { InvalidRequest, type NotFound } from "../errors.ts"
import type { PrepareExtras } from "../inference/prepare.ts"
import type { CustomTool } from "../inference/tools.ts"
import { compileRequestJsonSchema } from "../jsonSchema.ts"
import { quoted } from "../untrusted.ts"
import type { ContentPart, CreateResponseRequest, CustomTool as CustomToolSchema, FunctionTool, InputItem, Tool, ToolChoice, ToolOutput } from "./api.ts"

/** the request's settings as the response echoes them (OpenAI's defaults where absent) */
export interface EchoedSettings {
  readonly instructions: string | null
  readonly tools: ReadonlyArray<unknown>
  readonly tool_choice: unknown
  readonly parallel_tool_calls: boolean
  readonly temperature: number | null
  readonly top_p: number | null
  readonly max_output_tokens: number | null
  readonly text: { readonly format: unknown; readonly verbosity?: string }
  readonly reasoning: { readonly effort: string | null; readonly summary: string | null }
  readonly metadata: Readonly<Record<string, string>>
  readonly store: false
  readonly previous_response_id: null
  readonly truncation: "disabled"
  readonly user?: string
  readonly service_tier?: string
}

export interface TranslatedResponse {
  readonly request: InferenceRequest
  readonly extras: PrepareExtras
  readonly stream: boolean
  /** the request's `model` as sent: the response echoes it, as OpenAI's does */
  readonly model: string
  /** `include` asks for `reasoning.encrypted_content`: reasoning items carry their signature */
  readonly encryptedReasoning: boolean
  readonly echo: EchoedSettings
  /** what the caller should know though it does not stop the request (the `gateway-warning` header) */
  readonly warning?: string | undefined
}

/** what the translation needs of the configuration */
export interface ConfiguredNames {
  readonly isModel: (name: string) => boolean
  readonly functionType: (name: string) => "chat" | "json" | undefined
}

type Translated<A> = Result.Result<A, InvalidRequest>

const invalid = (message: string): Translated<never> => Result.fail(new InvalidRequest({ message }))

/** OpenAI's bounds on `metadata` */
const metadataLimits = { keys: 16, keyLength: 64, valueLength: 512 }

export const storeWarning = "stored responses are not served yet: this response is not stored (store: false)"

const detailOf = (detail: string | null | undefined): Detail | undefined =>
  detail === "low" || detail === "high" || detail === "auto" ? detail : undefined

const filesApi = "file ids need the Files API, which the gateway does not serve"

/** an `input_image` or `input_file` part as a file; `path` names it in a 400 */
const fileOf = (part: Extract<ContentPart, { type: "input_image" | "input_file" }>, path: () => string): Translated<InputBlock> => {
  if (part.type === "input_image") {
    if (part.image_url !== undefined && part.image_url !== null) return Result.succeed(fileOfUrl(part.image_url, detailOf(part.detail)))
    return invalid(part.file_id ? `${path()}.file_id: ${filesApi}; send image_url` : `${path()}.image_url: missing`)
  }
  if (part.file_data !== undefined && part.file_data !== null) {
    const match = dataUrlPattern.exec(part.file_data)
    if (match !== null) return Result.succeed({ type: "file", file_type: "base64", data: match[2], mime_type: match[1] })
    // OpenAI's SDKs also send bare base64 beside a file name; a PDF's name says what it is
    if (part.filename?.toLowerCase().endsWith(".pdf")) {
      return Result.succeed({ type: "file", file_type: "base64", data: part.file_data, mime_type: "application/pdf" })
    }
    return invalid(`${path()}.file_data: expected a data URL (data:<media type>;base64,...)`)
  }
  if (part.file_url !== undefined && part.file_url !== null) return Result.succeed({ type: "file", file_type: "url", url: part.file_url })
  return invalid(part.file_id ? `${path()}.file_id: ${filesApi}; send file_data or file_url` : `${path()}: missing file_data or file_url`)
}

/** part `j` of item `i` as a block; images and files only in user messages */
const partOf = (part: ContentPart, i: number, j: number, user: boolean): Translated<InputBlock> => {
  switch (part.type) {
    case "input_text":
    case "output_text":
      return Result.succeed({ type: "text", text: part.text })
    case "refusal":
      return Result.succeed({ type: "text", text: part.refusal })
    case "input_image":
    case "input_file":
      return user ? fileOf(part, () => `input[${i}].content[${j}]`) : invalid(`input[${i}].content[${j}]: ${part.type} parts are taken in user messages only`)
  }
}

/** the output of a tool call (item `i`): its text parts joined by lines */
const toolOutputText = (output: ToolOutput, i: number): Translated<string> => {
  if (typeof output === "string") return Result.succeed(output)
  const texts: Array<string> = []
  for (let k = 0; k < output.length; k++) {
    const part = output[k]
    if (part.type !== "input_text") return invalid(`input[${i}].output[${k}]: images and files in a tool's output are not supported yet`)
    texts.push(part.text)
  }
  return Result.succeed(texts.join("\n"))
}

type MutableMessage = { readonly role: "user" | "assistant"; readonly content: Array<InputBlock> }

interface TranslatedInput {
  readonly system: ReadonlyArray<string>
  readonly messages: ReadonlyArray<InputMessage>
}

/**
 * The conversation: user messages and tool outputs on one side, and on the other what the
 * assistant said, called and thought, each turn's items joined into one assistant message (a
 * Responses transcript lists a turn's reasoning, message and calls as items of their own).
 * System and developer messages join the system prompt, after `instructions`.
 *
 * Plain loops rather than `Result.gen`: a generator per item cost this hot route more than its
 * whole translation otherwise does (about 2 µs each).
 */
const inputOf = (input: CreateResponseRequest["input"]): Translated<TranslatedInput> => {
  const system: Array<string> = []
  const messages: Array<MutableMessage> = []
  if (input === undefined) return Result.succeed({ system, messages })
  if (typeof input === "string") return Result.succeed({ system, messages: [{ role: "user", content: [{ type: "text", text: input }] }] })
  // call id -> tool name: the gateway's tool results are named, the Responses API's are not
  const toolNames = new Map<string, string>()
  for (let i = 0; i < input.length; i++) {
    const item = input[i]
    switch (item.type) {
      case undefined:
      case "message": {
        const refused = addMessage(item, i, system, messages)
        if (refused !== undefined) return Result.fail(refused)
        break
      }
      case "function_call":
      case "custom_tool_call":
        toolNames.set(item.call_id, item.name)
        assistantSays(messages, { type: "tool_call", id: item.call_id, name: item.name, arguments: item.type === "function_call" ? item.arguments : item.input })
        break
      case "function_call_output":
      case "custom_tool_call_output": {
        const result = toolOutputText(item.output, i)
        if (Result.isFailure(result)) return Result.fail(result.failure)
        const block: InputBlock = { type: "tool_result", id: item.call_id, name: toolNames.get(item.call_id) ?? "", result: result.success }
        // the outputs of one turn's calls form one user message
        const previous = messages[messages.length - 1]
        if (previous?.role === "user" && previous.content.every((b): boolean => b.type === "tool_result")) previous.content.push(block)
        else messages.push({ role: "user", content: [block] })
        break
      }
      case "reasoning": {
        const text = (item.summary ?? []).map((part) => part.text).join("\n\n")
        const signature = item.encrypted_content ?? undefined
        if (text !== "" || signature !== undefined) assistantSays(messages, { type: "thought", text, ...(signature === undefined ? {} : { signature }) })
        break
      }
      case "item_reference":
        return invalid(`input[${i}]: item references point into stored responses, which are not served yet; send the item itself`)
    }
  }
  return Result.succeed({ system, messages })
}

/** a block of what the assistant said: on the turn's assistant message, begun when it is not the last */
const assistantSays = (messages: Array<MutableMessage>, block: InputBlock): void => {
  const previous = messages[messages.length - 1]
  if (previous?.role === "assistant") previous.content.push(block)
  else messages.push({ role: "assistant", content: [block] })
}

/** a message item: a user message, the assistant's turn, or text of the system prompt */
const addMessage = (
  item: Extract<InputItem, { role: string }>,
  i: number,
  system: Array<string>,
  messages: Array<MutableMessage>
): InvalidRequest | undefined => {
  if (typeof item.content === "string") {
    if (item.role === "user" || item.role === "assistant") messages.push({ role: item.role, content: [{ type: "text", text: item.content }] })
    else system.push(item.content)
    return undefined
  }
  const blocks: Array<InputBlock> = []
  for (let j = 0; j < item.content.length; j++) {
    const part = item.content[j]
    if ((item.role === "system" || item.role === "developer") && part.type !== "input_text") {
      return new InvalidRequest({ message: `input[${i}].content[${j}]: a ${item.role} message takes input_text parts only` })
    }
    const block = partOf(part, i, j, item.role === "user")
    if (Result.isFailure(block)) return block.failure
    blocks.push(block.success)
  }
  switch (item.role) {
    case "user":
      messages.push({ role: "user", content: blocks })
      break
    case "assistant":
      for (const block of blocks) assistantSays(messages, block)
      break
    case "system":
    case "developer":
      for (const block of blocks) if (block.type === "text") system.push(block.text ?? "")
  }
  return undefined
}

interface TranslatedTools {
  readonly functions: Array<AdditionalTool>
  readonly custom: Array<CustomTool>
}

const isFunctionTool = (tool: Tool): tool is typeof FunctionTool.Type => tool.type === "function"
const isCustomTool = (tool: Tool): tool is typeof CustomToolSchema.Type => tool.type === "custom"

/** function and custom tools; built-in tools need a provider that runs them, which is not served yet */
const toolsOf = (tools: ReadonlyArray<Tool>): Translated<TranslatedTools> => {
  const functions: Array<AdditionalTool> = []
  const custom: Array<CustomTool> = []
  for (let i = 0; i < tools.length; i++) {
    const tool = tools[i]
    if (isFunctionTool(tool)) {
      const added = functionTool(tool, `tools[${i}].parameters`)
      if (Result.isFailure(added)) return Result.fail(added.failure)
      functions.push(added.success)
    } else if (isCustomTool(tool)) custom.push({ name: tool.name, description: tool.description ?? undefined, format: tool.format })
    else return invalid(`tools[${i}]: built-in tools (${quoted(tool.type)}) are not served yet; offer function tools`)
  }
  return Result.succeed({ functions, custom })
}

interface TranslatedChoice {
  readonly choice?: InferenceRequest["tool_choice"]
  readonly allowed?: ReadonlyArray<string>
}

const toolChoiceOf = (choice: ToolChoice | null | undefined): Translated<TranslatedChoice> => {
  if (choice === undefined || choice === null) return Result.succeed({})
  if (typeof choice === "string") return Result.succeed({ choice })
  if (choice.type === "allowed_tools" && "mode" in choice) {
    const names: Array<string> = []
    for (const [k, tool] of choice.tools.entries()) {
      if (tool.name === undefined) return invalid(`tool_choice.tools[${k}]: built-in tools (${quoted(tool.type)}) are not served yet`)
      names.push(tool.name)
    }
    return Result.succeed({ choice: choice.mode, allowed: names })
  }
  if ((choice.type === "function" || choice.type === "custom") && "name" in choice) return Result.succeed({ choice: { specific: choice.name } })
  return invalid(`tool_choice: ${quoted(choice.type)} names no function or custom tool; built-in tools are not served yet`)
}

interface TranslatedParams {
  readonly params: ChatCompletionParams
  /** `text.format`'s JSON schema */
  readonly schema?: Record<string, unknown>
}

const paramsOf = (body: CreateResponseRequest): Translated<TranslatedParams> => {
  const limit = body.max_output_tokens ?? undefined
  // Schema.Int lets 0 and negatives through; the gateway's params take positive integers only
  if (limit !== undefined && limit <= 0) return invalid(`max_output_tokens: expected a positive integer, got ${limit}`)
  const format = body.text?.format ?? undefined
  const params: Record<string, unknown> = {}
  const set = (name: string, value: unknown) => {
    if (value !== undefined && value !== null) params[name] = value
  }
  set("max_tokens", limit)
  set("temperature", body.temperature)
  set("top_p", body.top_p)
  set("reasoning_effort", body.reasoning?.effort)
  set("service_tier", body.service_tier)
  set("verbosity", body.text?.verbosity)
  set("json_mode", format?.type === "json_object" ? "on" : format?.type === "json_schema" ? "strict" : undefined)
  if (format?.type === "json_schema" && "schema" in format) {
    const compiled = compileRequestJsonSchema(format.schema)
    if ("error" in compiled) return invalid(`text.format.schema: ${compiled.error}`)
    return Result.succeed({ params: params as ChatCompletionParams, schema: format.schema })
  }
  return Result.succeed({ params: params as ChatCompletionParams })
}

/** `metadata` as client tags: OpenAI's bounds, and none of the gateway's names */
const metadataTags = (metadata: Readonly<Record<string, string>> | null | undefined): Translated<Readonly<Record<string, string>>> => {
  if (metadata === undefined || metadata === null) return Result.succeed({})
  const keys = Object.keys(metadata)
  if (keys.length > metadataLimits.keys) return invalid(`metadata: at most ${metadataLimits.keys} keys, got ${keys.length}`)
  for (const key of keys) {
    if (key.length > metadataLimits.keyLength) return invalid(`metadata: a key is at most ${metadataLimits.keyLength} characters, got ${quoted(key)}`)
    if (metadata[key].length > metadataLimits.valueLength) {
      return invalid(`metadata.${key}: a value is at most ${metadataLimits.valueLength} characters, got ${metadata[key].length}`)
    }
  }
  const reserved = checkClientTags(metadata, "metadata")
  return reserved === undefined ? Result.succeed(metadata) : Result.fail(reserved)
}

/** fields of the Responses API that need what this gateway does not serve yet */
const notServed = (body: CreateResponseRequest): InvalidRequest | undefined => {
  const refuse = (message: string) => new InvalidRequest({ message })
  if (body.previous_response_id !== undefined && body.previous_response_id !== null) {
    return refuse("previous_response_id: stored responses are not served yet; send the whole conversation in input")
  }
  if (body.background === true) return refuse("background: background responses are not served; send \"background\": false")
  if (body.conversation !== undefined && body.conversation !== null) {
    return refuse("conversation: conversations are not served; send the whole conversation in input")
  }
  if (body.prompt !== undefined && body.prompt !== null) return refuse("prompt: stored prompts are not served; send instructions and input")
  return undefined
}

const echoOf = (body: CreateResponseRequest): EchoedSettings => ({
  instructions: body.instructions ?? null,
  tools: body.tools ?? [],
  tool_choice: body.tool_choice ?? "auto",
  parallel_tool_calls: body.parallel_tool_calls ?? true,
  temperature: body.temperature ?? null,
  top_p: body.top_p ?? null,
  max_output_tokens: body.max_output_tokens ?? null,
  text: { format: body.text?.format ?? { type: "text" }, ...(body.text?.verbosity ? { verbosity: body.text.verbosity } : {}) },
  reasoning: { effort: body.reasoning?.effort ?? null, summary: body.reasoning?.summary ?? null },
  metadata: body.metadata ?? {},
  store: false,
  previous_response_id: null,
  truncation: "disabled",
  ...(body.user ? { user: body.user } : {}),
  ...(body.service_tier ? { service_tier: body.service_tier } : {})
})

export const translateCreateResponse = (
  body: CreateResponseRequest,
  names: ConfiguredNames
): Result.Result<TranslatedResponse, InvalidRequest | NotFound> => {
  const refused = notServed(body)
  if (refused !== undefined) return Result.fail(refused)
  const target = parseModelOrBareName(body.model, names.isModel)
  if (Result.isFailure(target)) return Result.fail(target.failure)
  const variantName = pinnedVariant(target.success, body["gateway::variant_name"], "gateway::variant_name")
  if (Result.isFailure(variantName)) return Result.fail(variantName.failure)
  const params = paramsOf(body)
  if (Result.isFailure(params)) return Result.fail(params.failure)
  const input = inputOf(body.input)
  if (Result.isFailure(input)) return Result.fail(input.failure)
  const tools = toolsOf(body.tools ?? [])
  if (Result.isFailure(tools)) return Result.fail(tools.failure)
  const choice = toolChoiceOf(body.tool_choice)
  if (Result.isFailure(choice)) return Result.fail(choice.failure)
  const metadata = metadataTags(body.metadata)
  if (Result.isFailure(metadata)) return Result.fail(metadata.failure)
  const gatewayPart = gatewayRequestPart(body)
  if (Result.isFailure(gatewayPart)) return Result.fail(gatewayPart.failure)
  const on = target.success
  const isJson = "function_name" in on && names.functionType(on.function_name) === "json"
  const { schema } = params.success
  const system = body.instructions ? [body.instructions, ...input.success.system] : input.success.system
  const stream = body.stream === true
  const request: InferenceRequest = {
    ...("model_name" in on ? { model_name: on.model_name } : { function_name: on.function_name }),
    input: { ...(system.length > 0 ? { system: system.join("\n\n") } : {}), messages: input.success.messages },
    stream,
    ...gatewayPart.success,
    tags: { ...metadata.success, ...gatewayPart.success.tags, [surfaceTag]: "openai_responses" },
    variant_name: variantName.success,
    additional_tools: tools.success.functions.length > 0 ? tools.success.functions : undefined,
    allowed_tools: choice.success.allowed,
    tool_choice: choice.success.choice,
    parallel_tool_calls: body.parallel_tool_calls ?? undefined,
    output_schema: isJson ? schema : undefined,
    params: Object.keys(params.success.params).length > 0 ? { chat_completion: params.success.params } : undefined
  }
  return Result.succeed({
    request,
    extras: { responseSchema: isJson ? undefined : schema, customTools: tools.success.custom, modelField: "model", functionField: "model" },
    stream,
    model: body.model,
    encryptedReasoning: body.include?.includes("reasoning.encrypted_content") === true,
    echo: echoOf(body),
    warning: body.store === true ? storeWarning : undefined
  })
}
