/**
 * Stream steps that work array by array. A pull of an Effect stream gives a non-empty array
 * (on a provider's stream: what one network read brought), and the gateway's streaming path
 * does all its per-event work inside these steps, in plain loops: the per-element
 * alternatives (`flattenIterable`: a stream per element; `mapEffect`: an effect per element)
 * cost more than the work itself, and every array that reaches the response is one write.
 */
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import type * as Arr from "effect/Array"
import * as Stream from "effect/Stream"

/**
 * Each element becomes any number of outputs: `expand` pushes them onto `out`. An array whose
 * elements give none is skipped (the next one is pulled).
 */
export const expandBatches = <A, B, E, R>(
  self: Stream.Stream<A, E, R>,
  expand: (element: A, out: Array<B>) => void
): Stream.Stream<B, E, R> =>
  Stream.transformPull(self, (pull) => {
    function loop(batch: Arr.NonEmptyReadonlyArray<A>): Effect.Effect<Arr.NonEmptyReadonlyArray<B>, any, any> {
      const out: Array<B> = []
      for (let i = 0; i < batch.length; i++) expand(batch[i], out)
      return out.length > 0 ? Effect.succeed(out as unknown as Arr.NonEmptyReadonlyArray<B>) : Effect.flatMap(pull, loop)
    }
    return Effect.succeed(Effect.flatMap(pull, loop))
  }) as Stream.Stream<B, E, R>

/**
 * As `expandBatches`, where an element may fail the stream instead: `expand` returns the failure.
 * What the elements before it gave is still emitted, then the stream fails, as an element-by-
 * element map would.
 */
export const expandBatchesOrFail = <A, B, E, E2, R>(
  self: Stream.Stream<A, E, R>,
  expand: (element: A, out: Array<B>) => E2 | undefined
): Stream.Stream<B, E | E2, R> =>
  Stream.transformPull(self, (pull) => {
    let failure: E2 | undefined
    const step = Effect.suspend(() => failure !== undefined ? Effect.fail(failure) : Effect.flatMap(pull, loop))
    function loop(batch: Arr.NonEmptyReadonlyArray<A>): Effect.Effect<Arr.NonEmptyReadonlyArray<B>, any, any> {
      const out: Array<B> = []
      for (let i = 0; i < batch.length; i++) {
        const failed = expand(batch[i], out)
        if (failed !== undefined) {
          failure = failed
          break
        }
      }
      if (out.length > 0) return Effect.succeed(out as unknown as Arr.NonEmptyReadonlyArray<B>)
      return failure !== undefined ? Effect.fail(failure) : Effect.flatMap(pull, loop)
    }
    return Effect.succeed(step)
  }) as Stream.Stream<B, E | E2, R>

/**
 * A pull over batches known in advance (a cached or made-up answer), then `failure` if given,
 * else the end.
 */
export const pullOf = <A, E>(
  batches: ReadonlyArray<ReadonlyArray<A>>,
  failure?: E
): Effect.Effect<Arr.NonEmptyReadonlyArray<A>, E | Cause.Done> => {
  let next = 0
  return Effect.suspend((): Effect.Effect<Arr.NonEmptyReadonlyArray<A>, E | Cause.Done> => {
    while (next < batches.length) {
      const batch = batches[next++]
      if (batch.length > 0) return Effect.succeed(batch as Arr.NonEmptyReadonlyArray<A>)
    }
    return failure === undefined ? Cause.done() : Effect.fail(failure)
  })
}
