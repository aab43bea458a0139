/**
 * The request a `gateway` provider sends: the gateway's own `POST /inference` (spec 4.1) to
 * another gateway, built from the rendered `ModelRequest`. The other gateway calls a model (or
 * a function) with it and answers as any client of it would be answered (`response.ts`).
 */
import { embeddingModelPrefix } from "../../api/embeddings.ts"
import { reservedTagPrefix } from "../../api/tags.ts"
import type { ModelRequest, RequestBlock, ToolChoice } from "../../inference/types.ts"
import { inferenceParamNames } from "../../inference/params.ts"
import { answersWithRespondTool, respondToolName } from "../../inference/output.ts"
import { respondToolDescription } from "../openai/request.ts"
import type { CallerContext, EmbeddingRequest, WireBody, WireCall } from "../codec.ts"
import { WireProblem } from "../codec.ts"

/** What one configured `gateway` provider calls, settled at start-up. */
export interface GatewayTarget {
  readonly inferenceUrl: string
  readonly embeddingsUrl: string
  /** what the other gateway runs: a model (configured there, or a short-hand), or a function (and maybe one of its variants) */
  readonly modelName?: string | undefined
  readonly functionName?: string | undefined
  readonly variantName?: string | undefined
  /** the caller's dynamic credentials go along (`forward_credentials`) */
  readonly forwardCredentials: boolean
  /** why the provider table can make no call (reported at start-up) */
  readonly problem?: string | undefined
}

const toolChoiceOf = (choice: ToolChoice): unknown => choice.type === "specific" ? { specific: choice.name } : choice.type

/** A rendered block as `/inference` takes it in `input`; undefined for an `unknown` block meant for another provider. */
const inputBlock = (block: RequestBlock, qualifiedName: string): unknown => {
  switch (block.type) {
    case "text":
      return block
    case "tool_call":
      // the output block's shape: the name and arguments as the model generated them
      return { type: "tool_call", id: block.id, raw_name: block.name, raw_arguments: block.arguments }
    case "tool_result":
      return { type: "tool_result", id: block.id, name: block.name, result: block.result }
    case "file": {
      const source = block.source
      const file: Record<string, unknown> = source.kind === "url"
        ? { type: "file", file_type: "url", url: source.url }
        : { type: "file", file_type: "base64", data: source.data }
      if (source.mimeType !== undefined) file.mime_type = source.mimeType
      if (block.detail !== undefined) file.detail = block.detail
      return file
    }
    case "thought": {
      const thought: Record<string, unknown> = { type: "thought" }
      if (block.text !== undefined) thought.text = block.text
      if (block.signature !== undefined) thought.signature = block.signature
      return thought
    }
    case "unknown":
      // scoped to this provider (or to none): sent on to whichever provider the other gateway calls
      return block.modelProviderName === undefined || block.modelProviderName === qualifiedName
        ? { type: "unknown", data: block.data }
        : undefined
  }
}

/** The client's tags: those starting with `gateway::` are each gateway's own (the other refuses them). */
const clientTags = (tags: Readonly<Record<string, string>>): Record<string, string> | undefined => {
  let kept: Record<string, string> | undefined
  for (const name in tags) {
    if (name.startsWith(reservedTagPrefix)) continue
    kept ??= {}
    kept[name] = tags[name]
  }
  return kept
}

/** The caller's dynamic credentials, with `forward_credentials` (the runner left out the one that is this call's key). */
const addCredentials = (body: WireBody, target: GatewayTarget, caller: CallerContext | undefined, field: string): void => {
  if (target.forwardCredentials && caller !== undefined && Object.keys(caller.credentials).length > 0) body[field] = caller.credentials
}

export const gatewayBody = (request: ModelRequest, call: WireCall<GatewayTarget>): WireBody | WireProblem => {
  const { target, caller } = call
  const body: WireBody = {}
  if (target.functionName !== undefined) {
    body.function_name = target.functionName
    if (target.variantName !== undefined) body.variant_name = target.variantName
  } else {
    body.model_name = target.modelName
  }

  const messages: Array<unknown> = []
  for (const message of request.messages) {
    const content: Array<unknown> = []
    for (const block of message.content) {
      const sent = inputBlock(block, call.qualifiedName)
      if (sent !== undefined) content.push(sent)
    }
    messages.push({ role: message.role, content })
  }
  body.input = request.system === undefined ? { messages } : { system: request.system, messages }
  body.stream = call.stream

  const params: Record<string, unknown> = {}
  for (const name of inferenceParamNames) if (request.params[name] !== undefined) params[name] = request.params[name]

  // a model there is called as a chat function: a json function's json_mode `tool` goes as the
  // tool it stands for, `on` and `strict` as they are with the schema for the provider's
  // structured output (a function there has its own json_mode and schema)
  const modelCall = target.functionName === undefined
  const respondTool = modelCall && answersWithRespondTool(request)
  if (respondTool) {
    body.additional_tools = [{
      name: respondToolName,
      description: respondToolDescription,
      parameters: request.outputSchema ?? { type: "object" },
      strict: false
    }]
    body.tool_choice = { specific: respondToolName }
  } else if (request.tools !== undefined && request.tools.tools.length > 0) {
    const tools = request.tools
    const additional: Array<unknown> = []
    for (const tool of tools.tools) {
      if (tool.custom !== undefined) return new WireProblem(`tool "${tool.name}" is a custom (free-text) tool, which another gateway's /inference cannot take`)
      additional.push({ name: tool.name, description: tool.description, parameters: tool.parameters, strict: tool.strict })
    }
    body.additional_tools = additional
    if (tools.allowed !== undefined) body.allowed_tools = tools.allowed
    body.tool_choice = toolChoiceOf(tools.choice)
    if (tools.parallelToolCalls !== undefined) body.parallel_tool_calls = tools.parallelToolCalls
  }
  if (modelCall && !respondTool && request.jsonMode !== "off") {
    params.json_mode = request.jsonMode
    if (request.jsonMode === "strict" && request.outputSchema !== undefined) body.output_schema = request.outputSchema
  }
  if (Object.keys(params).length > 0) body.params = { chat_completion: params }

  if (caller !== undefined) {
    const tags = clientTags(caller.tags)
    if (tags !== undefined) body.tags = tags
    if (caller.dryrun) body.dryrun = true
    addCredentials(body, target, caller, "credentials")
    // unscoped: this gateway chose the ones for this call; they apply to every provider there
    if (caller.extraBody.length > 0) body.extra_body = caller.extraBody
    if (caller.extraHeaders.length > 0) body.extra_headers = caller.extraHeaders
  }
  if (call.providerTools.length > 0) body.provider_tools = call.providerTools.map((tool) => ({ tool }))
  return body
}

/** `POST <gateway_url>/openai/v1/embeddings`: OpenAI's request with the model as the other gateway names it. */
export const gatewayEmbeddingsBody = (target: GatewayTarget, request: EmbeddingRequest, caller?: CallerContext): WireBody => {
  const body: WireBody = { model: embeddingModelOf(target.modelName ?? ""), input: request.input, encoding_format: "float" }
  if (request.dimensions !== undefined) body.dimensions = request.dimensions
  addCredentials(body, target, caller, "gateway::credentials")
  return body
}

/**
 * The `model` of an embeddings request to the other gateway: a name with `::` as it is (a
 * short-hand such as `openai::text-embedding-3-small`, or `gateway::embedding_model_name::x`),
 * a plain name as the embedding model configured there under that name.
 */
export const embeddingModelOf = (modelName: string): string => modelName.includes("::") ? modelName : `${embeddingModelPrefix}${modelName}`
