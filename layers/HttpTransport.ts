/**
 * The one outbound HTTP client: an undici Agent with keep-alive pools per origin. Every
 * provider call goes through it, so tests and benchmarks can point any provider at a local
 * server through its `api_base`. Interrupting a call (a timeout, a client that hung up)
 * aborts the request upstream.
 *
 * It also bounds what a provider can make the gateway hold: a body past `maxResponseBytes`
 * (refused from its `content-length` when it has one, else as soon as the bytes read pass
 * it), a streamed line past `maxStreamLineBytes`, and a call (a whole stream included)
 * longer than `totalTimeoutMs`. Each ends the upstream request at once.
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { Agent, request } from "undici"
import { type ByteReader, type HttpCall, HttpTransport, TransportError } from "../src/transport.ts"

export interface HttpTransportOptions {
  /** most connections kept per upstream origin */
  readonly connectionsPerOrigin?: number
  /** how long to wait for response headers, and between body chunks */
  readonly readTimeoutMs?: number
  /** the longest a call may take, a streamed body to its end included (`global_outbound_http_timeout_ms`) */
  readonly totalTimeoutMs?: number
  /** the most bytes of one answer: a whole body, or a whole stream (`max_provider_response_bytes`) */
  readonly maxResponseBytes?: number
  /** the most bytes of one line of a streamed body (`max_provider_stream_event_bytes`) */
  readonly maxStreamLineBytes?: number
}

type Body = Awaited<ReturnType<typeof request>>["body"]

const timeoutCodes = new Set(["UND_ERR_HEADERS_TIMEOUT", "UND_ERR_BODY_TIMEOUT", "UND_ERR_CONNECT_TIMEOUT", "ETIMEDOUT"])

const toTransportError = (error: unknown): TransportError => {
  // the limits below fail with a TransportError, which undici hands back as it is
  if (error instanceof TransportError) return error
  const cause = error as { code?: string; message?: string; cause?: { code?: string; message?: string } }
  const code = cause?.code ?? cause?.cause?.code
  const detail = cause?.cause?.message ?? cause?.message ?? String(error)
  return new TransportError({
    message: `request failed: ${detail}${code !== undefined && !detail.includes(code) ? ` (${code})` : ""}`,
    timedOut: code !== undefined && timeoutCodes.has(code)
  })
}

const LF = 10
const CR = 13

/**
 * Whether the upstream sent the whole body: a stream read to its end marker usually has its
 * last bytes received but not read yet. Destroying such a body would abort a request that is
 * complete (at the cost of an error made per stream), so it is left to be collected.
 */
const receivedWhole = (body: Body): boolean =>
  body.readableEnded || (body as { readonly _readableState?: { readonly ended?: boolean } })._readableState?.ended === true

/** `contentType` is `expected` (lower case), whatever its parameters (`; charset=utf-8`) */
const isContentType = (contentType: string | undefined, expected: string): boolean => {
  if (contentType === undefined) return false
  const trimmed = contentType.trimStart()
  if (trimmed.slice(0, expected.length).toLowerCase() !== expected) return false
  const next = trimmed.charCodeAt(expected.length)
  return Number.isNaN(next) || next === 59 /* ; */ || next === 32 || next === 9
}

const headerOf = (headers: Record<string, string | Array<string> | undefined>, name: string): string | undefined => {
  const value = headers[name]
  return Array.isArray(value) ? value[0] : value
}

