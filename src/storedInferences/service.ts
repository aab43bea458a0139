/**
 * Reading stored inferences back (spec 4.4): by id, or listed newest first with filters, each
 * with its feedback and model calls when asked for, within the caller's workspace (another
 * workspace's inferences are not found). Reads answer 503 while observability is off or the
 * database does not answer.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type { GetInferencesRequest, ListInferencesRequest } from "../api/inferences.ts"
import { InvalidRequest } from "../errors.ts"
import { isUuidV7 } from "../inference/prepare.ts"
import type { StoredFeedback, StoredInference, StoredModelInference } from "../analytics/records.ts"
import { observabilityDisabled, storeFailure, type StoreFailure } from "../analytics/stores.ts"
import { type FeedbackStore, FeedbackStoreService } from "../feedback/store.ts"
import { Configuration } from "../services.ts"
import { toInferenceCriteria } from "./criteria.ts"
import { type InferenceStore, InferenceStoreService } from "./store.ts"

/** Inferences found, with what the request asked to include. */
export interface FoundInferences {
  readonly inferences: ReadonlyArray<StoredInference>
  /** with `include_feedback`: the feedback on these inferences and on their episodes */
  readonly feedback?: ReadonlyArray<StoredFeedback> | undefined
  /** with `include_model_inferences`: their model calls */
  readonly modelInferences?: ReadonlyArray<StoredModelInference> | undefined
}

interface Includes {
  readonly include_feedback?: boolean | undefined
  readonly include_model_inferences?: boolean | undefined
}

export class StoredInferences extends Context.Service<StoredInferences, {
  /** the inferences of `workspace` that `ids` names, in that order (ids of none are left out) */
  readonly get: (workspace: string, request: GetInferencesRequest) => Effect.Effect<FoundInferences, InvalidRequest | StoreFailure>
  /** the newest inferences of `workspace` matching `request`, a page at a time */
  readonly list: (workspace: string, request: ListInferencesRequest) => Effect.Effect<FoundInferences, InvalidRequest | StoreFailure>
}>()("gateway/StoredInferences") {
  static readonly layer = Layer.effect(
    StoredInferences,
    Effect.gen(function*() {
      const config = yield* Configuration
      const { store: inferences } = yield* InferenceStoreService
      const { store: feedback } = yield* FeedbackStoreService
      if (inferences === undefined || feedback === undefined) {
        const off = Effect.fail(observabilityDisabled())
        return StoredInferences.of({ get: () => off, list: () => off })
      }
      const unavailable = storeFailure(inferences)
      const withIncludes = (workspace: string, found: ReadonlyArray<StoredInference>, includes: Includes) =>
        withIncluded(workspace, inferences, feedback, found, includes).pipe(Effect.mapError(unavailable))

      return StoredInferences.of({
        get: (workspace, request) =>
          Effect.gen(function*() {
            const bad = request.ids.findIndex((id) => !isUuidV7(id))
            if (bad >= 0) return yield* new InvalidRequest({ message: `ids[${bad}]: "${request.ids[bad]}" is not an inference id (a UUIDv7)` })
            const found = yield* Effect.mapError(inferences.getInferences(workspace, request.ids), unavailable)
            // in the order asked for
            const byId = new Map(found.map((inference) => [inference.id, inference]))
            return yield* withIncludes(workspace, request.ids.flatMap((id) => byId.get(id) ?? []), request)
          }),
        list: (workspace, request) =>
          Effect.gen(function*() {
            const criteria = yield* Effect.fromResult(toInferenceCriteria(request, config.metrics))
            const found = yield* Effect.mapError(
              inferences.listInferences(workspace, { ...criteria, limit: request.limit ?? 20, offset: request.offset ?? 0 }),
              unavailable
            )
            return yield* withIncludes(workspace, found, request)
          })
      })
    })
  )
}

/** `inferences` with their feedback and model calls (of `workspace`), as `includes` asks */
const withIncluded = (workspace: string, store: InferenceStore, feedbackStore: FeedbackStore, inferences: ReadonlyArray<StoredInference>, includes: Includes) =>
  Effect.gen(function*() {
    const feedback = includes.include_feedback === true && inferences.length > 0
      ? yield* feedbackStore.getFeedback(workspace, [...new Set(inferences.flatMap((inference) => [inference.id, inference.episodeId]))])
      : undefined
    const modelInferences = includes.include_model_inferences === true && inferences.length > 0
      ? yield* store.getModelInferences(workspace, inferences.map((inference) => inference.id))
      : undefined
    return { inferences, feedback, modelInferences }
  })
