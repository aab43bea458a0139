/** A streamed body for tests that stand in for the transport: `pieces` one read each, then the end, or `failure`. */
import * as Effect from "effect/Effect"
import type { ByteReader, TransportError } from "../../src/services.ts"

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
