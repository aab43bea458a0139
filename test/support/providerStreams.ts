/** Provider streams in tests: a streamed body standing in for the transport's, and reading a started stream. */
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import type { ProviderChunk } from "../../src/inference/types.ts"
import type { ProviderFailure, ProviderStream } from "../../src/providers/types.ts"
import type { ByteReader, TransportError } from "../../src/services.ts"

/** A streamed body standing in for the transport's: `pieces` one read each, then the end, or `failure`. */
export const byteReaderOf = (pieces: ReadonlyArray<Uint8Array>, failure?: TransportError): ByteReader & { readonly closed: () => boolean } => {
  let next = 0
  let closed = false
  return {
    read: Effect.suspend(() => {
      if (next < pieces.length) return Effect.succeed(pieces[next++])
      return failure === undefined ? Effect.succeed(undefined) : Effect.fail(failure)
    }),
    close: Effect.sync(() => {
      closed = true
    }),
    closed: () => closed
  }
}

/** Runs `f` on every chunk of a started provider stream, to its end or failure, then closes it. */
export const forEachChunk = (
  started: ProviderStream,
  f: (chunk: ProviderChunk) => Effect.Effect<void>
): Effect.Effect<void, ProviderFailure> => {
  const loop: Effect.Effect<void, ProviderFailure> = Effect.matchEffect(started.next, {
    onSuccess: (chunks) => Effect.andThen(Effect.forEach(chunks, f, { discard: true }), loop),
    onFailure: (error) => Cause.isDone(error) ? Effect.void : Effect.fail(error)
  })
  return Effect.ensuring(loop, started.close)
}
