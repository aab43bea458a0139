/**
 * OpenAI Responses request -> the gateway's inference request (issue 37, design 3.1): the same
 * inference path as `/inference` behind OpenAI's Responses surface. With `store` the inference
 * is tagged a stored response (src/openaiResponses/stored.ts); with `previous_response_id` the
 * earlier conversation, read by the handler, comes before the input.
 */
import * as Result from "effect/Result"
import { type AdditionalTool, functionTool } from "../api/functionTools.ts"
import { gatewayRequestPart } from "../api/gatewayFields.ts"
import type { ChatCompletionParams, InferenceRequest, InputMessage } from "../api/inference.ts"
import { parseModelOrBareName, pinnedVariant } from "../api/modelField.ts"
import { checkClientTags, surfaceTag } from "../api/tags.ts"
import { InvalidRequest, type NotFound } from "../errors.ts"
import type { PrepareExtras } from "../inference/prepare.ts"
import type { CustomTool } from "../inference/tools.ts"
import { compileRequestJsonSchema } from "../jsonSchema.ts"
import { quoted } from "../untrusted.ts"
import type { CreateResponseRequest, CustomTool as CustomToolSchema, FunctionTool, Tool, ToolChoice } from "./api.ts"
import { calledTools, inputOf } from "./input.ts"
import { previousResponseTag, responseModelTag, responsesSurface, responseStoreTag } from "./tags.ts"

/** the request's settings as the response echoes them (OpenAI's defaults where absent) */
export interface EchoedSettings {
  readonly instructions: string | null
  readonly tools: ReadonlyArray<unknown>
  readonly tool_choice: unknown
  readonly parallel_tool_calls: boolean
  readonly temperature: number | null
  readonly top_p: number | null
  readonly max_output_tokens: number | null
  readonly text: { readonly format: unknown; readonly verbosity?: string }
  readonly reasoning: { readonly effort: string | null; readonly summary: string | null }
  readonly metadata: Readonly<Record<string, string>>
  readonly store: boolean
  readonly previous_response_id: string | null
  readonly truncation: "disabled"
  readonly user?: string
  readonly service_tier?: string
}

export interface TranslatedResponse {
  readonly request: InferenceRequest
  readonly extras: PrepareExtras
  readonly stream: boolean
  /** the request's `model` as sent: the response echoes it, as OpenAI's does */
  readonly model: string
  /** `include` asks for `reasoning.encrypted_content`: reasoning items carry their signature */
  readonly encryptedReasoning: boolean
  readonly echo: EchoedSettings
  /** the response is stored: the Responses routes read it back */
  readonly store: boolean
  /** what the caller should know though it does not stop the request (the `gateway-warning` header) */
  readonly warning?: string | undefined
}

/** the response `previous_response_id` names, as the handler found it */
export interface PreviousResponse {
  readonly id: string
  readonly episodeId: string
  /** its conversation: what comes before this request's input */
  readonly messages: ReadonlyArray<InputMessage>
}

/** what the translation needs to know of stored responses */
export interface StoreOptions {
  /** an analytics database is configured and observability on */
  readonly available: boolean
  readonly previous?: PreviousResponse | undefined
}

/** what the translation needs of the configuration */
export interface ConfiguredNames {
  readonly isModel: (name: string) => boolean
  readonly functionType: (name: string) => "chat" | "json" | undefined
}

type Translated<A> = Result.Result<A, InvalidRequest>

const invalid = (message: string): Translated<never> => Result.fail(new InvalidRequest({ message }))

/** OpenAI's bounds on `metadata` */
const metadataLimits = { keys: 16, keyLength: 64, valueLength: 512 }

export const storeWarning = "responses are stored only with an analytics database (GATEWAY_ANALYTICS_DB_URL): this response is not stored (store: false)"

interface TranslatedTools {
  readonly functions: Array<AdditionalTool>
  readonly custom: Array<CustomTool>
}

const isFunctionTool = (tool: Tool): tool is typeof FunctionTool.Type => tool.type === "function"
const isCustomTool = (tool: Tool): tool is typeof CustomToolSchema.Type => tool.type === "custom"

