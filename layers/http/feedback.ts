/** POST /feedback (spec 4.3): decode, submit through the FeedbackService, answer with the feedback's id. */
import * as Effect from "effect/Effect"
import { FeedbackRequest } from "../../src/api/feedback.ts"
import { checkClientTags } from "../../src/api/tags.ts"
import { makeDecoder } from "../../src/decode.ts"
import { FeedbackService } from "../../src/feedback/service.ts"
import { Configuration } from "../../src/services.ts"
import { jsonResponse, readJsonBody } from "./respond.ts"
import type { Caller } from "../../src/workspace.ts"

const decodeFeedbackRequest = makeDecoder(FeedbackRequest)

export const feedbackHandler = (caller: Caller) => Effect.gen(function*() {
  const config = yield* Configuration
  const feedback = yield* FeedbackService
  const request = yield* readJsonBody(decodeFeedbackRequest, config.gateway.maxRequestBodyBytes)
  const reserved = checkClientTags(request.tags, "tags")
  if (reserved !== undefined) return yield* reserved
  const id = yield* feedback.submit(request, caller)
  return jsonResponse(JSON.stringify({ feedback_id: id }))
})
