/**
 * Anthropic Messages request -> the gateway's inference request (issue 37, design 2.1): the
 * same inference path as `/inference` behind Anthropic's surface. Anthropic's own fields that
 * the gateway does not model (`metadata`, `service_tier`, `thinking` beyond a budget, fields it
 * does not know, the `anthropic-beta` header, server tools) are passed on as sent to the
 * providers that speak Anthropic's API, and left out for the others.
 */
import * as Result from "effect/Result"
import { type AdditionalTool, functionTool } from "../api/functionTools.ts"
import { gatewayRequestPart } from "../api/gatewayFields.ts"
import type { ChatCompletionParams, InferenceRequest, InputBlock, InputMessage } from "../api/inference.ts"
import { parseModelOrBareName, pinnedVariant } from "../api/modelField.ts"
import { surfaceTag } from "../api/tags.ts"
import { InvalidRequest, NotFound } from "../errors.ts"
import { type ExtraBodyEdit, extraHeaderProblem, type ExtraHeaderEdit, familyBodyEdit, requestHeaderEdit, type ScopedEdit } from "../inference/extraBody.ts"
import type { PrepareExtras } from "../inference/prepare.ts"
import type { CacheControl, ProviderTool } from "../inference/types.ts"
import { signatureFromClient } from "../providers/families.ts"
import { quoted } from "../untrusted.ts"
import {
  type ContentBlock,
  type CountTokensRequest,
  knownMessagesFields,
  type MessageParam,
  type MessagesRequest,
  type TextBlock,
  type ToolParam
} from "./api.ts"

/** What the translation reads besides the decoded body. */
export interface MessagesContext {
  readonly configuredModel: (name: string) => boolean
  /** the body as sent: the fields passed on to Anthropic-type providers are taken from it whole */
  readonly raw: Readonly<Record<string, unknown>>
  /** the `anthropic-beta` request header */
  readonly beta?: string | undefined
  /** `[gateway] unsupported_builtin_tools` */
  readonly builtinTools: "drop" | "refuse"
}

export interface TranslatedMessages {
  readonly request: InferenceRequest
  readonly extras: PrepareExtras
  readonly stream: boolean
  /** the request's `model` as sent: the answer echoes it, as Anthropic's does */
  readonly model: string
}

/** what is translated: a Messages request, or a count's (no `max_tokens`, nothing streamed) */
type MessagesBody = CountTokensRequest & Partial<Pick<MessagesRequest, "max_tokens" | "stream">>

type Translated<A> = Result.Result<A, InvalidRequest>

/** the provider family (src/providers/families.ts) whose API this surface speaks */
const anthropicFamily = "anthropic"

const invalid = (message: string): Translated<never> => Result.fail(new InvalidRequest({ message }))

// The translation is on the route's path: plain code with early returns, not Result.gen (a
// generator per call costs microseconds here)

const paramsOf = (body: MessagesBody): Translated<ChatCompletionParams> => {
  const params: Record<string, unknown> = {}
  const counts: ReadonlyArray<readonly [string, string, number | undefined]> = [
    ["max_tokens", "max_tokens", body.max_tokens],
    ["top_k", "top_k", body.top_k],
    // adaptive and disabled thinking set no budget (the Anthropic family gets them as sent)
    ["thinking_budget_tokens", "thinking.budget_tokens", body.thinking?.type === "enabled" ? body.thinking.budget_tokens : undefined]
  ]
  for (const [name, field, value] of counts) {
    if (value === undefined) continue
    if (value <= 0) return invalid(`${field}: expected a positive integer, got ${value}`)
    params[name] = value
  }
  if (body.temperature !== undefined) params.temperature = body.temperature
  if (body.top_p !== undefined) params.top_p = body.top_p
  if (body.stop_sequences !== undefined) params.stop_sequences = body.stop_sequences
  return Result.succeed(params as ChatCompletionParams)
}

/** a system prompt's pieces: `system`, then the system messages' */
type SystemTexts = ReadonlyArray<TextBlock>

