/**
 * Everything about an inference request that can be checked before any model is called:
 * the target (function or model), the episode, the variants to try and their order, tools,
 * output schema, extra_body/extra_headers edits. Pure: request, configuration and the time in,
 * a `PreparedInference` (data only: the engine takes the services it runs with from its
 * context) or the error to answer with out.
 */
import * as Result from "effect/Result"
import { validate as isUuid, version as uuidVersion } from "uuid"
import { uuidv7 } from "../ids.ts"
import type { ChatCompletionParams, InferenceRequest, Input } from "../api/inference.ts"
import { shorthandOff } from "../config/models.ts"
import type { FunctionConfig, GatewayConfig, VariantConfig } from "../config/types.ts"
import { InvalidRequest, NotFound } from "../errors.ts"
import { compileRequestJsonSchema, type JsonSchemaValidator } from "../jsonSchema.ts"
import { type CachePolicy, cachePolicy, cacheSharing } from "../cache/policy.ts"
import { apiKeyTag } from "../api/tags.ts"
import { plainOrQuoted } from "../untrusted.ts"
import {
  type EditScope,
  type ExtraBodyEdit,
  type ExtraHeaderEdit,
  extraHeaderProblem,
  parsePointer,
  requestBodyEdit,
  requestHeaderEdit,
  type ScopedEdit
} from "./extraBody.ts"
import type { ModelTable } from "./models.ts"
import { type AdaptiveWeights, seededRandom, variantOrder } from "./variantDraw.ts"
import type { TemplateEngine } from "./templates.ts"
import { type CustomTool, resolveTools } from "./tools.ts"
import type { CacheControl, ProviderTool, ToolConfig } from "./types.ts"
import { defaultWorkspace } from "../workspace.ts"

export const defaultFunctionName = "gateway::default"

export interface PreparedInference {
  readonly inferenceId: string
  /** the workspace of the caller (src/workspace.ts): what the inference stores carries it */
  readonly workspace: string
  /**
   * the input to store when it is not `request.input`: the request's, whose files kept in
   * object storage were read into `request.input` for the providers (src/objectStorage/)
   */
  readonly storedInput?: Input | undefined
  readonly episodeId: string
  readonly functionName: string
  readonly fn: FunctionConfig
  /** the variants to try, in order */
  readonly variants: ReadonlyArray<VariantConfig>
  readonly tools: ToolConfig | undefined
  /** json functions: the schema the output is checked against (the request's, else the function's) */
  readonly outputSchema: JsonSchemaValidator | undefined
  /** chat functions: a schema for the provider's structured output (OpenAI `response_format`) */
  readonly responseSchema?: Record<string, unknown> | undefined
  readonly params: ChatCompletionParams | undefined
  readonly bodyEdits: ReadonlyArray<ScopedEdit<ExtraBodyEdit>>
  readonly headerEdits: ReadonlyArray<ScopedEdit<ExtraHeaderEdit>>
  readonly providerTools: ReadonlyArray<ProviderTool>
  readonly systemCacheControl?: CacheControl | undefined
  readonly credentials: Readonly<Record<string, string>>
  /** the request's tags (its API key's among them) and `dryrun`: what a provider relaying to another gateway forwards */
  readonly tags?: Readonly<Record<string, string>> | undefined
  readonly dryrun?: boolean | undefined
  readonly cache: CachePolicy
  readonly request: InferenceRequest
  /** epoch ms when preparation began: the start of processing time, and the time of the ids */
  readonly startedAt: number
  /** the templates of a variant run without being configured (`PrepareExtras.dynamicVariant`), in place of the configuration's */
  readonly templates?: TemplateEngine | undefined
}

/** `gateway::default`: a chat function with one variant per model, named after the model. */
const defaultFunction = (modelName: string): FunctionConfig => ({
  name: defaultFunctionName,
  type: "chat",
  schemas: new Map(),
  tools: [],
  toolChoice: { type: "auto" },
  variants: new Map([[modelName, {
    name: modelName,
    type: "chat_completion",
    weight: 1,
    model: modelName,
    templates: new Map(),
    jsonMode: "off",
    params: {},
    retries: { numRetries: 0, maxDelayS: 10 },
    timeouts: {},
    extraBody: [],
    extraHeaders: []
  }]]),
  evaluators: new Map()
})


export const isUuidV7 = (id: string): boolean => isUuid(id) && uuidVersion(id) === 7

const invalid = (message: string) => Result.fail(new InvalidRequest({ message }))

/** Checks the scope fields of `extra_body`/`extra_headers` entries: one scope kind at most. */
const scopeOf = (
  entry: { readonly variant_name?: string | undefined; readonly model_name?: string | undefined; readonly provider_name?: string | undefined },
  path: string
): Result.Result<EditScope, InvalidRequest> => {
  if (entry.variant_name !== undefined && (entry.model_name !== undefined || entry.provider_name !== undefined)) {
    return invalid(`${path}: scope by variant_name or by model_name (with provider_name), not both`)
  }
  if (entry.provider_name !== undefined && entry.model_name === undefined) {
    return invalid(`${path}.provider_name: needs model_name too`)
  }
  return Result.succeed({ variant_name: entry.variant_name, model_name: entry.model_name, provider_name: entry.provider_name })
}

