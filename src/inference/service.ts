/**
 * The inference use case (spec 4.1, and the OpenAI-compatible surface's 4.2): prepare a
 * request against the configuration, run it (whole or streamed), and queue what happened for
 * storage once the answer is whole, unless it is a dryrun. The handlers only decode the wire
 * format and encode the answer.
 */
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Result from "effect/Result"
import type * as Stream from "effect/Stream"
import type { InferenceRequest } from "../api/inference.ts"
import { tagsWithApiKey } from "../api/tags.ts"
import type { VariantConfig } from "../config/types.ts"
import type { GatewayError } from "../errors.ts"
import { diclRetrieval } from "../dicl/retrieval.ts"
import { DiclExampleStoreService } from "../dicl/store.ts"
import { Experimentation } from "../experimentation/service.ts"
import { cacheEntryOf, inferenceTarget, inferenceWriteUnit } from "../storedInferences/rows.ts"
import { CacheStoreService } from "../cache/store.ts"
import { type InferenceMeasures, Metrics } from "../metrics/metrics.ts"
import { WriteQueue } from "../analytics/writeQueue.ts"
import { hasInlineFiles, hasStoredFiles, keptFiles, readStoredFiles, storedInput, unitWithoutFileData } from "../objectStorage/inputFiles.ts"
import { ObjectStorage } from "../objectStorage/storage.ts"
import type { ProviderFailure } from "../providers/failure.ts"
import { Configuration, type InferenceServices, Models } from "../services.ts"
import { sseWrites } from "../sseWriter.ts"
import { applyRun } from "../workflowEvaluations/pinning.ts"
import { WorkflowEvaluationService } from "../workflowEvaluations/service.ts"
import { makeCacheLookup } from "./cacheLookup.ts"
import { countInputTokens } from "./countTokens.ts"
import { type PreparedInference, type PrepareExtras, prepareInference } from "./prepare.ts"
import { makePricing } from "./pricing.ts"
import { type CompletedInference, type InferenceResult, runInference, type StreamItem, streamInference } from "./run.ts"
import type { ProviderChunk } from "./types.ts"
import type { ModelCallOrigin } from "./modelCall.ts"
import type { ModelCallRecord } from "./variants/answer.ts"
import type { EngineDeps } from "./variants/loop.ts"
import type { Caller } from "../workspace.ts"

/** told once an inference's answer is whole (a stream: when its last chunk is sent) */
export type OnCompleted = (completed: CompletedInference) => void

/**
 * How one API surface writes a streamed inference as Server-Sent Events, as text
 * (`/inference`'s in src/native/stream.ts, OpenAI's in src/openaiCompatible/response.ts,
 * Anthropic's in src/anthropicMessages/stream.ts): the events of what one read of the provider
 * brought are sent together, encoded once.
 */
export interface StreamEncoder {
  /** the event for a chunk (its content, and the provider's own text of it), or undefined when it carries nothing to send */
  readonly chunk: (chunk: ProviderChunk) => string | undefined
  /** the events that end a stream that finished normally */
  readonly end: (completed: CompletedInference) => string
  /** the last event of a stream that failed after it started (the status line is sent already) */
  readonly failure: (failure: ProviderFailure) => string
}

/** a streamed inference as its surface writes it */
export interface InferenceEvents {
  readonly variant: VariantConfig
  /** the model call whose stream this is */
  readonly origin: ModelCallOrigin
  /** the Server-Sent Events body, ready to send */
  readonly events: Stream.Stream<Uint8Array>
  /** milliseconds (fractional) the inference waited on providers until its stream started: what the gateway's overhead leaves out */
  readonly providerMs: number
}

/** the events of one pull of a streamed inference, as one text */
const eventsOf = (encode: StreamEncoder) => (items: ReadonlyArray<StreamItem>): string => {
  let text = ""
  for (const item of items) {
    if ("_tag" in item) text += item._tag === "Completed" ? encode.end(item.completed) : encode.failure(item.failure)
    else text += encode.chunk(item) ?? ""
  }
  return text
}