/** text blocks' texts joined by "\n\n", as Anthropic reads a list of system blocks */
const systemOf = (texts: SystemTexts): string | undefined => texts.length === 0 ? undefined : texts.map((block) => block.text).join("\n\n")

/** a mark on any system block marks the joined system prompt (the cache then holds all of it) */
const systemCacheControlOf = (texts: SystemTexts): CacheControl | undefined => {
  let mark: CacheControl | undefined
  for (const block of texts) if (block.cache_control !== undefined && block.cache_control !== null) mark = block.cache_control
  return mark
}

const textBlocksOf = (content: string | ReadonlyArray<TextBlock>): SystemTexts => typeof content === "string" ? [{ type: "text", text: content }] : content

/** a system message's content: text blocks only */
const systemMessageTexts = (content: MessageParam["content"], path: string): Translated<SystemTexts> => {
  if (typeof content === "string") return Result.succeed(textBlocksOf(content))
  const texts: Array<TextBlock> = []
  for (const [j, block] of content.entries()) {
    if (block.type !== "text") return invalid(`${path}[${j}]: a system message holds text blocks only, not ${quoted(block.type)}`)
    texts.push(block)
  }
  return Result.succeed(texts)
}

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

/** a block with the client's prompt-caching mark, for the providers that honour it */
const withCacheControl = <B extends InputBlock>(block: B, cacheControl: CacheControl | null | undefined): B =>
  cacheControl === undefined || cacheControl === null ? block : { ...block, cache_control: cacheControl }

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
      return Result.succeed(withCacheControl({ type: "text", text: block.text }, block.cache_control))
    case "image":
      return Result.succeed(withCacheControl(fileOf(block.source, undefined), block.cache_control))
    case "document":
      return Result.succeed(withCacheControl(fileOf(block.source, "application/pdf"), block.cache_control))
    case "tool_use":
      toolNames.set(block.id, block.name)
      // a string `arguments` is read as the raw JSON text, so the input goes as its JSON text
      return Result.succeed(withCacheControl(
        { type: "tool_call", id: block.id, name: block.name, arguments: JSON.stringify(block.input ?? {}) },
        block.cache_control
      ))
    case "tool_result":
      return Result.map(
        toolResultText(block.content, path),
        (result): InputBlock =>
          withCacheControl({
            type: "tool_result",
            id: block.tool_use_id,
            name: toolNames.get(block.tool_use_id) ?? "",
            result,
            ...(block.is_error === true ? { is_error: true } : {})
          }, block.cache_control)
      )
    case "thinking": {
      // Anthropic refuses a thinking block with an empty signature: none is none
      if (!block.signature) return Result.succeed({ type: "thought", text: block.thinking })
      // a signature another family made comes back wrapped with its maker's type (`signatureForClient`)
      const { providerType, signature } = signatureFromClient(block.signature, anthropicFamily)
      return Result.succeed({ type: "thought", text: block.thinking, signature, provider_type: providerType })
    }
    case "redacted_thinking":
      // Anthropic's encrypted thinking: for Anthropic-type providers only
      return Result.succeed({ type: "unknown", data: block, provider_type: anthropicFamily })
  }
}

/**
 * The conversation, and the texts of its system messages: the gateway's input has one system
 * prompt, so they join it after `system` (as the chat route's system messages do), wherever
 * they were.
 */
const messagesOf = (messages: ReadonlyArray<MessageParam>): Translated<{ messages: Array<InputMessage>; system: SystemTexts }> => {
  const toolNames = new Map<string, string>()
  const out: Array<InputMessage> = []
  const system: Array<TextBlock> = []
  for (let i = 0; i < messages.length; i++) {
    const message = messages[i]
    if (message.role === "system") {
      const texts = systemMessageTexts(message.content, `messages[${i}].content`)
      if (Result.isFailure(texts)) return Result.fail(texts.failure)
      system.push(...texts.success)
      continue
    }
    const content: Array<InputBlock> = []
    if (typeof message.content === "string") content.push({ type: "text", text: message.content })
    else {
      for (let j = 0; j < message.content.length; j++) {
        const block = blockOf(message.content[j], `messages[${i}].content[${j}]`, toolNames)
        if (Result.isFailure(block)) return Result.fail(block.failure)
        content.push(block.success)
      }
    }
    out.push({ role: message.role, content })
  }
  return Result.succeed({ messages: out, system })
}

