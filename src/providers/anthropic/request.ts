/**
 * ModelRequest -> Anthropic Messages request body (https://docs.anthropic.com/en/api/messages),
 * for the `anthropic` provider and, without `model` and with Vertex's `anthropic_version`,
 * for `gcp_vertex_anthropic` (`vertex.ts`).
 */
import { answersWithRespondTool, respondToolName } from "../../inference/output.ts"
import type { CacheControl, FileSource, ModelRequest, RequestBlock, ToolConfig, ToolDefinition } from "../../inference/types.ts"
import { type WireBody, type WireCall, WireProblem } from "../codec.ts"

type Json = WireBody


/** Anthropic requires `max_tokens`; this is sent when the request does not set it (beyond a thinking budget) */
export const defaultMaxTokens = 4096

/** What one Anthropic provider sends every call with, settled at start-up. */
export interface AnthropicTarget {
  /** the provider type, for messages */
  readonly type: string
  readonly url: string
  readonly streamUrl: string
  /** `model` in the body; undefined on Vertex, where the URL names the model */
  readonly model: string | undefined
  /** Vertex's `anthropic_version` in the body */
  readonly bodyVersion: string | undefined
  /** why this provider cannot be called (settings that name no model), said on every call */
  readonly problem?: string | undefined
  /** where tokens are counted and the `model` the count names; undefined where there is no count (a Vertex endpoint) */
  readonly count?: { readonly url: string; readonly model: string } | undefined
}

const mediaSource = (source: FileSource, mimeType: string): Json =>
  source.kind === "url" ? { type: "url", url: source.url } : { type: "base64", media_type: mimeType, data: source.data }

