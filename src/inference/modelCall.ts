/**
 * One model call for one variant: the providers of the model are tried in routing order
 * until one answers, each call built by the runner (`providers/runner.ts`: credentials, edits,
 * the wire), within the provider and model timeouts, the cache and the rate limits.
 */
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import type { ModelCallConfig, ProviderConfig, Timeouts } from "../config/types.ts"
import { uuidv7 } from "../ids.ts"
import { AllProvidersFailed, InvalidRequest, type RateLimited, type ServiceUnavailable, worstKind } from "../errors.ts"
import { RateLimiter, type RateLimits, type Reservation, reserve, settle } from "../ratelimit/limiter.ts"
import { apiKeyTag } from "../api/tags.ts"
import { providerCall } from "./providerCall.ts"
import { type ChunkPull, type ProviderCall } from "../providers/types.ts"
import { describeFailure, failureKind, ProviderFailure } from "../providers/failure.ts"
import { cachedResponse, cacheKey } from "../cache/policy.ts"
import { Metrics } from "../metrics/metrics.ts"
import type { CacheEntry } from "../observability/records.ts"
import { Observability } from "../observability/stores.ts"
import { StoreError } from "../storeError.ts"
import { type InferenceServices, Models } from "../services.ts"
import { outputToChunks } from "./chunks.ts"
import { costOfResponse, type Priced } from "./cost.ts"
import type { RenderedInput } from "./input.ts"
import type { ResolvedModel, RoutedProvider } from "./models.ts"
import type { PreparedInference } from "./prepare.ts"
import type { FailedAttempt, ModelRequest, ProviderChunk, ProviderResponse, Usage } from "./types.ts"

/** Who answered a model call, and with what request: kept for storage and the cache. */
export interface ModelCallOrigin {
  readonly modelInferenceId: string
  readonly modelName: string
  readonly providerName: string
  readonly provider: ProviderConfig
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
  /** what the call took from the rate limits, settled when the stream ends */
  readonly reservation: Reservation | undefined
}

export const buildModelRequest = (
  prepared: PreparedInference,
  variant: ModelCallConfig,
  rendered: RenderedInput
): ModelRequest => {
  let params = variant.params
  let jsonMode = variant.jsonMode
  if (prepared.params !== undefined) {
    const { json_mode, ...overrides } = prepared.params
    params = { ...params, ...overrides }
    if (json_mode !== undefined) jsonMode = json_mode
  }
  return {
    system: rendered.system,
    messages: rendered.messages,
    params,
    tools: prepared.tools,
    functionType: prepared.fn.type,
    jsonMode,
    outputSchema: prepared.outputSchema?.schema ?? prepared.responseSchema,
    providerTools: prepared.providerTools
  }
}

/** The model's error once every provider failed: its kind (hence status) says whose fault it was, as `worstKind` weighs them. */
export const allFailed = (
  modelName: string,
  failures: ReadonlyArray<FailedAttempt<ProviderFailure>>,
  what: "model" | "embedding model" = "model"
) => {
  const kind = worstKind(failures.map(({ failure }) => failureKind(failure)))
  return new AllProvidersFailed({
    message: `every provider of ${what} "${modelName}" failed: ${
      failures.map(({ name, failure }) => `provider "${name}": ${describeFailure(failure)}`).join("; ")
    }`,
    kind,
    retryAfterS: kind === "rate_limited" ? largestRetryAfter(failures.map(({ failure }) => failure)) : undefined
  })
}

/** the largest Retry-After among rate-limited failures, when any sent one */
export const largestRetryAfter = (
  failures: ReadonlyArray<{ readonly retryAfterS?: number | undefined }>
): number | undefined => {
  let largest: number | undefined
  for (const { retryAfterS } of failures) if (retryAfterS !== undefined && (largest === undefined || retryAfterS > largest)) largest = retryAfterS
  return largest
}

/** what `tryProviders` succeeds with: the attempt's result, where it came from, the providers that failed first */
type ProviderSuccess<A> = readonly [A, RoutedProvider, ResolvedModel, ProviderCall, ReadonlyArray<FailedAttempt<ProviderFailure>>]

/** who answered, from what `tryProviders` succeeded with (a new inference id for the model call) */
const originOf = ([, provider, model, call, failedProviders]: ProviderSuccess<unknown>, now: number) => ({
  modelInferenceId: uuidv7(now),
  modelName: model.config.name,
  providerName: provider.config.name,
  provider: provider.config,
  call,
  failedProviders
})

/** Failures that end an inference at once, with no fallback nor retry. */
export type CallRefused = InvalidRequest | RateLimited | ServiceUnavailable

