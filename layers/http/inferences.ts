/** POST /v1/inferences/get_inferences and /v1/inferences/list_inferences: stored inferences, read back. */
import * as Effect from "effect/Effect"
import {
  filterBoundsProblem,
  GetInferencesRequest,
  type InferenceFilter,
  ListInferencesRequest
} from "../../src/api/inferences.ts"
import { makeDecoder } from "../../src/decode.ts"
import { InvalidRequest } from "../../src/errors.ts"
import { requireStore } from "../../src/feedback/target.ts"
import { isUuidV7 } from "../../src/inference/prepare.ts"
import type { StoredFeedback, StoredInference, StoredModelInference } from "../../src/observability/records.ts"
import type { StoreFilter } from "../../src/inferences/store.ts"
import { type ObservabilityStores, storeUnavailable } from "../../src/observability/stores.ts"
import { Gateway } from "../../src/services.ts"
import { parseRfc3339 } from "../../src/time.ts"
import { decodeBody, jsonResponse, readJsonBody, readJsonObject } from "./respond.ts"

const decodeGet = makeDecoder(GetInferencesRequest)
const decodeList = makeDecoder(ListInferencesRequest)

// Postgres refuses a NUL in any text, and no stored name or tag holds one: a client mistake, not a database failure
const holdsNul = "holds a NUL character (\\u0000), which no stored value can contain"

/** API filter -> store filter, with times parsed; the problem (with its path) otherwise */
export const toStoreFilter = (filter: InferenceFilter, path: string): StoreFilter | InvalidRequest => {
  switch (filter.type) {
    case "tag":
      if (filter.key.includes("\0")) return new InvalidRequest({ message: `${path}.key: ${holdsNul}` })
      if (filter.value.includes("\0")) return new InvalidRequest({ message: `${path}.value: ${holdsNul}` })
      return { ...filter, comparison_operator: filter.comparison_operator ?? "=" }
    case "time": {
      const time = parseRfc3339(filter.time)
      if (time === undefined) {
        return new InvalidRequest({ message: `${path}.time: expected an RFC 3339 time such as 2026-01-31T12:00:00Z, got "${filter.time}"` })
      }
      return { type: "time", time, comparison_operator: filter.comparison_operator }
    }
    case "and":
    case "or": {
      const children: Array<StoreFilter> = []
      for (let i = 0; i < filter.children.length; i++) {
        const child = toStoreFilter(filter.children[i], `${path}.children[${i}]`)
        if (child instanceof InvalidRequest) return child
        children.push(child)
      }
      return { type: filter.type, children }
    }
    case "not": {
      const child = toStoreFilter(filter.child, `${path}.child`)
      return child instanceof InvalidRequest ? child : { type: "not", child }
    }
  }
}

const feedbackJson = (feedback: StoredFeedback) => ({
  feedback_id: feedback.id,
  metric_name: feedback.metricName,
  kind: feedback.kind,
  target_type: feedback.targetType,
  target_id: feedback.targetId,
  value: feedback.value,
  tags: feedback.tags,
  timestamp: new Date(feedback.timestamp).toISOString()
})

const modelInferenceJson = (call: StoredModelInference) => ({
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
  response_time_ms: call.responseTimeMs,
  ttft_ms: call.ttftMs ?? null,
  finish_reason: call.finishReason ?? null,
  cached: call.cached,
  timestamp: new Date(call.timestamp).toISOString()
})

const inferenceJson = (
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

interface Includes {
  readonly include_feedback?: boolean | undefined
  readonly include_model_inferences?: boolean | undefined
}

const respondWith = (stores: ObservabilityStores, inferences: ReadonlyArray<StoredInference>, includes: Includes) =>
  Effect.gen(function*() {
    const unavailable = (error: { readonly message: string }) => storeUnavailable(stores.database.backend, error.message)
    const feedback = includes.include_feedback === true && inferences.length > 0
      ? yield* Effect.mapError(
        stores.feedback.getFeedback([...new Set(inferences.flatMap((inference) => [inference.id, inference.episodeId]))]),
        unavailable
      )
      : undefined
    const calls = includes.include_model_inferences === true && inferences.length > 0
      ? yield* Effect.mapError(stores.inferences.getModelInferences(inferences.map((inference) => inference.id)), unavailable)
      : undefined
    return jsonResponse(JSON.stringify({ inferences: inferences.map((inference) => inferenceJson(inference, feedback, calls)) }))
  })

export const getInferencesHandler = Effect.gen(function*() {
  const { config } = yield* Gateway
  const request = yield* readJsonBody(decodeGet, config.gateway.maxRequestBodyBytes)
  const stores = yield* requireStore
  const bad = request.ids.findIndex((id) => !isUuidV7(id))
  if (bad >= 0) return yield* new InvalidRequest({ message: `ids[${bad}]: "${request.ids[bad]}" is not an inference id (a UUIDv7)` })
  const found = yield* Effect.mapError(stores.inferences.getInferences(request.ids), (error) => storeUnavailable(stores.database.backend, error.message))
  // in the order asked for
  const byId = new Map(found.map((inference) => [inference.id, inference]))
  const ordered = request.ids.flatMap((id) => byId.get(id) ?? [])
  return yield* respondWith(stores, ordered, request)
})

export const listInferencesHandler = Effect.gen(function*() {
  const { config } = yield* Gateway
  const json = yield* readJsonObject(config.gateway.maxRequestBodyBytes)
  // before decoding, which recurses over the filter tree
  const tooBig = filterBoundsProblem(json.filters, "filters")
  if (tooBig !== undefined) return yield* new InvalidRequest({ message: tooBig })
  const request = yield* decodeBody(decodeList, json)
  const stores = yield* requireStore
  for (const field of ["function_name", "variant_name"] as const) {
    if (request[field]?.includes("\0")) return yield* new InvalidRequest({ message: `${field}: ${holdsNul}` })
  }
  if (request.episode_id !== undefined && !isUuidV7(request.episode_id)) {
    return yield* new InvalidRequest({ message: `episode_id: "${request.episode_id}" is not an episode id (a UUIDv7)` })
  }
  const filter = request.filters === undefined ? undefined : toStoreFilter(request.filters, "filters")
  if (filter instanceof InvalidRequest) return yield* filter
  const found = yield* Effect.mapError(
    stores.inferences.listInferences({
      functionName: request.function_name,
      variantName: request.variant_name,
      episodeId: request.episode_id,
      filter,
      limit: request.limit ?? 20,
      offset: request.offset ?? 0
    }),
    (error) => storeUnavailable(stores.database.backend, error.message)
  )
  return yield* respondWith(stores, found, request)
})