/** function and custom tools; built-in tools need a provider that runs them, which is not served yet */
const toolsOf = (tools: ReadonlyArray<Tool>): Translated<TranslatedTools> => {
  const functions: Array<AdditionalTool> = []
  const custom: Array<CustomTool> = []
  for (let i = 0; i < tools.length; i++) {
    const tool = tools[i]
    if (isFunctionTool(tool)) {
      const added = functionTool(tool, `tools[${i}].parameters`)
      if (Result.isFailure(added)) return Result.fail(added.failure)
      functions.push(added.success)
    } else if (isCustomTool(tool)) custom.push({ name: tool.name, description: tool.description ?? undefined, format: tool.format })
    else return invalid(`tools[${i}]: built-in tools (${quoted(tool.type)}) are not served yet; offer function tools`)
  }
  return Result.succeed({ functions, custom })
}

interface TranslatedChoice {
  readonly choice?: InferenceRequest["tool_choice"]
  readonly allowed?: ReadonlyArray<string>
}

const toolChoiceOf = (choice: ToolChoice | null | undefined): Translated<TranslatedChoice> => {
  if (choice === undefined || choice === null) return Result.succeed({})
  if (typeof choice === "string") return Result.succeed({ choice })
  if (choice.type === "allowed_tools" && "mode" in choice) {
    const names: Array<string> = []
    for (const [k, tool] of choice.tools.entries()) {
      if (tool.name === undefined) return invalid(`tool_choice.tools[${k}]: built-in tools (${quoted(tool.type)}) are not served yet`)
      names.push(tool.name)
    }
    return Result.succeed({ choice: choice.mode, allowed: names })
  }
  if ((choice.type === "function" || choice.type === "custom") && "name" in choice) return Result.succeed({ choice: { specific: choice.name } })
  return invalid(`tool_choice: ${quoted(choice.type)} names no function or custom tool; built-in tools are not served yet`)
}

interface TranslatedParams {
  readonly params: ChatCompletionParams
  /** `text.format`'s JSON schema */
  readonly schema?: Record<string, unknown>
}

const paramsOf = (body: CreateResponseRequest): Translated<TranslatedParams> => {
  const limit = body.max_output_tokens ?? undefined
  // Schema.Int lets 0 and negatives through; the gateway's params take positive integers only
  if (limit !== undefined && limit <= 0) return invalid(`max_output_tokens: expected a positive integer, got ${limit}`)
  const format = body.text?.format ?? undefined
  const params: Record<string, unknown> = {}
  const set = (name: string, value: unknown) => {
    if (value !== undefined && value !== null) params[name] = value
  }
  set("max_tokens", limit)
  set("temperature", body.temperature)
  set("top_p", body.top_p)
  set("reasoning_effort", body.reasoning?.effort)
  set("service_tier", body.service_tier)
  set("verbosity", body.text?.verbosity)
  set("json_mode", format?.type === "json_object" ? "on" : format?.type === "json_schema" ? "strict" : undefined)
  if (format?.type === "json_schema" && "schema" in format) {
    const compiled = compileRequestJsonSchema(format.schema)
    if ("error" in compiled) return invalid(`text.format.schema: ${compiled.error}`)
    return Result.succeed({ params: params as ChatCompletionParams, schema: format.schema })
  }
  return Result.succeed({ params: params as ChatCompletionParams })
}

/** `metadata` as client tags: OpenAI's bounds, and none of the gateway's names */
const metadataTags = (metadata: Readonly<Record<string, string>> | null | undefined): Translated<Readonly<Record<string, string>>> => {
  if (metadata === undefined || metadata === null) return Result.succeed({})
  const keys = Object.keys(metadata)
  if (keys.length > metadataLimits.keys) return invalid(`metadata: at most ${metadataLimits.keys} keys, got ${keys.length}`)
  for (const key of keys) {
    if (key.length > metadataLimits.keyLength) return invalid(`metadata: a key is at most ${metadataLimits.keyLength} characters, got ${quoted(key)}`)
    if (metadata[key].length > metadataLimits.valueLength) {
      return invalid(`metadata.${key}: a value is at most ${metadataLimits.valueLength} characters, got ${metadata[key].length}`)
    }
  }
  const reserved = checkClientTags(metadata, "metadata")
  return reserved === undefined ? Result.succeed(metadata) : Result.fail(reserved)
}

/** fields of the Responses API that need what this gateway does not serve yet */
const notServed = (body: CreateResponseRequest): InvalidRequest | undefined => {
  const refuse = (message: string) => new InvalidRequest({ message })
  if (body.background === true) return refuse("background: background responses are not served; send \"background\": false")
  if (body.conversation !== undefined && body.conversation !== null) {
    return refuse("conversation: conversations are not served; send the whole conversation in input")
  }
  if (body.prompt !== undefined && body.prompt !== null) return refuse("prompt: stored prompts are not served; send instructions and input")
  return undefined
}