/** within `ms` (when set), or the failure `onTimeout` makes */
export const within = <A, E, R, T>(
  effect: Effect.Effect<A, E, R>,
  ms: number | undefined,
  onTimeout: () => T
): Effect.Effect<A, E | T, R> =>
  ms === undefined ? effect : Effect.timeoutOrElse(effect, { duration: ms, orElse: () => Effect.fail(onTimeout()) })

/** What `inRoutingOrder` succeeds with: the attempt's result, the provider and call that gave it, the providers that failed first. */
export type RoutedSuccess<P, C, A> = readonly [A, P, C, ReadonlyArray<FailedAttempt<ProviderFailure>>]

/**
 * Tries `providers` in routing order until `attempt` succeeds for one, each within its own
 * limit; a provider failure falls back to the next, a refused call (rate limit, bad request)
 * ends at once, and when none answers `allFailed` makes the error from every failure. Model
 * calls and embedding calls both route through it.
 */
export const inRoutingOrder = <P extends { readonly config: ProviderConfig }, C, A, R>(
  providers: ReadonlyArray<P>,
  callFor: (provider: P) => C | InvalidRequest | ProviderFailure,
  limitOf: (provider: P) => number | undefined,
  attempt: (provider: P, call: C) => Effect.Effect<A, ProviderFailure | CallRefused, R>,
  allFailed: (failures: ReadonlyArray<FailedAttempt<ProviderFailure>>) => AllProvidersFailed,
  clock: Clock.Clock
): Effect.Effect<RoutedSuccess<P, C, A>, AllProvidersFailed | CallRefused, R> => {
  // recursion rather than a loop of Effect.result: this is the hot path of every inference
  const from = (
    index: number,
    failures: Array<FailedAttempt<ProviderFailure>>
  ): Effect.Effect<RoutedSuccess<P, C, A>, AllProvidersFailed | CallRefused, R> => {
    if (index >= providers.length) return Effect.fail(allFailed(failures))
    const provider = providers[index]
    const call = callFor(provider)
    if (call instanceof InvalidRequest) return Effect.fail(call)
    if (call instanceof ProviderFailure) {
      failures.push({ name: provider.config.name, failure: call, atMs: clock.currentTimeMillisUnsafe() })
      return from(index + 1, failures)
    }
    const limit = limitOf(provider)
    return within(
      attempt(provider, call),
      limit,
      () => new ProviderFailure({ message: `timed out after ${limit} ms`, timedOut: true })
    ).pipe(
      Effect.map((result) => [result, provider, call, failures] as const),
      Effect.catch((failure) => {
        // a refused call (rate limit, bad request) ends the inference: only provider failures fall back
        if (!(failure instanceof ProviderFailure)) return Effect.fail(failure)
        failures.push({ name: provider.config.name, failure, atMs: clock.currentTimeMillisUnsafe() })
        return from(index + 1, failures)
      })
    )
  }
  // each run of the returned effect starts with no failures
  return Effect.suspend(() => from(0, []))
}

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
        (provider) => providerCall(request, modelName, provider.config, variant, prepared),
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

