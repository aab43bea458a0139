/**
 * Everything about a batch that can be checked before anything is sent (spec 4.4): the fields
 * a batch refuses, the lengths of the per-input lists, one variant for the whole batch (a
 * `chat_completion` one, whose model's first provider has a batch API), and every input
 * prepared, rendered and made into its provider call exactly as `/inference` would. One bad
 * input fails the whole batch with a 400 naming its index. Pure.
 */
import * as Result from "effect/Result"
import type { BatchInferenceRequest } from "../api/batch.ts"
import { relayProviderName } from "../config/relay.ts"
import { maxBatchInputs } from "../api/batch.ts"
import { ChatCompletionParams, type InferenceRequest } from "../api/inference.ts"
import { checkClientTags, tagsWithApiKey } from "../api/tags.ts"
import type { ChatCompletionVariant, FunctionConfig, GatewayConfig, VariantConfig } from "../config/types.ts"
import { formatFieldIssues, makeDecoder } from "../decode.ts"
import { type GatewayError, InvalidRequest, NotFound } from "../errors.ts"
import { uuidv7 } from "../ids.ts"
import { renderInput } from "../inference/input.ts"
import { buildModelRequest } from "../inference/modelRequest.ts"
import type { ModelTable, RoutedProvider } from "../inference/models.ts"
import { type PreparedInference, prepareInference } from "../inference/prepare.ts"
import { seededRandom, variantOrder } from "../inference/variantDraw.ts"
import type { TemplateEngine } from "../inference/templates.ts"
import type { ModelRequest } from "../inference/types.ts"
import { providerCall } from "../inference/providerCall.ts"
import { type ProviderCall } from "../providers/types.ts"
import type { Caller } from "../workspace.ts"

/** the tag every inference of a batch carries: its batch's id */
export const batchIdTag = "gateway::batch_id"

export interface PreparedBatchInference {
  readonly prepared: PreparedInference
  readonly modelRequest: ModelRequest
  readonly call: ProviderCall
}

/** A batch ready to send: its plan (the provider: the first of the model's routing, a batch has no fallback) and every input, in order. */
export interface PreparedBatch extends BatchPlan {
  readonly inferences: ReadonlyArray<PreparedBatchInference>
}

const invalid = (message: string) => new InvalidRequest({ message })

const decodeParams = makeDecoder(ChatCompletionParams)

/** the per-input lists of a batch request, by field name */
const listFields = [
  "episode_ids",
  "additional_tools",
  "allowed_tools",
  "tool_choice",
  "parallel_tool_calls",
  "output_schemas",
  "tags"
] as const

/** `/inference`'s field names in a message about input `index`, as the batch names them */
const batchFieldOf: Readonly<Record<string, string>> = {
  input: "inputs",
  episode_id: "episode_ids",
  output_schema: "output_schemas",
  additional_tools: "additional_tools",
  allowed_tools: "allowed_tools",
  tool_choice: "tool_choice",
  parallel_tool_calls: "parallel_tool_calls",
  tags: "tags"
}

