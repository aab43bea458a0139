/**
 * The Anthropic Messages surface (issue 37): `POST /anthropic/v1/messages`,
 * `POST /anthropic/v1/messages/count_tokens` and `GET /anthropic/v1/models[/{model_id}]`, so
 * that an Anthropic SDK (or an agent taking a base URL) works with
 * `baseURL = <gateway>/anthropic`. Every error
 * here is in Anthropic's shape, so its SDKs raise their own typed errors. Answers are whole for
 * now: `stream: true` is a 400 saying so.
 */
import * as Effect from "effect/Effect"
import * as HttpRouter from "effect/http/HttpRouter"
import * as HttpServerRequest from "effect/http/HttpServerRequest"
import type * as HttpServerResponse from "effect/http/HttpServerResponse"
import { anthropicError, anthropicErrorJson } from "../../src/api/anthropicMessages.ts"
import { CountTokensRequest, MessagesRequest } from "../../src/anthropicMessages/api.ts"
import { type MessagesContext, translateMessages } from "../../src/anthropicMessages/request.ts"
import { listedModel, modelIds, modelPage } from "../../src/anthropicMessages/models.ts"
import { messageBody } from "../../src/anthropicMessages/response.ts"
import { makeLenientDecoder } from "../../src/decode.ts"
import { type GatewayError, InvalidRequest, NotFound } from "../../src/errors.ts"
import { droppedBuiltinTools } from "../../src/inference/builtinTools.ts"
import { InferenceService } from "../../src/inference/service.ts"
import { Metrics } from "../../src/metrics/metrics.ts"
import type { GatewayConfig } from "../../src/config/types.ts"
import { Configuration } from "../../src/services.ts"
import { quoted } from "../../src/untrusted.ts"
import { overheadSoFar, traceCompleted } from "./inference.ts"
import { integerParam, queryParams } from "./query.ts"
import { decodeBody, errorHeaders, jsonResponse, readJsonObject } from "./respond.ts"
import { withRequestTrace } from "./tracing.ts"

const decodeMessages = makeLenientDecoder(MessagesRequest)

export const anthropicErrorResponse = (error: GatewayError): HttpServerResponse.HttpServerResponse =>
  jsonResponse(JSON.stringify(anthropicErrorJson(error)), anthropicError(error).status, errorHeaders(error))

const messagesRoute = "/anthropic/v1/messages"

/** what the translation of a Messages body reads besides it: the configuration, the body as sent, `anthropic-beta` */
const messagesContext = (config: GatewayConfig, raw: Record<string, unknown>) =>
  Effect.map(HttpServerRequest.HttpServerRequest, ({ headers }): MessagesContext => ({
    configuredModel: (name) => config.models.has(name),
    raw,
    beta: headers["anthropic-beta"],
    builtinTools: config.gateway.unsupportedBuiltinTools
  }))

export const messagesHandler = (apiKey: string | undefined) => withRequestTrace(messagesRoute, (trace) => Effect.gen(function*() {
  const started = performance.now()
  const config = yield* Configuration
  const inference = yield* InferenceService
  const metrics = yield* Metrics
  const json = yield* readJsonObject(config.gateway.maxRequestBodyBytes)
  const body = yield* decodeBody(decodeMessages, json)
  if (body.stream === true) {
    return yield* new InvalidRequest({ message: `stream: streamed answers are not served on ${messagesRoute} yet; send "stream": false` })
  }
  const translated = yield* Effect.fromResult(translateMessages(body, yield* messagesContext(config, json)))
  const prepared = yield* inference.prepare(translated.request, apiKey, translated.extras)
  const result = yield* inference.run(prepared, traceCompleted(trace, false))
  const answer = JSON.stringify(messageBody(result, translated))
  const overhead = overheadSoFar(metrics, messagesRoute, config.gateway.overheadHeader, started, result.providerMs)
  const warning = droppedBuiltinTools(prepared, result.origin)
  if (warning !== undefined) yield* Effect.logWarning(`anthropic: ${warning["gateway-warning"]}`)
  return jsonResponse(answer, 200, warning === undefined ? overhead : { ...overhead, ...warning })
}))

const decodeCountTokens = makeLenientDecoder(CountTokensRequest)

/** how many input tokens a Messages request would take, counted by the provider that would answer it first (`src/inference/countTokens.ts`) */
export const countTokensHandler = (apiKey: string | undefined) =>
  Effect.gen(function*() {
    const config = yield* Configuration
    const inference = yield* InferenceService
    const json = yield* readJsonObject(config.gateway.maxRequestBodyBytes)
    const body = yield* decodeBody(decodeCountTokens, json)
    const translated = yield* Effect.fromResult(translateMessages(body, yield* messagesContext(config, json)))
    const inputTokens = yield* inference.countTokens(translated.request, apiKey, translated.extras)
    return jsonResponse(JSON.stringify({ input_tokens: inputTokens }))
  })

/** the `model` values this gateway answers to, paged as Anthropic's model list */
export const anthropicModelsHandler = Effect.gen(function*() {
  const config = yield* Configuration
  const query = yield* queryParams
  const limit = yield* integerParam(query, "limit", 20, 1, 1000)
  const page = yield* Effect.fromResult(modelPage(modelIds(config.models.keys(), config.functions.keys()), {
    limit,
    afterId: query.get("after_id") ?? undefined,
    beforeId: query.get("before_id") ?? undefined
  }))
  return jsonResponse(JSON.stringify(page))
})

/** one of them, or Anthropic's 404 */
export const anthropicModelHandler = Effect.gen(function*() {
  const config = yield* Configuration
  const params = yield* HttpRouter.params
  const id = params.model_id ?? ""
  const model = listedModel(modelIds(config.models.keys(), config.functions.keys()), id)
  if (model === undefined) return yield* new NotFound({ message: `model_id: ${quoted(id)} is not a model this gateway answers to` })
  return jsonResponse(JSON.stringify(model))
})
