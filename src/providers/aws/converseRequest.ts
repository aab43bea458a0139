/**
 * ModelRequest -> a Bedrock Converse / ConverseStream request body (the two take the same body):
 * https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_Converse.html
 */
import type { FileSource, ModelRequest, RequestBlock, RequestMessage, Role } from "../../inference/types.ts"
import type { InferenceParams } from "../../inference/params.ts"
import { type WireBody, type WireCall, WireProblem } from "../codec.ts"
import { answersWithRespondTool, respondToolName } from "../../inference/output.ts"
import { addressProblem, noRegion } from "./region.ts"

type Json = WireBody

const type = "aws_bedrock"

/** What a Bedrock provider sends every call with, settled at start-up. */
export interface ConverseTarget {
  readonly modelId: string
  readonly region: string | undefined
  /** undefined: no region and no `endpoint_url`, and every call fails saying so */
  readonly endpoint: string | undefined
}

const imageFormats: Readonly<Record<string, string>> = {
  "image/png": "png",
  "image/jpeg": "jpeg",
  "image/jpg": "jpeg",
  "image/gif": "gif",
  "image/webp": "webp"
}

const documentFormats: Readonly<Record<string, string>> = {
  "application/pdf": "pdf",
  "text/csv": "csv",
  "application/msword": "doc",
  "application/vnd.openxmlformats-officedocument.wordprocessingml.document": "docx",
  "application/vnd.ms-excel": "xls",
  "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet": "xlsx",
  "text/html": "html",
  "text/plain": "txt",
  "text/markdown": "md"
}

/** An image or a document block; Converse takes their bytes (base64 in JSON), not URLs. */
const fileBlock = (source: FileSource, documentNumber: number): Json | WireProblem => {
  if (source.kind === "url") {
    return new WireProblem(`the ${type} provider takes files as base64 data, not as a URL (Converse has no URL source): ${source.url.slice(0, 100)}`)
  }
  const image = imageFormats[source.mimeType]
  if (image !== undefined) return { image: { format: image, source: { bytes: source.data } } }
  const document = documentFormats[source.mimeType]
  if (document !== undefined) {
    // Converse requires a name per document, unique in the request
    return { document: { format: document, name: `document-${documentNumber}`, source: { bytes: source.data } } }
  }
  return new WireProblem(`the ${type} provider does not take files of type ${source.mimeType} (Converse takes images png/jpeg/gif/webp and documents pdf/csv/doc/docx/xls/xlsx/html/txt/md)`)
}

const toolUseInput = (block: Extract<RequestBlock, { type: "tool_call" }>): unknown | WireProblem => {
  try {
    return block.arguments === "" ? {} : JSON.parse(block.arguments)
  } catch {
    return new WireProblem(`the ${type} provider sends tool call arguments as JSON, and the arguments of tool call "${block.id}" are not JSON`)
  }
}

const contentBlock = (block: RequestBlock, qualifiedName: string, counter: { documents: number }): Json | undefined | WireProblem => {
  switch (block.type) {
    case "text":
      return { text: block.text }
    case "tool_call": {
      const input = toolUseInput(block)
      if (input instanceof WireProblem) return input
      return { toolUse: { toolUseId: block.id, name: block.name, input } }
    }
    case "tool_result":
      return {
        toolResult: block.is_error === true
          ? { toolUseId: block.id, content: [{ text: block.result }], status: "error" }
          : { toolUseId: block.id, content: [{ text: block.result }] }
      }
    case "file":
      counter.documents++
      return fileBlock(block.source, counter.documents)
    case "thought":
      // sent back with its signature (Claude's extended thinking checks it); a thought without text has nothing to send
      if (block.text === undefined) return undefined
      return {
        reasoningContent: {
          reasoningText: block.signature === undefined ? { text: block.text } : { text: block.text, signature: block.signature }
        }
      }
    case "unknown":
      return block.modelProviderName === undefined || block.modelProviderName === qualifiedName ? block.data as Json : undefined
  }
}

/** Converse wants user and assistant turns to alternate: consecutive messages of one role become one. */
const converseMessages = (messages: ReadonlyArray<RequestMessage>, qualifiedName: string): Array<Json> | WireProblem => {
  const out: Array<{ role: Role; content: Array<Json> }> = []
  const counter = { documents: 0 }
  for (const message of messages) {
    const content: Array<Json> = []
    for (const block of message.content) {
      const converted = contentBlock(block, qualifiedName, counter)
      if (converted instanceof WireProblem) return converted
      if (converted !== undefined) content.push(converted)
    }
    if (content.length === 0) continue
    const last = out[out.length - 1]
    if (last !== undefined && last.role === message.role) last.content.push(...content)
    else out.push({ role: message.role, content })
  }
  return out
}

