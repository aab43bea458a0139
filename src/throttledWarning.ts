/**
 * A warning that could come with every request (a slow database, a provider that stopped
 * reporting what a rule reads), logged at most once per interval: the next one tells how many
 * were held back meanwhile. Each holder makes its own (per configuration or per process) and
 * keeps it; there is no module state.
 */
import * as Effect from "effect/Effect"

export interface ThrottledWarning {
  /** logs `message(heldBack)` unless a warning was logged less than the interval ago (then it only counts) */
  readonly warn: (message: (heldBack: number) => string) => Effect.Effect<void>
}

export const throttledWarning = (intervalMs: number): ThrottledWarning => {
  let lastAt = 0
  let heldBack = 0
  return {
    warn: (message) =>
      Effect.clockWith((clock) => {
        const now = clock.currentTimeMillisUnsafe()
        if (now - lastAt < intervalMs) {
          heldBack++
          return Effect.void
        }
        const held = heldBack
        lastAt = now
        heldBack = 0
        return Effect.logWarning(message(held))
      })
  }
}
