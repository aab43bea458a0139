/**
 * AWS's event-stream framing (`src/providers/aws/eventStream.ts`): messages cut out of a byte
 * stream however the network splits it, exceptions and errors read, a broken stream reported.
 */
import { EventStreamCodec } from "@smithy/eventstream-codec"
import { fromUtf8, toUtf8 } from "@smithy/util-utf8"
import { describe, expect, it } from "vitest"
import { type AwsEvent, awsEventStream, encodeEvent, exceptionMessage, payloadText } from "../../src/providers/aws/eventStream.ts"
import { sageMakerStream, StreamException } from "../../src/providers/aws/sagemakerFraming.ts"
import type { StreamFraming } from "../../src/providers/codec.ts"

const concat = (parts: ReadonlyArray<Uint8Array>): Uint8Array => {
  const all = new Uint8Array(parts.reduce((n, part) => n + part.length, 0))
  let at = 0
  for (const part of parts) {
    all.set(part, at)
    at += part.length
  }
  return all
}

/** the events `framing` cuts out of `pieces` (one read each), up to its end marker, then the body's end */
const eventsOf = async <A>(framing: StreamFraming<A>, pieces: ReadonlyArray<Uint8Array>): Promise<Array<A>> => {
  const cutter = framing.cutter()
  const events: Array<A> = []
  for (const piece of pieces) if (cutter.feed(piece, events)) return events
  cutter.end(events)
  return events
}

const summary = (event: AwsEvent) => ({ messageType: event.messageType, eventType: event.eventType, payload: payloadText(event) })

const messages = [
  encodeEvent({ eventType: "messageStart", payload: `{"role":"assistant"}` }),
  encodeEvent({ eventType: "contentBlockDelta", payload: `{"contentBlockIndex":0,"delta":{"text":"héllo ✓"}}` }),
  encodeEvent({ eventType: "messageStop", payload: `{"stopReason":"end_turn"}` })
]
const expected = [
  { messageType: "event", eventType: "messageStart", payload: `{"role":"assistant"}` },
  { messageType: "event", eventType: "contentBlockDelta", payload: `{"contentBlockIndex":0,"delta":{"text":"héllo ✓"}}` },
  { messageType: "event", eventType: "messageStop", payload: `{"stopReason":"end_turn"}` }
]
const all = concat(messages)

describe("the AWS event-stream framing", () => {
  it("declares AWS's content type", () => {
    expect(awsEventStream.contentType).toBe("application/vnd.amazon.eventstream")
  })

  it("reads several messages from one chunk", async () => {
    expect((await eventsOf(awsEventStream, [all])).map(summary)).toEqual(expected)
  })

  it("reads the same messages however the bytes are split in two", async () => {
    for (let at = 0; at <= all.length; at++) {
      const events = await eventsOf(awsEventStream, [all.subarray(0, at), all.subarray(at)])
      expect(events.map(summary), `split at ${at}`).toEqual(expected)
    }
  })

  it("reads them byte by byte", async () => {
    const bytes = Array.from(all, (byte) => Uint8Array.of(byte))
    expect((await eventsOf(awsEventStream, bytes)).map(summary)).toEqual(expected)
  })

  it("reads an exception message with its type and message", async () => {
    const exception = encodeEvent({ messageType: "exception", eventType: "validationException", payload: `{"message":"bad input"}` })
    const [event] = await eventsOf(awsEventStream, [exception])
    expect(event.messageType).toBe("exception")
    expect(exceptionMessage(event)).toBe("validationException: bad input")
  })

  it("reads an error message from its headers", async () => {
    const codec = new EventStreamCodec(toUtf8, fromUtf8)
    const error = codec.encode({
      headers: {
        ":message-type": { type: "string", value: "error" },
        ":error-code": { type: "string", value: "InternalFailure" },
        ":error-message": { type: "string", value: "something broke" }
      },
      body: new Uint8Array(0)
    })
    const [event] = await eventsOf(awsEventStream, [error])
    expect(event.messageType).toBe("error")
    expect(exceptionMessage(event)).toBe("InternalFailure: something broke")
  })

  it("reports a message whose checksum is wrong, and reads nothing after it", async () => {
    const broken = all.slice()
    broken[messages[0].length + 20] ^= 0xff
    const events = await eventsOf(awsEventStream, [broken])
    expect(events.map(summary).slice(0, 1)).toEqual(expected.slice(0, 1))
    expect(events).toHaveLength(2)
    expect(events[1].messageType).toBe("exception")
    expect(exceptionMessage(events[1])).toContain("cannot be read")
  })

  it("reports a stream that ends in the middle of a message", async () => {
    const events = await eventsOf(awsEventStream, [all.subarray(0, all.length - 5)])
    expect(events.map(summary).slice(0, 2)).toEqual(expected.slice(0, 2))
    expect(exceptionMessage(events[2])).toContain("ended in the middle of a message (")
  })

  it("reports bytes that are not an event stream (an HTML page) without waiting for gigabytes", async () => {
    const events = await eventsOf(awsEventStream, [new TextEncoder().encode("<html><body>proxy error</body></html>")])
    expect(events).toHaveLength(1)
    expect(exceptionMessage(events[0])).toContain("which is not a message")
  })
})

describe("SageMaker's response stream: PayloadPart bytes joined into the container's SSE", () => {
  const sse = `data: {"a":"Grüß"}\n\ndata: {"b":2}\n\ndata: [DONE]\n\ndata: {"after":"done"}\n\n`
  const bytes = new TextEncoder().encode(sse)

  it("joins payload parts cut anywhere (mid-event, mid-character) and stops at [DONE]", async () => {
    for (const size of [1, 2, 5, 17, bytes.length]) {
      const parts: Array<Uint8Array> = []
      for (let at = 0; at < bytes.length; at += size) parts.push(encodeEvent({ eventType: "PayloadPart", payload: bytes.subarray(at, at + size) }))
      const stream = concat(parts)
      // and the event-stream messages themselves split across network chunks
      const events = await eventsOf(sageMakerStream, [stream.subarray(0, 7), stream.subarray(7)])
      expect(events, `payload parts of ${size} bytes`).toEqual([`{"a":"Grüß"}`, `{"b":2}`])
    }
  })

  it("turns a ModelStreamError into an exception event after the data before it", async () => {
    const stream = concat([
      encodeEvent({ eventType: "PayloadPart", payload: new TextEncoder().encode(`data: {"a":1}\n\n`) }),
      encodeEvent({ messageType: "exception", eventType: "ModelStreamError", payload: `{"Message":"container died","ErrorCode":"x"}` })
    ])
    const events = await eventsOf(sageMakerStream, [stream])
    expect(events[0]).toBe(`{"a":1}`)
    expect(events[1]).toBeInstanceOf(StreamException)
    expect((events[1] as StreamException).message).toBe("ModelStreamError: container died")
  })
})
