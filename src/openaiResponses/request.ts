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
import { type Decoded, formatFieldIssues, makeLenientDecoder } from "../decode.ts"
import { compileRequestJsonSchema } from "../jsonSchema.ts"
import { quoted } from "../untrusted.ts"
import { type ContentPart, type CreateResponseBody, CustomTool as CustomToolSchema, FunctionTool, type InputItem, inputItems, type ToolChoice, type ToolOutput } from "./api.ts"

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

/** an `input_image` or `input_file` part as a file */
const fileOf = (part: Extract<ContentPart, { type: "input_image" | "input_file" }>, path: string): Translated<InputBlock> => {
  if (part.type === "input_image") {
    if (part.image_url !== undefined && part.image_url !== null) return Result.succeed(fileOfUrl(part.image_url, detailOf(part.detail)))
    return invalid(part.file_id ? `${path}.file_id: ${filesApi}; send image_url` : `${path}.image_url: missing`)
  }
  if (part.file_data !== undefined && part.file_data !== null) {
    const match = dataUrlPattern.exec(part.file_data)
    if (match !== null) return Result.succeed({ type: "file", file_type: "base64", data: match[2], mime_type: match[1] })
    // OpenAI's SDKs also send bare base64 beside a file name; a PDF's name says what it is
    if (part.filename?.toLowerCase().endsWith(".pdf")) {
      return Result.succeed({ type: "file", file_type: "base64", data: part.file_data, mime_type: "application/pdf" })
    }
    return invalid(`${path}.file_data: expected a data URL (data:<media type>;base64,...)`)
  }
  if (part.file_url !== undefined && part.file_url !== null) return Result.succeed({ type: "file", file_type: "url", url: part.file_url })
  return invalid(part.file_id ? `${path}.file_id: ${filesApi}; send file_data or file_url` : `${path}: missing file_data or file_url`)
}

/** a message part as a block; images and files only in user messages */
const partOf = (part: ContentPart, path: string, user: boolean): Translated<InputBlock> => {
  switch (part.type) {
    case "input_text":
    case "output_text":
      return Result.succeed({ type: "text", text: part.text })
    case "refusal":
      return Result.succeed({ type: "text", text: part.refusal })
    case "input_image":
    case "input_file":
      return user ? fileOf(part, path) : invalid(`${path}: ${part.type} parts are taken in user messages only`)
  }
}

const toolOutputText = (output: ToolOutput, path: string): Translated<string> => {
  if (typeof output === "string") return Result.succeed(output)
  const texts: Array<string> = []
  for (const [k, part] of output.entries()) {
    if (part.type !== "input_text") return invalid(`${path}[${k}]: images and files in a tool's output are not supported yet`)
    texts.push(part.text)
  }
  return Result.succeed(texts.join("\n"))
}

type Entry = Readonly<Record<string, unknown>>

/** each kind of input item's decoder, by its `type` (a message's may be absent) */
const itemDecoders = new Map<string, (input: unknown) => Decoded<InputItem>>(
  Object.entries(inputItems).map(([type, schema]) => [type, makeLenientDecoder(schema)])
)

/** an entry decoded by its kind's Schema (the 400 naming the field at fault), or refused naming a kind not served */
const decodedBy = <A>(
  decoders: ReadonlyMap<string, (input: unknown) => Decoded<A>>,
  entry: Entry,
  type: unknown,
  path: string,
  notServed: (type: string) => string
): Translated<A> => {
  if (typeof type !== "string") return invalid(`${path}.type: expected a string`)
  const decode = decoders.get(type)
  if (decode === undefined) return invalid(`${path}: ${notServed(type)}`)
  const decoded = decode(entry)
  return decoded.ok ? Result.succeed(decoded.value) : invalid(formatFieldIssues(decoded.issues, [path]))
}

interface TranslatedInput {
  readonly system: Array<string>
  readonly messages: Array<InputMessage>
}

/**
 * The conversation: user messages and tool outputs on one side, and on the other what the
 * assistant said, called and thought, each turn's items joined into one assistant message (a
 * Responses transcript lists a turn's reasoning, message and calls as items of their own).
 * System and developer messages join the system prompt, after `instructions`.
 */
