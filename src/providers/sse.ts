/**
 * Server-Sent Events, the stream framing of most providers: the `data:` payloads of the body,
 * ending at `data: [DONE]` (OpenAI's end marker; providers without one end the body instead).
 * The transport bounds the body's lines and its total size; the parser's own bound on an
 * event would, past it, silently drop what it holds and go on mid-event, so it is lifted.
 */
import * as Sse from "effect/encoding/Sse"
import * as Stream from "effect/Stream"
import type { StreamFraming } from "./codec.ts"

const sseData = <E>(bytes: Stream.Stream<Uint8Array, E>): Stream.Stream<string, E> =>
  Stream.suspend(() => {
    const decoder = new TextDecoder()
    let pending: Array<string> = []
    const parser = Sse.makeParser((event) => {
      if (event._tag === "Event") pending.push(event.data)
    }, { maxEventSize: Number.MAX_SAFE_INTEGER })
    return Stream.flattenIterable(Stream.map(bytes, (chunk) => {
      parser.feed(decoder.decode(chunk, { stream: true }))
      const events = pending
      pending = []
      return events
    }))
  })

const endMarker = "[DONE]"

const notEnd = (data: string) => data !== endMarker

export const sse: StreamFraming<string> = {
  contentType: "text/event-stream",
  events: (bytes) => Stream.takeWhile(sseData(bytes), notEnd)
}
