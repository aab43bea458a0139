/**
 * OpenAI Chat Completions request -> the gateway's inference request (spec 4.2): the same
 * inference path as `/inference` behind OpenAI's surface.
 */
import * as Result from "effect/Result"
import type { ChatCompletionParams, InferenceRequest, InputBlock, InputMessage } from "../api/inference.ts"
import { parseModelField, pinnedVariant } from "../api/modelField.ts"
import { gatewayRequestPart } from "../api/gatewayFields.ts"
import { type AdditionalTool, functionTool } from "../api/functionTools.ts"
import { dataUrlPattern, fileOfUrl } from "../api/fileUrls.ts"
import { InvalidRequest } from "../errors.ts"
import type { PrepareExtras } from "../inference/prepare.ts"
import { compileRequestJsonSchema } from "../jsonSchema.ts"
import { qualifiedProviderName } from "../providers/types.ts"
import type { ChatCompletionRequest, ContentPart, ExtraContentBlock, Message } from "./api.ts"
import { quoted } from "../untrusted.ts"

/** the template an object `system` input renders (spec 2.2) */
const systemTemplate = "system"

export interface TranslatedRequest {
  readonly request: InferenceRequest
  readonly extras: PrepareExtras
  readonly stream: boolean
  /** send a usage chunk at the end of a stream */
  readonly includeUsage: boolean
  readonly includeRawResponse: boolean
  readonly includeRawUsage: boolean
  /** things the caller should know but that do not stop the request */
  readonly warnings: ReadonlyArray<string>
}

type Translated<A> = Result.Result<A, InvalidRequest>

const problem = (message: string) => new InvalidRequest({ message })
const invalid = (message: string): Translated<never> => Result.fail(problem(message))

const audioMime: Readonly<Record<string, string>> = { wav: "audio/wav", mp3: "audio/mpeg" }

/** the audio format its bytes say (a WAV header, an ID3 tag or an MPEG frame), when recognisable */
const sniffAudio = (base64: string): string | undefined => {
  const head = Buffer.from(base64.slice(0, 16), "base64")
  if (head.subarray(0, 4).toString("latin1") === "RIFF" && head.subarray(8, 12).toString("latin1") === "WAVE") return "wav"
  if (head.subarray(0, 3).toString("latin1") === "ID3" || (head[0] === 0xff && (head[1] & 0xe0) === 0xe0)) return "mp3"
  return undefined
}

const partToBlock = (part: ContentPart, path: string, warnings: Array<string>): Translated<InputBlock> => {
  switch (part.type) {
    case "text":
      if ((part.text === undefined) === (part["gateway::arguments"] === undefined)) {
        return invalid(`${path}: a text part takes exactly one of text or gateway::arguments`)
      }
      return Result.succeed(part.text !== undefined ? { type: "text", text: part.text } : { type: "text", arguments: part["gateway::arguments"] })
    case "image_url":
      return Result.succeed(fileOfUrl(part.image_url.url, part.image_url.detail))
    case "input_audio": {
      const format = part.input_audio.format.toLowerCase()
      const sniffed = sniffAudio(part.input_audio.data)
      if (sniffed !== undefined && sniffed !== format) {
        // logged: the format is the client's text
        warnings.push(`${path}.input_audio: the data looks like ${sniffed}, not ${quoted(format, 20)}`)
      }
      return Result.succeed({ type: "file", file_type: "base64", data: part.input_audio.data, mime_type: audioMime[format] ?? `audio/${format}` })
    }
    case "file": {
      const match = dataUrlPattern.exec(part.file.file_data)
      if (match === null) return invalid(`${path}.file.file_data: expected a data URL (data:<media type>;base64,...)`)
      return Result.succeed({ type: "file", file_type: "base64", data: match[2], mime_type: match[1] })
    }
    case "gateway::raw_text":
      return Result.succeed({ type: "raw_text", value: part.value })
    case "gateway::template":
      return Result.succeed({ type: "template", name: part.name, arguments: part.arguments })
  }
}

