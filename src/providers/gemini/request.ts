/**
 * ModelRequest -> Gemini `GenerateContentRequest` (ai.google.dev/api/generate-content), the
 * same body for AI Studio and Vertex AI: `systemInstruction`, `contents` (roles user/model),
 * `tools` (`functionDeclarations`, then the provider tools), `toolConfig`, `generationConfig`.
 */
import { answersWithRespondTool, respondToolName } from "../../inference/output.ts"
import type { FileSource, ModelRequest, RequestBlock, ToolConfig } from "../../inference/types.ts"
import { type WireBody, type WireCall, WireProblem } from "../codec.ts"
import { geminiSchema } from "./schema.ts"
import type { GeminiTarget } from "./target.ts"

type Json = WireBody


/** ids the codec made up for calls Gemini gave none: never sent back (Gemini did not issue them) */
export const generatedIdPrefix = "gemini_call_"

const mimeByExtension: Readonly<Record<string, string>> = {
  png: "image/png",
  jpg: "image/jpeg",
  jpeg: "image/jpeg",
  gif: "image/gif",
  webp: "image/webp",
  heic: "image/heic",
  pdf: "application/pdf",
  txt: "text/plain",
  mp3: "audio/mp3",
  wav: "audio/wav",
  mp4: "video/mp4"
}

