/**
 * The Anthropic Messages surface (issue 37): `POST /anthropic/v1/messages`,
 * `POST /anthropic/v1/messages/count_tokens` and `GET /anthropic/v1/models[/{model_id}]`, so
 * that an Anthropic SDK (or an agent taking a base URL) works with
 * `baseURL = <gateway>/anthropic`. Every error here is in Anthropic's shape, so its SDKs raise
 * their own typed errors; a streamed answer is Anthropic's events, with pings while the
 * provider is quiet.
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
import { errorEvent, messagesStreamEncoder, openingEvents, pingEvent, type StreamState } from "../../src/anthropicMessages/stream.ts"
import { makeLenientDecoder } from "../../src/decode.ts"
import { type GatewayError, NotFound } from "../../src/errors.ts"
import { droppedBuiltinTools } from "../../src/inference/builtinTools.ts"
import { InferenceService } from "../../src/inference/service.ts"
import { Metrics } from "../../src/metrics/metrics.ts"
import type { GatewayConfig } from "../../src/config/types.ts"
import { Configuration } from "../../src/services.ts"
import { keepAliveWrites, startOrCommit } from "../../src/sseWriter.ts"
import { quoted } from "../../src/untrusted.ts"
import { overheadSoFar, sseResponse, traceCompleted, withWarnings } from "./inference.ts"
import { integerParam, queryParams } from "./query.ts"
import { decodeBody, errorHeaders, jsonResponse, readJsonObject } from "./respond.ts"
import { withRequestTrace } from "./tracing.ts"
import type { Caller } from "../../src/workspace.ts"

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

const pingBytes = new TextEncoder().encode(pingEvent)
/**
 * The longest a stream waits for its provider's start before it is answered 200 and pinged: a
 * failure sooner keeps its HTTP status (which the SDKs retry on); a longer silence is what idle
 * timeouts drop.
 */
const maxCommitAfterMs = 5_000

export const messagesHandler = (caller: Caller) => withRequestTrace(messagesRoute, (trace) => Effect.gen(function*() {
  const started = performance.now()
  const config = yield* Configuration
  const inference = yield* InferenceService
  const metrics = yield* Metrics
  const json = yield* readJsonObject(config.gateway.maxRequestBodyBytes)
  const body = yield* decodeBody(decodeMessages, json)
  const translated = yield* Effect.fromResult(translateMessages(body, yield* messagesContext(config, json)))
  const prepared = yield* inference.prepare(translated.request, caller, translated.extras)
  const header = config.gateway.overheadHeader
  if (translated.stream) {
    const everyMs = config.gateway.streamKeepaliveMs
    const state: StreamState = { opened: false }
    const waitStarted = performance.now()
    const start = inference.stream(prepared, traceCompleted(trace, true), (variant, _otherCalls, origin) => messagesStreamEncoder(prepared, translated, variant, state, origin.provider.type))
    // a provider slow to start: the answer is committed (200, message_start) and pinged rather than left silent
    const begun = yield* startOrCommit(start, Math.min(everyMs, maxCommitAfterMs), {
      opening: () => openingEvents(prepared, translated, state),
      eventsOf: (streamed) => streamed.events,
      failed: (error) => errorEvent(anthropicErrorJson(error))
    })
    const [events, providerMs] = begun._tag === "Started"
      ? [begun.started.events, begun.started.providerMs]
      // committed: the wait so far counts as the provider's
      : [begun.body, performance.now() - waitStarted]
    const overhead = overheadSoFar(metrics, messagesRoute, header, started, providerMs)
    // a committed stream's headers went before its provider was known
    const warning = begun._tag === "Started" ? droppedBuiltinTools(prepared, begun.started.origin) : undefined
    return sseResponse(keepAliveWrites(events, pingBytes, everyMs), yield* withWarnings(overhead, [warning], "anthropic"))
  }
  const result = yield* inference.run(prepared, traceCompleted(trace, false))
  const answer = JSON.stringify(messageBody(result, translated))
  const overhead = overheadSoFar(metrics, messagesRoute, header, started, result.providerMs)
  return jsonResponse(answer, 200, yield* withWarnings(overhead, [droppedBuiltinTools(prepared, result.origin)], "anthropic"))
}))

const decodeCountTokens = makeLenientDecoder(CountTokensRequest)

/** how many input tokens a Messages request would take, counted by the provider that would answer it first (`src/inference/countTokens.ts`) */
export const countTokensHandler = (caller: Caller) =>
  Effect.gen(function*() {
    const config = yield* Configuration
    const inference = yield* InferenceService
    const json = yield* readJsonObject(config.gateway.maxRequestBodyBytes)
    const body = yield* decodeBody(decodeCountTokens, json)
    const translated = yield* Effect.fromResult(translateMessages(body, yield* messagesContext(config, json)))
    const inputTokens = yield* inference.countTokens(translated.request, caller, translated.extras)
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