const partsToBlocks = (content: string | ReadonlyArray<ContentPart>, path: string, warnings: Array<string>): Translated<Array<InputBlock>> => {
  if (typeof content === "string") return Result.succeed([{ type: "text", text: content }])
  const blocks: Array<InputBlock> = []
  for (let i = 0; i < content.length; i++) {
    const block = partToBlock(content[i], `${path}[${i}]`, warnings)
    if (Result.isFailure(block)) return Result.fail(block.failure)
    blocks.push(block.success)
  }
  return Result.succeed(blocks)
}

const plainText = (content: string | ReadonlyArray<ContentPart> | null | undefined): string =>
  content === null || content === undefined
    ? ""
    : typeof content === "string"
    ? content
    : content.map((part) => (part.type === "text" ? part.text ?? "" : part.type === "gateway::raw_text" ? part.value : "")).join("")

const extraContentBlock = (block: ExtraContentBlock): InputBlock =>
  block.type === "thought"
    ? { type: "thought", text: block.text, signature: block.signature }
    : {
      type: "unknown",
      data: block.data,
      model_provider_name: block.model_name !== undefined && block.provider_name !== undefined
        ? qualifiedProviderName(block.model_name, block.provider_name)
        : undefined
    }

interface TranslatedInput {
  readonly system?: string | Record<string, unknown> | undefined
  readonly messages: Array<InputMessage>
}

interface SystemParts {
  readonly texts: Array<string>
  arguments: Record<string, unknown> | undefined
}

/**
 * The `system` input is one text or the system template's arguments (spec 2.2), so the parts
 * of system messages become one of the two: texts and raw texts joined by newlines (the
 * system prompt sent as written), or the arguments of one `text` part with
 * `gateway::arguments` or one `gateway::template` part naming the system template.
 */
const addSystemParts = (content: ReadonlyArray<ContentPart>, path: string, system: SystemParts): InvalidRequest | undefined => {
  for (let j = 0; j < content.length; j++) {
    const part = content[j]
    let args: Record<string, unknown> | undefined
    switch (part.type) {
      case "text":
        if ((part.text === undefined) === (part["gateway::arguments"] === undefined)) {
          return problem(`${path}[${j}]: a text part takes exactly one of text or gateway::arguments`)
        }
        if (part.text !== undefined) system.texts.push(part.text)
        else args = part["gateway::arguments"]
        break
      case "gateway::raw_text":
        system.texts.push(part.value)
        break
      case "gateway::template":
        if (part.name !== systemTemplate) {
          return problem(`${path}[${j}].name: a system message renders the "${systemTemplate}" template, not ${quoted(part.name)}`)
        }
        args = part.arguments
        break
      default:
        return problem(
          `${path}[${j}]: System message must contain only text or template content blocks (text, gateway::raw_text and gateway::template parts), not ${part.type}`
        )
    }
    if (args !== undefined) {
      if (system.arguments !== undefined) return problem(`${path}[${j}]: the system template's arguments are given twice`)
      system.arguments = args
    }
  }
  return undefined
}