const inputOf = (input: CreateResponseBody["input"]): Translated<TranslatedInput> =>
  Result.gen(function*() {
    const system: Array<string> = []
    const messages: Array<InputMessage> = []
    if (input === undefined) return { system, messages }
    if (typeof input === "string") return { system, messages: [{ role: "user", content: [{ type: "text", text: input }] }] }
    // call id -> tool name: the gateway's tool results are named, the Responses API's are not
    const toolNames = new Map<string, string>()
    const last = () => messages[messages.length - 1] as { role: "user" | "assistant"; content: Array<InputBlock> } | undefined
    const assistantSays = (block: InputBlock) => {
      const previous = last()
      if (previous?.role === "assistant") previous.content.push(block)
      else messages.push({ role: "assistant", content: [block] })
    }
    const toolReturns = (block: InputBlock) => {
      // the outputs of one turn's calls form one user message
      const previous = last()
      if (previous?.role === "user" && previous.content.every((b): boolean => b.type === "tool_result")) previous.content.push(block)
      else messages.push({ role: "user", content: [block] })
    }
    for (const [i, entry] of input.entries()) {
      const path = `input[${i}]`
      const item = yield* decodedBy(itemDecoders, entry, entry.type ?? "message", path, (type) => `items of type ${quoted(type)} are not served`)
      switch (item.type) {
        case undefined:
        case "message":
          yield* messageOf(item, path, system, messages, assistantSays)
          break
        case "function_call":
        case "custom_tool_call":
          toolNames.set(item.call_id, item.name)
          assistantSays({ type: "tool_call", id: item.call_id, name: item.name, arguments: item.type === "function_call" ? item.arguments : item.input })
          break
        case "function_call_output":
        case "custom_tool_call_output": {
          const result = yield* toolOutputText(item.output, `${path}.output`)
          toolReturns({ type: "tool_result", id: item.call_id, name: toolNames.get(item.call_id) ?? "", result })
          break
        }
        case "reasoning": {
          const text = (item.summary ?? []).map((part) => part.text).join("\n\n")
          const signature = item.encrypted_content ?? undefined
          if (text !== "" || signature !== undefined) assistantSays({ type: "thought", text, ...(signature === undefined ? {} : { signature }) })
          break
        }
        case "item_reference":
          return yield* invalid(`${path}: item references point into stored responses, which are not served yet; send the item itself`)
      }
    }
    return { system, messages }
  })

const messageOf = (
  item: Extract<InputItem, { role: string }>,
  path: string,
  system: Array<string>,
  messages: Array<InputMessage>,
  assistantSays: (block: InputBlock) => void
): Translated<void> =>
  Result.gen(function*() {
    const parts = typeof item.content === "string" ? [{ type: "input_text" as const, text: item.content }] : item.content
    const blocks: Array<InputBlock> = []
    for (const [j, part] of parts.entries()) {
      if ((item.role === "system" || item.role === "developer") && part.type !== "input_text") {
        return yield* invalid(`${path}.content[${j}]: a ${item.role} message takes input_text parts only`)
      }
      blocks.push(yield* partOf(part, `${path}.content[${j}]`, item.role === "user"))
    }
    switch (item.role) {
      case "user":
        messages.push({ role: "user", content: blocks })
        break
      case "assistant":
        for (const block of blocks) assistantSays(block)
        break
      case "system":
      case "developer":
        for (const block of blocks) if (block.type === "text") system.push(block.text ?? "")
    }
  })

interface TranslatedTools {
  readonly functions: Array<AdditionalTool>
  readonly custom: Array<CustomTool>
}

type ToolEntry = typeof FunctionTool.Type | typeof CustomToolSchema.Type

const toolDecoders = new Map<string, (input: unknown) => Decoded<ToolEntry>>([
  ["function", makeLenientDecoder(FunctionTool)],
  ["custom", makeLenientDecoder(CustomToolSchema)]
])

/** function and custom tools; built-in tools need a provider that runs them, which is not served yet */
const toolsOf = (tools: ReadonlyArray<Entry>): Translated<TranslatedTools> =>
  Result.gen(function*() {
    const functions: Array<AdditionalTool> = []
    const custom: Array<CustomTool> = []
    for (const [i, entry] of tools.entries()) {
      const path = `tools[${i}]`
      const tool = yield* decodedBy(toolDecoders, entry, entry.type, path, (type) => `built-in tools (${quoted(type)}) are not served yet; offer function tools`)
      if (tool.type === "function") functions.push(yield* functionTool(tool, `${path}.parameters`))
      else custom.push({ name: tool.name, description: tool.description ?? undefined, format: tool.format })
    }
    return { functions, custom }
  })

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

