/** A sleep that can be cut short: how the background flushers wait for a full batch or a timer. */
import * as Effect from "effect/Effect"

export interface Nap {
  /** sleeps for `ms`, or until `wake` is called */
  readonly nap: (ms: number) => Effect.Effect<void>
  /** ends the current nap, if any */
  readonly wake: () => void
}

export const makeNap = (): Nap => {
  let wake: (() => void) | undefined
  return {
    nap: (ms) =>
      Effect.callback<void>((resume) => {
        const timer = setTimeout(() => resume(Effect.void), ms)
        wake = () => {
          wake = undefined
          clearTimeout(timer)
          resume(Effect.void)
        }
        return Effect.sync(() => {
          clearTimeout(timer)
          wake = undefined
        })
      }),
    wake: () => wake?.()
  }
}