const noProviderTools: ReadonlyArray<ProviderTool> = []

/** the request's `provider_tools`, then a surface's built-in tools */
const providerToolsOf = (request: InferenceRequest, builtin: ReadonlyArray<ProviderTool> | undefined): ReadonlyArray<ProviderTool> => {
  const requested = request.provider_tools
  if (requested === undefined && builtin === undefined) return noProviderTools
  const tools: Array<ProviderTool> = (requested ?? []).map((entry) => ({
    modelName: entry.scope?.model_name,
    providerName: entry.scope?.model_provider_name,
    tool: entry.tool
  }))
  if (builtin !== undefined) tools.push(...builtin)
  return tools
}

/** What the OpenAI-compatible surface adds to a request beyond `/inference`'s fields. */
export interface PrepareExtras {
  /** the caller's workspace (`default` when not given) */
  readonly workspace?: string | undefined
  /** `response_format: json_schema` on a chat function: passed to the provider, not checked */
  readonly responseSchema?: Record<string, unknown> | undefined
  /** OpenAI custom tools (free-text input, optionally a grammar) */
  readonly customTools?: ReadonlyArray<CustomTool>
  /**
   * A variant that is not in the configuration, run in place of the function's (prompt
   * optimization tries templates this way), with the engine its templates are compiled in.
   * Internal: no request can name one.
   */
  readonly dynamicVariant?: { readonly variant: VariantConfig; readonly templates: TemplateEngine } | undefined
  /** what the caller's route calls `model_name`, for its 400s (the OpenAI-compatible route: `model`) */
  readonly modelField?: string | undefined
  /** what the caller's route calls `function_name`, for its errors (the OpenAI-compatible route: `model`) */
  readonly functionField?: string | undefined
  /**
   * A surface's own fields passed on to the providers that speak its API (edits scoped by
   * `provider_family`: Anthropic's `metadata`, `anthropic-beta`...), applied before the request's
   * `extra_body`/`extra_headers`, which can override them
   */
  readonly surfaceEdits?: {
    readonly body: ReadonlyArray<ScopedEdit<ExtraBodyEdit>>
    readonly headers: ReadonlyArray<ScopedEdit<ExtraHeaderEdit>>
  } | undefined
  /** a surface's built-in tools (Anthropic's server tools), each for the providers of its family */
  readonly builtinTools?: ReadonlyArray<ProviderTool> | undefined
  /** the system prompt's prompt-caching mark (Anthropic's `cache_control` on its last system block) */
  readonly systemCacheControl?: CacheControl | undefined
}