export class InferenceService extends Context.Service<InferenceService, {
  /**
   * `request` checked and prepared for `caller`, tagged with its API key (its public id, when
   * authentication is on), and as its workflow evaluation run has it when its episode is one of
   * a run's (src/workflowEvaluations/pinning.ts); the error to answer with when it cannot run.
   */
  readonly prepare: (
    request: InferenceRequest,
    caller: Caller,
    extras?: PrepareExtras
  ) => Effect.Effect<PreparedInference, GatewayError>
  /** runs `prepared` to its whole answer */
  readonly run: (prepared: PreparedInference, onCompleted?: OnCompleted) => Effect.Effect<InferenceResult, GatewayError, InferenceServices>
  /**
   * Starts a streamed inference, its events written by the encoder `makeEncoder` makes for the
   * variant that answers (with the model calls it made before its stream started: candidates,
   * an embedding); it is complete when the provider's stream ends normally.
   */
  readonly stream: (
    prepared: PreparedInference,
    onCompleted: OnCompleted | undefined,
    makeEncoder: (variant: VariantConfig, otherCalls: ReadonlyArray<ModelCallRecord>, origin: ModelCallOrigin) => StreamEncoder
  ) => Effect.Effect<InferenceEvents, GatewayError, InferenceServices>
  /**
   * How many input tokens `request` would send, asked of the provider that would answer it
   * first (`countTokens.ts`): prepared as an inference, but nothing runs, is limited or stored.
   */
  readonly countTokens: (
    request: InferenceRequest,
    caller: Caller,
    extras?: PrepareExtras
  ) => Effect.Effect<number, GatewayError, InferenceServices>
}>()("gateway/InferenceService") {
  static readonly layer = Layer.effect(
    InferenceService,
    Effect.gen(function*() {
      const config = yield* Configuration
      const models = yield* Models
      const writeQueue = yield* WriteQueue
      const clock = yield* Clock.Clock
      const metrics = yield* Metrics
      const { runEpisode, isRunEpisodeId } = yield* WorkflowEvaluationService
      const { weights } = yield* Experimentation
      const { store: diclExamples } = yield* DiclExampleStoreService
      // a cache that keeps its own entries (Valkey) is written as each inference completes
      const { store: cacheStore } = yield* CacheStoreService
      // absent without `[object_storage]`: files stay inline in the stored input, as they came
      const objectStore = Option.getOrUndefined(yield* Effect.serviceOption(ObjectStorage))
      // the files of a completed inference are written in a fiber of their own, off the answer's path
      const runInBackground = Effect.runForkWith(yield* Effect.context<never>())
      // the configuration's: its warnings (unknown costs, failed cache lookups) are bounded per configuration
      const pricing = makePricing()
      const engine: EngineDeps = {
        templates: config.templates,
        now: () => clock.currentTimeMillisUnsafe(),
        variantFailed: metrics.variantFailed,
        dicl: diclRetrieval(config, pricing, diclExamples),
        pricing,
        cacheLookup: makeCacheLookup()
      }

      /** the engine, with a dynamic variant's templates when the inference runs one */
      const engineFor = (prepared: PreparedInference): EngineDeps =>
        prepared.templates === undefined ? engine : { ...engine, templates: prepared.templates }

      /**
       * Queues a completed inference for storage once its answer is written, unless it is a
       * dryrun or storage is off; then tells `onCompleted`.
       */
      const completion = (prepared: PreparedInference, onCompleted: OnCompleted | undefined): OnCompleted => {
        const store = prepared.request.dryrun === true || !writeQueue.enabled ? undefined : storeCompleted
        const remember = cacheStore?.remember === undefined || !prepared.cache.write ? undefined : cacheStore.remember
        return (completed) => {
          metrics.inferenceCompleted(inferenceMeasures(completed))
          store?.(completed)
          if (remember !== undefined) {
            const entry = cacheEntryOf(completed)
            if (entry !== undefined) remember(entry)
          }
          onCompleted?.(completed)
        }
      }

      /** stores a stream cut short (its partial answer and the cost charged; never cached), unless a dryrun or storage is off */
      const cutShort = (prepared: PreparedInference): OnCompleted | undefined =>
        prepared.request.dryrun === true || !writeQueue.enabled ? undefined : storeCompleted

      /**
       * Queues a completed inference's rows; its input files, when object storage is
       * configured, are written first (before the row, which points at them), in the background.
       * The model calls' records then name where the files are rather than carry their bytes.
       */
      const storeCompleted = (completed: CompletedInference): void => {
        const { prepared } = completed
        const input = prepared.storedInput ?? prepared.request.input
        if (objectStore === undefined || !hasInlineFiles(input)) {
          writeQueue.submitSoon(() =>
            prepared.storedInput === undefined
              ? inferenceWriteUnit(completed)
              // files read back from object storage for the providers
              : unitWithoutFileData(inferenceWriteUnit(completed), keptFiles(prepared.request.input, prepared.storedInput))
          )
          return
        }
        const written = writeQueue.awaitInference({ id: prepared.inferenceId, target: inferenceTarget(prepared) })
        runInBackground(Effect.map(storedInput(input, objectStore), (stored) =>
          written(unitWithoutFileData(inferenceWriteUnit(completed, stored), keptFiles(prepared.request.input, stored)))))
      }

      /** the request prepared, its files kept in object storage read into its input first */
      const prepareNow = (request: InferenceRequest, caller: Caller, given: PrepareExtras | undefined) => {
        const tagged = caller.publicId === undefined ? request : { ...request, tags: tagsWithApiKey(request.tags, caller.publicId) }
        const extras: PrepareExtras = given === undefined ? { workspace: caller.workspace } : { ...given, workspace: caller.workspace }
        if (!hasStoredFiles(tagged.input)) return Effect.fromResult(prepareInference(tagged, config, models, engine.now(), extras, weights))
        return Effect.flatMap(readStoredFiles(tagged.input, objectStore), (input) =>
          Effect.map(
            Effect.fromResult(prepareInference({ ...tagged, input }, config, models, engine.now(), extras, weights)),
            (prepared): PreparedInference => ({ ...prepared, storedInput: tagged.input })
          ))
      }

      const prepare = (request: InferenceRequest, caller: Caller, extras: PrepareExtras | undefined) => {
        const episodeId = request.episode_id
        // Only an id carrying the mark of a run episode is looked up (at most once: the
        // service remembers it); any other inference prepares as it would without runs. Only a
        // run of the caller's workspace pins: another's episode id is an ordinary one.
        if (runEpisode === undefined || episodeId === undefined || episodeId === null || !isRunEpisodeId(episodeId)) {
          return prepareNow(request, caller, extras)
        }
        return Effect.flatMap(runEpisode(caller.workspace, episodeId), (found) => {
          if (found === undefined) return prepareNow(request, caller, extras)
          const applied = applyRun(request, found)
          return Result.isFailure(applied) ? Effect.fail(applied.failure) : prepareNow(applied.success, caller, extras)
        })
      }

      return InferenceService.of({
        prepare,
        run: (prepared, onCompleted) =>
          Effect.map(runInference(prepared, engineFor(prepared)), (result) => {
            completion(prepared, onCompleted)(result)
            return result
          }),
        stream: (prepared, onCompleted, makeEncoder) =>
          Effect.map(streamInference(prepared, engineFor(prepared), completion(prepared, onCompleted), cutShort(prepared)), (streamed) => ({
            variant: streamed.variant,
            origin: streamed.origin,
            events: sseWrites(streamed.items, eventsOf(makeEncoder(streamed.variant, streamed.otherCalls, streamed.origin))),
            providerMs: streamed.providerMs
          })),
        countTokens: (request, caller, extras) =>
          Effect.flatMap(prepare(request, caller, extras), (prepared) => countInputTokens(prepared, engineFor(prepared).templates))
      })
    })
  )
}

/** what /metrics counts of a completed inference */
const inferenceMeasures = (completed: CompletedInference): InferenceMeasures => ({
  functionName: completed.prepared.functionName,
  variantName: completed.variant.name,
  modelName: completed.origin.modelName,
  providerName: completed.origin.providerName,
  processingTimeMs: completed.processingTimeMs,
  ttftMs: completed.ttftMs,
  usage: completed.usage,
  cost: completed.cost,
  otherCalls: completed.otherCalls,
  cached: completed.origin.cached,
  cacheRead: completed.prepared.cache.read
})
