/**
 * ModelRequest -> Mistral chat completions body (docs.mistral.ai, API reference, "Chat
 * Completion"). Mistral speaks nearly OpenAI's Chat Completions; what differs is written here:
 * `tool_choice` ("any" for required), `random_seed`, tool call ids of exactly nine letters and
 * digits, thinking chunks sent back in the assistant's content, documents by `document_url`.
 * The messages are built by the Chat Completions builder (`../openai/request.ts`) with these
 * differences as a dialect.
 */
import { answersWithRespondTool } from "../../inference/output.ts"
import type { ModelRequest, RequestBlock } from "../../inference/types.ts"
import { type WireBody, type WireCall, WireProblem } from "../codec.ts"
import { type ChatMessagesDialect, chatCompletionsBody, type ChatCompletionsTarget, dataUrl } from "../openai/request.ts"

type Json = WireBody

const idPattern = /^[a-zA-Z0-9]{9}$/
const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"

/**
 * The id Mistral accepts for a tool call sent back: Mistral's own ids (nine letters and digits)
 * as they are, any other (another provider's `call_1`) mapped to nine characters by a hash, the
 * same for the call and its result so they still pair.
 */
export const mistralToolCallId = (id: string): string => {
  if (idPattern.test(id)) return id
  // two FNV-1a hashes with different seeds: 64 bits, ample for the calls of one conversation
  let a = 0x811c9dc5
  let b = 0x01000193 ^ 0x5bd1e995
  for (let i = 0; i < id.length; i++) {
    const code = id.charCodeAt(i)
    a = Math.imul(a ^ code, 0x01000193) >>> 0
    b = Math.imul(b ^ code, 0x5bd1e995) >>> 0
  }
  let out = ""
  for (let i = 0; i < 9; i++) {
    const source = i < 5 ? a : b
    out += alphabet[(source >>> ((i % 5) * 6)) % alphabet.length]
  }
  return out
}

const filePart = (block: Extract<RequestBlock, { type: "file" }>): Json | WireProblem => {
  const source = block.source
  const mime = source.mimeType
  const url = source.kind === "url" ? source.url : dataUrl(source)
  if (mime === undefined || mime.startsWith("image/")) {
    return { type: "image_url", image_url: block.detail === undefined ? { url } : { url, detail: block.detail } }
  }
  if (mime === "application/pdf") return { type: "document_url", document_url: url }
  return new WireProblem(`the mistral provider takes images and PDFs, not files of type ${mime}`)
}

/** Mistral's messages: the family's, with its tool call ids, named tool results, its files and thoughts. */
const mistralMessages: ChatMessagesDialect = {
  toolCallId: mistralToolCallId,
  toolResultName: true,
  emptyAssistantContent: "",
  filePart,
  // Magistral's reasoning goes back as a thinking chunk of the assistant's content
  thoughtPart: (block, role) =>
    role === "assistant" && block.text !== undefined && block.text !== ""
      ? { type: "thinking", thinking: [{ type: "text", text: block.text }] }
      : undefined
}

/**
 * Mistral's `tool_choice`: "none" | "auto" | "any" (OpenAI's "required") | "required" |
 * {type: "function", function: {name}}. It has no `allowed_tools`: the tools offered are
 * narrowed to the allowed ones instead.
 */
const adaptTools = (body: Json, request: ModelRequest): WireProblem | undefined => {
  const config = request.tools
  if (answersWithRespondTool(request)) return undefined
  if (config === undefined || config.tools.length === 0) return undefined
  if (config.tools.some((tool) => tool.custom !== undefined)) {
    return new WireProblem("the mistral provider does not support custom (free-text) tools")
  }
  const choice = config.choice
  if (choice.type === "required") body.tool_choice = "any"
  else if (choice.type !== "specific") body.tool_choice = choice.type
  if (config.allowed !== undefined && choice.type !== "specific" && Array.isArray(body.tools)) {
    const allowed = new Set(config.allowed)
    body.tools = body.tools.filter((tool: { type?: string; function?: { name?: string } }) =>
      tool?.type !== "function" || allowed.has(tool.function?.name ?? "")
    )
  }
  return undefined
}

export const mistralBody = (request: ModelRequest, call: WireCall<ChatCompletionsTarget>): Json | WireProblem => {
  const body = chatCompletionsBody(request, call, mistralMessages)
  if (body instanceof WireProblem) return body
  const problem = adaptTools(body, request)
  return problem ?? body
}