/** `message` (about one input's request, as `/inference` words it) naming the batch's field and the input's index */
export const atIndex = (message: string, index: number): string => {
  const named = /^([a-z_]+)([.:[][\s\S]*)$/.exec(message)
  const field = named === null ? undefined : batchFieldOf[named[1]]
  return field === undefined ? `inputs[${index}]: ${message}` : `${field}[${index}]${named![2]}`
}

const refusedFields = (request: BatchInferenceRequest): InvalidRequest | undefined => {
  if (request.stream !== undefined && request.stream !== false) return invalid("stream: a batch is not streamed; poll GET /batch_inference/{batch_id}")
  if (request.dryrun !== undefined && request.dryrun !== false) return invalid("dryrun: not available for batches (the provider's batch would be created)")
  if (request.cache_options !== undefined) return invalid("cache_options: batch inference neither reads nor writes the cache")
  return undefined
}

const listLengths = (request: BatchInferenceRequest, count: number): InvalidRequest | undefined => {
  for (const field of listFields) {
    const list = request[field]
    if (list !== undefined && list.length !== count) return invalid(`${field}: has ${list.length} entries for ${count} inputs (one per input, null for the default)`)
  }
  for (const [name, list] of Object.entries(request.params?.chat_completion ?? {})) {
    if (list.length !== count) return invalid(`params.chat_completion.${name}: has ${list.length} entries for ${count} inputs (one per input, null for the default)`)
  }
  return undefined
}

/** input `index`'s `params.chat_completion`, checked as `/inference` checks them */
const paramsAt = (request: BatchInferenceRequest, index: number): Result.Result<ChatCompletionParams | undefined, InvalidRequest> => {
  const lists = request.params?.chat_completion
  if (lists === undefined) return Result.succeed(undefined)
  const params: Record<string, unknown> = {}
  for (const [name, list] of Object.entries(lists)) if (list[index] !== null && list[index] !== undefined) params[name] = list[index]
  const decoded = decodeParams(params)
  if (decoded.ok) return Result.succeed(decoded.value)
  // the path of the first issue is the parameter's name: say which entry of its list it is
  const [first] = decoded.issues
  const name = first?.path[0]
  return Result.fail(invalid(
    name === undefined
      ? `params.chat_completion: ${formatFieldIssues(decoded.issues)}`
      : formatFieldIssues([{ ...first, path: [name, index, ...first.path.slice(1)] }], ["params", "chat_completion"])
  ))
}

/** the one variant of the batch: the pinned one, else one sampled by weight (seeded by the batch id) */
const variantOf = (request: BatchInferenceRequest, fn: FunctionConfig, batchId: string): Result.Result<VariantConfig, GatewayError> => {
  if (request.variant_name !== undefined) {
    const pinned = fn.variants.get(request.variant_name)
    return pinned === undefined
      ? Result.fail(new NotFound({ message: `unknown variant "${request.variant_name}" of function "${request.function_name}"` }))
      : Result.succeed(pinned)
  }
  const [first] = variantOrder(fn, seededRandom(`${request.function_name}:${batchId}`))
  return first === undefined
    ? Result.fail(invalid(`function "${request.function_name}" has no variant with a positive weight; pin one with variant_name`))
    : Result.succeed(fn.variants.get(first)!)
}

/** the provider that runs the batch: the first of the model's routing, if its type has a batch API */
const batchProvider = (variant: ChatCompletionVariant, models: ModelTable): Result.Result<RoutedProvider, GatewayError> => {
  const model = models.get(variant.model)
  if (model === undefined) return Result.fail(new NotFound({ message: `variant "${variant.name}": unknown model "${variant.model}"` }))
  const provider = model.providers[0]
  if (provider === undefined) return Result.fail(invalid(`variant "${variant.name}": model "${variant.model}" has no provider`))
  if (provider.config.name === relayProviderName && provider.config.type === "gateway") {
    // the other gateway's batches are asynchronous behind its own /batch_inference, which a model call cannot reach
    return Result.fail(invalid(
      `variant "${variant.name}": model "${variant.model}" is relayed to another gateway ([gateway.relay]), which has no batch inference; ` +
        "set skip_relay = true on the model to run its batches on its own providers"
    ))
  }
  if (provider.client.batch === undefined) {
    return Result.fail(invalid(
      `variant "${variant.name}": provider "${provider.config.name}" of model "${variant.model}" (type ${provider.config.type}) has no batch API; ` +
        "batch inference runs on the first provider of the model's routing (types with one: openai, azure, anthropic, gcp_vertex_gemini, google_ai_studio_gemini, dummy)"
    ))
  }
  const credential = provider.config.credential
  if (credential.kind === "dynamic") {
    return Result.fail(invalid(
      `credentials.${credential.name}: provider "${provider.config.name}" reads its key only from the request, but a batch is polled ` +
        "in the background, where no request carries it; give the provider a fallback location (api_key_location = { default = \"dynamic::...\", fallback = \"env::...\" })"
    ))
  }
  return Result.succeed(provider)
}

/** What a batch is sent with, once the batch as a whole is checked: each input is then prepared with `prepareBatchInput`. */
export interface BatchPlan {
  readonly batchId: string
  readonly functionName: string
  readonly fn: FunctionConfig
  readonly variant: ChatCompletionVariant
  readonly modelName: string
  readonly provider: RoutedProvider
}

/** The batch as a whole: refused fields, list lengths, the function, its one variant and the provider that runs it. */
export const planBatch = (
  request: BatchInferenceRequest,
  config: GatewayConfig,
  models: ModelTable,
  now: number
): Result.Result<BatchPlan, GatewayError> => {
  const refused = refusedFields(request)
  if (refused !== undefined) return Result.fail(refused)
  const count = request.inputs.length
  if (count === 0) return Result.fail(invalid("inputs: a batch needs at least one input"))
  if (count > maxBatchInputs) return Result.fail(invalid(`inputs: ${count} inputs; a batch takes at most ${maxBatchInputs}`))
  const lengths = listLengths(request, count)
  if (lengths !== undefined) return Result.fail(lengths)

  const fn = config.functions.get(request.function_name)
  if (fn === undefined) return Result.fail(new NotFound({ message: `unknown function "${request.function_name}"` }))
  const batchId = uuidv7(now)
  return Result.flatMap(variantOf(request, fn, batchId), (variant) => {
    if (variant.type !== "chat_completion") {
      return Result.fail(invalid(`variant_name: variant "${variant.name}" is of type ${variant.type}; batches run chat_completion variants only`))
    }
    return Result.map(
      batchProvider(variant, models),
      (provider): BatchPlan => ({ batchId, functionName: request.function_name, fn, variant, modelName: variant.model, provider })
    )
  })
}

/** Input `index` of the batch prepared, rendered and made into its provider call as `/inference` would; an error names the index. */
export const prepareBatchInput = (
  plan: BatchPlan,
  request: BatchInferenceRequest,
  index: number,
  config: GatewayConfig,
  models: ModelTable,
  templates: TemplateEngine,
  now: number,
  caller: Caller
): Result.Result<PreparedBatchInference, GatewayError> => {
  const { fn, variant, provider, modelName, batchId } = plan
  const clientTags = request.tags?.[index] ?? undefined
  const reserved = checkClientTags(clientTags, `tags[${index}]`)
  if (reserved !== undefined) return Result.fail(reserved)
  const checkedParams = paramsAt(request, index)
  if (Result.isFailure(checkedParams)) return Result.fail(checkedParams.failure)
  const params = checkedParams.success
  const single: InferenceRequest = {
    function_name: request.function_name,
    variant_name: variant.name,
    input: request.inputs[index],
    episode_id: request.episode_ids?.[index] ?? undefined,
    additional_tools: request.additional_tools?.[index] ?? undefined,
    allowed_tools: request.allowed_tools?.[index] ?? undefined,
    tool_choice: request.tool_choice?.[index] ?? undefined,
    parallel_tool_calls: request.parallel_tool_calls?.[index] ?? undefined,
    output_schema: request.output_schemas?.[index] ?? undefined,
    params: params === undefined ? undefined : { chat_completion: params },
    tags: tagsWithApiKey({ ...clientTags, [batchIdTag]: batchId }, caller.publicId),
    credentials: request.credentials
  }
  const preparedResult = prepareInference(single, config, models, now, { workspace: caller.workspace })
  if (Result.isFailure(preparedResult)) {
    const failure = preparedResult.failure
    return Result.fail(failure instanceof InvalidRequest ? invalid(atIndex(failure.message, index)) : failure)
  }
  const prepared = preparedResult.success
  const renderedResult = renderInput(single.input, fn, variant, templates)
  if (Result.isFailure(renderedResult)) return Result.fail(invalid(atIndex(`${renderedResult.failure.path}: ${renderedResult.failure.message}`, index)))
  const rendered = renderedResult.success
  const modelRequest = buildModelRequest(prepared, variant, rendered)
  return Result.match(providerCall(modelRequest, modelName, provider.config, variant, prepared), {
    onFailure: (refused) =>
      Result.fail(
        refused instanceof InvalidRequest
          ? refused
          : invalid(`variant "${variant.name}": provider "${provider.config.name}" of model "${modelName}" cannot be called: ${refused.message}`)
      ),
    onSuccess: (call) => Result.succeed({ prepared, modelRequest, call })
  })
}

/** The whole batch at once (the service prepares its inputs a slice at a time instead, between turns of the event loop). */
export const prepareBatch = (
  request: BatchInferenceRequest,
  config: GatewayConfig,
  models: ModelTable,
  templates: TemplateEngine,
  now: number,
  caller: Caller
): Result.Result<PreparedBatch, GatewayError> =>
  Result.flatMap(planBatch(request, config, models, now), (plan) => {
    const inferences: Array<PreparedBatchInference> = []
    for (let index = 0; index < request.inputs.length; index++) {
      const prepared = prepareBatchInput(plan, request, index, config, models, templates, now, caller)
      if (Result.isFailure(prepared)) return Result.fail(prepared.failure)
      inferences.push(prepared.success)
    }
    return Result.succeed({ ...plan, inferences })
  })
