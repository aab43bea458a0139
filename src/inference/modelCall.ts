/**
 * One model call for one variant, whole or streamed: the providers of the model are tried in
 * routing order (`routing.ts`) until one answers, each call planned by `providerCall.ts`
 * (credentials, edits) and made by the provider's wire client (`providers/wireProvider.ts`), within the provider's and the model's
 * time limits (`timeouts.ts`); each attempt reads the cache first (`cacheLookup.ts`), else calls
 * the provider within the rate limits (`ratelimit/limiter.ts`), its answer priced
 * (`pricing.ts`) and its time counted as the inference's time waiting on providers.
 */
import * as Cause from "effect/Cause"
import type * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import type { ModelCallConfig, ProviderConfig, Timeouts } from "../config/types.ts"
import { uuidv7 } from "../ids.ts"
import { AllProvidersFailed } from "../errors.ts"
import { type SettleStream, withinRateLimits } from "../ratelimit/limiter.ts"
import type { RequestScope } from "../ratelimit/rules.ts"
import { apiKeyTag } from "../api/tags.ts"
import { providerCall } from "./providerCall.ts"
import { requestForProvider } from "../providers/families.ts"
import { withThoughtMaker } from "./output.ts"
import type { ApiType } from "../providers/codec.ts"
import { type ChunkPull, type ProviderCall } from "../providers/types.ts"
import { failureKind, type ProviderFailure } from "../providers/failure.ts"
import { cachedResponse } from "../cache/policy.ts"
import { Metrics } from "../metrics/metrics.ts"
import { type InferenceServices, Models } from "../services.ts"
import type { CacheLookup } from "./cacheLookup.ts"
import { replayedChunks } from "./chunks.ts"
import type { ResolvedModel, RoutedProvider } from "./models.ts"
import type { PreparedInference } from "./prepare.ts"
import type { Pricing } from "./pricing.ts"
import type { ProviderTime } from "./providerTime.ts"
import { allFailed, type CallRefused, inRoutingOrder } from "./routing.ts"
import { firstTokenLimit, tightest, totalLimit, within, withinStreamTotal } from "./timeouts.ts"
import type { FailedAttempt, ModelRequest, ProviderChunk, ProviderResponse } from "./types.ts"

/** What model calls run with besides their request (the engine has it): made once per configuration, but for `providerTime`. */
export interface ModelCallDeps {
  /** prices the answers */
  readonly pricing: Pricing
  /** reads answers from the cache */
  readonly cacheLookup: CacheLookup
  /** the inference's time waiting on providers, which each provider attempt adds to; without it nothing is counted */
  readonly providerTime?: ProviderTime | undefined
}

/** Who answered a model call, and with what request: kept for storage and the cache. */
export interface ModelCallOrigin {
  readonly modelInferenceId: string
  readonly modelName: string
  readonly providerName: string
  readonly provider: ProviderConfig
  /** the API the provider answered through (`gateway_raw_response`'s `api_type`) */
  readonly apiType: ApiType
  readonly call: ProviderCall
  /** the providers of the model that failed before this one answered */
  readonly failedProviders: ReadonlyArray<FailedAttempt<ProviderFailure>>
  /** served from the cache, not by the provider */
  readonly cached: boolean
}

export interface ModelCallResult extends ModelCallOrigin {
  readonly response: ProviderResponse
  readonly responseTimeMs: number
}

export interface ModelStreamStart extends ModelCallOrigin {
  readonly rawRequest: string
  /** the first chunks, already received: the stream has started */
  readonly first: ReadonlyArray<ProviderChunk>
  readonly rest: ChunkPull
  /** releases the provider connection; run when the stream is done or abandoned */
  readonly close: Effect.Effect<void>
  readonly startedAt: number
  /** settles what the call took from the rate limits, by how the stream ended; undefined when it took nothing */
  readonly settleLimits: SettleStream | undefined
}