/** `effect`, its duration added to the request's time spent waiting on providers */
const providerTimed = <A, E, R>(prepared: PreparedInference, effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> => {
  const time = prepared.providerTime
  return time === undefined ? effect : Effect.suspend(() => {
    const started = performance.now()
    return Effect.ensuring(effect, Effect.sync(() => {
      time.ms += performance.now() - started
    }))
  })
}

const totalLimit = (timeouts: Timeouts) => timeouts.non_streaming?.total_ms
const firstTokenLimit = (timeouts: Timeouts) => timeouts.streaming?.ttft_ms

/** the tightest of `limits` (ms), when any is set */
const tightest = (...limits: ReadonlyArray<number | undefined>): number | undefined => {
  let tight: number | undefined
  for (const limit of limits) if (limit !== undefined && (tight === undefined || limit < tight)) tight = limit
  return tight
}

/**
 * `rest` of a stream that may not go on past `deadline` (clock ms: a `streaming.total_ms` from
 * when it counts): a pull past it fails with `message`, as a provider failing midway would.
 * Without a limit `rest` is left as it is (no timer, nothing per pull).
 */
export const withinStreamTotal = (rest: ChunkPull, deadline: number | undefined, message: string): ChunkPull => {
  if (deadline === undefined) return rest
  const timedOut = Effect.fail(new ProviderFailure({ message, timedOut: true }))
  return Effect.clockWith((clock) => {
    const left = deadline - clock.currentTimeMillisUnsafe()
    return left <= 0 ? timedOut : Effect.timeoutOrElse(rest, { duration: left, orElse: () => timedOut })
  })
}

/**
 * The cached answer for this call, when the request reads the cache and one exists; never fails.
 * A lookup slower than `lookupTimeoutMs` (a locked table, a slow database) is abandoned, which
 * cancels the query, and the provider is called instead.
 */
const fromCache = (
  prepared: PreparedInference,
  provider: RoutedProvider,
  call: ProviderCall
): Effect.Effect<CacheEntry | undefined, never, Observability> =>
  Effect.flatMap(Observability, ({ stores }) => {
    if (stores === undefined) return Effect.succeed(undefined)
    const { maxAgeS, scope, lookupTimeoutMs } = prepared.cache
    return abandonAfter(stores.cache.lookup(cacheKey(provider.config, call, scope), maxAgeS), lookupTimeoutMs).pipe(
      Effect.catch((error) => Effect.as(cacheLookupFailed(error.message), undefined))
    )
  })

const noChunks: ReadonlyArray<ProviderChunk> = []

/**
 * `lookup`, given up after `ms`: its fiber is interrupted (which cancels the query) but not
 * waited for, so a database that does not even answer the cancellation holds no request.
 */
export const abandonAfter = <A>(lookup: Effect.Effect<A, StoreError>, ms: number | undefined): Effect.Effect<A, StoreError> =>
  ms === undefined ? lookup : Effect.flatMap(Effect.forkDetach(lookup), (fiber) => {
    const abandon = Effect.sync(() => fiber.interruptUnsafe())
    return Effect.timeoutOrElse(Fiber.join(fiber), {
      duration: ms,
      orElse: () => Effect.andThen(abandon, Effect.fail(new StoreError({ message: `no answer within ${ms} ms` })))
    }).pipe(Effect.onInterrupt(() => abandon))
  })

/** at most one warning per 10 s: a slow or failing database would otherwise log on every request */
let lastLookupWarningAt = 0
let lookupFailuresUnlogged = 0
const cacheLookupFailed = (message: string): Effect.Effect<void> =>
  Effect.clockWith((clock) => {
    const now = clock.currentTimeMillisUnsafe()
    if (now - lastLookupWarningAt < 10_000) {
      lookupFailuresUnlogged++
      return Effect.void
    }
    const also = lookupFailuresUnlogged === 0 ? "" : ` (and ${lookupFailuresUnlogged} more since the last warning)`
    lastLookupWarningAt = now
    lookupFailuresUnlogged = 0
    return Effect.logWarning(`cache lookup failed, calling the provider: ${message}${also}`)
  })

/** at most one warning per 10 s: a provider that stopped reporting what a rule needs would otherwise log on every call */
let lastUnpricedWarningAt = 0
let unpricedUnlogged = 0
/** Logs (bounded) that a call has no cost because a required pointer found nothing. */
export const warnUnpriced = (providerName: string, priced: Priced): Effect.Effect<void> =>
  priced.missing.length === 0 ? Effect.void : Effect.clockWith((clock) => {
    const now = clock.currentTimeMillisUnsafe()
    if (now - lastUnpricedWarningAt < 10_000) {
      unpricedUnlogged++
      return Effect.void
    }
    const also = unpricedUnlogged === 0 ? "" : ` (and ${unpricedUnlogged} more calls since the last warning)`
    lastUnpricedWarningAt = now
    unpricedUnlogged = 0
    return Effect.logWarning(
      `provider "${providerName}": the required cost pointer(s) ${priced.missing.join(", ")} found no number in the raw response, so the call's cost is unknown${also}`
    )
  })

/** The cost of an answer `provider` gave (unknown without `cost` rules), warning (bounded) when a required pointer found nothing. */
export const priceOf = (provider: ProviderConfig, rawResponse: string): Effect.Effect<number | undefined> => {
  const price = costOfResponse(provider.cost, rawResponse)
  return Effect.as(warnUnpriced(provider.name, price), price.cost)
}

/** A cached answer cost nothing: 0 for a provider with `cost` rules, unknown for one without. */
export const cachedCost = (provider: ProviderConfig): number | undefined =>
  provider.cost !== undefined && provider.cost.length > 0 ? 0 : undefined

/** Charges the rate limits that apply to this call, when any are configured. */
const reserveFor = (limits: RateLimits, prepared: PreparedInference, request: ModelRequest) => {
  const tags = prepared.request.tags ?? {}
  return reserve(limits, { publicId: tags[apiKeyTag], tags }, request)
}

/** `call` within the rate limits: charged before, settled (in the background) after, whatever the outcome */
const limited = <A>(
  prepared: PreparedInference,
  request: ModelRequest,
  call: Effect.Effect<A, ProviderFailure | CallRefused, InferenceServices>,
  usageOf: (result: A) => Usage | undefined,
  costOf: (result: A) => number | undefined
): Effect.Effect<A, ProviderFailure | CallRefused, InferenceServices> =>
  Effect.flatMap(RateLimiter, ({ limits }) =>
    limits === undefined ? call : Effect.flatMap(reserveFor(limits, prepared, request), (reservation) =>
      call.pipe(
        Effect.onExit((exit) =>
          Effect.forkDetach(
            exit._tag === "Success" ? settle(reservation, usageOf(exit.value), costOf(exit.value)) : settle(reservation, undefined)
          )
        )
      )))

export const callModel = (
  prepared: PreparedInference,
  variant: ModelCallConfig,
  request: ModelRequest
): Effect.Effect<ModelCallResult, AllProvidersFailed | CallRefused, InferenceServices> => {
  // priced as soon as it answers: the rate limits are settled with its cost
  const priced = (provider: RoutedProvider, call: ProviderCall) =>
    Effect.flatMap(providerTimed(prepared, Effect.suspend(() => provider.client.infer(call))), (response) =>
      Effect.map(priceOf(provider.config, response.rawResponse), (cost) => ({ ...response, cost })))
  const viaProvider = (provider: RoutedProvider, call: ProviderCall) =>
    limited(prepared, request, priced(provider, call), (response) => response.usage, (response) => response.cost)
  const infer = (provider: RoutedProvider, call: ProviderCall) =>
    prepared.cache.read
      ? Effect.flatMap(fromCache(prepared, provider, call), (hit) =>
        hit === undefined
          ? viaProvider(provider, call)
          : Effect.succeed({ ...cachedResponse(hit), cached: true, cost: cachedCost(provider.config) }))
      : viaProvider(provider, call)
  return Effect.clockWith((clock) => {
    const started = clock.currentTimeMillisUnsafe()
    return Effect.map(
      tryProviders(prepared, variant, request, totalLimit, infer, clock),
      (success) => ({
        ...originOf(success, clock.currentTimeMillisUnsafe()),
        cached: success[0].cached === true,
        response: success[0],
        responseTimeMs: clock.currentTimeMillisUnsafe() - started
      })
    )
  })
}

/** Starts a streamed model call: succeeds once a provider has sent its first chunk. */
export const startModelStream = (
  prepared: PreparedInference,
  variant: ModelCallConfig,
  request: ModelRequest
): Effect.Effect<ModelStreamStart, AllProvidersFailed | CallRefused, InferenceServices> => {
  // the stream has started once its first chunks came; a failed or timed-out attempt releases its connection at once
  const openStream = (provider: RoutedProvider, call: ProviderCall) =>
    // the provider's time: until its first chunk
    providerTimed(prepared, Effect.flatMap(provider.client.stream(call), (stream) => {
      const started = (first: ReadonlyArray<ProviderChunk>, rest: ChunkPull) =>
        Effect.succeed({ rawRequest: stream.rawRequest, first, rest, close: stream.close, cached: false })
      return Effect.matchEffect(stream.next, {
        onSuccess: (first) => started(first, stream.next),
        // a stream that ended at once has nothing more to pull
        onFailure: (error) => Cause.isDone(error) ? started(noChunks, Cause.done()) : Effect.andThen(stream.close, Effect.fail(error))
      }).pipe(Effect.onInterrupt(() => stream.close))
    }))
  // the rate limits are charged before the call; a stream that never starts gives its tokens back
  const open = (provider: RoutedProvider, call: ProviderCall) =>
    Effect.flatMap(RateLimiter, ({ limits }) =>
      limits === undefined
        ? Effect.map(openStream(provider, call), (opened) => ({ ...opened, reservation: undefined }))
        : Effect.flatMap(reserveFor(limits, prepared, request), (reservation) =>
          openStream(provider, call).pipe(
            Effect.map((opened) => ({ ...opened, reservation })),
            Effect.onError(() => Effect.forkDetach(settle(reservation, undefined)))
          )))
  // a cached answer is replayed as a stream
  const openOrReplay = (provider: RoutedProvider, call: ProviderCall) =>
    prepared.cache.read
      ? Effect.flatMap(fromCache(prepared, provider, call), (hit) =>
        hit === undefined ? open(provider, call) : Effect.succeed({
          rawRequest: hit.rawRequest,
          first: outputToChunks(hit.output, { input_tokens: 0, output_tokens: 0 }, hit.finishReason),
          rest: Cause.done(),
          close: Effect.void,
          cached: true,
          reservation: undefined
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