const isServerTool = (tool: ToolParam): boolean => tool.type !== undefined && tool.type !== null && tool.type !== "custom"

/** server tools (web search, code execution...), as sent: for Anthropic-type providers only */
const serverToolsOf = (tools: ReadonlyArray<ToolParam>, context: MessagesContext): Array<ProviderTool> => {
  const sent = Array.isArray(context.raw.tools) ? context.raw.tools : []
  const out: Array<ProviderTool> = []
  for (const [i, tool] of tools.entries()) {
    if (!isServerTool(tool)) continue
    out.push({
      family: anthropicFamily,
      refuseElsewhere: context.builtinTools === "refuse",
      label: `tools[${i}] (${quoted(tool.name)})`,
      tool: sent[i]
    })
  }
  return out
}

/** custom tools */
const toolsOf = (tools: ReadonlyArray<ToolParam>): Translated<Array<AdditionalTool>> => {
  const out: Array<AdditionalTool> = []
  for (let i = 0; i < tools.length; i++) {
    const tool = tools[i]
    if (isServerTool(tool)) continue
    const additional = functionTool({ ...tool, parameters: tool.input_schema }, `tools[${i}].input_schema`)
    if (Result.isFailure(additional)) return Result.fail(additional.failure)
    out.push(tool.cache_control === undefined || tool.cache_control === null ? additional.success : { ...additional.success, cache_control: tool.cache_control })
  }
  return Result.succeed(out)
}

const toolChoices = { auto: "auto", any: "required", none: "none" } as const

const toolChoiceOf = (choice: MessagesRequest["tool_choice"]): InferenceRequest["tool_choice"] =>
  choice === undefined ? undefined : choice.type === "tool" ? { specific: choice.name } : toolChoices[choice.type]

const anthropicOnly = { provider_family: anthropicFamily }

/** `field` (a root field of the body) set to `value` in the bodies of Anthropic-type providers; a failure is a 400 naming it */
const anthropicBodyEdit = (field: string, value: unknown): ScopedEdit<ExtraBodyEdit> => familyBodyEdit(anthropicFamily, [field], value, field)

/** thinking the gateway reads as a budget alone: `enabled` with `budget_tokens`, or `disabled` */
const plainThinkingKeys: ReadonlySet<string> = new Set(["type", "budget_tokens"])

/**
 * The fields passed on as sent to Anthropic-type providers: `metadata`, `service_tier`, a
 * `thinking` that says more than a budget (`adaptive`, `display`), a `tool_choice` naming a
 * server tool or with only server tools, and the root fields the gateway does not know
 * (Claude Code's `context_management`...).
 */
const familyBodyEdits = (body: MessagesBody, context: MessagesContext, serverToolsOnly: boolean, serverToolChosen: boolean) => {
  const raw = context.raw
  const edits: Array<ScopedEdit<ExtraBodyEdit>> = []
  for (const field of Object.keys(raw)) {
    if (!knownMessagesFields.has(field) || field === "metadata" || field === "service_tier") edits.push(anthropicBodyEdit(field, raw[field]))
  }
  const thinking = raw.thinking
  if (body.thinking !== undefined && (body.thinking.type === "adaptive" || Object.keys(thinking as object).some((key) => !plainThinkingKeys.has(key)))) {
    edits.push(anthropicBodyEdit("thinking", thinking))
  }
  if (body.tool_choice !== undefined && (serverToolsOnly || serverToolChosen)) edits.push(anthropicBodyEdit("tool_choice", raw.tool_choice))
  return edits
}

