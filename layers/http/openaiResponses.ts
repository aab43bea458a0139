/**
 * The OpenAI Responses surface (issue 37): `POST /openai/v1/responses`, so that an OpenAI SDK's
 * `responses.create` and `responses.stream` work with `baseURL = <gateway>/openai/v1`, and the
 * stored responses' routes (`GET` and `DELETE /openai/v1/responses/{id}`, `GET
 * .../input_items`). Errors are in OpenAI's shape (the group's error family), so its SDKs raise
 * their own typed errors. Responses are stored only with an analytics database
 * (src/openaiResponses/service.ts).
 */
import * as Effect from "effect/Effect"
import { droppedBuiltinTools } from "../../src/inference/builtinTools.ts"
import * as HttpRouter from "effect/http/HttpRouter"
import { analyticsUrlVariable } from "../../src/analytics/stores.ts"
import { InvalidRequest, NotFound } from "../../src/errors.ts"
import { uuidv7Timestamp } from "../../src/ids.ts"
import { InferenceService } from "../../src/inference/service.ts"
import type { CompletedInference } from "../../src/inference/run.ts"
import { Metrics } from "../../src/metrics/metrics.ts"
import { inputListItems, previousMessages } from "../../src/openaiResponses/conversation.ts"
import { decodeCreateResponse } from "../../src/openaiResponses/decode.ts"
import { listPage } from "../../src/openaiResponses/listPage.ts"
import { type PreviousResponse, translateCreateResponse } from "../../src/openaiResponses/request.ts"
import { responseBody } from "../../src/openaiResponses/response.ts"
import { StoredResponses } from "../../src/openaiResponses/service.ts"
import { recordOfCompleted } from "../../src/openaiResponses/stored.ts"
import { responsesStreamEncoder } from "../../src/openaiResponses/stream.ts"
import { Configuration } from "../../src/services.ts"
import { overheadSoFar, sseResponse, traceCompleted, withWarnings } from "./inference.ts"
import { integerParam, queryParams } from "./query.ts"
import { jsonResponse, readJsonObject } from "./respond.ts"
import { withRequestTrace } from "./tracing.ts"
import type { Caller } from "../../src/workspace.ts"

const responsesRoute = "/openai/v1/responses"

/** stored responses need the analytics database: without it their routes are a 400 naming its variable */
const noStore = (field: string) =>
  new InvalidRequest({ message: `${field}: stored responses need an analytics database: set ${analyticsUrlVariable} (and leave observability on)` })

/** the response `previous_response_id` names, when the caller may see it (OpenAI's words otherwise) */
const previousResponse = (id: string | null | undefined, caller: Caller) =>
  Effect.gen(function*() {
    if (id === undefined || id === null) return undefined
    const stored = yield* StoredResponses
    if (!stored.available) return yield* noStore("previous_response_id")
    const record = yield* stored.find(id, caller)
    if (record === undefined) return yield* new InvalidRequest({ message: `previous_response_id: Previous response with id '${id}' not found.` })
    return { id: record.id, episodeId: record.episodeId, messages: previousMessages(record) } satisfies PreviousResponse
  })

export const createResponseHandler = (caller: Caller) => withRequestTrace(responsesRoute, (trace) => Effect.gen(function*() {
  const started = performance.now()
  const config = yield* Configuration
  const inference = yield* InferenceService
  const metrics = yield* Metrics
  const stored = yield* StoredResponses
  const json = yield* readJsonObject(config.gateway.maxRequestBodyBytes)
  const body = yield* Effect.fromResult(decodeCreateResponse(json))
  const previous = yield* previousResponse(body.previous_response_id, caller)
  const translated = yield* Effect.fromResult(translateCreateResponse(body, {
    isModel: (name) => config.models.has(name),
    functionType: (name) => config.functions.get(name)?.type,
    builtinTools: config.gateway.unsupportedBuiltinTools
  }, { available: stored.available, previous }, json))
  const prepared = yield* inference.prepare(translated.request, caller, translated.extras)
  const traced = traceCompleted(trace, translated.stream)
  // a stored response is readable from its answer on, before the write queue writes it
  const completed = !translated.store ? traced : (done: CompletedInference) => {
    traced?.(done)
    stored.remember(recordOfCompleted(done))
  }
  // the time of the inference id: a GET of the stored response answers the same
  const createdAt = Math.floor(uuidv7Timestamp(prepared.inferenceId) / 1000)
  const header = config.gateway.overheadHeader
  if (translated.stream) {
    const stream = yield* inference.stream(prepared, completed, (variant, _otherCalls, origin) =>
      responsesStreamEncoder(prepared, variant, translated, createdAt, origin.provider.type))
    const overhead = overheadSoFar(metrics, responsesRoute, header, started, stream.providerMs)
    return sseResponse(stream.events, yield* withWarnings(overhead, [translated.warning, droppedBuiltinTools(prepared, stream.origin)], "openai responses"))
  }
  const result = yield* inference.run(prepared, completed)
  const answer = JSON.stringify(responseBody(result, translated, createdAt))
  const overhead = overheadSoFar(metrics, responsesRoute, header, started, result.providerMs)
  return jsonResponse(answer, 200, yield* withWarnings(overhead, [translated.warning, droppedBuiltinTools(prepared, result.origin)], "openai responses"))
}))

/** the stored response of the route's `id` the caller may see, or OpenAI's 404 */
const visibleResponse = (caller: Caller) =>
  Effect.gen(function*() {
    const stored = yield* StoredResponses
    const { id = "" } = yield* HttpRouter.params
    if (!stored.available) return yield* noStore("id")
    const record = yield* stored.find(id, caller)
    if (record === undefined) return yield* new NotFound({ message: `Response with id '${id}' not found.` })
    return record
  })

/** `GET /openai/v1/responses/{id}` */
export const getResponseHandler = (caller: Caller) =>
  Effect.map(visibleResponse(caller), (record) => jsonResponse(JSON.stringify(record.response)))

/** `DELETE /openai/v1/responses/{id}`: the response is hidden from these routes, its inference kept */
export const deleteResponseHandler = (caller: Caller) =>
  Effect.gen(function*() {
    const stored = yield* StoredResponses
    const { id = "" } = yield* HttpRouter.params
    if (!stored.available) return yield* noStore("id")
    if (!(yield* stored.remove(id, caller))) return yield* new NotFound({ message: `Response with id '${id}' not found.` })
    return jsonResponse(JSON.stringify({ id, object: "response", deleted: true }))
  })

/** `GET /openai/v1/responses/{id}/input_items`: the whole conversation as stored, paged */
export const inputItemsHandler = (caller: Caller) =>
  Effect.gen(function*() {
    const record = yield* visibleResponse(caller)
    const query = yield* queryParams
    const limit = yield* integerParam(query, "limit", 20, 1, 100)
    const order = query.get("order") ?? "desc"
    if (order !== "asc" && order !== "desc") return yield* new InvalidRequest({ message: `order: "${order.slice(0, 100)}" is not "asc" or "desc"` })
    const page = listPage(inputListItems(record), { order, limit, after: query.get("after") ?? undefined })
    return jsonResponse(JSON.stringify(page))
  })
