/**
 * A streamed answer read: a 2xx event stream cut into events by the codec's framing and read
 * into chunks by its parser, one array of chunks per network read.
 */
import type * as Arr from "effect/Array"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import type { ProviderChunk } from "../inference/types.ts"
import type { ByteReader, HttpCall, HttpStreamReply } from "../transport.ts"
import { type StreamEventParser, type StreamFraming, type WireCodec, WireProblem } from "./codec.ts"
import type { ProviderFailure } from "./failure.ts"
import { redactSecrets } from "./redact.ts"
import type { ChunkPull, ProviderStream } from "./types.ts"
import { failedReply, failure, transportFailure } from "./upstreamFailures.ts"

/** A streamed answer: a 2xx event stream, read as the codec frames and parses it. */
export const streamedAnswer = <Settings, Target, Event>(
  codec: WireCodec<Settings, Target, Event>,
  reply: HttpStreamReply,
  request: HttpCall,
  apiKey: string | undefined
): Effect.Effect<ProviderStream, ProviderFailure> => {
  if (!reply.ok) {
    return reply.status >= 200 && reply.status < 300
      ? Effect.fail(failure(notAnEventStream(reply.status, reply.contentType, redactSecrets(reply.text, apiKey)), apiKey))
      : failedReply(codec, reply, apiKey)
  }
  return Effect.sync(() => ({
    rawRequest: request.body,
    next: chunksOf(codec.framing, codec.streamParser(), reply.body, apiKey),
    close: reply.body.close
  }))
}

/** A 2xx answer to a streamed request that is not an event stream (an HTML page from a proxy, say). */
const notAnEventStream = (status: number, contentType: string | undefined, text: string): string =>
  `HTTP ${status} with content type ${
    contentType === undefined ? "(none)" : JSON.stringify(contentType.slice(0, 100))
  } where an event stream (text/event-stream) was expected: ${text.length > 200 ? `${text.slice(0, 200)}...` : text}`

const emptyStream = "the provider's event stream ended without any event"

/**
 * The chunks of a streamed answer, one array per read of the body: cut by the framing and read
 * by the codec in one pull, in plain code (the caller closes the body). A stream counts once it has sent one chunk: one that
 * ends before is a failure, not an empty answer. An event the codec cannot read fails the
 * stream after the chunks before it.
 */
const chunksOf = <Event>(
  framing: StreamFraming<Event>,
  parse: StreamEventParser<Event>,
  body: ByteReader,
  apiKey: string | undefined
): ChunkPull => {
  const cutter = framing.cutter()
  const events: Array<Event> = []
  let started = false
  /** the framing's end came, or the body's */
  let ended = false
  let failed: ProviderFailure | undefined
  const read = Effect.mapError(body.read, (error) => transportFailure(error, apiKey))
  const next = (): ChunkPull => {
    if (failed !== undefined) return Effect.fail(failed)
    if (ended) return started ? Cause.done() : Effect.fail(failure(emptyStream, apiKey))
    return Effect.flatMap(read, received)
  }
  const received = (bytes: Uint8Array | undefined) => {
    if (bytes === undefined) {
      ended = true
      cutter.end(events)
    } else if (cutter.feed(bytes, events)) {
      ended = true
    }
    const chunks: Array<ProviderChunk> = []
    for (const event of events) {
      const chunk = parse(event)
      if (chunk instanceof WireProblem) {
        failed = failure(chunk.message, apiKey)
        break
      }
      started = true
      chunks.push(chunk)
    }
    events.length = 0
    return chunks.length > 0 ? Effect.succeed(chunks as unknown as Arr.NonEmptyReadonlyArray<ProviderChunk>) : next()
  }
  return Effect.suspend(next)
}
