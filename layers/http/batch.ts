/**
 * The batch inference routes (spec 4.4): decode the body or the path (and a read's paging
 * query), run the BatchService's operation, answer JSON: a completed batch's whole list is
 * written a page at a time.
 */
import * as Effect from "effect/Effect"
import * as HttpRouter from "effect/http/HttpRouter"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as Stream from "effect/Stream"
import { BatchInferenceEnvelope, type BatchInferenceRequest, maxBatchInputs, maxBatchPage } from "../../src/api/batch.ts"
import { Input } from "../../src/api/inference.ts"
import { BatchService } from "../../src/batch/service.ts"
import { formatFieldIssues, makeDecoder } from "../../src/decode.ts"
import { type GatewayError, InvalidRequest } from "../../src/errors.ts"
import { itemsPerTurn, letIoRun } from "../../src/eventLoop.ts"
import { Configuration } from "../../src/services.ts"
import { integerParam, queryParams } from "./query.ts"
import { jsonResponse, readJsonBody } from "./respond.ts"
import type { Caller } from "../../src/workspace.ts"

const decodeEnvelope = makeDecoder(BatchInferenceEnvelope)
const decodeInput = makeDecoder(Input)

/** the body decoded: the batch's fields at once, its inputs a slice at a time between turns of the event loop */
const readBatchRequest = (maxBytes: number) =>
  Effect.gen(function*() {
    const envelope = yield* readJsonBody(decodeEnvelope, maxBytes)
    // checked before the inputs are, so that a huge list is refused without decoding it
    if (envelope.inputs.length > maxBatchInputs) {
      return yield* Effect.fail(new InvalidRequest({ message: `inputs: ${envelope.inputs.length} inputs; a batch takes at most ${maxBatchInputs}` }))
    }
    const inputs: Array<BatchInferenceRequest["inputs"][number]> = []
    for (let index = 0; index < envelope.inputs.length; index++) {
      if (index > 0 && index % itemsPerTurn === 0) yield* letIoRun
      const decoded = decodeInput(envelope.inputs[index])
      if (!decoded.ok) return yield* Effect.fail(new InvalidRequest({ message: formatFieldIssues(decoded.issues, ["inputs", index]) }))
      inputs.push(decoded.value)
    }
    return { ...envelope, inputs } as BatchInferenceRequest
  })

export const startBatchHandler = (caller: Caller) =>
  Effect.gen(function*() {
    const config = yield* Configuration
    const request = yield* readBatchRequest(config.gateway.maxRequestBodyBytes)
    const service = yield* BatchService
    return jsonResponse(JSON.stringify(yield* service.start(request, caller)))
  })

const textEncoder = new TextEncoder()

/**
 * A completed batch's whole answer, written as its pages come: `{"status":"completed",
 * "batch_id":...,"inferences":[` then each page's inferences, then `]}`: the same JSON as one
 * body, never built whole (50,000 inferences are tens of MB).
 */
const completedJson = (batchId: string, pages: Stream.Stream<ReadonlyArray<unknown>, GatewayError>) => {
  let first = true
  const items = Stream.map(pages, (page) => {
    let text = ""
    for (const item of page) {
      text += first ? JSON.stringify(item) : `,${JSON.stringify(item)}`
      first = false
    }
    return textEncoder.encode(text)
  })
  return Stream.concat(
    Stream.concat(Stream.succeed(textEncoder.encode(`{"status":"completed","batch_id":${JSON.stringify(batchId)},"inferences":[`)), items),
    Stream.succeed(textEncoder.encode("]}"))
  )
}

/** `GET /batch_inference/{batch_id}` (with `limit` and `after` in its query) and `.../inference/{inference_id}`: the caller's workspace's batches only */
export const getBatchHandler = (caller: Caller) => Effect.gen(function*() {
  const params = yield* HttpRouter.params
  const service = yield* BatchService
  const inferenceId = params.inference_id
  // paging is the whole batch's: the route of one inference has none
  const query = inferenceId === undefined ? yield* queryParams : new URLSearchParams()
  const limit = query.has("limit") ? yield* integerParam(query, "limit", maxBatchPage, 1, maxBatchPage) : undefined
  const reading = yield* service.get(caller, params.batch_id ?? "", { inferenceId, limit, after: query.get("after") ?? undefined })
  if (reading._tag === "body") return jsonResponse(JSON.stringify(reading.body))
  return HttpServerResponse.stream(completedJson(reading.batchId, reading.pages), { contentType: "application/json" })
})
