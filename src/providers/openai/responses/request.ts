/**
 * ModelRequest -> OpenAI Responses API request body (platform.openai.com/docs/api-reference/
 * responses/create): `instructions` for the system, `input` items (messages, function calls
 * and their outputs, reasoning items sent back), flat function tools, `text.format` for JSON,
 * `reasoning`, `store: false` (the gateway keeps the conversation; reasoning goes back as
 * its encrypted content, asked for with `include_encrypted_reasoning`: `signature.ts`).
 */
import type { FileSource, ModelRequest, RequestBlock, ToolDefinition } from "../../../inference/types.ts"
import type { InferenceParams } from "../../../inference/params.ts"
import { type WireBody, type WireCall, WireProblem } from "../../codec.ts"
import { respondToolName } from "../../../inference/output.ts"
import { addTools, respondToolDescription, type ToolShapes } from "../request.ts"
import { encryptedContentOf } from "./signature.ts"

type Json = WireBody

/** What one configured Responses API provider sends every call with. */
export interface ResponsesTarget {
  readonly url: string
  readonly model: string
  /** `include: ["reasoning.encrypted_content"]`, so that reasoning can be sent back without `store` */
  readonly includeEncryptedReasoning: boolean
}

export const responsesUrl = (apiBase: string): string =>
  new URL("responses", apiBase.endsWith("/") ? apiBase : `${apiBase}/`).toString()

const dataUrl = (source: Extract<FileSource, { kind: "base64" }>) => `data:${source.mimeType};base64,${source.data}`

const filePart = (block: Extract<RequestBlock, { type: "file" }>): Json => {
  const source = block.source
  const mime = source.mimeType
  if (mime === undefined || mime.startsWith("image/")) {
    // the API reference lists `detail` as required; "auto" is its default
    return { type: "input_image", image_url: source.kind === "url" ? source.url : dataUrl(source), detail: block.detail ?? "auto" }
  }
  if (source.kind === "url") return { type: "input_file", file_url: source.url }
  return { type: "input_file", filename: `input.${mime.split("/")[1] ?? "bin"}`, file_data: dataUrl(source) }
}

/** A thought sent back as the reasoning item it was (`signature.ts`); one without our signature is left out (the API cannot use it). */
const reasoningItem = (block: Extract<RequestBlock, { type: "thought" }>): Json | undefined => {
  const encrypted = encryptedContentOf(block.signature)
  if (encrypted === undefined) return undefined
  return {
    type: "reasoning",
    summary: block.text === undefined || block.text === "" ? [] : [{ type: "summary_text", text: block.text }],
    encrypted_content: encrypted
  }
}

const toInput = (request: ModelRequest, qualifiedName: string): Array<Json> | WireProblem => {
  const input: Array<Json> = []
  for (const message of request.messages) {
    const user = message.role === "user"
    // a user message's parts are sent as one message item, before the items that follow them;
    // an assistant's text as a message of its own (string content: the input form the API
    // takes for assistant messages without an output item's id and status)
    let parts: Array<Json> = []
    const flush = () => {
      if (parts.length === 0) return
      input.push({ role: "user", content: parts })
      parts = []
    }
    for (const block of message.content) {
      switch (block.type) {
        case "text":
          if (user) parts.push({ type: "input_text", text: block.text })
          else input.push({ role: "assistant", content: block.text })
          break
        case "file":
          if (!user) return new WireProblem("the openai provider (Responses API) takes files in user messages only")
          parts.push(filePart(block))
          break
        case "tool_call":
          flush()
          input.push({ type: "function_call", call_id: block.id, name: block.name, arguments: block.arguments })
          break
        case "tool_result":
          flush()
          input.push({ type: "function_call_output", call_id: block.id, output: block.result })
          break
        case "thought": {
          const item = reasoningItem(block)
          if (item !== undefined) {
            flush()
            input.push(item)
          }
          break
        }
        case "unknown":
          // an item of this provider's answer (a web search call...) goes back as the item it was
          if (block.modelProviderName === undefined || block.modelProviderName === qualifiedName) {
            flush()
            input.push(block.data as Json)
          }
          break
      }
    }
    flush()
  }
  return input
}

const toolOf = (tool: ToolDefinition): Json =>
  tool.custom !== undefined
    ? {
      type: "custom",
      name: tool.name,
      ...(tool.description === "" ? {} : { description: tool.description }),
      ...(tool.custom.format === undefined ? {} : { format: tool.custom.format })
    }
    // `strict` is said both ways: the Responses API makes function tools strict when it is absent
    : { type: "function", name: tool.name, description: tool.description, parameters: tool.parameters, strict: tool.strict }

const choiceOf = (tools: ReadonlyArray<ToolDefinition>, name: string): Json =>
  tools.find((tool) => tool.name === name)?.custom !== undefined ? { type: "custom", name } : { type: "function", name }

const responsesTools: ToolShapes = {
  respondTool: (parameters) => ({
    type: "function",
    name: respondToolName,
    description: respondToolDescription,
    parameters,
    strict: false
  }),
  respondChoice: () => ({ type: "function", name: respondToolName }),
  toolOf,
  choiceOf,
  allowedChoice: (mode, tools) => ({ type: "allowed_tools", mode, tools })
}

const textFormat = (request: ModelRequest): Json | undefined => {
  switch (request.jsonMode) {
    case "on":
      return { type: "json_object" }
    case "strict":
      return request.outputSchema === undefined
        ? { type: "json_object" }
        : { type: "json_schema", name: "response", schema: request.outputSchema, strict: true }
    default:
      return undefined
  }
}

/**
 * The parameters the Responses API takes. It has no `seed`, `presence_penalty`,
 * `frequency_penalty` or `stop`: those are not sent (docs/providers.md: What each type does).
 */
const addParams = (body: Json, params: InferenceParams): void => {
  if (params.temperature !== undefined) body.temperature = params.temperature
  if (params.top_p !== undefined) body.top_p = params.top_p
  if (params.max_tokens !== undefined) body.max_output_tokens = params.max_tokens
  if (params.service_tier !== undefined) body.service_tier = params.service_tier
}

export const responsesBody = (request: ModelRequest, call: WireCall<ResponsesTarget>): Json | WireProblem => {
  const target = call.target
  const body: Json = { model: target.model }
  if (request.system !== undefined) body.instructions = request.system
  const input = toInput(request, call.qualifiedName)
  if (input instanceof WireProblem) return input
  body.input = input
  addParams(body, request.params)
  addTools(body, request, call.providerTools, responsesTools)
  const format = textFormat(request)
  const verbosity = request.params.verbosity
  if (format !== undefined || verbosity !== undefined) {
    body.text = { ...(format === undefined ? {} : { format }), ...(verbosity === undefined ? {} : { verbosity }) }
  }
  const effort = request.params.reasoning_effort
  if (effort !== undefined || target.includeEncryptedReasoning) {
    body.reasoning = { ...(effort === undefined ? {} : { effort }), summary: "auto" }
  }
  if (target.includeEncryptedReasoning) body.include = ["reasoning.encrypted_content"]
  body.store = false
  if (call.stream) body.stream = true
  return body
}
