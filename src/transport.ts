/**
 * The outbound HTTP port: every provider call goes through one `HttpTransport` (implemented in
 * layers/HttpTransport.ts). Its own module at the base of the ladder, so a provider that needs
 * the port does not reach the engine's services.
 */
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"

export class TransportError extends Schema.TaggedError<TransportError>()("TransportError", {
  message: Schema.String,
  timedOut: Schema.Boolean
}) {}

export interface HttpCall {
  readonly url: string
  readonly headers: Readonly<Record<string, string>>
  /** sent with POST and PUT; a GET sends none */
  readonly body: string
  /** POST unless said (batch hooks poll with GET and upload with PUT) */
  readonly method?: "GET" | "POST" | "PUT" | undefined
  /** a bound on the answer's bytes above the transport's (a batch's output file); streamed answers keep the transport's, downloads take it */
  readonly maxResponseBytes?: number | undefined
}

/**
 * A streamed body, read as it arrives. Not an Effect `Stream`: the streaming path does its
 * per-read work in one pull of its own (see src/streams.ts), and a stream of operators per
 * body would cost more than that work.
 */
export interface ByteReader {
  /** the next bytes received, or undefined once the body has ended */
  readonly read: Effect.Effect<Uint8Array | undefined, TransportError>
  /** stops reading (the upstream request ends unless it was complete); safe to run more than once */
  readonly close: Effect.Effect<void>
}

export type HttpStreamReply =
  | { readonly ok: true; readonly status: number; readonly body: ByteReader }
  /** not an event stream: a status outside 2xx, or another content type (`contentType`) */
  | {
    readonly ok: false
    readonly status: number
    readonly contentType?: string | undefined
    readonly text: string
    /** the answer's `retry-after` header, as sent */
    readonly retryAfter?: string | undefined
  }

/** A whole answer; `retryAfter` is its `retry-after` header as sent (seconds or an HTTP date), when it has one. */
export interface HttpReply {
  readonly status: number
  readonly text: string
  readonly retryAfter?: string | undefined
}

/**
 * Every outbound provider call goes through this one client (keep-alive pools, timeouts). It
 * bounds each call's duration, its answer's bytes and a streamed answer's lines, failing with
 * a `TransportError` that says which limit was passed.
 */
export class HttpTransport extends Context.Service<HttpTransport, {
  /** sends `call` (a POST unless its `method` says otherwise) and reads the whole answer; interruption aborts the request */
  readonly post: (call: HttpCall) => Effect.Effect<HttpReply, TransportError>
  /**
   * POSTs and hands over the body as a stream when the status is 2xx and its content type is
   * `streamType` (`text/event-stream`, AWS's `application/vnd.amazon.eventstream`), or its text otherwise
   */
  readonly postStream: (call: HttpCall, streamType: string) => Effect.Effect<HttpStreamReply, TransportError>
  /**
   * Sends `call` (a GET, usually) and hands over a 2xx answer's body as a stream whatever its
   * content type (a batch's result file, read as it arrives rather than held whole), bounded in
   * all by `call.maxResponseBytes` (or the transport's bound when larger); any other status as text
   */
  readonly download: (call: HttpCall) => Effect.Effect<HttpStreamReply, TransportError>
}>()("gateway/HttpTransport") {}
