/**
 * Anthropic Messages request -> the gateway's inference request (issue 37, design 2.1): the
 * same inference path as `/inference` behind Anthropic's surface. Provider-family edits,
 * server tools, cache_control and foreign thought signatures are not read yet.
 */
import * as Result from "effect/Result"
import { type AdditionalTool, functionTool } from "../api/functionTools.ts"
import { gatewayRequestPart } from "../api/gatewayFields.ts"
import type { ChatCompletionParams, InferenceRequest, InputBlock, InputMessage } from "../api/inference.ts"
import { parseModelOrBareName, pinnedVariant } from "../api/modelField.ts"
import { surfaceTag } from "../api/tags.ts"
import { InvalidRequest, NotFound } from "../errors.ts"
import type { PrepareExtras } from "../inference/prepare.ts"
import { quoted } from "../untrusted.ts"
import type { ContentBlock, MessageParam, MessagesRequest, ToolParam } from "./api.ts"

export interface TranslatedMessages {
  readonly request: InferenceRequest
  readonly extras: PrepareExtras
  readonly stream: boolean
  /** the request's `model` as sent: the answer echoes it, as Anthropic's does */
  readonly model: string
}

type Translated<A> = Result.Result<A, InvalidRequest>

const invalid = (message: string): Translated<never> => Result.fail(new InvalidRequest({ message }))

/** Schema.Int lets 0 and negatives through; the gateway's params take positive integers only */
const positiveInt = (value: number | undefined, field: string): Translated<number | undefined> =>
  value === undefined || value > 0 ? Result.succeed(value) : invalid(`${field}: expected a positive integer, got ${value}`)

const paramsOf = (body: MessagesRequest): Translated<ChatCompletionParams> =>
  Result.gen(function*() {
    const params: Record<string, unknown> = {
      max_tokens: yield* positiveInt(body.max_tokens, "max_tokens"),
      temperature: body.temperature,
      top_p: body.top_p,
      top_k: yield* positiveInt(body.top_k, "top_k"),
      stop_sequences: body.stop_sequences,
      // adaptive and disabled thinking set nothing (family edits, later)
      thinking_budget_tokens: body.thinking?.type === "enabled"
        ? yield* positiveInt(body.thinking.budget_tokens, "thinking.budget_tokens")
        : undefined
    }
    for (const key of Object.keys(params)) if (params[key] === undefined) delete params[key]
    return params as ChatCompletionParams
  })

/** text blocks' texts joined by "\n\n", as Anthropic reads a list of system blocks */
const systemOf = (system: MessagesRequest["system"]): string | undefined =>
  system === undefined || typeof system === "string" ? system : system.length === 0 ? undefined : system.map((block) => block.text).join("\n\n")

type Source = Extract<ContentBlock, { type: "image" | "document" }>["source"]

/**
 * An image's or a document's source as a file. A URL document is a PDF (the only kind
 * Anthropic fetches); a text document goes as text/plain bytes, which the Anthropic codec turns
 * back into a text document.
 */
const fileOf = (source: Source, urlMimeType: string | undefined): InputBlock => {
  switch (source.type) {
    case "base64":
      return { type: "file", file_type: "base64", data: source.data, mime_type: source.media_type }
    case "url":
      return { type: "file", file_type: "url", url: source.url, ...(urlMimeType === undefined ? {} : { mime_type: urlMimeType }) }
    case "text":
      return { type: "file", file_type: "base64", data: Buffer.from(source.data, "utf8").toString("base64"), mime_type: "text/plain" }
  }
}

/** a tool result's content as the gateway's one text: its text blocks joined by lines */
const toolResultText = (content: Extract<ContentBlock, { type: "tool_result" }>["content"], path: string): Translated<string> => {
  if (content === undefined || typeof content === "string") return Result.succeed(content ?? "")
  const texts: Array<string> = []
  for (const [k, block] of content.entries()) {
    if (block.type !== "text") return invalid(`${path}.content[${k}]: images and documents inside a tool_result are not supported yet`)
    texts.push(block.text)
  }
  return Result.succeed(texts.join("\n"))
}

