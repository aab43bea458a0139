/**
 * SageMaker's InvokeEndpointWithResponseStream: an AWS event stream whose `PayloadPart` events
 * carry, as their raw payload (the `Bytes` member is the event payload), pieces of the
 * container's own answer: for an OpenAI-compatible or TGI container, its Server-Sent Events,
 * cut anywhere. The pieces are joined and read as SSE; `ModelStreamError` and
 * `InternalStreamFailure` (exception messages) end the stream with their message.
 * https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_runtime_InvokeEndpointWithResponseStream.html
 */
import * as Sse from "effect/encoding/Sse"
import * as Stream from "effect/Stream"
import type { StreamFraming } from "../codec.ts"
import { awsEventStream, eventStreamContentType, exceptionMessage } from "./eventStream.ts"

/** An exception the event stream carried, in place of the container's data. */
export class StreamException {
  readonly message: string
  constructor(message: string) {
    this.message = message
  }
}

/** the container's SSE `data:` payloads, or an exception */
export type SageMakerEvent = string | StreamException

const endMarker = "[DONE]"

const containerEvents = <E>(bytes: Stream.Stream<Uint8Array, E>): Stream.Stream<SageMakerEvent, E> =>
  Stream.suspend(() => {
    const decoder = new TextDecoder()
    let pending: Array<SageMakerEvent> = []
    const parser = Sse.makeParser((event) => {
      if (event._tag === "Event") pending.push(event.data)
    }, { maxEventSize: Number.MAX_SAFE_INTEGER })
    return Stream.flattenIterable(Stream.map(awsEventStream.events(bytes), (message) => {
      if (message.messageType !== "event") pending.push(new StreamException(exceptionMessage(message)))
      else if (message.eventType === "PayloadPart") parser.feed(decoder.decode(message.payload, { stream: true }))
      const events = pending
      pending = []
      return events
    }))
  })

export const sageMakerStream: StreamFraming<SageMakerEvent> = {
  contentType: eventStreamContentType,
  events: (bytes) => Stream.takeWhile(containerEvents(bytes), (event) => event !== endMarker)
}
