/**
 * The variant loop: try the prepared variants in order, each with its retries and timeout,
 * until one succeeds (what an attempt does depends on the variant's type: `run.ts`). A request problem (bad input, missing credential) stops the loop at
 * once; when every variant fails, one variant's error passes through as it is, several are
 * reported together.
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Predicate from "effect/Predicate"
import * as Random from "effect/Random"
import * as Schedule from "effect/Schedule"
import { isSamplingVariant, type RetryConfig, type Timeouts, type VariantConfig } from "../../config/types.ts"
import {
  type AllProvidersFailed,
  AllVariantsFailed,
  InvalidRequest,
  RateLimited,
  RequestTimeout,
  ServiceUnavailable,
  type UpstreamFailureKind,
  worstKind
} from "../../errors.ts"
import type { InferenceServices } from "../../services.ts"
import type { ModelCallDeps } from "../modelCall.ts"
import { type CallRefused, largestRetryAfter } from "../routing.ts"
import { within } from "../timeouts.ts"
import type { PreparedInference } from "../prepare.ts"
import type { TemplateEngine } from "../templates.ts"
import type { FailedAttempt } from "../types.ts"
import type { DiclRetrieval } from "./dicl.ts"

export type VariantFailure = AllProvidersFailed | RequestTimeout

/**
 * What the engine runs with besides the prepared request and its Effect context: what the
 * inference service computes once per configuration (compiled templates, pricing, the cache
 * lookup, DICL retrieval, the clock, failure counters), passed by hand because the streaming
 * path reads it synchronously (see docs/code-map.md, "How dependencies are passed").
 */
export interface EngineDeps extends ModelCallDeps {
  /** the configuration's compiled templates */
  readonly templates: TemplateEngine
  /** epoch ms: the clock, injected (the stream's bookkeeping is synchronous) */
  readonly now: () => number
  /** told when a variant failed, and whether the next one is tried (`/metrics`) */
  readonly variantFailed?: (fn: string, variant: string, fellBack: boolean) => void
  /** how DICL variants find their examples; undefined when there is no store to read them from */
  readonly dicl?: DiclRetrieval | undefined
}

type Attempt<A> = (variant: VariantConfig) => Effect.Effect<A, VariantFailure | CallRefused, InferenceServices>

/** a refused call ends the inference: it is neither retried nor passed to the next variant */
export const isRefused = (failure: unknown): failure is CallRefused =>
  failure instanceof InvalidRequest || failure instanceof RateLimited || failure instanceof ServiceUnavailable

/** Exponential backoff from 100 ms, capped by `max_delay_s`, with jitter (half to all of it) so retries spread out. */
const retryBackoff = (maxDelayS: number) =>
  Schedule.exponential(Duration.millis(100)).pipe(
    Schedule.modifyDelay(({ duration }) =>
      Effect.map(Random.next, (random) => Duration.millis(Math.min(maxDelayS * 1000, Duration.toMillis(duration)) * (0.5 + random / 2))))
  )

/** the request's own fault, by every provider's account: trying it again would only fail again */
const isRequestFault = (failure: unknown): boolean =>
  Predicate.isTagged(failure, "AllProvidersFailed") && (failure as AllProvidersFailed).kind === "request"

/** `attempt` (made anew for each try), tried again `numRetries` times unless it was refused or blamed on the request */
const withRetries = <A>(
  attempt: () => Effect.Effect<A, VariantFailure | CallRefused, InferenceServices>,
  retries: RetryConfig
): Effect.Effect<A, VariantFailure | CallRefused, InferenceServices> =>
  retries.numRetries <= 0 ? attempt() : Effect.retry(Effect.suspend(attempt), {
    schedule: retryBackoff(retries.maxDelayS),
    times: retries.numRetries,
    while: (failure) => !isRefused(failure) && !isRequestFault(failure)
  })

const kindOf = (failure: VariantFailure): UpstreamFailureKind => failure instanceof RequestTimeout ? "timeout" : failure.kind

/** One variant's error passes through as it is; several add up as their providers' failures do (`worstKind`). */
export const aggregate = (failures: ReadonlyArray<FailedAttempt<VariantFailure>>): VariantFailure | AllVariantsFailed => {
  if (failures.length === 1) return failures[0].failure
  const kind = worstKind(failures.map(({ failure }) => kindOf(failure)))
  return new AllVariantsFailed({
    message: `every variant failed: ${failures.map(({ name, failure }) => `variant "${name}": ${failure.message}`).join("; ")}`,
    kind,
    retryAfterS: kind === "rate_limited"
      ? largestRetryAfter(failures.map(({ failure }) => failure instanceof RequestTimeout ? {} : failure))
      : undefined,
    ...(kind === "upstream" && failures.every(({ failure }) => kindOf(failure) === "request" || (failure as { overloaded?: boolean }).overloaded === true)
      ? { overloaded: true }
      : {})
  })
}

const noRetries: RetryConfig = { numRetries: 0, maxDelayS: 0 }

/**
 * One variant's attempt with its retries (a sampling variant has none of its own: its
 * candidates and judge have theirs) within its time limit, which `limitOf` picks.
 */
export const attemptVariant = <A>(
  variant: VariantConfig,
  limitOf: (timeouts: Timeouts) => number | undefined,
  attempt: Attempt<A>
): Effect.Effect<A, VariantFailure | CallRefused, InferenceServices> => {
  const limit = limitOf(variant.timeouts)
  return within(
    withRetries(() => attempt(variant), isSamplingVariant(variant) ? noRetries : variant.retries),
    limit,
    () => new RequestTimeout({ message: `variant "${variant.name}" timed out after ${limit} ms` })
  )
}

/** what `tryVariants` succeeds with: the attempt's result, the variant that gave it, the variants that failed first */
export type VariantSuccess<A> = readonly [A, VariantConfig, ReadonlyArray<FailedAttempt<VariantFailure>>]

export const tryVariants = <A>(
  prepared: PreparedInference,
  engine: EngineDeps,
  limitOf: (timeouts: Timeouts) => number | undefined,
  attempt: Attempt<A>
): Effect.Effect<VariantSuccess<A>, CallRefused | VariantFailure | AllVariantsFailed, InferenceServices> =>
  Effect.suspend(() => {
    const failures: Array<FailedAttempt<VariantFailure>> = []
    // recursion rather than a loop of Effect.result: this is the hot path of every inference
    const from = (index: number): Effect.Effect<VariantSuccess<A>, CallRefused | VariantFailure | AllVariantsFailed, InferenceServices> => {
      const variant = prepared.variants[index]
      return attemptVariant(variant, limitOf, attempt).pipe(
        Effect.map((result) => [result, variant, failures] as const),
        Effect.catch((failure) => {
          if (isRefused(failure)) return Effect.fail(failure)
          failures.push({ name: variant.name, failure, atMs: engine.now() })
          const fallsBack = index + 1 < prepared.variants.length
          engine.variantFailed?.(prepared.functionName, variant.name, fallsBack)
          return fallsBack ? from(index + 1) : Effect.fail(aggregate(failures))
        })
      )
    }
    return from(0)
  })
