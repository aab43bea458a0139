/**
 * AWS's binary event stream (`application/vnd.amazon.eventstream`), the stream framing of
 * Bedrock's ConverseStream and SageMaker's InvokeEndpointWithResponseStream: a sequence of
 * messages, each a prelude (total length, headers length, CRC), headers, a payload and a CRC.
 * `@smithy/eventstream-codec` decodes (and checks) one message; this cuts the byte stream into
 * messages, which the network splits anywhere (one message over several chunks, several in one).
 */
import { EventStreamCodec, type MessageHeaders } from "@smithy/eventstream-codec"
import { fromUtf8, toUtf8 } from "@smithy/util-utf8"
import type { EventCutter, StreamFraming } from "../codec.ts"

/**
 * One message: `:message-type` `event` (with its `:event-type`), `exception` (with its
 * `:exception-type`) or `error` (with `:error-code`/`:error-message`). A framing cannot fail with
 * an error of its own, so a broken stream is reported as an `exception` message the parser fails on.
 */
export interface AwsEvent {
  readonly messageType: string
  /** `:event-type`, `:exception-type` or `:error-code` */
  readonly eventType: string
  readonly payload: Uint8Array
}

export const eventStreamCodec = new EventStreamCodec(toUtf8, fromUtf8)

const preludeLength = 4
// AWS bounds a message at 16 MiB of payload and 128 KiB of headers; anything past is not a message
const maxMessageBytes = 16 * 1024 * 1024 + 128 * 1024 + 16

const headerText = (headers: MessageHeaders, name: string): string | undefined => {
  const header = headers[name]
  return header?.type === "string" ? header.value : undefined
}

const broken = (message: string): AwsEvent => ({
  messageType: "exception",
  eventType: "EventStreamFramingError",
  payload: fromUtf8(JSON.stringify({ message }))
})

/** `payload`'s bytes as text (AWS's payloads are JSON; SageMaker's are the container's bytes). */
export const payloadText = (event: AwsEvent): string => toUtf8(event.payload)

/** The explanation an exception or error message carries: its payload's `message`, its `:error-message`, or its type. */
export const exceptionMessage = (event: AwsEvent): string => {
  const text = payloadText(event)
  try {
    const json = JSON.parse(text)
    if (typeof json?.message === "string") return `${event.eventType}: ${json.message}`
    if (typeof json?.Message === "string") return `${event.eventType}: ${json.Message}`
  } catch {
    // not JSON: the text itself
  }
  return text === "" ? event.eventType : `${event.eventType}: ${text}`
}

const decoded = (bytes: Uint8Array): AwsEvent => {
  const message = eventStreamCodec.decode(bytes)
  const messageType = headerText(message.headers, ":message-type") ?? "event"
  if (messageType === "error") {
    // an error message carries its explanation in headers, not in the payload
    const code = headerText(message.headers, ":error-code") ?? "error"
    const text = headerText(message.headers, ":error-message") ?? ""
    return { messageType, eventType: code, payload: fromUtf8(JSON.stringify({ message: text })) }
  }
  const eventType = headerText(message.headers, messageType === "exception" ? ":exception-type" : ":event-type") ?? ""
  return { messageType, eventType, payload: message.body }
}

/** Cuts a byte stream into messages, buffered by each prelude's total length. */
const messages = (): EventCutter<AwsEvent> => {
  let buffer: Uint8Array = new Uint8Array(0)
  let failed = false
  return {
    feed: (chunk, events) => {
      if (failed) return true
      if (buffer.length === 0) buffer = chunk
      else {
        const joined = new Uint8Array(buffer.length + chunk.length)
        joined.set(buffer)
        joined.set(chunk, buffer.length)
        buffer = joined
      }
      while (buffer.length >= preludeLength) {
        const total = new DataView(buffer.buffer, buffer.byteOffset, buffer.byteLength).getUint32(0)
        if (total < 16 || total > maxMessageBytes) {
          failed = true
          events.push(broken(`the event stream holds a message of ${total} bytes, which is not a message`))
          return true
        }
        if (buffer.length < total) break
        try {
          events.push(decoded(buffer.subarray(0, total)))
        } catch (error) {
          failed = true
          events.push(broken(`the event stream holds a message that cannot be read: ${error instanceof Error ? error.message : String(error)}`))
          return true
        }
        buffer = buffer.subarray(total)
      }
      return false
    },
    end: (events) => {
      if (!failed && buffer.length > 0) {
        events.push(broken(`the event stream ended in the middle of a message (${buffer.length} bytes left)`))
      }
    }
  }
}

export const eventStreamContentType = "application/vnd.amazon.eventstream"

export const awsEventStream: StreamFraming<AwsEvent> = {
  contentType: eventStreamContentType,
  cutter: messages
}

/** A message as AWS sends it (for fakes and fixtures): `:message-type` event with `:event-type`, or an exception. */
export const encodeEvent = (
  event: { readonly eventType: string; readonly payload: Uint8Array | string; readonly messageType?: "event" | "exception" }
): Uint8Array => {
  const messageType = event.messageType ?? "event"
  const body = typeof event.payload === "string" ? fromUtf8(event.payload) : event.payload
  return eventStreamCodec.encode({
    headers: {
      ":message-type": { type: "string", value: messageType },
      [messageType === "exception" ? ":exception-type" : ":event-type"]: { type: "string", value: event.eventType },
      ":content-type": { type: "string", value: "application/json" }
    },
    body
  })
}
