/**
 * Pulls: the streaming path's unit. A provider's stream is pulled one non-empty array at a
 * time (what one network read brought, src/providers/streamedAnswer.ts), and the response is one pull
 * over it (src/inference/run.ts, written by src/sseWriter.ts), with the per-event work in plain
 * loops inside: a chain of Effect `Stream` operators per event (`flattenIterable`: a stream per
 * element; `mapEffect`: an effect per element) cost more than the work itself. Each array the
 * response pulls is one write.
 */
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import type * as Arr from "effect/Array"

/**
 * A pull over batches known in advance (the dummy provider's made-up answers), then `failure`
 * if given, else the end.
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
