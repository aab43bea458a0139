/**
 * The batch inference routes (spec 4.4): decode the body or the path, run the BatchService's
 * operation, answer JSON.
 */
import * as Effect from "effect/Effect"
import * as HttpRouter from "effect/http/HttpRouter"
import { BatchInferenceEnvelope, type BatchInferenceRequest, maxBatchInputs } from "../../src/api/batch.ts"
import { Input } from "../../src/api/inference.ts"
import { BatchService } from "../../src/batch/service.ts"
import { formatFieldIssues, makeDecoder } from "../../src/decode.ts"
import { InvalidRequest } from "../../src/errors.ts"
import { itemsPerTurn, letIoRun } from "../../src/eventLoop.ts"
import { Configuration } from "../../src/services.ts"
import { jsonResponse, readJsonBody } from "./respond.ts"

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

export const startBatchHandler = (apiKey: string | undefined) =>
  Effect.gen(function*() {
    const config = yield* Configuration
    const request = yield* readBatchRequest(config.gateway.maxRequestBodyBytes)
    const service = yield* BatchService
    return jsonResponse(JSON.stringify(yield* service.start(request, apiKey)))
  })

export const getBatchHandler = Effect.gen(function*() {
  const params = yield* HttpRouter.params
  const service = yield* BatchService
  return jsonResponse(JSON.stringify(yield* service.get(params.batch_id ?? "", params.inference_id)))
})