export const makeHttpTransport = (options: HttpTransportOptions = {}) =>
  Effect.gen(function*() {
    const readTimeout = options.readTimeoutMs ?? 300_000
    const totalTimeout = options.totalTimeoutMs ?? 900_000
    const maxBytes = options.maxResponseBytes ?? 32 * 1024 * 1024
    const maxLineBytes = options.maxStreamLineBytes ?? 4 * 1024 * 1024
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

    const tooLarge = (streamed: boolean, limit = maxBytes) =>
      new TransportError({
        message: `the ${streamed ? "streamed " : ""}response exceeds ${limit} bytes ([gateway] max_provider_response_bytes)`,
        timedOut: false
      })
    const lineTooLarge = () =>
      new TransportError({
        message: `a line of the streamed response exceeds ${maxLineBytes} bytes ([gateway] max_provider_stream_event_bytes)`,
        timedOut: false
      })
    const expired = new TransportError({
      message: `timed out after ${totalTimeout} ms ([gateway] global_outbound_http_timeout_ms)`,
      timedOut: true
    })

    /**
     * Sends the request under its own abort controller: the caller's interruption and the total
     * timeout both abort it, headers and body alike. `done` clears the timer.
     */
    const send = async (call: HttpCall, signal: AbortSignal) => {
      const controller = new AbortController()
      const forward = () => controller.abort(signal.reason)
      signal.addEventListener("abort", forward, { once: true })
      const timer = setTimeout(() => controller.abort(expired), totalTimeout)
      timer.unref()
      const done = () => {
        clearTimeout(timer)
        signal.removeEventListener("abort", forward)
      }
      try {
        const response = await request(call.url, {
          method: call.method ?? "POST",
          headers: call.headers,
          body: call.method === "GET" ? undefined : call.body,
          dispatcher: agent,
          signal: controller.signal
        })
        return { response, done }
      } catch (error) {
        done()
        throw error
      }
    }

    /** an answer whose `content-length` is over the limit is refused before it is read */
    const declaresTooMuch = (contentLength: string | undefined, limit = maxBytes) => contentLength !== undefined && Number(contentLength) > limit

    /** the whole body as text, or a failure once it passes `maxBytes` (which stops reading it) */
    const readText = (body: Body, contentLength: string | undefined, streamed: boolean, limit = maxBytes) =>
      new Promise<string>((resolve, reject) => {
        if (declaresTooMuch(contentLength, limit)) {
          body.destroy()
          return reject(tooLarge(streamed, limit))
        }
        const parts: Array<Buffer> = []
        let total = 0
        body.on("data", (part: Buffer) => {
          total += part.length
          if (total > limit) {
            body.destroy()
            reject(tooLarge(streamed, limit))
          } else {
            parts.push(part)
          }
        })
        body.once("error", reject)
        body.once("end", () => {
          if (parts.length === 0) return resolve("")
          const buffer = parts.length === 1 ? parts[0] : Buffer.concat(parts, total)
          // a UTF-8 byte order mark is not part of the text (as undici's body.text())
          const start = buffer.length > 2 && buffer[0] === 0xef && buffer[1] === 0xbb && buffer[2] === 0xbf ? 3 : 0
          resolve(buffer.toString("utf8", start))
        })
      })

    /**
     * Reads a streamed body as it arrives, failing once the whole (`limit`) or one line (bytes
     * since the last CR or LF; unbounded for a download, whose reader bounds its lines) passes
     * its limit. `close` clears the call's timer and, unless the upstream sent the whole body,
     * ends the upstream request.
     */
    const readerOf = (body: Body, done: () => void, limit = maxBytes, lineLimit = maxLineBytes, streamed = true): ByteReader => {
      const chunks = (body as AsyncIterable<Uint8Array>)[Symbol.asyncIterator]()
      let total = 0
      let line = 0
      /** the failure of a chunk past a limit, or undefined */
      const pastLimit = (chunk: Uint8Array): TransportError | undefined => {
        total += chunk.length
        if (total > limit) return tooLarge(streamed, limit)
        if (lineLimit === Infinity) return undefined
        const lf = chunk.lastIndexOf(LF)
        // a CR ends a line too; it matters only past the last LF (usually nothing)
        const cr = lf === chunk.length - 1 ? -1 : chunk.subarray(lf + 1).lastIndexOf(CR)
        const end = cr >= 0 ? lf + 1 + cr : lf
        line = end >= 0 ? chunk.length - 1 - end : line + chunk.length
        return line > lineLimit ? lineTooLarge() : undefined
      }
      let closed = false
      return {
        read: Effect.callback<Uint8Array | undefined, TransportError>((resume) => {
          chunks.next().then(
            (next) => {
              if (next.done === true) return resume(Effect.succeed(undefined))
              const failed = pastLimit(next.value)
              resume(failed === undefined ? Effect.succeed(next.value) : Effect.fail(failed))
            },
            (error) => resume(Effect.fail(toTransportError(error)))
          )
        }),
        close: Effect.sync(() => {
          if (closed) return
          closed = true
          done()
          if (!receivedWhole(body)) body.destroy()
        })
      }
    }

    return HttpTransport.of({
      post: (call) =>
        Effect.tryPromise({
          try: async (signal) => {
            const { done, response } = await send(call, signal)
            try {
              const limit = Math.max(maxBytes, call.maxResponseBytes ?? 0)
              const text = await readText(response.body, headerOf(response.headers, "content-length"), false, limit)
              return { status: response.statusCode, text, retryAfter: headerOf(response.headers, "retry-after") }
            } finally {
              done()
            }
          },
          catch: toTransportError
        }),
      postStream: (call, streamType) =>
        Effect.tryPromise({
          try: async (signal) => {
            const { done, response } = await send(call, signal)
            const body = response.body
            const contentType = headerOf(response.headers, "content-type")
            const contentLength = headerOf(response.headers, "content-length")
            if (response.statusCode < 200 || response.statusCode >= 300 || !isContentType(contentType, streamType)) {
              try {
                const text = await readText(body, contentLength, false)
                return { ok: false as const, status: response.statusCode, contentType, text, retryAfter: headerOf(response.headers, "retry-after") }
              } finally {
                done()
              }
            }
            if (declaresTooMuch(contentLength)) {
              done()
              body.destroy()
              throw tooLarge(true)
            }
            return {
              ok: true as const,
              status: response.statusCode,
              body: readerOf(body, done)
            }
          },
          catch: toTransportError
        }),
      download: (call) =>
        Effect.tryPromise({
          try: async (signal) => {
            const { done, response } = await send(call, signal)
            const body = response.body
            const contentLength = headerOf(response.headers, "content-length")
            if (response.statusCode < 200 || response.statusCode >= 300) {
              try {
                const text = await readText(body, contentLength, false)
                return { ok: false as const, status: response.statusCode, text, retryAfter: headerOf(response.headers, "retry-after") }
              } finally {
                done()
              }
            }
            const limit = Math.max(maxBytes, call.maxResponseBytes ?? 0)
            if (declaresTooMuch(contentLength, limit)) {
              done()
              body.destroy()
              throw tooLarge(false, limit)
            }
            return { ok: true as const, status: response.statusCode, body: readerOf(body, done, limit, Infinity, false) }
          },
          catch: toTransportError
        })
    })
  })

export const HttpTransportLive = (options?: HttpTransportOptions) => Layer.effect(HttpTransport, makeHttpTransport(options))