/** Schema.Int lets 0 and negatives through; the gateway's params take positive integers only */
const positiveInt = (value: number | null | undefined, field: string): Translated<number | undefined> =>
  value === undefined || value === null ? Result.succeed(undefined) : value > 0 ? Result.succeed(value) : invalid(`${field}: expected a positive integer, got ${value}`)

interface TranslatedParams {
  readonly params: ChatCompletionParams
  /** `text.format`'s JSON schema */
  readonly schema?: Record<string, unknown>
}

const paramsOf = (body: CreateResponseBody): Translated<TranslatedParams> =>
  Result.gen(function*() {
    const format = body.text?.format ?? undefined
    const params: Record<string, unknown> = {
      max_tokens: yield* positiveInt(body.max_output_tokens, "max_output_tokens"),
      temperature: body.temperature ?? undefined,
      top_p: body.top_p ?? undefined,
      reasoning_effort: body.reasoning?.effort ?? undefined,
      service_tier: body.service_tier ?? undefined,
      verbosity: body.text?.verbosity ?? undefined,
      json_mode: format?.type === "json_object" ? "on" : format?.type === "json_schema" ? "strict" : undefined
    }
    for (const key of Object.keys(params)) if (params[key] === undefined) delete params[key]
    if (format?.type === "json_schema" && "schema" in format) {
      const compiled = compileRequestJsonSchema(format.schema)
      if ("error" in compiled) return yield* invalid(`text.format.schema: ${compiled.error}`)
      return { params: params as ChatCompletionParams, schema: format.schema }
    }
    return { params: params as ChatCompletionParams }
  })

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
const notServed = (body: CreateResponseBody): InvalidRequest | undefined => {
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

const echoOf = (body: CreateResponseBody): EchoedSettings => ({
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
  body: CreateResponseBody,
  names: ConfiguredNames
): Result.Result<TranslatedResponse, InvalidRequest | NotFound> =>
  Result.gen(function*() {
    const refused = notServed(body)
    if (refused !== undefined) return yield* Result.fail(refused)
    const target = yield* parseModelOrBareName(body.model, names.isModel)
    const variantName = yield* pinnedVariant(target, body["gateway::variant_name"], "gateway::variant_name")
    const { params, schema } = yield* paramsOf(body)
    const input = yield* inputOf(body.input)
    const tools = yield* toolsOf(body.tools ?? [])
    const { choice, allowed } = yield* toolChoiceOf(body.tool_choice)
    const metadata = yield* metadataTags(body.metadata)
    const gatewayPart = yield* gatewayRequestPart(body)
    const isJson = "function_name" in target && names.functionType(target.function_name) === "json"
    const system = [...(body.instructions ? [body.instructions] : []), ...input.system]
    const stream = body.stream === true
    const request: InferenceRequest = {
      ...("model_name" in target ? { model_name: target.model_name } : { function_name: target.function_name }),
      input: { ...(system.length > 0 ? { system: system.join("\n\n") } : {}), messages: input.messages },
      stream,
      ...gatewayPart,
      tags: { ...metadata, ...gatewayPart.tags, [surfaceTag]: "openai_responses" },
      variant_name: variantName,
      additional_tools: tools.functions.length > 0 ? tools.functions : undefined,
      allowed_tools: allowed,
      tool_choice: choice,
      parallel_tool_calls: body.parallel_tool_calls ?? undefined,
      output_schema: isJson ? schema : undefined,
      params: Object.keys(params).length > 0 ? { chat_completion: params } : undefined
    }
    return {
      request,
      extras: { responseSchema: isJson ? undefined : schema, customTools: tools.custom, modelField: "model", functionField: "model" },
      stream,
      model: body.model,
      encryptedReasoning: body.include?.includes("reasoning.encrypted_content") === true,
      echo: echoOf(body),
      warning: body.store === true ? storeWarning : undefined
    }
  })
