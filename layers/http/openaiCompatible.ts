/**
 * The OpenAI-compatible surface (spec 4.2): `POST /openai/v1/chat/completions` and
 * `GET /openai/v1/models`. Every error here is in OpenAI's shape, so OpenAI SDKs raise their
 * own typed errors.
 */
import * as Effect from "effect/Effect"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import { tagsWithApiKey } from "../../src/api/tags.ts"
import { makeLenientDecoder } from "../../src/decode.ts"
import { type GatewayError, InvalidRequest, isGatewayError } from "../../src/errors.ts"
import { prepareInference } from "../../src/inference/prepare.ts"
import { runInference, streamInference } from "../../src/inference/run.ts"
import { WriteQueue } from "../../src/observability/writeQueue.ts"
import { ChatCompletionRequest, knownRootFields } from "../../src/openaiCompatible/api.ts"
import { functionModelPrefix, modelModelPrefix, translateChatCompletion } from "../../src/openaiCompatible/request.ts"
import { chatCompletionBody, openAiErrorBody, openAiStreamEncoder } from "../../src/openaiCompatible/response.ts"
import { Gateway } from "../../src/services.ts"
import { quotedList } from "../../src/untrusted.ts"
import { onCompleted, sseResponse } from "./inference.ts"
import { decodeBody, errorHeaders, jsonResponse, readJsonObject } from "./respond.ts"
import { withRequestTrace } from "./tracing.ts"

const decodeChatCompletion = makeLenientDecoder(ChatCompletionRequest)

export const openAiErrorResponse = (error: GatewayError): HttpServerResponse.HttpServerResponse =>
  jsonResponse(openAiErrorBody(error), error.status, errorHeaders(error))

export const chatCompletionsHandler = (apiKey: string | undefined) => withRequestTrace("/openai/v1/chat/completions", (trace) => Effect.gen(function*() {
  const { config, models, limiter } = yield* Gateway
  const writeQueue = yield* WriteQueue
  const json = yield* readJsonObject(config.gateway.maxRequestBodyBytes)
  const body = yield* decodeBody(decodeChatCompletion, json)
  const unknown = Object.keys(json).filter((key) => !knownRootFields.has(key))
  if (unknown.length > 0) {
    if (body["gateway::deny_unknown_fields"] === true) {
      return yield* new InvalidRequest({ message: `unknown fields: ${quotedList(unknown)}` })
    }
    // the names are the client's: quoted (no forged log line) and few (no megabyte line)
    yield* Effect.logWarning(`openai: ignoring unknown fields ${quotedList(unknown)}`)
  }
  const translated = translateChatCompletion(body, (name) => config.functions.get(name)?.type)
  if (translated instanceof InvalidRequest) return yield* translated
  for (const warning of translated.warnings) yield* Effect.logWarning(`openai: ${warning}`)
  const request = apiKey === undefined
    ? translated.request
    : { ...translated.request, tags: tagsWithApiKey(translated.request.tags, apiKey) }
  const prepared = prepareInference(request, config, models, { ...translated.extras, limiter })
  if (isGatewayError(prepared)) return yield* prepared
  const completed = onCompleted(writeQueue, request, trace)
  if (translated.stream) {
    const stream = yield* streamInference(prepared, completed, () => openAiStreamEncoder(prepared, body.model, translated))
    return sseResponse(stream.events)
  }
  const result = yield* runInference(prepared)
  completed(result)
  return jsonResponse(JSON.stringify(chatCompletionBody(result, body.model, translated)))
}))

/** The `model` values this gateway answers to: its functions and its configured models. */
export const modelsHandler = Effect.map(Gateway, ({ config }) => {
  const entry = (id: string) => ({ id, object: "model", created: 0, owned_by: "gateway" })
  return jsonResponse(JSON.stringify({
    object: "list",
    data: [
      ...[...config.functions.keys()].map((name) => entry(`${functionModelPrefix}${name}`)),
      ...[...config.models.keys()].map((name) => entry(`${modelModelPrefix}${name}`))
    ]
  }))
})