const translateMessages = (messages: ReadonlyArray<Message>, warnings: Array<string>): Translated<TranslatedInput> => {
  const system: SystemParts = { texts: [], arguments: undefined }
  const out: Array<InputMessage> = []
  const toolNames = new Map<string, string>()
  for (let i = 0; i < messages.length; i++) {
    const message = messages[i]
    const path = `messages[${i}].content`
    switch (message.role) {
      case "system":
      case "developer": {
        if (typeof message.content === "string") system.texts.push(message.content)
        else {
          const refused = addSystemParts(message.content, path, system)
          if (refused !== undefined) return Result.fail(refused)
        }
        break
      }
      case "user": {
        if (typeof message.content === "string") {
          out.push({ role: "user", content: message.content })
          break
        }
        const blocks = partsToBlocks(message.content, path, warnings)
        if (Result.isFailure(blocks)) return Result.fail(blocks.failure)
        out.push({ role: "user", content: blocks.success })
        break
      }
      case "assistant": {
        const given = message.content === null || message.content === undefined
          ? Result.succeed<Array<InputBlock>>([])
          : partsToBlocks(message.content, path, warnings)
        if (Result.isFailure(given)) return Result.fail(given.failure)
        const blocks = given.success
        for (const call of message.tool_calls ?? []) {
          const [name, args] = call.type === "custom" ? [call.custom.name, call.custom.input] : [call.function.name, call.function.arguments]
          toolNames.set(call.id, name)
          blocks.push({ type: "tool_call", id: call.id, name, arguments: args })
        }
        // extra content goes back where it was in the answer (prepended when no index is given)
        const extra = message.gateway_extra_content ?? []
        for (const block of [...extra].sort((a, b) => (a.insert_index ?? -1) - (b.insert_index ?? -1))) {
          const at = block.insert_index === undefined ? 0 : Math.min(block.insert_index, blocks.length)
          blocks.splice(at, 0, extraContentBlock(block))
        }
        out.push({ role: "assistant", content: blocks })
        break
      }
      case "tool": {
        const result: InputBlock = {
          type: "tool_result",
          id: message.tool_call_id,
          name: toolNames.get(message.tool_call_id) ?? "",
          result: plainText(message.content)
        }
        // consecutive tool messages answer one assistant turn: they form one user message
        const previous = out[out.length - 1]
        if (previous?.role === "user" && Array.isArray(previous.content) && previous.content.every((block) => block.type === "tool_result")) {
          ;(previous.content as Array<InputBlock>).push(result)
        } else out.push({ role: "user", content: [result] })
        break
      }
    }
  }
  if (system.arguments !== undefined && system.texts.length > 0) {
    return invalid("messages: system messages carry either text or the system template's arguments, not both")
  }
  return Result.succeed({ system: system.arguments ?? (system.texts.length > 0 ? system.texts.join("\n") : undefined), messages: out })
}

/** Top-level OpenAI parameters, then `response_format`, then `gateway::params` (which win). */
const translateParams = (body: ChatCompletionRequest): { params: ChatCompletionParams; schema?: Record<string, unknown> } => {
  const params: Record<string, unknown> = {}
  const set = (name: string, value: unknown) => {
    if (value !== undefined && value !== null) params[name] = value
  }
  set("temperature", body.temperature)
  set("top_p", body.top_p)
  set("presence_penalty", body.presence_penalty)
  set("frequency_penalty", body.frequency_penalty)
  set("seed", body.seed)
  set("reasoning_effort", body.reasoning_effort)
  set("service_tier", body.service_tier)
  set("verbosity", body.verbosity)
  const limits = [body.max_tokens, body.max_completion_tokens].filter((value): value is number => typeof value === "number")
  if (limits.length > 0) params.max_tokens = Math.min(...limits)
  const stop = body.stop_sequences ?? (typeof body.stop === "string" ? [body.stop] : body.stop)
  set("stop_sequences", stop)
  let schema: Record<string, unknown> | undefined
  const format = body.response_format
  const formatType = typeof format === "string" ? format : format?.type
  if (formatType === "json_object") params.json_mode = "on"
  if (formatType === "json_schema" && typeof format === "object" && format !== null && format.type === "json_schema") {
    params.json_mode = "strict"
    schema = format.json_schema?.schema ?? format.schema
  }
  Object.assign(params, body["gateway::params"]?.chat_completion ?? {})
  return { params: params as ChatCompletionParams, ...(schema === undefined ? {} : { schema }) }
}

/** A body without `model`, refused before it is decoded in TensorZero's words (its clients' tests match them). */
export const missingModel = (json: Readonly<Record<string, unknown>>): InvalidRequest | undefined =>
  json.model === undefined ? problem("model: missing field `model`") : undefined

