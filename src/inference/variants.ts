/**
 * The variant loop: try the prepared variants in order, each with its retries and timeout,
 * until one succeeds. A request problem (bad input, missing credential) stops the loop at
 * once; when every variant fails, one variant's error passes through as it is, several are
 * reported together.
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type { RetryConfig, Timeouts, VariantConfig } from "../config/types.ts"
import {
  type AllProvidersFailed,
  AllVariantsFailed,
  InvalidRequest,
  RateLimited,
  RequestTimeout,
  ServiceUnavailable
} from "../errors.ts"
import type { Observability } from "../observability/stores.ts"
import type { HttpTransport } from "../services.ts"
import { isInputProblem, renderInput } from "./input.ts"
import { buildModelRequest, type CallRefused } from "./modelCall.ts"
import type { PreparedInference } from "./prepare.ts"
import type { FailedAttempt, ModelRequest } from "./types.ts"

export type VariantFailure = AllProvidersFailed | RequestTimeout

type Attempt<A> = (variant: VariantConfig, request: ModelRequest) => Effect.Effect<A, AllProvidersFailed | CallRefused, HttpTransport | Observability>

/** a refused call ends the inference: it is neither retried nor passed to the next variant */
const isRefused = (failure: unknown): failure is CallRefused =>
  failure instanceof InvalidRequest || failure instanceof RateLimited || failure instanceof ServiceUnavailable

/** Exponential backoff from 100 ms, capped by `max_delay_s`, with jitter so retries spread out. */
const retryDelay = (retry: number, maxDelayS: number): Duration.Duration =>
  Duration.millis(Math.min(maxDelayS * 1000, 100 * 2 ** retry) * (0.5 + Math.random() / 2))

const withRetries = <A>(
  attempt: () => Effect.Effect<A, AllProvidersFailed | CallRefused, HttpTransport | Observability>,
  retries: RetryConfig,
  retry = 0
): Effect.Effect<A, AllProvidersFailed | CallRefused, HttpTransport | Observability> =>
  retry >= retries.numRetries ? attempt() : Effect.catch(attempt(), (failure) =>
    isRefused(failure)
      ? Effect.fail(failure)
      : Effect.flatMap(Effect.sleep(retryDelay(retry, retries.maxDelayS)), () => withRetries(attempt, retries, retry + 1)))

const aggregate = (failures: ReadonlyArray<FailedAttempt<VariantFailure>>): VariantFailure | AllVariantsFailed =>
  failures.length === 1 ? failures[0].failure : new AllVariantsFailed({
    message: `every variant failed: ${failures.map(({ name, failure }) => `variant "${name}": ${failure.message}`).join("; ")}`,
    timedOut: failures.every(({ failure }) => failure instanceof RequestTimeout || failure.timedOut)
  })

/** what `tryVariants` succeeds with: the attempt's result, the variant and request that gave it, the variants that failed first */
export type VariantSuccess<A> = readonly [A, VariantConfig, ModelRequest, ReadonlyArray<FailedAttempt<VariantFailure>>]

export const tryVariants = <A>(
  prepared: PreparedInference,
  limitOf: (timeouts: Timeouts) => number | undefined,
  attempt: Attempt<A>
): Effect.Effect<VariantSuccess<A>, CallRefused | VariantFailure | AllVariantsFailed, HttpTransport | Observability> =>
  Effect.suspend(() => {
    const failures: Array<FailedAttempt<VariantFailure>> = []
    // recursion rather than a loop of Effect.result: this is the hot path of every inference
    const from = (index: number): Effect.Effect<VariantSuccess<A>, CallRefused | VariantFailure | AllVariantsFailed, HttpTransport | Observability> => {
      const variant = prepared.variants[index]
      const rendered = renderInput(prepared.request.input, prepared.fn, variant, prepared.templates)
      if (isInputProblem(rendered)) return Effect.fail(new InvalidRequest({ message: `${rendered.path}: ${rendered.message}` }))
      const request = buildModelRequest(prepared, variant, rendered)
      const limit = limitOf(variant.timeouts)
      const tried = withRetries(() => attempt(variant, request), variant.retries)
      const timed = limit === undefined ? tried : Effect.timeoutOrElse(tried, {
        duration: limit,
        orElse: () => Effect.fail(new RequestTimeout({ message: `variant "${variant.name}" timed out after ${limit} ms` }))
      })
      return timed.pipe(
        Effect.map((result) => [result, variant, request, failures] as const),
        Effect.catch((failure) => {
          if (isRefused(failure)) return Effect.fail(failure)
          failures.push({ name: variant.name, failure, atMs: Date.now() })
          return index + 1 < prepared.variants.length ? from(index + 1) : Effect.fail(aggregate(failures))
        })
      )
    }
    return from(0)
  })