/** the `anthropic-beta` header, for Anthropic-type providers */
const familyHeaderEdits = (beta: string | undefined): Translated<Array<ScopedEdit<ExtraHeaderEdit>>> => {
  if (beta === undefined) return Result.succeed([])
  const problem = extraHeaderProblem("anthropic-beta", beta)
  if (problem !== undefined) return invalid(`anthropic-beta: ${problem.message}`)
  return Result.succeed([{ scope: anthropicOnly, edit: requestHeaderEdit({ name: "anthropic-beta", value: beta }, "anthropic-beta") }])
}

export const translateMessages = (
  body: MessagesBody,
  context: MessagesContext
): Result.Result<TranslatedMessages, InvalidRequest | NotFound> => {
    const targetOf = parseModelOrBareName(body.model, context.configuredModel)
    if (Result.isFailure(targetOf)) return Result.fail(targetOf.failure)
    const target = targetOf.success
    const pinned = pinnedVariant(target, body["gateway::variant_name"], "gateway::variant_name")
    if (Result.isFailure(pinned)) return Result.fail(pinned.failure)
    const variantName = pinned.success
    const paramsResult = paramsOf(body)
    if (Result.isFailure(paramsResult)) return Result.fail(paramsResult.failure)
    const params = paramsResult.success
    const conversationResult = messagesOf(body.messages)
    if (Result.isFailure(conversationResult)) return Result.fail(conversationResult.failure)
    const conversation = conversationResult.success
    const systemTexts = body.system === undefined
      ? conversation.system
      : conversation.system.length === 0 ? textBlocksOf(body.system) : [...textBlocksOf(body.system), ...conversation.system]
    const toolsResult = toolsOf(body.tools ?? [])
    if (Result.isFailure(toolsResult)) return Result.fail(toolsResult.failure)
    const tools = toolsResult.success
    const serverTools = serverToolsOf(body.tools ?? [], context)
    const choice = body.tool_choice
    // a choice of a server tool, or any choice among server tools only, is Anthropic's alone
    const serverToolChosen = choice?.type === "tool" && serverTools.length > 0 && !tools.some((tool) => tool.name === choice.name)
    const serverToolsOnly = serverTools.length > 0 && tools.length === 0
    const headersResult = familyHeaderEdits(context.beta)
    if (Result.isFailure(headersResult)) return Result.fail(headersResult.failure)
    const headers = headersResult.success
    const gatewayResult = gatewayRequestPart(body)
    if (Result.isFailure(gatewayResult)) return Result.fail(gatewayResult.failure)
    const gatewayPart = gatewayResult.success
    const system = systemOf(systemTexts)
    const stream = body.stream === true
    const request: InferenceRequest = {
      ...("model_name" in target ? { model_name: target.model_name } : { function_name: target.function_name }),
      input: { ...(system === undefined ? {} : { system }), messages: conversation.messages },
      stream,
      ...gatewayPart,
      tags: { ...gatewayPart.tags, [surfaceTag]: "anthropic_messages" },
      variant_name: variantName,
      additional_tools: tools.length > 0 ? tools : undefined,
      tool_choice: serverToolChosen || serverToolsOnly ? undefined : toolChoiceOf(choice),
      parallel_tool_calls: choice?.disable_parallel_tool_use === true && tools.length > 0 ? false : undefined,
      params: Object.keys(params).length > 0 ? { chat_completion: params } : undefined
    }
    const bodyEdits = familyBodyEdits(body, context, serverToolsOnly, serverToolChosen)
    const systemCacheControl = systemCacheControlOf(systemTexts)
    const extras: PrepareExtras = {
      modelField: "model",
      functionField: "model",
      ...(systemCacheControl === undefined ? {} : { systemCacheControl }),
      ...(bodyEdits.length > 0 || headers.length > 0 ? { surfaceEdits: { body: bodyEdits, headers } } : {}),
      ...(serverTools.length > 0 ? { builtinTools: serverTools } : {})
    }
    return Result.succeed({ request, extras, stream, model: body.model })
  }