/** The media type of a file: declared, or (for a URL) read from its extension. */
const mimeTypeOf = (source: FileSource): string | undefined => {
  if (source.mimeType !== undefined) return source.mimeType
  if (source.kind === "url") {
    const path = source.url.split(/[?#]/)[0].toLowerCase()
    if (path.endsWith(".pdf")) return "application/pdf"
    if (/\.(png|jpe?g|gif|webp)$/.test(path)) return "image/*"
  }
  return undefined
}

/** An image or document block (images, PDFs, plain text), or why Anthropic cannot take the file. */
const fileBlock = (type: string, block: Extract<RequestBlock, { type: "file" }>): Json | WireProblem => {
  const source = block.source
  const mime = mimeTypeOf(source)
  if (mime === undefined) {
    return new WireProblem(`the ${type} provider needs the media type of a file given by URL (images or application/pdf): ${source.kind === "url" ? source.url.slice(0, 100) : ""}`)
  }
  if (mime.startsWith("image/")) return { type: "image", source: mediaSource(source, mime) }
  if (mime === "application/pdf") return { type: "document", source: mediaSource(source, mime) }
  if (mime === "text/plain" && source.kind === "base64") {
    return { type: "document", source: { type: "text", media_type: "text/plain", data: Buffer.from(source.data, "base64").toString("utf8") } }
  }
  return new WireProblem(`the ${type} provider takes images, PDFs and plain text files, not ${mime}${source.kind === "url" ? " by URL" : ""}`)
}

const toolInput = (type: string, name: string, text: string): Json | WireProblem => {
  try {
    const input: unknown = JSON.parse(text)
    if (typeof input === "object" && input !== null && !Array.isArray(input)) return input as Json
  } catch {
    // said below
  }
  return new WireProblem(`the ${type} provider takes a tool call's arguments back as a JSON object; the call of "${name}" has ${JSON.stringify(text.slice(0, 100))}`)
}

type Turn = { role: "user" | "assistant"; content: Array<Json> }

/** a block with its prompt-caching mark, when it has one */
const marked = (block: Json, cacheControl: CacheControl | undefined): Json => {
  if (cacheControl !== undefined) block.cache_control = cacheControl
  return block
}

/**
 * The messages: tool results go in user turns, and consecutive turns of one role are merged,
 * as Anthropic requires alternating roles. Thoughts go back with their signature (Anthropic
 * refuses a thinking block without one, so those are left out); `unknown` blocks go as they
 * are when they are this provider's or nobody's.
 */
export const toAnthropicMessages = (
  type: string,
  request: ModelRequest,
  qualifiedName: string
): ReadonlyArray<Json> | WireProblem => {
  const turns: Array<Turn> = []
  const add = (role: Turn["role"], block: Json) => {
    const last = turns[turns.length - 1]
    if (last !== undefined && last.role === role) last.content.push(block)
    else turns.push({ role, content: [block] })
  }
  for (const message of request.messages) {
    for (const block of message.content) {
      switch (block.type) {
        case "text":
          add(message.role, marked({ type: "text", text: block.text }, block.cache_control))
          break
        case "tool_call": {
          const input = toolInput(type, block.name, block.arguments)
          if (input instanceof WireProblem) return input
          add(message.role, marked({ type: "tool_use", id: block.id, name: block.name, input }, block.cache_control))
          break
        }
        case "tool_result": {
          const result: Json = { type: "tool_result", tool_use_id: block.id, content: block.result }
          if (block.is_error === true) result.is_error = true
          add("user", marked(result, block.cache_control))
          break
        }
        case "file": {
          const file = fileBlock(type, block)
          if (file instanceof WireProblem) return file
          add(message.role, marked(file, block.cache_control))
          break
        }
        case "thought":
          if (message.role === "assistant" && block.signature !== undefined) {
            add("assistant", { type: "thinking", thinking: block.text ?? "", signature: block.signature })
          }
          break
        case "unknown":
          if (block.modelProviderName === undefined || block.modelProviderName === qualifiedName) add(message.role, block.data as Json)
          break
      }
    }
  }
  return turns
}

const toolOf = (type: string, tool: ToolDefinition): Json | WireProblem =>
  tool.custom !== undefined
    ? new WireProblem(`the ${type} provider does not take custom (free-text) tools: "${tool.name}"`)
    : marked({
      name: tool.name,
      ...(tool.description === "" ? {} : { description: tool.description }),
      input_schema: tool.parameters,
      ...(tool.strict ? { strict: true } : {})
    }, tool.cacheControl)

/** `tool_choice`: required is Anthropic's `any`, a specific tool its `tool`; parallel calls turned off where asked. */
const toolChoiceOf = (config: ToolConfig): Json => {
  const c = config.choice
  const choice: Json = c.type === "required" ? { type: "any" } : c.type === "specific" ? { type: "tool", name: c.name } : { type: c.type }
  if (config.parallelToolCalls === false && c.type !== "none") choice.disable_parallel_tool_use = true
  return choice
}

/**
 * `tools` and `tool_choice`: the `respond` tool forced for json_mode tool, or the request's
 * tools (only the allowed ones: Anthropic has no separate list of callable tools), then the
 * provider tools (web search...) as they are.
 */
const addTools = (type: string, body: Json, request: ModelRequest, providerTools: ReadonlyArray<unknown>): WireProblem | undefined => {
  const tools: Array<unknown> = []
  let choice: Json | undefined
  if (answersWithRespondTool(request)) {
    tools.push({
      name: respondToolName,
      description: "Respond to the user with JSON that follows the schema.",
      input_schema: request.outputSchema ?? { type: "object" }
    })
    choice = { type: "tool", name: respondToolName }
  } else if (request.tools !== undefined && request.tools.tools.length > 0) {
    const config = request.tools
    const allowed = config.allowed
    for (const tool of config.tools) {
      if (allowed !== undefined && !allowed.includes(tool.name)) continue
      const wire = toolOf(type, tool)
      if (wire instanceof WireProblem) return wire
      tools.push(wire)
    }
    choice = toolChoiceOf(config)
  }
  for (const providerTool of providerTools) tools.push(providerTool)
  if (tools.length > 0) {
    body.tools = tools
    if (choice !== undefined) body.tool_choice = choice
  }
  return undefined
}

/** json_mode `on` (and `strict` without a schema): Anthropic has no JSON-only switch, so the system prompt asks for it */
const jsonInstruction = (schema: Record<string, unknown> | undefined) =>
  schema === undefined
    ? "Respond with a JSON object only, with no other text."
    : `Respond with a JSON object only, with no other text, that follows this JSON schema: ${JSON.stringify(schema)}`

/** The request body of one call, or an explanation when the request cannot be expressed. */
export const anthropicBody = (request: ModelRequest, call: WireCall<AnthropicTarget>): Json | WireProblem => {
  const target = call.target
  if (target.problem !== undefined) return new WireProblem(target.problem)
  const messages = toAnthropicMessages(target.type, request, call.qualifiedName)
  if (messages instanceof WireProblem) return messages
  const params = request.params
  const body: Json = {}
  if (target.model !== undefined) body.model = target.model
  if (target.bodyVersion !== undefined) body.anthropic_version = target.bodyVersion
  const budget = params.thinking_budget_tokens
  // Anthropic counts the thinking budget in max_tokens, which must exceed it
  body.max_tokens = params.max_tokens ?? (budget === undefined ? defaultMaxTokens : budget + defaultMaxTokens)
  let system = request.system
  const schema = request.outputSchema
  const nativeSchema = request.jsonMode === "strict" ? schema : undefined
  // strict with a schema: Anthropic's native structured output (`output_config.format`, below)
  if (nativeSchema === undefined && (request.jsonMode === "on" || request.jsonMode === "strict")) {
    system = system === undefined ? jsonInstruction(schema) : `${system}\n\n${jsonInstruction(schema)}`
  }
  // a marked system prompt goes as a text block, the only form that takes the mark
  if (system !== undefined) body.system = request.systemCacheControl === undefined ? system : [marked({ type: "text", text: system }, request.systemCacheControl)]
  body.messages = messages
  if (params.temperature !== undefined) body.temperature = params.temperature
  if (params.top_p !== undefined) body.top_p = params.top_p
  if (params.top_k !== undefined) body.top_k = params.top_k
  if (params.stop_sequences !== undefined) body.stop_sequences = params.stop_sequences
  if (budget !== undefined) body.thinking = { type: "enabled", budget_tokens: budget }
  if (nativeSchema !== undefined) body.output_config = { format: { type: "json_schema", schema: nativeSchema } }
  const problem = addTools(target.type, body, request, call.providerTools)
  if (problem !== undefined) return problem
  if (call.stream) body.stream = true
  return body
}