/** what `tryProviders` succeeds with: the attempt's result, where it came from, the providers that failed first */
type ProviderSuccess<A> = readonly [A, RoutedProvider, ResolvedModel, ProviderCall, ReadonlyArray<FailedAttempt<ProviderFailure>>]

/** who answered, from what `tryProviders` succeeded with (a new inference id for the model call) */
const originOf = ([, provider, model, call, failedProviders]: ProviderSuccess<unknown>, now: number) => ({
  modelInferenceId: uuidv7(now),
  modelName: model.config.name,
  providerName: provider.config.name,
  provider: provider.config,
  apiType: provider.client.apiType ?? "chat_completions",
  call,
  failedProviders
})

/**
 * Tries the providers of the variant's model in routing order until `attempt` succeeds for
 * one. `limitOf` picks the timeout that applies (total time, or time to first token) from
 * the provider's and the model's `timeouts`.
 */
const tryProviders = <A>(
  prepared: PreparedInference,
  variant: ModelCallConfig,
  request: ModelRequest,
  limitOf: (timeouts: Timeouts) => number | undefined,
  attempt: (provider: RoutedProvider, call: ProviderCall) => Effect.Effect<A, ProviderFailure | CallRefused, InferenceServices>,
  clock: Clock.Clock
): Effect.Effect<ProviderSuccess<A>, AllProvidersFailed | CallRefused, InferenceServices> =>
  Effect.flatMap(Models, (models) => Effect.flatMap(Metrics, (metrics) => {
    const model = models.get(variant.model)!
    const modelName = model.config.name
    const limit = limitOf(model.config.timeouts)
    // for /metrics, once the call is settled: every failure before an answer fell back, as did all but the last of a call that failed
    const told = (failures: ReadonlyArray<FailedAttempt<ProviderFailure>>, answered: boolean) => {
      for (let i = 0; i < failures.length; i++) {
        metrics.providerFailed(modelName, failures[i].name, failureKind(failures[i].failure), answered || i < failures.length - 1)
      }
    }
    return within(
      inRoutingOrder(
        model.providers,
        // another family's thought signatures are left out of the call
        (provider) => providerCall(requestForProvider(request, provider.config.type), modelName, provider.config, variant, prepared),
        (provider) => limitOf(provider.config.timeouts),
        attempt,
        (failures) => {
          told(failures, false)
          return allFailed(modelName, failures)
        },
        clock
      ),
      limit,
      () => new AllProvidersFailed({ message: `model "${modelName}" timed out after ${limit} ms`, kind: "timeout" })
    ).pipe(Effect.map(([result, provider, call, failures]) => {
      if (failures.length > 0) told(failures, true)
      return [result, provider, model, call, failures] as const
    }))
  }))

