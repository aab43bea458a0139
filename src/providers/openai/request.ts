/**
 * ModelRequest -> OpenAI Chat Completions request body. Also serves every OpenAI-compatible
 * server (vLLM, SGLang, Ollama, llama.cpp...) through `api_base`.
 */
import { applyExtraBodyEdit, applyExtraHeaderEdits } from "../../inference/extraBody.ts"
import type { FileSource, ModelRequest, RequestBlock, ToolDefinition } from "../../inference/types.ts"
import type { ProviderCall } from "../types.ts"

type Json = Record<string, unknown>

export const respondToolName = "respond"

const dataUrl = (source: Extract<FileSource, { kind: "base64" }>) => `data:${source.mimeType};base64,${source.data}`

const audioFormats: Readonly<Record<string, string>> = {
  "audio/wav": "wav",
  "audio/x-wav": "wav",
  "audio/wave": "wav",
  "audio/mpeg": "mp3",
  "audio/mp3": "mp3"
}

/** A user content part for a file, or an explanation of why OpenAI cannot take it. */
const filePart = (block: Extract<RequestBlock, { type: "file" }>): Json | string => {
  const source = block.source
  const mime = source.mimeType
  if (mime === undefined || mime.startsWith("image/")) {
    const url = source.kind === "url" ? source.url : dataUrl(source)
    return { type: "image_url", image_url: block.detail === undefined ? { url } : { url, detail: block.detail } }
  }
  if (source.kind === "url") {
    return `the openai provider takes files other than images as base64 data, not as a URL (${mime})`
  }
  const audioFormat = audioFormats[mime]
  if (audioFormat !== undefined) return { type: "input_audio", input_audio: { data: source.data, format: audioFormat } }
  return { type: "file", file: { file_data: dataUrl(source), filename: `input.${mime.split("/")[1] ?? "bin"}` } }
}

const contentOf = (parts: ReadonlyArray<Json>): string | ReadonlyArray<Json> =>
  parts.length === 1 && parts[0].type === "text" ? parts[0].text as string : parts

export const toOpenAiMessages = (request: ModelRequest, qualifiedName: string): ReadonlyArray<Json> | string => {
  const messages: Array<Json> = []
  if (request.system !== undefined) messages.push({ role: "system", content: request.system })
  for (const message of request.messages) {
    const parts: Array<Json> = []
    const toolCalls: Array<Json> = []
    for (const block of message.content) {
      switch (block.type) {
        case "text":
          parts.push({ type: "text", text: block.text })
          break
        case "tool_call":
          toolCalls.push({ id: block.id, type: "function", function: { name: block.name, arguments: block.arguments } })
          break
        case "tool_result":
          messages.push({ role: "tool", tool_call_id: block.id, content: block.result })
          break
        case "file": {
          const part = filePart(block)
          if (typeof part === "string") return part
          parts.push(part)
          break
        }
        case "thought":
          // Chat Completions has no way to send reasoning back
          break
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
      const assistant: Json = { role: "assistant", content: parts.length > 0 ? contentOf(parts) : null }
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

const functionChoice = (name: string): Json => ({ type: "function", function: { name } })

/** How OpenAI names one tool in `tool_choice` and `allowed_tools`. */
const choiceOf = (tools: ReadonlyArray<ToolDefinition>, name: string): Json =>
  tools.find((tool) => tool.name === name)?.custom !== undefined ? { type: "custom", custom: { name } } : functionChoice(name)

const addTools = (body: Json, call: ProviderCall): void => {
  const request = call.request
  const tools: Array<Json> = []
  let choice: unknown
  if (request.functionType === "json" && request.jsonMode === "tool") {
    tools.push({
      type: "function",
      function: {
        name: respondToolName,
        description: "Respond to the user with JSON that follows the schema.",
        parameters: request.outputSchema ?? { type: "object" }
      }
    })
    choice = functionChoice(respondToolName)
  } else if (request.tools !== undefined && request.tools.tools.length > 0) {
    const config = request.tools
    for (const tool of config.tools) tools.push(toolOf(tool))
    const c = config.choice
    if (c.type === "specific") choice = choiceOf(config.tools, c.name)
    else if (config.allowed !== undefined && c.type !== "none") {
      choice = {
        type: "allowed_tools",
        allowed_tools: { mode: c.type, tools: config.allowed.map((name) => choiceOf(config.tools, name)) }
      }
    } else choice = c.type
    if (config.parallelToolCalls !== undefined) body.parallel_tool_calls = config.parallelToolCalls
  }
  for (const providerTool of request.providerTools) {
    if (providerTool.modelName !== undefined && providerTool.modelName !== call.modelName) continue
    if (providerTool.providerName !== undefined && providerTool.providerName !== call.providerName) continue
    tools.push(providerTool.tool as Json)
  }
  if (tools.length > 0) {
    body.tools = tools
    if (choice !== undefined) body.tool_choice = choice
  }
}

// json functions ask for JSON per their json_mode; a chat function only when the request set
// one (OpenAI's `response_format`)
const responseFormat = (request: ModelRequest): Json | undefined => {
  switch (request.jsonMode) {
    case "on":
      return { type: "json_object" }
    case "strict":
      return request.outputSchema === undefined
        ? { type: "json_object" }
        : { type: "json_schema", json_schema: { name: "response", strict: true, schema: request.outputSchema } }
    default:
      return undefined
  }
}

export interface OpenAiHttpRequest {
  readonly url: string
  readonly headers: Record<string, string>
  readonly body: string
}

export const chatCompletionsUrl = (apiBase: string): string =>
  new URL("chat/completions", apiBase.endsWith("/") ? apiBase : `${apiBase}/`).toString()

/** The HTTP request for one call, or an explanation when the request cannot be expressed. */
export const buildOpenAiRequest = (
  call: ProviderCall,
  model: string,
  url: string,
  stream: boolean
): OpenAiHttpRequest | string => {
  const request = call.request
  const messages = toOpenAiMessages(request, call.qualifiedName)
  if (typeof messages === "string") return messages
  const body: Json = { model, messages }
  const params = request.params
  if (params.temperature !== undefined) body.temperature = params.temperature
  if (params.max_tokens !== undefined) body.max_completion_tokens = params.max_tokens
  if (params.seed !== undefined) body.seed = params.seed
  if (params.top_p !== undefined) body.top_p = params.top_p
  if (params.presence_penalty !== undefined) body.presence_penalty = params.presence_penalty
  if (params.frequency_penalty !== undefined) body.frequency_penalty = params.frequency_penalty
  if (params.stop_sequences !== undefined) body.stop = params.stop_sequences
  if (params.reasoning_effort !== undefined) body.reasoning_effort = params.reasoning_effort
  if (params.service_tier !== undefined) body.service_tier = params.service_tier
  if (params.verbosity !== undefined) body.verbosity = params.verbosity
  addTools(body, call)
  const format = responseFormat(request)
  if (format !== undefined) body.response_format = format
  if (stream) {
    body.stream = true
    body.stream_options = { include_usage: true }
  }
  for (const edit of call.extraBody) {
    const problem = applyExtraBodyEdit(body, edit)
    if (problem !== undefined) return problem
  }
  const headers: Record<string, string> = { "content-type": "application/json" }
  if (call.apiKey !== undefined) headers.authorization = `Bearer ${call.apiKey}`
  return { url, headers: applyExtraHeaderEdits(headers, call.extraHeaders), body: JSON.stringify(body) }
}
