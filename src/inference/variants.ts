/**
 * The variant loop: try the prepared variants in order, each with its retries and timeout,
 * until one succeeds. A request problem (bad input, missing credential) stops the loop at
 * once; when every variant fails, one variant's error passes through as it is, several are
 * reported together.
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import type { Timeouts, VariantConfig } from "../config/types.ts"
import { AllProvidersFailed, AllVariantsFailed, InvalidRequest, RequestTimeout } from "../errors.ts"
import { Gateway, type HttpTransport } from "../services.ts"
import { isInputProblem, renderInput } from "./input.ts"
import { buildModelRequest } from "./modelCall.ts"
import type { PreparedInference } from "./prepare.ts"
import type { ModelRequest } from "./types.ts"

export type VariantFailure = AllProvidersFailed | RequestTimeout

/** Exponential backoff from 100 ms, capped by `max_delay_s`, with jitter so retries spread out. */
const retryDelay = (attempt: number, maxDelayS: number): Duration.Duration =>
  Duration.millis(Math.min(maxDelayS * 1000, 100 * 2 ** attempt) * (0.5 + Math.random() / 2))

export const tryVariants = <A>(
  prepared: PreparedInference,
  limitOf: (timeouts: Timeouts) => number | undefined,
  attempt: (variant: VariantConfig, request: ModelRequest) => Effect.Effect<A, AllProvidersFailed | InvalidRequest, Gateway | HttpTransport>
): Effect.Effect<readonly [A, VariantConfig, ModelRequest], InvalidRequest | VariantFailure | AllVariantsFailed, Gateway | HttpTransport> =>
  Effect.gen(function*() {
    const engine = (yield* Gateway).config.templates
    const failures: Array<readonly [string, VariantFailure]> = []
    for (const variant of prepared.variants) {
      const rendered = renderInput(prepared.request.input, prepared.fn, variant, engine)
      if (isInputProblem(rendered)) return yield* new InvalidRequest({ message: `${rendered.path}: ${rendered.message}` })
      const request = buildModelRequest(prepared, variant, rendered)

      const withRetries = Effect.gen(function*() {
        for (let retry = 0;; retry++) {
          const result = yield* Effect.result(attempt(variant, request))
          if (Result.isSuccess(result)) return result.success
          if (result.failure instanceof InvalidRequest || retry >= variant.retries.numRetries) return yield* result.failure
          yield* Effect.sleep(retryDelay(retry, variant.retries.maxDelayS))
        }
      })
      const limit = limitOf(variant.timeouts)
      const result = yield* Effect.result(limit === undefined ? withRetries : Effect.timeoutOrElse(withRetries, {
        duration: limit,
        orElse: () => Effect.fail(new RequestTimeout({ message: `variant "${variant.name}" timed out after ${limit} ms` }))
      }))
      if (Result.isSuccess(result)) return [result.success, variant, request] as const
      if (result.failure instanceof InvalidRequest) return yield* result.failure
      failures.push([variant.name, result.failure])
    }
    if (failures.length === 1) return yield* failures[0][1]
    return yield* new AllVariantsFailed({
      message: `every variant failed: ${failures.map(([name, failure]) => `variant "${name}": ${failure.message}`).join("; ")}`,
      timedOut: failures.every(([, failure]) => failure instanceof RequestTimeout || failure.timedOut)
    })
  })