/** the settings a response echoes; OpenAI's defaults for those `body` lacks */
export const echoOf = (body: Omit<CreateResponseRequest, "model">, store: boolean): EchoedSettings => ({
  instructions: body.instructions ?? null,
  tools: body.tools ?? [],
  tool_choice: body.tool_choice ?? "auto",
  parallel_tool_calls: body.parallel_tool_calls ?? true,
  temperature: body.temperature ?? null,
  top_p: body.top_p ?? null,
  max_output_tokens: body.max_output_tokens ?? null,
  text: { format: body.text?.format ?? { type: "text" }, ...(body.text?.verbosity ? { verbosity: body.text.verbosity } : {}) },
  reasoning: { effort: body.reasoning?.effort ?? null, summary: body.reasoning?.summary ?? null },
  metadata: body.metadata ?? {},
  store,
  previous_response_id: body.previous_response_id ?? null,
  truncation: "disabled",
  ...(body.user ? { user: body.user } : {}),
  ...(body.service_tier ? { service_tier: body.service_tier } : {})
})

export const translateCreateResponse = (
  body: CreateResponseRequest,
  names: ConfiguredNames,
  stored: StoreOptions
): Result.Result<TranslatedResponse, InvalidRequest | NotFound> => {
  const refused = notServed(body)
  if (refused !== undefined) return Result.fail(refused)
  const target = parseModelOrBareName(body.model, names.isModel)
  if (Result.isFailure(target)) return Result.fail(target.failure)
  const variantName = pinnedVariant(target.success, body["gateway::variant_name"], "gateway::variant_name")
  if (Result.isFailure(variantName)) return Result.fail(variantName.failure)
  const params = paramsOf(body)
  if (Result.isFailure(params)) return Result.fail(params.failure)
  const { previous } = stored
  const input = inputOf(body.input, previous === undefined ? undefined : calledTools(previous.messages))
  if (Result.isFailure(input)) return Result.fail(input.failure)
  const tools = toolsOf(body.tools ?? [])
  if (Result.isFailure(tools)) return Result.fail(tools.failure)
  const choice = toolChoiceOf(body.tool_choice)
  if (Result.isFailure(choice)) return Result.fail(choice.failure)
  const metadata = metadataTags(body.metadata)
  if (Result.isFailure(metadata)) return Result.fail(metadata.failure)
  const gatewayPart = gatewayRequestPart(body)
  if (Result.isFailure(gatewayPart)) return Result.fail(gatewayPart.failure)
  const on = target.success
  const isJson = "function_name" in on && names.functionType(on.function_name) === "json"
  const { schema } = params.success
  const system = body.instructions ? [body.instructions, ...input.success.system] : input.success.system
  const stream = body.stream === true
  // a dryrun stores nothing, so nothing could read it back
  const store = stored.available && (body.store ?? true) && gatewayPart.success.dryrun !== true
  const storeTags = store ? { [responseStoreTag]: "true", [responseModelTag]: body.model } : undefined
  const request: InferenceRequest = {
    ...("model_name" in on ? { model_name: on.model_name } : { function_name: on.function_name }),
    input: {
      ...(system.length > 0 ? { system: system.join("\n\n") } : {}),
      messages: previous === undefined ? input.success.messages : [...previous.messages, ...input.success.messages]
    },
    stream,
    ...gatewayPart.success,
    // a continued conversation stays in its episode unless the request names another
    episode_id: gatewayPart.success.episode_id ?? previous?.episodeId,
    tags: {
      ...metadata.success,
      ...gatewayPart.success.tags,
      [surfaceTag]: responsesSurface,
      ...storeTags,
      ...(previous === undefined ? {} : { [previousResponseTag]: previous.id })
    },
    variant_name: variantName.success,
    additional_tools: tools.success.functions.length > 0 ? tools.success.functions : undefined,
    allowed_tools: choice.success.allowed,
    tool_choice: choice.success.choice,
    parallel_tool_calls: body.parallel_tool_calls ?? undefined,
    output_schema: isJson ? schema : undefined,
    params: Object.keys(params.success.params).length > 0 ? { chat_completion: params.success.params } : undefined
  }
  return Result.succeed({
    request,
    extras: { responseSchema: isJson ? undefined : schema, customTools: tools.success.custom, modelField: "model", functionField: "model" },
    stream,
    model: body.model,
    encryptedReasoning: body.include?.includes("reasoning.encrypted_content") === true,
    echo: echoOf(body, store),
    store,
    warning: body.store === true && !stored.available ? storeWarning : undefined
  })
}
