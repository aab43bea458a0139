/**
 * The time one inference spends waiting on providers: what the gateway's overhead leaves out
 * (`gateway-overhead-ms`, `gateway_overhead_seconds`). Each run of an inference counts its own
 * (`run.ts` makes one and puts its total on the result); its model calls time every provider
 * attempt with it, those that failed or were cut short by a time limit included, concurrent
 * ones (sampling's candidates) added up. A stream counts until its provider's first chunk.
 */
import * as Effect from "effect/Effect"

export interface ProviderTime {
  /** `effect`, its duration added */
  readonly timed: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
  /** milliseconds (fractional) counted so far */
  readonly ms: () => number
}

export const countProviderTime = (): ProviderTime => {
  let ms = 0
  return {
    timed: (effect) =>
      Effect.suspend(() => {
        const started = performance.now()
        return Effect.ensuring(effect, Effect.sync(() => {
          ms += performance.now() - started
        }))
      }),
    ms: () => ms
  }
}

/** `run` with `engine` counting a new provider time: one run of an inference, its total read from the `ProviderTime` given */
export const countingProviderTime = <E extends { readonly providerTime?: ProviderTime | undefined }, A, Err, R>(
  engine: E,
  run: (engine: E, providerTime: ProviderTime) => Effect.Effect<A, Err, R>
): Effect.Effect<A, Err, R> =>
  Effect.suspend(() => {
    const providerTime = countProviderTime()
    return run({ ...engine, providerTime }, providerTime)
  })