/** one content block; `toolNames` (tool_use id -> name) names the tool results, which Anthropic's do not */
const blockOf = (block: ContentBlock, path: string, toolNames: Map<string, string>): Translated<InputBlock> => {
  switch (block.type) {
    case "text":
      return Result.succeed({ type: "text", text: block.text })
    case "image":
      return Result.succeed(fileOf(block.source, undefined))
    case "document":
      return Result.succeed(fileOf(block.source, "application/pdf"))
    case "tool_use":
      toolNames.set(block.id, block.name)
      // a string `arguments` is read as the raw JSON text, so the input goes as its JSON text
      return Result.succeed({ type: "tool_call", id: block.id, name: block.name, arguments: JSON.stringify(block.input ?? {}) })
    case "tool_result":
      return Result.map(
        toolResultText(block.content, path),
        (result): InputBlock => ({ type: "tool_result", id: block.tool_use_id, name: toolNames.get(block.tool_use_id) ?? "", result })
      )
    case "thinking":
      // Anthropic refuses a thinking block with an empty signature: none is none
      return Result.succeed({ type: "thought", text: block.thinking, ...(block.signature ? { signature: block.signature } : {}) })
    case "redacted_thinking":
      // an `unknown` block without a provider name goes to every provider as is (OpenAI's and Gemini's refuse it), and the client cannot name the gateway's provider
      return invalid(`${path}: redacted_thinking blocks are not supported yet`)
  }
}

const messagesOf = (messages: ReadonlyArray<MessageParam>): Translated<Array<InputMessage>> =>
  Result.gen(function*() {
    const toolNames = new Map<string, string>()
    const out: Array<InputMessage> = []
    for (const [i, message] of messages.entries()) {
      const content: Array<InputBlock> = []
      if (typeof message.content === "string") content.push({ type: "text", text: message.content })
      else for (const [j, block] of message.content.entries()) content.push(yield* blockOf(block, `messages[${i}].content[${j}]`, toolNames))
      out.push({ role: message.role, content })
    }
    return out
  })

/** custom tools */
const toolsOf = (tools: ReadonlyArray<ToolParam>): Translated<Array<AdditionalTool>> =>
  Result.gen(function*() {
    const out: Array<AdditionalTool> = []
    for (const [i, tool] of tools.entries()) {
      if (tool.type !== undefined && tool.type !== null && tool.type !== "custom") {
        return yield* invalid(`tools[${i}].type: server tools (${quoted(tool.type)}) are not supported yet`)
      }
      out.push(yield* functionTool({ ...tool, parameters: tool.input_schema }, `tools[${i}].input_schema`))
    }
    return out
  })

const toolChoices = { auto: "auto", any: "required", none: "none" } as const

const toolChoiceOf = (choice: MessagesRequest["tool_choice"]): InferenceRequest["tool_choice"] =>
  choice === undefined ? undefined : choice.type === "tool" ? { specific: choice.name } : toolChoices[choice.type]

export const translateMessages = (
  body: MessagesRequest,
  configuredModel: (name: string) => boolean
): Result.Result<TranslatedMessages, InvalidRequest | NotFound> =>
  Result.gen(function*() {
    const target = yield* parseModelOrBareName(body.model, configuredModel)
    const variantName = yield* pinnedVariant(target, body["gateway::variant_name"], "gateway::variant_name")
    const params = yield* paramsOf(body)
    const messages = yield* messagesOf(body.messages)
    const tools = yield* toolsOf(body.tools ?? [])
    const gatewayPart = yield* gatewayRequestPart(body)
    const system = systemOf(body.system)
    const stream = body.stream === true
    const request: InferenceRequest = {
      ...("model_name" in target ? { model_name: target.model_name } : { function_name: target.function_name }),
      input: { ...(system === undefined ? {} : { system }), messages },
      stream,
      ...gatewayPart,
      tags: { ...gatewayPart.tags, [surfaceTag]: "anthropic_messages" },
      variant_name: variantName,
      additional_tools: tools.length > 0 ? tools : undefined,
      tool_choice: toolChoiceOf(body.tool_choice),
      parallel_tool_calls: body.tool_choice?.disable_parallel_tool_use === true ? false : undefined,
      params: Object.keys(params).length > 0 ? { chat_completion: params } : undefined
    }
    return { request, extras: { modelField: "model", functionField: "model" }, stream, model: body.model }
  })
