/**
 * Server-Sent Events, the stream framing of most providers: the `data:` payloads of the body,
 * ending at `data: [DONE]` (OpenAI's end marker; providers without one end the body instead).
 * The transport bounds the body's lines and its total size; the parser's own bound on an
 * event would, past it, silently drop what it holds and go on mid-event, so it is lifted.
 */
import * as Sse from "effect/encoding/Sse"
import type { EventCutter, StreamFraming } from "./codec.ts"

const endMarker = "[DONE]"

/**
 * A cutter of SSE text into its `data:` payloads, up to the end marker (what follows it is
 * ignored). `feedText` pushes the payloads the text completes onto `into`, and says whether the
 * end marker came. Also what SageMaker's framing reads its container's answer with.
 */
export const sseDataCutter = () => {
  // where the parser's callback puts the payloads of the text being fed, and whether the end came
  let out: Array<string> = []
  let ended = false
  const parser = Sse.makeParser((event) => {
    if (event._tag !== "Event" || ended) return
    if (event.data === endMarker) ended = true
    else out.push(event.data)
  }, { maxEventSize: Number.MAX_SAFE_INTEGER })
  return {
    feedText: <Event>(text: string, into: Array<Event | string>): boolean => {
      out = into as Array<string>
      parser.feed(text)
      return ended
    }
  }
}

const cutter = (): EventCutter<string> => {
  const decoder = new TextDecoder()
  const data = sseDataCutter()
  return {
    feed: (bytes, out) => data.feedText(decoder.decode(bytes, { stream: true }), out),
    end: () => {}
  }
}

export const sse: StreamFraming<string> = { contentType: "text/event-stream", cutter }
