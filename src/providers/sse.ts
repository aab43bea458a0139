/**
 * Server-Sent Events, the stream framing of most providers: the `data:` payloads of the body,
 * ending at `data: [DONE]` (OpenAI's end marker; providers without one end the body instead).
 * The transport bounds the body's lines and its total size; the parser's own bound on an
 * event would, past it, silently drop what it holds and go on mid-event, so it is lifted.
 */
import * as Sse from "effect/encoding/Sse"
import type { EventCutter, StreamFraming } from "./codec.ts"

const endMarker = "[DONE]"

/** A cutter of SSE text into its `data:` payloads; `onData` sees each and says whether it ended the stream. */
export const sseDataCutter = <Event>(onData: (data: string, out: Array<Event>) => boolean) => {
  // where the parser's callback puts the events of the text being fed, and whether the end came
  let out: Array<Event> = []
  let ended = false
  const parser = Sse.makeParser((event) => {
    if (event._tag === "Event" && !ended) ended = onData(event.data, out)
  }, { maxEventSize: Number.MAX_SAFE_INTEGER })
  return {
    feedText: (text: string, into: Array<Event>): boolean => {
      out = into
      parser.feed(text)
      return ended
    }
  }
}

const cutter = (): EventCutter<string> => {
  const decoder = new TextDecoder()
  const data = sseDataCutter<string>((payload, out) => {
    if (payload === endMarker) return true
    out.push(payload)
    return false
  })
  return {
    feed: (bytes, out) => data.feedText(decoder.decode(bytes, { stream: true }), out),
    end: () => {}
  }
}

export const sse: StreamFraming<string> = { contentType: "text/event-stream", cutter }
