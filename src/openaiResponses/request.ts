/**
 * OpenAI Responses request -> the gateway's inference request (issue 37, design 3.1): the same
 * inference path as `/inference` behind OpenAI's Responses surface. With `store` the inference
 * is tagged a stored response (src/openaiResponses/stored.ts); with `previous_response_id` the
 * earlier conversation, read by the handler, comes before the input. Built-in tools (web
 * search, file search, Codex's namespaces...) and the Responses API's own fields the gateway
 * does not model (`user`, `include`, `reasoning.summary`, `prompt_cache_key`...) go, as sent,
 * to providers that speak the Responses API only.
 */
import * as Result from "effect/Result"
import { type AdditionalTool, functionTool } from "../api/functionTools.ts"
import { gatewayRequestPart } from "../api/gatewayFields.ts"
import type { ChatCompletionParams, InferenceRequest, InputMessage } from "../api/inference.ts"
import { parseModelOrBareName, pinnedVariant } from "../api/modelField.ts"
import { checkClientTags, surfaceTag } from "../api/tags.ts"
import { InvalidRequest, type NotFound } from "../errors.ts"
import { type ExtraBodyEdit, familyBodyEdit, type ScopedEdit } from "../inference/extraBody.ts"
import type { PrepareExtras } from "../inference/prepare.ts"
import type { ProviderTool } from "../inference/types.ts"
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
  /** `[gateway] unsupported_builtin_tools` */
  readonly builtinTools: "drop" | "refuse"
}

/** the provider family (src/providers/families.ts) whose API this surface speaks */
const responsesFamily = "openai_responses"

type Translated<A> = Result.Result<A, InvalidRequest>

const invalid = (message: string): Translated<never> => Result.fail(new InvalidRequest({ message }))

/** OpenAI's bounds on `metadata` */
const metadataLimits = { keys: 16, keyLength: 64, valueLength: 512 }

export const storeWarning = "responses are stored only with an analytics database (GATEWAY_ANALYTICS_DB_URL): this response is not stored (store: false)"

interface TranslatedTools {
  readonly functions: Array<AdditionalTool>
  readonly custom: Array<CustomTool>
  /** built-in tools, as sent, for the providers of the Responses API */
  readonly builtin: Array<ProviderTool>
}

const isFunctionTool = (tool: Tool): tool is typeof FunctionTool.Type => tool.type === "function"
const isCustomTool = (tool: Tool): tool is typeof CustomToolSchema.Type => tool.type === "custom"

/** function and custom tools; built-in tools as sent (`raw`), for the providers that run them */
const toolsOf = (tools: ReadonlyArray<Tool>, raw: unknown, names: ConfiguredNames): Translated<TranslatedTools> => {
  const functions: Array<AdditionalTool> = []
  const custom: Array<CustomTool> = []
  const builtin: Array<ProviderTool> = []
  const sent = Array.isArray(raw) ? raw : []
  for (let i = 0; i < tools.length; i++) {
    const tool = tools[i]
    if (isFunctionTool(tool)) {
      const added = functionTool(tool, `tools[${i}].parameters`)
      if (Result.isFailure(added)) return Result.fail(added.failure)
      functions.push(added.success)
    } else if (isCustomTool(tool)) custom.push({ name: tool.name, description: tool.description ?? undefined, format: tool.format })
    else {
      builtin.push({ family: responsesFamily, refuseElsewhere: names.builtinTools === "refuse", label: `tools[${i}] (${quoted(tool.type)})`, tool: sent[i] })
    }
  }
  return Result.succeed({ functions, custom, builtin })
}

interface TranslatedChoice {
  readonly choice?: InferenceRequest["tool_choice"]
  readonly allowed?: ReadonlyArray<string>
  /** the choice names a built-in tool: it goes as sent to the Responses API's providers, the others choose themselves */
  readonly builtin?: boolean
}

const toolChoiceOf = (choice: ToolChoice | null | undefined, onlyBuiltin: boolean): TranslatedChoice => {
  if (choice === undefined || choice === null) return {}
  if (typeof choice === "string") return onlyBuiltin && choice !== "auto" ? { builtin: true } : { choice }
  if (choice.type === "allowed_tools" && "mode" in choice) {
    const names: Array<string> = []
    for (const tool of choice.tools) if (tool.name !== undefined) names.push(tool.name)
    return names.length === choice.tools.length ? { choice: choice.mode, allowed: names } : { builtin: true }
  }
  if ((choice.type === "function" || choice.type === "custom") && "name" in choice) return { choice: { specific: choice.name } }
  return { builtin: true }
}

/** the Responses API's own fields the gateway does not model, passed as sent to the providers of that API */
const passedOnFields = ["user", "include", "safety_identifier", "prompt_cache_key", "max_tool_calls", "top_logprobs", "truncation"] as const

const familyEditsOf = (raw: Readonly<Record<string, unknown>>, choice: TranslatedChoice): Array<ScopedEdit<ExtraBodyEdit>> => {
  const edits: Array<ScopedEdit<ExtraBodyEdit>> = []
  for (const field of passedOnFields) {
    if (raw[field] !== undefined && raw[field] !== null) edits.push(familyBodyEdit(responsesFamily, [field], raw[field], field))
  }
  const summary = (raw.reasoning as { summary?: unknown } | null | undefined)?.summary
  if (summary !== undefined && summary !== null) edits.push(familyBodyEdit(responsesFamily, ["reasoning", "summary"], summary, "reasoning.summary"))
  if (choice.builtin === true) edits.push(familyBodyEdit(responsesFamily, ["tool_choice"], raw.tool_choice, "tool_choice"))
  return edits
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
  stored: StoreOptions,
  /** the body as sent: built-in tools and the fields passed on are taken from it whole */
  raw: Readonly<Record<string, unknown>>
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
  const tools = toolsOf(body.tools ?? [], raw.tools, names)
  if (Result.isFailure(tools)) return Result.fail(tools.failure)
  const { functions, custom, builtin } = tools.success
  const choice = toolChoiceOf(body.tool_choice, builtin.length > 0 && functions.length === 0 && custom.length === 0)
  const bodyEdits = familyEditsOf(raw, choice)
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
    additional_tools: functions.length > 0 ? functions : undefined,
    allowed_tools: choice.allowed,
    tool_choice: choice.choice,
    parallel_tool_calls: body.parallel_tool_calls ?? undefined,
    output_schema: isJson ? schema : undefined,
    params: Object.keys(params.success.params).length > 0 ? { chat_completion: params.success.params } : undefined
  }
  return Result.succeed({
    request,
    extras: {
      responseSchema: isJson ? undefined : schema,
      customTools: custom,
      modelField: "model",
      functionField: "model",
      ...(bodyEdits.length > 0 ? { surfaceEdits: { body: bodyEdits, headers: [] } } : {}),
      ...(builtin.length > 0 ? { builtinTools: builtin } : {})
    },
    stream,
    model: body.model,
    encryptedReasoning: body.include?.includes("reasoning.encrypted_content") === true,
    echo: echoOf(body, store),
    store,
    warning: body.store === true && !stored.available ? storeWarning : undefined
  })
}
