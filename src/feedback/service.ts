/**
 * The feedback use case (spec 4.3): check the metric and the value against the configuration,
 * find the target (an inference or an episode, queued or stored), and queue the feedback for
 * storage. Accepted feedback is stored: what the write queue cannot take is refused with a
 * 503, not answered 200.
 */
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type { FeedbackRequest } from "../api/feedback.ts"
import { tagsWithApiKey } from "../api/tags.ts"
import { Buffer } from "node:buffer"
import { type GatewayError, InternalError, InvalidRequest, PayloadTooLarge, ServiceUnavailable } from "../errors.ts"
import { uuidv7, uuidv7Timestamp } from "../ids.ts"
import { emptyBatch, type StoredFeedback } from "../analytics/records.ts"
import { observabilityDisabled } from "../analytics/stores.ts"
import { InferenceStoreService } from "../storedInferences/store.ts"
import { WriteQueue } from "../analytics/writeQueue.ts"
import { Configuration } from "../services.ts"
import { WorkflowEvaluationService } from "../workflowEvaluations/service.ts"
import { checkEpisodeExists, findInferenceTarget } from "./target.ts"
import { checkDemonstration, planFeedback } from "./validate.ts"
import type { Caller } from "../workspace.ts"

/**
 * The 413 of a comment or demonstration larger than a stored row may be (`[gateway.observability]
 * max_row_bytes`): refused rather than cut, since a demonstration is what fine-tuning takes as given.
 * Booleans and floats are small: only text and JSON values are measured.
 */
const sizeProblem = (feedback: StoredFeedback, maxRowBytes: number): PayloadTooLarge | undefined => {
  if (feedback.kind !== "comment" && feedback.kind !== "demonstration") return undefined
  const bytes = Buffer.byteLength(JSON.stringify({ value: feedback.value, tags: feedback.tags }))
  return bytes <= maxRowBytes ? undefined : new PayloadTooLarge({
    message: `value: the ${feedback.kind} is ${bytes} bytes as stored (with its tags), over the ${maxRowBytes} bytes a stored row may hold ` +
      `([gateway.observability] max_row_bytes)`
  })
}

export class FeedbackService extends Context.Service<FeedbackService, {
  /** the id of the feedback of `caller`, queued for storage (a dryrun is checked, not stored) */
  readonly submit: (request: FeedbackRequest, caller: Caller) => Effect.Effect<string, GatewayError>
}>()("gateway/FeedbackService") {
  static readonly layer = Layer.effect(
    FeedbackService,
    Effect.gen(function*() {
      const config = yield* Configuration
      const { store: inferences } = yield* InferenceStoreService
      const writeQueue = yield* WriteQueue
      const { runEpisode, isRunEpisodeId } = yield* WorkflowEvaluationService
      /** a run's episode exists from its creation, before any inference of it (in its run's workspace only) */
      const isRunEpisode = (workspace: string, id: string) =>
        runEpisode === undefined || !isRunEpisodeId(id) ? Effect.succeed(false) : Effect.map(runEpisode(workspace, id), (found) => found !== undefined)

      const submit = (request: FeedbackRequest, caller: Caller) =>
        Effect.gen(function*() {
          const plan = yield* Effect.fromResult(planFeedback(request, config))
          if (inferences === undefined) return yield* observabilityDisabled()
          let value = plan.value
          if (plan.targetType === "inference") {
            const target = yield* findInferenceTarget(inferences, writeQueue, caller.workspace, plan.targetId)
            if (plan.kind === "demonstration") {
              const checked = checkDemonstration(plan.value, target, config.functions.get(target.functionName), config)
              if ("problem" in checked) return yield* new InvalidRequest({ message: checked.problem })
              value = checked.value
            }
          } else if (!(yield* isRunEpisode(caller.workspace, plan.targetId))) {
            yield* checkEpisodeExists(inferences, writeQueue, caller.workspace, plan.targetId)
          }
          const id = uuidv7(yield* Clock.currentTimeMillis)
          if (request.dryrun === true) return id
          const feedback: StoredFeedback = {
            id,
            workspace: caller.workspace,
            kind: plan.kind,
            metricName: plan.metricName,
            targetType: plan.targetType,
            targetId: plan.targetId,
            value,
            tags: tagsWithApiKey(request.tags, caller.publicId) ?? {},
            timestamp: uuidv7Timestamp(id)
          }
          const tooLarge = sizeProblem(feedback, config.gateway.observability.maxRowBytes)
          if (tooLarge !== undefined) return yield* tooLarge
          const submitted = writeQueue.submit({ batch: { ...emptyBatch, feedback: [feedback] } })
          if (submitted === "full") {
            return yield* new ServiceUnavailable({
              message: "the write queue is full (the database is down or slow): the feedback was not stored; retry later"
            })
          }
          if (submitted === "refused") {
            return yield* new InternalError({ message: "the feedback could not be encoded for the database, and was not stored" })
          }
          return id
        })

      return FeedbackService.of({ submit })
    })
  )
}
