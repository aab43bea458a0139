/**
 * The OpenAI-compatible surface (spec 4.2): `POST /openai/v1/chat/completions` and
 * `GET /openai/v1/models`. Every error here is in OpenAI's shape, so OpenAI SDKs raise their
 * own typed errors.
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import { makeLenientDecoder } from "../../src/decode.ts"
import { type GatewayError, InvalidRequest } from "../../src/errors.ts"
import { InferenceService } from "../../src/inference/service.ts"
import { Metrics } from "../../src/metrics/metrics.ts"
import { ChatCompletionRequest, knownRootFields } from "../../src/openaiCompatible/api.ts"
import { functionModelPrefix, modelModelPrefix } from "../../src/api/modelField.ts"
import { missingModel, translateChatCompletion } from "../../src/openaiCompatible/request.ts"
import { chatCompletionBody, openAiErrorBody, openAiStreamEncoder } from "../../src/openaiCompatible/response.ts"
import { Configuration } from "../../src/services.ts"
import { quotedList } from "../../src/untrusted.ts"
import { overheadSoFar, sseResponse, traceCompleted } from "./inference.ts"
import { decodeBody, errorHeaders, jsonResponse, readJsonObject } from "./respond.ts"
import { withRequestTrace } from "./tracing.ts"
import type { Caller } from "../../src/workspace.ts"

const decodeChatCompletion = makeLenientDecoder(ChatCompletionRequest)

export const openAiErrorResponse = (error: GatewayError): HttpServerResponse.HttpServerResponse =>
  jsonResponse(openAiErrorBody(error), error.status, errorHeaders(error))

const chatCompletionsRoute = "/openai/v1/chat/completions"

export const chatCompletionsHandler = (caller: Caller) => withRequestTrace(chatCompletionsRoute, (trace) => Effect.gen(function*() {
  const started = performance.now()
  const config = yield* Configuration
  const inference = yield* InferenceService
  const metrics = yield* Metrics
  const json = yield* readJsonObject(config.gateway.maxRequestBodyBytes)
  const noModel = missingModel(json)
  if (noModel !== undefined) return yield* noModel
  const body = yield* decodeBody(decodeChatCompletion, json)
  const unknown = Object.keys(json).filter((key) => !knownRootFields.has(key))
  if (unknown.length > 0) {
    if (body["gateway::deny_unknown_fields"] === true) {
      return yield* new InvalidRequest({ message: `unknown fields: ${quotedList(unknown)}` })
    }
    // the names are the client's: quoted (no forged log line) and few (no megabyte line)
    yield* Effect.logWarning(`openai: ignoring unknown fields ${quotedList(unknown)}`)
  }
  const translated = yield* Effect.fromResult(translateChatCompletion(body, (name) => config.functions.get(name)?.type))
  for (const warning of translated.warnings) yield* Effect.logWarning(`openai: ${warning}`)
  const prepared = yield* inference.prepare(translated.request, caller, translated.extras)
  const completed = traceCompleted(trace, translated.request.stream === true)
  const created = Math.floor((yield* Clock.currentTimeMillis) / 1000)
  if (translated.stream) {
    const stream = yield* inference.stream(prepared, completed, (variant, otherCalls) => openAiStreamEncoder(prepared, variant, otherCalls, translated, created))
    return sseResponse(stream.events, overheadSoFar(metrics, chatCompletionsRoute, config.gateway.overheadHeader, started, stream.providerMs))
  }
  const result = yield* inference.run(prepared, completed)
  const answer = JSON.stringify(chatCompletionBody(result, translated, created))
  return jsonResponse(answer, 200, overheadSoFar(metrics, chatCompletionsRoute, config.gateway.overheadHeader, started, result.providerMs))
}))

/** The `model` values this gateway answers to: its functions and its configured models. */
export const modelsHandler = Effect.map(Configuration, (config) => {
  const entry = (id: string) => ({ id, object: "model", created: 0, owned_by: "gateway" })
  return jsonResponse(JSON.stringify({
    object: "list",
    data: [
      ...[...config.functions.keys()].map((name) => entry(`${functionModelPrefix}${name}`)),
      ...[...config.models.keys()].map((name) => entry(`${modelModelPrefix}${name}`))
    ]
  }))
})