/** `request` checked against `config` and `models` (the short-hand names it can reach), at `startedAt` (epoch ms) */
export const prepareInference = (
  request: InferenceRequest,
  config: GatewayConfig,
  models: ModelTable,
  startedAt: number,
  extras: PrepareExtras = {},
  /** adaptive experiments' probabilities in force (src/experimentation/); without, their candidates are drawn uniformly */
  adaptiveWeights?: AdaptiveWeights
): Result.Result<PreparedInference, InvalidRequest | NotFound> => {
  // the target
  let fn: FunctionConfig
  let functionName: string
  if (request.function_name !== undefined && request.model_name !== undefined) {
    return invalid("give either function_name or model_name, not both")
  }
  if (request.function_name !== undefined) {
    const configured = config.functions.get(request.function_name)
    if (configured === undefined) {
      // TensorZero's words, which its clients' tests match on
      return Result.fail(new NotFound({ message: `${extras.functionField ?? "function_name"}: Unknown function: ${plainOrQuoted(request.function_name)}` }))
    }
    fn = configured
    functionName = request.function_name
  } else if (request.model_name !== undefined) {
    const model = models.lookup(request.model_name)
    if (model === undefined) {
      const off = shorthandOff(request.model_name, config.shorthands)
      return Result.fail(
        new NotFound({
          message: off === undefined
            ? `unknown model "${request.model_name}": not in [models], and not a "<provider_type>::<model>" short-hand`
            : `unknown model "${request.model_name}": ${off}`
        })
      )
    }
    // a short-hand whose name would make a URL elsewhere than its provider's: the caller's fault
    if ("refused" in model) return invalid(`${extras.modelField ?? "model_name"}: ${model.refused}`)
    if (request.variant_name !== undefined) return invalid("variant_name: only functions have variants; drop it when calling a model")
    fn = defaultFunction(request.model_name)
    functionName = defaultFunctionName
  } else {
    return invalid("function_name or model_name: one of them is required")
  }

  // the episode
  let episodeId: string
  if (request.episode_id === undefined || request.episode_id === null) episodeId = uuidv7(startedAt)
  else if (!isUuidV7(request.episode_id)) {
    return invalid(`episode_id: "${request.episode_id}" is not an episode id issued by the gateway (a UUIDv7)`)
  } else episodeId = request.episode_id

  // the variants, in the order to try them
  let variants: Array<VariantConfig>
  if (extras.dynamicVariant !== undefined) {
    variants = [extras.dynamicVariant.variant]
  } else if (request.variant_name !== undefined) {
    const pinned = fn.variants.get(request.variant_name)
    if (pinned === undefined) {
      return Result.fail(new NotFound({ message: `unknown variant "${request.variant_name}" of function "${functionName}"` }))
    }
    variants = [pinned]
  } else {
    const order = variantOrder(fn, seededRandom(`${functionName}:${episodeId}`), adaptiveWeights?.(functionName, episodeId))
    if (order.length === 0) {
      return invalid(`function "${functionName}" has no variant with a positive weight; pin one with variant_name`)
    }
    variants = order.map((name) => fn.variants.get(name)!)
  }

  const resolved = resolveTools(fn, request, config.tools, extras.customTools)
  if (Result.isFailure(resolved)) return invalid(`${resolved.failure.path}: ${resolved.failure.message}`)
  const tools = resolved.success

  let outputSchema = fn.outputSchema
  let responseSchema = fn.type === "chat" ? extras.responseSchema : undefined
  if (request.output_schema !== undefined) {
    if (fn.type !== "json" && request.model_name === undefined) return invalid("output_schema: only json functions have an output schema")
    const compiled = compileRequestJsonSchema(request.output_schema)
    if ("error" in compiled) return invalid(`output_schema: ${compiled.error}`)
    // a model called directly takes it as the schema of the provider's structured output (json_mode
    // strict), unchecked, as the OpenAI surface's response_format: what a relaying gateway sends
    if (fn.type === "json") outputSchema = compiled.validator
    else responseSchema = request.output_schema
  }

  const bodyEdits: Array<ScopedEdit<ExtraBodyEdit>> = [...(extras.surfaceEdits?.body ?? [])]
  const extraBody = request.extra_body ?? []
  for (let i = 0; i < extraBody.length; i++) {
    const entry = extraBody[i]
    const path = `extra_body[${i}]`
    // a malformed pointer is the caller's mistake: a 400, not a provider failure to fall back from
    const tokens = parsePointer(entry.pointer)
    if (tokens === undefined || tokens.length === 0) {
      return invalid(`${path}.pointer: "${entry.pointer}" is not a JSON Pointer to a field (it must start with "/")`)
    }
    if ((entry.value === undefined) === (entry.delete !== true)) {
      return invalid(`${path}: give exactly one of value or delete = true`)
    }
    const scope = scopeOf(entry, path)
    if (Result.isFailure(scope)) return Result.fail(scope.failure)
    bodyEdits.push({
      scope: scope.success,
      // marked as the request's: if it does not fit the provider's body, the inference ends with a 400
      edit: requestBodyEdit(
        entry.delete === true ? { pointer: entry.pointer, delete: true } : { pointer: entry.pointer, value: entry.value },
        path,
        entry
      )
    })
  }
  const headerEdits: Array<ScopedEdit<ExtraHeaderEdit>> = [...(extras.surfaceEdits?.headers ?? [])]
  const extraHeaders = request.extra_headers ?? []
  for (let i = 0; i < extraHeaders.length; i++) {
    const entry = extraHeaders[i]
    const path = `extra_headers[${i}]`
    if ((entry.value === undefined) === (entry.delete !== true)) {
      return invalid(`${path}: give exactly one of value or delete = true`)
    }
    // refused here rather than failing in the HTTP client, which would count as a provider failure
    const unsendable = extraHeaderProblem(entry.name, entry.value)
    if (unsendable !== undefined) return invalid(`${path}.${unsendable.field}: ${unsendable.message}`)
    const scope = scopeOf(entry, path)
    if (Result.isFailure(scope)) return Result.fail(scope.failure)
    headerEdits.push({
      scope: scope.success,
      edit: requestHeaderEdit(entry.delete === true ? { name: entry.name, delete: true } : { name: entry.name, value: entry.value! }, path, entry)
    })
  }

  if (request.stream === true && request.include_original_response === true) {
    return invalid("include_original_response: not available for streamed inferences")
  }

  const workspace = extras.workspace ?? defaultWorkspace
  return Result.succeed({
    inferenceId: uuidv7(startedAt),
    workspace,
    episodeId,
    functionName,
    fn,
    variants,
    tools,
    outputSchema,
    responseSchema,
    params: request.params?.chat_completion,
    bodyEdits,
    headerEdits,
    providerTools: providerToolsOf(request, extras.builtinTools),
    systemCacheControl: extras.systemCacheControl,
    credentials: request.credentials ?? {},
    tags: request.tags,
    dryrun: request.dryrun,
    cache: cachePolicy(request.cache_options, request.dryrun === true, cacheSharing(config.gateway, request.tags?.[apiKeyTag], workspace)),
    request,
    startedAt,
    templates: extras.dynamicVariant?.templates
  })
}