/** `effect`, its duration counted as time waiting on providers (when the engine counts it) */
const providerTimed = <A, E, R>(engine: ModelCallDeps, effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  engine.providerTime === undefined ? effect : engine.providerTime.timed(effect)

/** whom the rate limits charge for the call: the caller's API key, its workspace and the request's tags */
const scopeOf = (prepared: PreparedInference): RequestScope => {
  const tags = prepared.request.tags ?? {}
  return { publicId: tags[apiKeyTag], workspace: prepared.workspace, tags }
}

const noChunks: ReadonlyArray<ProviderChunk> = []

export const callModel = (
  prepared: PreparedInference,
  engine: ModelCallDeps,
  variant: ModelCallConfig,
  request: ModelRequest
): Effect.Effect<ModelCallResult, AllProvidersFailed | CallRefused, InferenceServices> => {
  // priced as soon as it answers: the rate limits are settled with its cost
  const priced = (provider: RoutedProvider, call: ProviderCall) =>
    Effect.flatMap(providerTimed(engine, Effect.suspend(() => provider.client.infer(call))), (response) =>
      Effect.map(engine.pricing.response(provider.config, response.rawResponse), (cost) => ({ ...response, cost })))
  const viaProvider = (provider: RoutedProvider, call: ProviderCall) =>
    withinRateLimits(scopeOf(prepared), request, provider.config.prices, () => priced(provider, call), (response) => response)
  const infer = (provider: RoutedProvider, call: ProviderCall) =>
    prepared.cache.read
      ? Effect.flatMap(engine.cacheLookup(prepared, provider, call), (hit) =>
        hit === undefined
          ? viaProvider(provider, call)
          : Effect.succeed({ ...cachedResponse(hit), cached: true, cost: engine.pricing.cached(provider.config) }))
      : viaProvider(provider, call)
  return Effect.clockWith((clock) => {
    const started = clock.currentTimeMillisUnsafe()
    return Effect.map(
      tryProviders(prepared, variant, request, totalLimit, infer, clock),
      (success) => ({
        ...originOf(success, clock.currentTimeMillisUnsafe()),
        cached: success[0].cached === true,
        response: withThoughtMaker(success[0], success[1].config.type),
        responseTimeMs: clock.currentTimeMillisUnsafe() - started
      })
    )
  })
}

/** Starts a streamed model call: succeeds once a provider has sent its first chunk. */
export const startModelStream = (
  prepared: PreparedInference,
  engine: ModelCallDeps,
  variant: ModelCallConfig,
  request: ModelRequest
): Effect.Effect<ModelStreamStart, AllProvidersFailed | CallRefused, InferenceServices> => {
  // the stream has started once its first chunks came; a failed or timed-out attempt releases its connection at once
  const openStream = (provider: RoutedProvider, call: ProviderCall, settleLimits: SettleStream | undefined) =>
    // the provider's time: until its first chunk
    providerTimed(engine, Effect.flatMap(provider.client.stream(call), (stream) => {
      const started = (first: ReadonlyArray<ProviderChunk>, rest: ChunkPull) =>
        Effect.succeed({ rawRequest: stream.rawRequest, first, rest, close: stream.close, cached: false, settleLimits })
      return Effect.matchEffect(stream.next, {
        onSuccess: (first) => started(first, stream.next),
        // a stream that ended at once has nothing more to pull
        onFailure: (error) => Cause.isDone(error) ? started(noChunks, Cause.done()) : Effect.andThen(stream.close, Effect.fail(error))
      }).pipe(Effect.onInterrupt(() => stream.close))
    }))
  // the rate limits are charged before the call and settled when the stream ends; a stream that never starts gives its tokens back
  const open = (provider: RoutedProvider, call: ProviderCall) =>
    withinRateLimits(scopeOf(prepared), request, provider.config.prices, (settleLimits) => openStream(provider, call, settleLimits), () => "at stream end")
  // a cached answer is replayed as a stream
  const openOrReplay = (provider: RoutedProvider, call: ProviderCall) =>
    prepared.cache.read
      ? Effect.flatMap(engine.cacheLookup(prepared, provider, call), (hit) =>
        hit === undefined ? open(provider, call) : Effect.succeed({
          rawRequest: hit.rawRequest,
          // cut as the stream that brought it was, when one did
          first: replayedChunks(hit.output, hit.streamChunking, { input_tokens: 0, output_tokens: 0 }, hit.finishReason),
          rest: Cause.done(),
          close: Effect.void,
          cached: true,
          settleLimits: undefined
        }))
      : open(provider, call)
  return Effect.clockWith((clock) => {
    const startedAt = clock.currentTimeMillisUnsafe()
    return Effect.map(
      tryProviders(prepared, variant, request, firstTokenLimit, openOrReplay, clock),
      (success) => {
        const [start, provider, model] = success
        const now = clock.currentTimeMillisUnsafe()
        // the provider's and the model's streaming.total_ms, both counted from the model call's start
        const limit = tightest(provider.config.timeouts.streaming?.total_ms, model.config.timeouts.streaming?.total_ms)
        const rest = withinStreamTotal(start.rest, limit === undefined ? undefined : startedAt + limit, `stream timed out after ${limit} ms`)
        return { ...start, rest, ...originOf(success, now), startedAt }
      }
    )
  })
}