const inferenceConfig = (params: InferenceParams): Json | undefined => {
  const config: Json = {}
  if (params.max_tokens !== undefined) config.maxTokens = params.max_tokens
  if (params.temperature !== undefined) config.temperature = params.temperature
  if (params.top_p !== undefined) config.topP = params.top_p
  if (params.stop_sequences !== undefined) config.stopSequences = params.stop_sequences
  return Object.keys(config).length > 0 ? config : undefined
}

const respondTool = (schema: Record<string, unknown> | undefined): Json => ({
  toolSpec: {
    name: respondToolName,
    description: "Respond to the user with JSON that follows the schema.",
    inputSchema: { json: schema ?? { type: "object" } }
  }
})

/**
 * `toolConfig`: the request's tools (only the allowed ones: Converse has no allowed-tools list),
 * or the forced `respond` tool of json_mode `tool`; then the provider tools. Converse has no
 * `none` tool choice: with `none` the tools are not offered at all.
 */
const toolConfig = (request: ModelRequest, providerTools: ReadonlyArray<unknown>): Json | undefined => {
  const tools: Array<unknown> = []
  let choice: Json | undefined
  if (answersWithRespondTool(request)) {
    tools.push(respondTool(request.outputSchema))
    choice = { tool: { name: respondToolName } }
  } else if (request.tools !== undefined && request.tools.tools.length > 0 && request.tools.choice.type !== "none") {
    const config = request.tools
    const allowed = config.allowed === undefined ? undefined : new Set(config.allowed)
    for (const tool of config.tools) {
      if (allowed !== undefined && !allowed.has(tool.name) && !(config.choice.type === "specific" && config.choice.name === tool.name)) continue
      tools.push({ toolSpec: { name: tool.name, description: tool.description, inputSchema: { json: tool.parameters } } })
    }
    const c = config.choice
    choice = c.type === "specific" ? { tool: { name: c.name } } : c.type === "required" ? { any: {} } : { auto: {} }
  }
  for (const providerTool of providerTools) tools.push(providerTool)
  if (tools.length === 0) return undefined
  return choice === undefined ? { tools } : { tools, toolChoice: choice }
}

/** Converse has no JSON mode: json_mode `on`/`strict` ask for JSON (and the schema) in the system prompt. */
const jsonInstruction = (request: ModelRequest): string | undefined => {
  if (request.jsonMode !== "on" && request.jsonMode !== "strict") return undefined
  return request.outputSchema === undefined
    ? "Respond with a JSON object only, without any other text."
    : `Respond with a JSON object only, without any other text, that follows this JSON schema: ${JSON.stringify(request.outputSchema)}`
}

/** The request body of one call, or an explanation when the request cannot be expressed. */
export const converseBody = (request: ModelRequest, call: WireCall<ConverseTarget>): Json | WireProblem => {
  if (call.target.endpoint === undefined) {
    return new WireProblem(addressProblem(type, call.target, { setting: "model_id", segments: [] }) ?? noRegion(type))
  }
  const messages = converseMessages(request.messages, call.qualifiedName)
  if (messages instanceof WireProblem) return messages
  const body: Json = { messages }
  const system: Array<Json> = []
  if (request.system !== undefined && request.system !== "") system.push({ text: request.system })
  const instruction = jsonInstruction(request)
  if (instruction !== undefined) system.push({ text: instruction })
  if (system.length > 0) body.system = system
  const config = inferenceConfig(request.params)
  if (config !== undefined) body.inferenceConfig = config
  const tools = toolConfig(request, call.providerTools)
  if (tools !== undefined) body.toolConfig = tools
  // what Converse has no field for, passed to the model as it is: Claude's extended thinking and top_k
  const additional: Json = {}
  if (request.params.thinking_budget_tokens !== undefined) {
    additional.thinking = { type: "enabled", budget_tokens: request.params.thinking_budget_tokens }
  }
  if (request.params.top_k !== undefined) additional.top_k = request.params.top_k
  if (Object.keys(additional).length > 0) body.additionalModelRequestFields = additional
  return body
}

/** `POST {endpoint}/model/{modelId}/<operation>`; the model id is one path segment (ARNs and inference profiles hold `:` and `/`). */
export const modelUrl = (target: ConverseTarget, operation: string): string =>
  `${target.endpoint ?? "https://bedrock-runtime.invalid"}/model/${encodeURIComponent(target.modelId)}/${operation}`

export const converseUrl = (target: ConverseTarget, stream: boolean): string => modelUrl(target, stream ? "converse-stream" : "converse")
