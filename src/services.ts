/**
 * The services the functional core needs from the outside world. Their implementations are
 * Layers in `layers/`; tests compose the real core with real or fake layers.
 */
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import type * as Stream from "effect/Stream"
import type { GatewayConfig } from "./config/types.ts"
import type { ModelTable } from "./inference/models.ts"
import type { RateLimiter } from "./ratelimit/limiter.ts"

export class TransportError extends Schema.TaggedError<TransportError>()("TransportError", {
  message: Schema.String,
  timedOut: Schema.Boolean
}) {}

export interface HttpCall {
  readonly url: string
  readonly headers: Readonly<Record<string, string>>
  readonly body: string
}

export type HttpStreamReply =
  | { readonly ok: true; readonly status: number; readonly body: Stream.Stream<Uint8Array, TransportError> }
  /** not an event stream: a status outside 2xx, or another content type (`contentType`) */
  | { readonly ok: false; readonly status: number; readonly contentType?: string | undefined; readonly text: string }

/**
 * Every outbound provider call goes through this one client (keep-alive pools, timeouts). It
 * bounds each call's duration, its answer's bytes and a streamed answer's lines, failing with
 * a `TransportError` that says which limit was passed.
 */
export class HttpTransport extends Context.Service<HttpTransport, {
  /** POSTs and reads the whole answer; interruption aborts the request */
  readonly post: (call: HttpCall) => Effect.Effect<{ readonly status: number; readonly text: string }, TransportError>
  /** POSTs and hands over the body as a stream when the status is 2xx and it is `text/event-stream`, or its text otherwise */
  readonly postStream: (call: HttpCall) => Effect.Effect<HttpStreamReply, TransportError>
}>()("gateway/HttpTransport") {}

/** The configuration the gateway runs on, with a client for every provider of every model. */
export class Gateway extends Context.Service<Gateway, {
  readonly config: GatewayConfig
  readonly models: ModelTable
  /** the rate limits, when rules are configured */
  readonly limiter?: RateLimiter | undefined
}>()("gateway/Gateway") {}