const mimeOfUrl = (url: string): string | undefined => {
  const path = url.split(/[?#]/)[0]
  const dot = path.lastIndexOf(".")
  return dot < 0 ? undefined : mimeByExtension[path.slice(dot + 1).toLowerCase()]
}

const filePart = (source: FileSource, target: GeminiTarget): Json | WireProblem => {
  if (source.kind === "base64") return { inlineData: { mimeType: source.mimeType, data: source.data } }
  if (!target.takesFileUri(source.url)) {
    return new WireProblem(
      `the ${target.type} provider takes files as base64 data or as a Gemini File API URI (https://generativelanguage.googleapis.com/v1beta/files/...), not by URL: ${source.url.slice(0, 100)}`
    )
  }
  const mimeType = source.mimeType ?? mimeOfUrl(source.url)
  if (mimeType === undefined) {
    return new WireProblem(`the ${target.type} provider needs the MIME type of a file sent by URL, and none was given or known for ${source.url.slice(0, 100)}`)
  }
  return { fileData: { mimeType, fileUri: source.url } }
}

/** A tool result as Gemini's `response` object: a JSON object as it is, anything else under `output` (as Gemini's docs name it). */
const responseOf = (result: string): Json => {
  try {
    const parsed = JSON.parse(result)
    if (typeof parsed === "object" && parsed !== null && !Array.isArray(parsed)) return parsed
  } catch {
    // text: sent as it is
  }
  return { output: result }
}

const argumentsOf = (text: string): Json | WireProblem => {
  try {
    const parsed = JSON.parse(text)
    if (typeof parsed === "object" && parsed !== null && !Array.isArray(parsed)) return parsed
  } catch {
    // below
  }
  return new WireProblem(`Gemini takes a tool call's arguments as a JSON object: ${text.slice(0, 100)}`)
}

/**
 * The parts of one message. A thought with text is a `thought: true` part; a thought without
 * text is a signature Gemini put on the part that follows it (a function call, a text), and goes
 * back on that part, as Gemini requires for function calls of its thinking models.
 */
const partsOf = (
  content: ReadonlyArray<RequestBlock>,
  target: GeminiTarget,
  qualifiedName: string
): Array<Json> | WireProblem => {
  const parts: Array<Json> = []
  let signature: string | undefined
  const push = (part: Json) => {
    if (signature !== undefined) {
      part.thoughtSignature = signature
      signature = undefined
    }
    parts.push(part)
  }
  for (const block of content) {
    switch (block.type) {
      case "text":
        push({ text: block.text })
        break
      case "thought":
        if (block.text !== undefined && block.text !== "") {
          parts.push(block.signature === undefined
            ? { text: block.text, thought: true }
            : { text: block.text, thought: true, thoughtSignature: block.signature })
        } else if (block.signature !== undefined) signature = block.signature
        break
      case "tool_call": {
        const args = argumentsOf(block.arguments)
        if (args instanceof WireProblem) return args
        push({
          functionCall: block.id.startsWith(generatedIdPrefix) || block.id === ""
            ? { name: block.name, args }
            : { id: block.id, name: block.name, args }
        })
        break
      }
      case "tool_result":
        push({
          functionResponse: block.id.startsWith(generatedIdPrefix) || block.id === ""
            ? { name: block.name, response: responseOf(block.result) }
            : { id: block.id, name: block.name, response: responseOf(block.result) }
        })
        break
      case "file": {
        const part = filePart(block.source, target)
        if (part instanceof WireProblem) return part
        push(part)
        break
      }
      case "unknown":
        if (block.modelProviderName === undefined || block.modelProviderName === qualifiedName) {
          if (typeof block.data === "object" && block.data !== null) push({ ...(block.data as Json) })
        }
        break
    }
  }
  // a signature with no part after it still goes back, on an empty text part
  if (signature !== undefined) parts.push({ text: "", thoughtSignature: signature })
  return parts
}

const declarationOf = (name: string, description: string, parameters: Record<string, unknown>): Json | WireProblem => {
  const schema = geminiSchema(parameters, `tool ${name}: parameters`)
  if (schema instanceof WireProblem) return schema
  const declaration: Json = { name, description }
  // Gemini refuses an object schema without properties: a tool without parameters has none
  const properties = schema.properties as Json | undefined
  if (properties !== undefined && Object.keys(properties).length > 0) declaration.parameters = schema
  return declaration
}

/** `functionDeclarations` and the `functionCallingConfig` of the request's tools (or of json_mode tool's `respond`). */
const toolsOf = (
  request: ModelRequest,
  target: GeminiTarget
): { declarations: Array<Json>; config?: Json } | WireProblem => {
  if (answersWithRespondTool(request)) {
    const declaration = declarationOf(
      respondToolName,
      "Respond to the user with JSON that follows the schema.",
      request.outputSchema ?? { type: "object" }
    )
    if (declaration instanceof WireProblem) return declaration
    return { declarations: [declaration], config: { mode: "ANY", allowedFunctionNames: [respondToolName] } }
  }
  const tools: ToolConfig | undefined = request.tools
  if (tools === undefined || tools.tools.length === 0) return { declarations: [] }
  const declarations: Array<Json> = []
  const choice = tools.choice
  for (const tool of tools.tools) {
    if (tool.custom !== undefined) {
      return new WireProblem(`the ${target.type} provider has no custom (free-text) tools: ${tool.name}`)
    }
    // with tool_choice auto, the tools the model may call are the only ones it is shown
    if (choice.type === "auto" && tools.allowed !== undefined && !tools.allowed.includes(tool.name)) continue
    const declaration = declarationOf(tool.name, tool.description, tool.parameters)
    if (declaration instanceof WireProblem) return declaration
    declarations.push(declaration)
  }
  switch (choice.type) {
    case "none":
      return { declarations, config: { mode: "NONE" } }
    case "auto":
      return { declarations, config: { mode: "AUTO" } }
    case "required":
      return {
        declarations,
        config: tools.allowed === undefined ? { mode: "ANY" } : { mode: "ANY", allowedFunctionNames: [...tools.allowed] }
      }
    case "specific":
      return { declarations, config: { mode: "ANY", allowedFunctionNames: [choice.name] } }
  }
}

/** `generationConfig`: the parameters, the JSON output asked for, thinking */
const generationConfigOf = (request: ModelRequest): Json | WireProblem => {
  const params = request.params
  const config: Json = {}
  if (params.temperature !== undefined) config.temperature = params.temperature
  if (params.top_p !== undefined) config.topP = params.top_p
  if (params.top_k !== undefined) config.topK = params.top_k
  if (params.max_tokens !== undefined) config.maxOutputTokens = params.max_tokens
  if (params.seed !== undefined) config.seed = params.seed
  if (params.presence_penalty !== undefined) config.presencePenalty = params.presence_penalty
  if (params.frequency_penalty !== undefined) config.frequencyPenalty = params.frequency_penalty
  if (params.stop_sequences !== undefined) config.stopSequences = params.stop_sequences
  if (request.jsonMode === "on" || request.jsonMode === "strict") {
    config.responseMimeType = "application/json"
    if (request.jsonMode === "strict" && request.outputSchema !== undefined) {
      const schema = geminiSchema(request.outputSchema, "output_schema")
      if (schema instanceof WireProblem) return schema
      config.responseSchema = schema
    }
  }
  if (params.thinking_budget_tokens !== undefined || params.reasoning_effort !== undefined) {
    const thinking: Json = { includeThoughts: true }
    if (params.thinking_budget_tokens !== undefined) thinking.thinkingBudget = params.thinking_budget_tokens
    // Gemini 3's thinking levels (low, high) are named as reasoning efforts are
    if (params.reasoning_effort !== undefined) thinking.thinkingLevel = params.reasoning_effort
    config.thinkingConfig = thinking
  }
  return config
}

export const geminiUrl = (target: GeminiTarget, stream: boolean): string =>
  `${target.modelUrl}${stream ? ":streamGenerateContent?alt=sse" : ":generateContent"}`

/** The request body of one call, or an explanation when the request cannot be expressed. */
export const geminiBody = (request: ModelRequest, call: WireCall<GeminiTarget>): Json | WireProblem => {
  const target = call.target
  if (target.problem !== undefined) return new WireProblem(target.problem)
  const contents: Array<Json> = []
  for (const message of request.messages) {
    const parts = partsOf(message.content, target, call.qualifiedName)
    if (parts instanceof WireProblem) return parts
    if (parts.length > 0) contents.push({ role: message.role === "assistant" ? "model" : "user", parts })
  }
  const body: Json = {}
  if (request.system !== undefined) body.systemInstruction = { parts: [{ text: request.system }] }
  body.contents = contents
  const tools = toolsOf(request, target)
  if (tools instanceof WireProblem) return tools
  const toolList: Array<unknown> = []
  if (tools.declarations.length > 0) toolList.push({ functionDeclarations: tools.declarations })
  for (const providerTool of call.providerTools) toolList.push(providerTool)
  if (toolList.length > 0) body.tools = toolList
  if (tools.config !== undefined && tools.declarations.length > 0) body.toolConfig = { functionCallingConfig: tools.config }
  const generationConfig = generationConfigOf(request)
  if (generationConfig instanceof WireProblem) return generationConfig
  if (Object.keys(generationConfig).length > 0) body.generationConfig = generationConfig
  return body
}
