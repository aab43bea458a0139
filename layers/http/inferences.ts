/**
 * POST /v1/inferences/get_inferences and /v1/inferences/list_inferences: decode, read through
 * the StoredInferences service in the caller's workspace, answer with the inferences as JSON.
 */
import * as Effect from "effect/Effect"
import { filterBoundsProblem, GetInferencesRequest, ListInferencesRequest } from "../../src/api/inferences.ts"
import { makeDecoder } from "../../src/decode.ts"
import { InvalidRequest } from "../../src/errors.ts"
import { type FoundInferences, StoredInferences } from "../../src/storedInferences/service.ts"
import type { StoredFeedback, StoredInference, StoredModelInference } from "../../src/analytics/records.ts"
import { Configuration } from "../../src/services.ts"
import type { Caller } from "../../src/workspace.ts"
import { decodeBody, jsonResponse, readJsonBody, readJsonObject } from "./respond.ts"

const decodeGet = makeDecoder(GetInferencesRequest)
const decodeList = makeDecoder(ListInferencesRequest)

export const feedbackJson = (feedback: StoredFeedback) => ({
  feedback_id: feedback.id,
  metric_name: feedback.metricName,
  kind: feedback.kind,
  target_type: feedback.targetType,
  target_id: feedback.targetId,
  value: feedback.value,
  tags: feedback.tags,
  timestamp: new Date(feedback.timestamp).toISOString()
})

export const modelInferenceJson = (call: StoredModelInference) => ({
  model_inference_id: call.id,
  model_name: call.modelName,
  model_provider_name: call.modelProviderName,
  raw_request: call.rawRequest,
  raw_response: call.rawResponse,
  system: call.system ?? null,
  input_messages: call.inputMessages,
  output: call.output,
  input_tokens: call.inputTokens,
  output_tokens: call.outputTokens,
  cached_input_tokens: call.cachedInputTokens ?? null,
  cost: call.cost ?? null,
  response_time_ms: call.responseTimeMs,
  ttft_ms: call.ttftMs ?? null,
  finish_reason: call.finishReason ?? null,
  cached: call.cached,
  timestamp: new Date(call.timestamp).toISOString()
})

export const inferenceJson = (
  inference: StoredInference,
  feedback: ReadonlyArray<StoredFeedback> | undefined,
  calls: ReadonlyArray<StoredModelInference> | undefined
) => ({
  type: inference.functionType,
  inference_id: inference.id,
  episode_id: inference.episodeId,
  function_name: inference.functionName,
  variant_name: inference.variantName,
  input: inference.input,
  output: inference.output,
  ...(inference.functionType === "chat" ? { tool_params: inference.toolParams ?? null } : { output_schema: inference.outputSchema ?? null }),
  inference_params: inference.inferenceParams,
  tags: inference.tags,
  timestamp: new Date(inference.timestamp).toISOString(),
  processing_time_ms: inference.processingTimeMs,
  ttft_ms: inference.ttftMs ?? null,
  ...(feedback === undefined
    ? {}
    : { feedback: feedback.filter((f) => f.targetId === inference.id || f.targetId === inference.episodeId).map(feedbackJson) }),
  ...(calls === undefined ? {} : { model_inferences: calls.filter((call) => call.inferenceId === inference.id).map(modelInferenceJson) })
})

const foundJson = ({ inferences, feedback, modelInferences }: FoundInferences) =>
  jsonResponse(JSON.stringify({ inferences: inferences.map((inference) => inferenceJson(inference, feedback, modelInferences)) }))

export const getInferencesHandler = (caller: Caller) =>
  Effect.gen(function*() {
    const config = yield* Configuration
    const stored = yield* StoredInferences
    const request = yield* readJsonBody(decodeGet, config.gateway.maxRequestBodyBytes)
    return foundJson(yield* stored.get(caller.workspace, request))
  })

export const listInferencesHandler = (caller: Caller) =>
  Effect.gen(function*() {
    const config = yield* Configuration
    const stored = yield* StoredInferences
    const json = yield* readJsonObject(config.gateway.maxRequestBodyBytes)
    // before decoding, which recurses over the filter tree
    const tooBig = filterBoundsProblem(json.filters, "filters")
    if (tooBig !== undefined) return yield* new InvalidRequest({ message: tooBig })
    const request = yield* decodeBody(decodeList, json)
    return foundJson(yield* stored.list(caller.workspace, request))
  })
