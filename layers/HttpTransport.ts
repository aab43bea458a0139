/**
 * The one outbound HTTP client: an undici Agent with keep-alive pools per origin. Every
 * provider call goes through it, so tests and benchmarks can point any provider at a local
 * server through its `api_base`. Interrupting a call (a timeout, a client that hung up)
 * aborts the request upstream.
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"
import { Agent, request } from "undici"
import { type HttpCall, HttpTransport, TransportError } from "../src/services.ts"

export interface HttpTransportOptions {
  /** most connections kept per upstream origin */
  readonly connectionsPerOrigin?: number
  /** how long to wait for response headers, and between body chunks */
  readonly readTimeoutMs?: number
}

const timeoutCodes = new Set(["UND_ERR_HEADERS_TIMEOUT", "UND_ERR_BODY_TIMEOUT", "UND_ERR_CONNECT_TIMEOUT", "ETIMEDOUT"])

const toTransportError = (error: unknown): TransportError => {
  const cause = error as { code?: string; message?: string; cause?: { code?: string; message?: string } }
  const code = cause?.code ?? cause?.cause?.code
  const detail = cause?.cause?.message ?? cause?.message ?? String(error)
  return new TransportError({
    message: `request failed: ${detail}${code !== undefined && !detail.includes(code) ? ` (${code})` : ""}`,
    timedOut: code !== undefined && timeoutCodes.has(code)
  })
}

export const makeHttpTransport = (options: HttpTransportOptions = {}) =>
  Effect.gen(function*() {
    const readTimeout = options.readTimeoutMs ?? 300_000
    const agent = yield* Effect.acquireRelease(
      Effect.sync(() =>
        new Agent({
          connections: options.connectionsPerOrigin ?? 512,
          keepAliveTimeout: 30_000,
          headersTimeout: readTimeout,
          bodyTimeout: readTimeout
        })
      ),
      (agent) => Effect.promise(() => agent.close())
    )

    const send = (call: HttpCall, signal: AbortSignal) =>
      request(call.url, { method: "POST", headers: call.headers, body: call.body, dispatcher: agent, signal })

    return HttpTransport.of({
      post: (call) =>
        Effect.tryPromise({
          try: async (signal) => {
            const response = await send(call, signal)
            return { status: response.statusCode, text: await response.body.text() }
          },
          catch: toTransportError
        }),
      postStream: (call) =>
        Effect.tryPromise({
          try: async (signal) => {
            const response = await send(call, signal)
            if (response.statusCode < 200 || response.statusCode >= 300) {
              return { ok: false as const, status: response.statusCode, text: await response.body.text() }
            }
            const body = response.body
            return {
              ok: true as const,
              status: response.statusCode,
              body: Stream.fromAsyncIterable(body as AsyncIterable<Uint8Array>, toTransportError).pipe(
                // abandoning the stream (client gone, timeout) closes the upstream request
                Stream.ensuring(Effect.sync(() => body.destroy()))
              )
            }
          },
          catch: toTransportError
        })
    })
  })

export const HttpTransportLive = (options?: HttpTransportOptions) => Layer.effect(HttpTransport, makeHttpTransport(options))
