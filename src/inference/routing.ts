/**
 * Fallback across a model's providers: they are tried in routing order until one answers, each
 * within its own time limit. A provider's failure falls back to the next; a refused call (a rate
 * limit, a bad request, an unavailable database) ends the call at once; when none answers, the
 * model's error is made of every provider's failure. Model calls and embedding calls both route
 * through `inRoutingOrder`.
 */
import type * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import type { ProviderConfig } from "../config/types.ts"
import { AllProvidersFailed, InvalidRequest, type RateLimited, type ServiceUnavailable, worstKind } from "../errors.ts"
import { describeFailure, failureKind, ProviderFailure } from "../providers/failure.ts"
import { within } from "./timeouts.ts"
import type { FailedAttempt } from "./types.ts"

/** Failures that end an inference at once, with no fallback nor retry. */
export type CallRefused = InvalidRequest | RateLimited | ServiceUnavailable

/** the largest Retry-After among rate-limited failures, when any sent one */
export const largestRetryAfter = (
  failures: ReadonlyArray<{ readonly retryAfterS?: number | undefined }>
): number | undefined => {
  let largest: number | undefined
  for (const { retryAfterS } of failures) if (retryAfterS !== undefined && (largest === undefined || retryAfterS > largest)) largest = retryAfterS
  return largest
}

/** what a provider answers when it is overloaded: Anthropic's 529, and 503 */
const overloadedStatuses: ReadonlySet<number> = new Set([529, 503])

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
    retryAfterS: kind === "rate_limited" ? largestRetryAfter(failures.map(({ failure }) => failure)) : undefined,
    ...(kind === "upstream" && failures.every(({ failure }) => failureKind(failure) === "request" || overloadedStatuses.has(failure.status ?? 0))
      ? { overloaded: true }
      : {})
  })
}

/** What `inRoutingOrder` succeeds with: the attempt's result, the provider and call that gave it, the providers that failed first. */
export type RoutedSuccess<P, C, A> = readonly [A, P, C, ReadonlyArray<FailedAttempt<ProviderFailure>>]

/**
 * Tries `providers` in routing order until `attempt` succeeds for one, each within its own
 * limit (`limitOf`); `callFor` builds a provider's call (a provider that cannot make it fails
 * as if it was called, a request it cannot express ends at once), and when none answers
 * `allFailed` makes the error from every failure.
 */
export const inRoutingOrder = <P extends { readonly config: ProviderConfig }, C, A, R>(
  providers: ReadonlyArray<P>,
  callFor: (provider: P) => Result.Result<C, InvalidRequest | ProviderFailure>,
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
    const made = callFor(provider)
    if (Result.isFailure(made)) {
      if (made.failure instanceof InvalidRequest) return Effect.fail(made.failure)
      failures.push({ name: provider.config.name, failure: made.failure, atMs: clock.currentTimeMillisUnsafe() })
      return from(index + 1, failures)
    }
    const call = made.success
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
