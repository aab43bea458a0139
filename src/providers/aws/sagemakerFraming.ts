/**
 * SageMaker's InvokeEndpointWithResponseStream: an AWS event stream whose `PayloadPart` events
 * carry, as their raw payload (the `Bytes` member is the event payload), pieces of the
 * container's own answer: for an OpenAI-compatible or TGI container, its Server-Sent Events,
 * cut anywhere. The pieces are joined and read as SSE; `ModelStreamError` and
 * `InternalStreamFailure` (exception messages) end the stream with their message.
 * https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_runtime_InvokeEndpointWithResponseStream.html
 */
import type { EventCutter, StreamFraming } from "../codec.ts"
import { sseDataCutter } from "../sse.ts"
import { type AwsEvent, awsEventStream, eventStreamContentType, exceptionMessage } from "./eventStream.ts"

/** An exception the event stream carried, in place of the container's data. */
export class StreamException {
  readonly message: string
  constructor(message: string) {
    this.message = message
  }
}

/** the container's SSE `data:` payloads, or an exception */
export type SageMakerEvent = string | StreamException

/** Cuts the event stream into messages, and the payloads of its `PayloadPart` messages into SSE `data:` payloads. */
const containerEvents = (): EventCutter<SageMakerEvent> => {
  const messages = awsEventStream.cutter()
  const decoder = new TextDecoder()
  const data = sseDataCutter()
  let ended = false
  const received: Array<AwsEvent> = []
  const read = (out: Array<SageMakerEvent>) => {
    for (const message of received) {
      if (ended) break
      if (message.messageType !== "event") {
        out.push(new StreamException(exceptionMessage(message)))
        ended = true
      } else if (message.eventType === "PayloadPart") {
        ended = data.feedText(decoder.decode(message.payload, { stream: true }), out)
      }
    }
    received.length = 0
    return ended
  }
  return {
    feed: (bytes, out) => {
      if (ended) return true
      const broken = messages.feed(bytes, received)
      return read(out) || broken
    },
    end: (out) => {
      messages.end(received)
      read(out)
    }
  }
}

export const sageMakerStream: StreamFraming<SageMakerEvent> = {
  contentType: eventStreamContentType,
  cutter: containerEvents
}
