/**
 * The batch inference routes (spec 4.4): decode the body or the path, run the BatchService's
 * operation, answer JSON.
 */
import * as Effect from "effect/Effect"
import * as HttpRouter from "effect/http/HttpRouter"
import { BatchInferenceRequest } from "../../src/api/batch.ts"
import { BatchService } from "../../src/batch/service.ts"
import { makeDecoder } from "../../src/decode.ts"
import { Configuration } from "../../src/services.ts"
import { jsonResponse, readJsonBody } from "./respond.ts"

const decodeBatch = makeDecoder(BatchInferenceRequest)

export const startBatchHandler = (apiKey: string | undefined) =>
  Effect.gen(function*() {
    const config = yield* Configuration
    const request = yield* readJsonBody(decodeBatch, config.gateway.maxRequestBodyBytes)
    const service = yield* BatchService
    return jsonResponse(JSON.stringify(yield* service.start(request, apiKey)))
  })

export const getBatchHandler = Effect.gen(function*() {
  const params = yield* HttpRouter.params
  const service = yield* BatchService
  return jsonResponse(JSON.stringify(yield* service.get(params.batch_id ?? "", params.inference_id)))
})
