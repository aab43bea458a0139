/** Provider streams in tests: a streamed body standing in for the transport's, and reading a started stream. */
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import type { ProviderChunk } from "../../src/inference/types.ts"
import type { ProviderStream } from "../../src/providers/types.ts"
import type { ProviderFailure } from "../../src/providers/failure.ts"
import type { ByteReader, HttpCall, HttpReply, HttpStreamReply, TransportError } from "../../src/transport.ts"

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

/**
 * The transport's `download` of a test transport that answers whole bodies (`post`): a 2xx body
 * handed over in reads of at most `readBytes` (a line cut across reads), any other status as text.
 */
export const downloadOf = (post: (call: HttpCall) => Effect.Effect<HttpReply, TransportError>, readBytes = 7) => (call: HttpCall) =>
  Effect.map(post(call), (reply): HttpStreamReply => {
    if (reply.status < 200 || reply.status >= 300) return { ok: false, status: reply.status, text: reply.text, retryAfter: reply.retryAfter }
    const bytes = new TextEncoder().encode(reply.text)
    const pieces: Array<Uint8Array> = []
    for (let at = 0; at < bytes.length; at += readBytes) pieces.push(bytes.subarray(at, at + readBytes))
    return { ok: true, status: reply.status, body: byteReaderOf(pieces) }
  })

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
