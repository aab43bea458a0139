/** POST /feedback (spec 4.3) */
import * as Effect from "effect/Effect"
import { FeedbackRequest } from "../../src/api/feedback.ts"
import { checkClientTags, tagsWithApiKey } from "../../src/api/tags.ts"
import { makeDecoder } from "../../src/decode.ts"
import { InternalError, InvalidRequest, isGatewayError, ServiceUnavailable } from "../../src/errors.ts"
import { checkEpisodeExists, findInferenceTarget, requireStore } from "../../src/feedback/target.ts"
import { checkDemonstration, planFeedback } from "../../src/feedback/validate.ts"
import { uuidv7, uuidv7Timestamp } from "../../src/ids.ts"
import { emptyBatch } from "../../src/observability/records.ts"
import { WriteQueue } from "../../src/observability/writeQueue.ts"
import { Gateway } from "../../src/services.ts"
import { jsonResponse, readJsonBody } from "./respond.ts"

const decodeFeedbackRequest = makeDecoder(FeedbackRequest)

export const feedbackHandler = (apiKey: string | undefined) => Effect.gen(function*() {
  const { config } = yield* Gateway
  const writeQueue = yield* WriteQueue
  const request = yield* readJsonBody(decodeFeedbackRequest, config.gateway.maxRequestBodyBytes)
  const reserved = checkClientTags(request.tags, "tags")
  if (reserved !== undefined) return yield* reserved
  const plan = planFeedback(request, config)
  if (isGatewayError(plan)) return yield* plan
  yield* requireStore
  let value = plan.value
  if (plan.targetType === "inference") {
    const target = yield* findInferenceTarget(plan.targetId)
    if (plan.kind === "demonstration") {
      const checked = checkDemonstration(plan.value, target, config.functions.get(target.functionName), config)
      if ("problem" in checked) return yield* new InvalidRequest({ message: checked.problem })
      value = checked.value
    }
  } else {
    yield* checkEpisodeExists(plan.targetId)
  }
  const id = uuidv7()
  if (request.dryrun !== true) {
    const feedback = {
      id,
      kind: plan.kind,
      metricName: plan.metricName,
      targetType: plan.targetType,
      targetId: plan.targetId,
      value,
      tags: tagsWithApiKey(request.tags, apiKey) ?? {},
      timestamp: uuidv7Timestamp(id)
    }
    // accepted feedback is stored: what the queue cannot take is refused, not answered 200
    const submitted = writeQueue.submit({ batch: { ...emptyBatch, feedback: [feedback] } })
    if (submitted === "full") {
      return yield* new ServiceUnavailable({
        message: "the write queue is full (the database is down or slow): the feedback was not stored; retry later"
      })
    }
    if (submitted === "refused") {
      return yield* new InternalError({ message: "the feedback could not be encoded for the database, and was not stored" })
    }
  }
  return jsonResponse(JSON.stringify({ feedback_id: id }))
})
