/**
 * The time limits of model calls: a whole answer's (`non_streaming.total_ms`), a stream's first
 * chunk's (`streaming.ttft_ms`) and whole stream's (`streaming.total_ms`), from a provider's, a
 * model's or a variant's `timeouts`. Past a limit the call fails as the caller says (a provider
 * failure to fall back from, a timed-out model or variant).
 */
import * as Effect from "effect/Effect"
import type { Timeouts } from "../config/types.ts"
import { ProviderFailure } from "../providers/failure.ts"
import type { ChunkPull } from "../providers/types.ts"

/** within `ms` (when set), or the failure `onTimeout` makes */
export const within = <A, E, R, T>(
  effect: Effect.Effect<A, E, R>,
  ms: number | undefined,
  onTimeout: () => T
): Effect.Effect<A, E | T, R> =>
  ms === undefined ? effect : Effect.timeoutOrElse(effect, { duration: ms, orElse: () => Effect.fail(onTimeout()) })

/** the limit of a whole answer */
export const totalLimit = (timeouts: Timeouts) => timeouts.non_streaming?.total_ms
/** the limit of a stream's first chunk */
export const firstTokenLimit = (timeouts: Timeouts) => timeouts.streaming?.ttft_ms

/** the tightest of `limits` (ms), when any is set */
export const tightest = (...limits: ReadonlyArray<number | undefined>): number | undefined => {
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