export const translateChatCompletion = (
  body: ChatCompletionRequest,
  functionType: (functionName: string) => "chat" | "json" | undefined
): Translated<TranslatedRequest> => {
  const warnings: Array<string> = []
  const targeted = parseModelField(body.model)
  if (Result.isFailure(targeted)) return Result.fail(targeted.failure)
  const target = targeted.success
  const pinned = pinnedVariant(target, body["gateway::variant_name"], "gateway::variant_name")
  if (Result.isFailure(pinned)) return Result.fail(pinned.failure)
  if (body.n !== undefined && body.n !== null && body.n !== 1) return invalid(`n: only 1 choice is supported, got ${body.n}`)

  const translated = translateMessages(body.messages, warnings)
  if (Result.isFailure(translated)) return Result.fail(translated.failure)
  const input = translated.success
  const { params, schema } = translateParams(body)
  const isJson = "function_name" in target && functionType(target.function_name) === "json"
  // schemas are checked here to name the OpenAI field at fault; preparing finds them compiled
  if (isJson && schema !== undefined) {
    const compiled = compileRequestJsonSchema(schema)
    if ("error" in compiled) {
      const format = body.response_format
      const nested = typeof format === "object" && format !== null && format.type === "json_schema" && format.json_schema?.schema !== undefined
      return invalid(`response_format.${nested ? "json_schema.schema" : "schema"}: ${compiled.error}`)
    }
  }

  const functionTools: Array<AdditionalTool> = []
  const customTools: Array<NonNullable<PrepareExtras["customTools"]>[number]> = []
  for (const [i, tool] of (body.tools ?? []).entries()) {
    if (tool.type === "function") {
      const added = functionTool(tool.function, `tools[${i}].function.parameters`)
      if (Result.isFailure(added)) return Result.fail(added.failure)
      functionTools.push(added.success)
    } else customTools.push({ name: tool.custom.name, description: tool.custom.description, format: tool.custom.format })
  }

  let toolChoice: InferenceRequest["tool_choice"]
  let allowedTools: ReadonlyArray<string> | undefined
  const choice = body.tool_choice
  if (typeof choice === "string") toolChoice = choice
  else if (choice !== undefined && choice !== null) {
    if (choice.type === "allowed_tools") {
      toolChoice = choice.allowed_tools.mode
      allowedTools = choice.allowed_tools.tools.map((tool) => (tool.type === "function" ? tool.function.name : tool.custom.name))
    } else toolChoice = { specific: choice.type === "function" ? choice.function.name : choice.custom.name }
  }

  const gatewayPart = gatewayRequestPart(body)
  if (Result.isFailure(gatewayPart)) return Result.fail(gatewayPart.failure)
  const includeRawUsage = body["gateway::include_raw_usage"] === true
  // raw usage rides on the usage chunk, which include_usage false would turn off
  const explicitUsage = body.stream_options?.include_usage
  if (body.stream === true && includeRawUsage && explicitUsage === false) {
    return invalid(
      "stream_options.include_usage: `gateway::include_raw_usage` requires `stream_options.include_usage` to be true (or omitted) for streaming requests"
    )
  }
  const request: InferenceRequest = {
    ...("model_name" in target ? { model_name: target.model_name } : { function_name: target.function_name }),
    input: { ...(input.system === undefined ? {} : { system: input.system }), messages: input.messages },
    stream: body.stream === true,
    ...gatewayPart.success,
    variant_name: pinned.success,
    additional_tools: functionTools.length > 0 ? functionTools : undefined,
    allowed_tools: allowedTools,
    tool_choice: toolChoice,
    parallel_tool_calls: body.parallel_tool_calls ?? undefined,
    output_schema: isJson ? schema : undefined,
    params: Object.keys(params).length > 0 ? { chat_completion: params } : undefined
  }
  return Result.succeed({
    request,
    extras: { responseSchema: isJson ? undefined : schema, customTools, modelField: "model", functionField: "model" },
    stream: body.stream === true,
    // OpenAI's default: no usage unless asked; gateway::include_raw_usage asks for it
    includeUsage: explicitUsage === true || includeRawUsage,
    includeRawResponse: body["gateway::include_raw_response"] === true,
    includeRawUsage,
    warnings
  })
}
